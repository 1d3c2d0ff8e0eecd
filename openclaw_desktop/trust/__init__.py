"""TLS trust for ``wss://`` gateways: fingerprints, pins, probes and the trust policy.

The transport calls :func:`resolve_tls` before connecting, connects with the returned
:class:`TlsPlan`, and, when the plan carries a pin, calls :func:`verify_pin` on the
connection's ``ssl_object`` before sending anything. :func:`cleartext_allowed` says when
plain ``ws://`` is acceptable at all.

This package stores nothing itself: pins come in as arguments and go out through the
``save_pin`` callback.
"""

from openclaw_desktop.trust.context import (
    peer_fingerprint,
    pinned_client_context,
    system_client_context,
    verify_pin,
)
from openclaw_desktop.trust.endpoint import (
    cleartext_allowed,
    format_endpoint,
    is_loopback_host,
    strip_brackets,
)
from openclaw_desktop.trust.fingerprint import (
    FINGERPRINT_HEX_LENGTH,
    fingerprint_of_der,
    format_fingerprint,
    normalize_fingerprint,
)
from openclaw_desktop.trust.policy import (
    PinSaver,
    TlsPlan,
    TrustCallback,
    TrustPrompt,
    resolve_tls,
)
from openclaw_desktop.trust.probe import probe_fingerprint, system_trusts

__all__ = [
    "FINGERPRINT_HEX_LENGTH",
    "PinSaver",
    "TlsPlan",
    "TrustCallback",
    "TrustPrompt",
    "cleartext_allowed",
    "fingerprint_of_der",
    "format_endpoint",
    "format_fingerprint",
    "is_loopback_host",
    "normalize_fingerprint",
    "peer_fingerprint",
    "pinned_client_context",
    "probe_fingerprint",
    "resolve_tls",
    "strip_brackets",
    "system_client_context",
    "system_trusts",
    "verify_pin",
]
