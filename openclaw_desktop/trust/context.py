"""SSL contexts for gateway connections, and the pin check that goes with them.

There are two ways to trust a gateway's certificate:

* **System trust** (:func:`system_client_context`): the certificate chains to a CA the
  operating system trusts and names the host. Nothing is pinned.
* **A pin** (:func:`pinned_client_context` + :func:`verify_pin`): the context accepts any
  certificate during the handshake, and the caller then compares the leaf certificate's
  fingerprint with the stored pin *before anything is sent on the connection*. The pinned
  context on its own trusts everything; it must never be used without :func:`verify_pin`.
"""

from __future__ import annotations

import hmac
import ssl

from openclaw_desktop.errors import TrustError
from openclaw_desktop.trust.fingerprint import fingerprint_of_der, normalize_fingerprint

__all__ = [
    "peer_fingerprint",
    "pinned_client_context",
    "system_client_context",
    "verify_pin",
]

_MINIMUM_VERSION = ssl.TLSVersion.TLSv1_2


def system_client_context() -> ssl.SSLContext:
    """Build a client context that verifies the chain and the host name.

    Returns:
        A context with the system CA store, ``CERT_REQUIRED``, hostname checking, and
        TLS 1.2 as the oldest accepted version.
    """
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    context.minimum_version = _MINIMUM_VERSION
    return context


def pinned_client_context() -> ssl.SSLContext:
    """Build a client context for a pinned gateway.

    It checks neither the chain nor the host name, because trust comes from the pin:
    discovery often yields IP addresses and gateways usually serve self-signed certificates.
    Only ever use it together with :func:`verify_pin` on the established connection.

    Returns:
        A context with ``CERT_NONE``, no hostname check and TLS 1.2 as the oldest accepted
        version.
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.minimum_version = _MINIMUM_VERSION
    return context


def peer_fingerprint(
    ssl_object: ssl.SSLObject | ssl.SSLSocket, *, endpoint: str | None = None
) -> str:
    """Fingerprint the leaf certificate the peer presented.

    Args:
        ssl_object: The TLS object of an established connection (for asyncio transports,
            ``transport.get_extra_info("ssl_object")``).
        endpoint: How to name the peer in errors; defaults to the server host name the
            connection was opened for.

    Returns:
        The fingerprint as 64 lowercase hex characters.

    Raises:
        TrustError: Kind ``"unavailable"`` if there is no peer certificate (for example
            because the handshake has not completed).
    """
    where = endpoint or ssl_object.server_hostname or "the TLS peer"
    try:
        der = ssl_object.getpeercert(binary_form=True)
    except (ValueError, OSError) as exc:
        raise TrustError("unavailable", where, detail=f"no peer certificate ({exc})") from exc
    if not der:
        raise TrustError("unavailable", where, detail="the peer presented no certificate")
    return fingerprint_of_der(der)


def verify_pin(ssl_object: ssl.SSLObject | ssl.SSLSocket, expected: str, endpoint: str) -> str:
    """Check that the peer's certificate is the pinned one.

    Call this right after the TLS handshake and before sending any credentials.

    Args:
        ssl_object: The TLS object of the established connection.
        expected: The stored pin, in any form :func:`normalize_fingerprint` accepts.
        endpoint: ``host:port`` of the gateway, for the error message.

    Returns:
        The observed fingerprint (normalized), equal to the pin.

    Raises:
        TrustError: Kind ``"mismatch"`` (carrying both fingerprints) if the certificate
            differs from the pin, or ``"unavailable"`` if no certificate can be read.
        ValueError: If ``expected`` is not a valid fingerprint.
    """
    pin = normalize_fingerprint(expected)
    actual = peer_fingerprint(ssl_object, endpoint=endpoint)
    if not hmac.compare_digest(actual.encode("ascii"), pin.encode("ascii")):
        raise TrustError("mismatch", endpoint, expected=pin, actual=actual)
    return actual
