"""Decide how to trust a ``wss://`` gateway before connecting to it.

The rules, in order:

1. **A stored pin wins.** The connection uses the pinned context and the caller checks the
   pin with :func:`~openclaw_desktop.trust.context.verify_pin` right after the handshake,
   before sending credentials. No network I/O happens here.
2. **Otherwise the system CA store decides**, with host name checking.
3. **Otherwise the user decides.** The certificate's fingerprint is probed and shown through
   the trust callback. Only an explicit ``True`` from that callback pins it (trust on first
   use); no callback means no trust.

A discovery hint (the unauthenticated TXT ``gatewayTlsSha256``) is shown to the user next to
the real fingerprint and is never used to trust anything nor to replace a pin.
"""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from openclaw_desktop.errors import TrustError
from openclaw_desktop.trust.context import pinned_client_context, system_client_context
from openclaw_desktop.trust.endpoint import format_endpoint, strip_brackets
from openclaw_desktop.trust.fingerprint import normalize_fingerprint
from openclaw_desktop.trust.probe import probe_fingerprint, system_trusts

__all__ = ["PinSaver", "TlsPlan", "TrustCallback", "TrustPrompt", "resolve_tls"]


@dataclass(frozen=True)
class TrustPrompt:
    """What a trust dialog shows before the user accepts a certificate.

    Attributes:
        endpoint: ``host:port`` of the gateway.
        host: Host the connection goes to.
        port: TCP port.
        fingerprint: Fingerprint of the certificate the endpoint actually presented.
        hint: Fingerprint advertised over discovery, if any (normalized). Unauthenticated:
            for display only.
        previous_pin: The pin stored before, when the user is replacing one.
    """

    endpoint: str
    host: str
    port: int
    fingerprint: str
    hint: str | None = None
    previous_pin: str | None = None

    @property
    def hint_matches(self) -> bool | None:
        """Whether the discovery hint equals the presented fingerprint; None without a hint."""
        return None if self.hint is None else self.hint == self.fingerprint


TrustCallback = Callable[[TrustPrompt], Awaitable[bool]]
"""Asks the user whether to trust a certificate; only ``True`` means yes."""

PinSaver = Callable[[str], None]
"""Stores an accepted fingerprint as the gateway's pin."""


@dataclass(frozen=True)
class TlsPlan:
    """How to open the TLS connection to a gateway.

    Attributes:
        context: The SSL context to connect with.
        pin: The normalized pin to check with
            :func:`~openclaw_desktop.trust.context.verify_pin` right after the handshake,
            or None when the system CA store verified the certificate.
        server_hostname: The name the certificate must carry when the system CA store is
            used; None for a pinned plan, whose context checks no name (the connection's
            host is still sent as SNI).
    """

    context: ssl.SSLContext
    pin: str | None
    server_hostname: str | None

    @property
    def pinned(self) -> bool:
        """Whether trust comes from a pin rather than the system CA store."""
        return self.pin is not None


def _pinned_plan(pin: str) -> TlsPlan:
    return TlsPlan(context=pinned_client_context(), pin=pin, server_hostname=None)


def _normalized_or_none(hint: str | None) -> str | None:
    """A fingerprint in canonical form, or None when absent or malformed."""
    if hint is None:
        return None
    try:
        return normalize_fingerprint(hint)
    except ValueError:
        return None


async def resolve_tls(
    host: str,
    port: int,
    *,
    pin: str | None,
    trust_callback: TrustCallback | None,
    save_pin: PinSaver | None,
    hint: str | None = None,
    previous_pin: str | None = None,
    timeout: float = 3.0,
) -> TlsPlan:
    """Choose the SSL context and pin for a ``wss://`` connection.

    Args:
        host: Gateway host (name or IP literal).
        port: Gateway port.
        pin: The pin stored for this gateway, if any. When set, nothing else is consulted.
        trust_callback: Asks the user to accept an unknown certificate. Without it, a
            certificate the system does not trust is refused.
        save_pin: Called with the fingerprint the user accepted, before returning. When
            None, the acceptance holds for the returned plan only.
        hint: Unauthenticated fingerprint from discovery, passed on to the prompt only.
        previous_pin: A pin being replaced (after a mismatch), passed on to the prompt only.
        timeout: Limit in seconds for each network check (system trust, probe).

    Returns:
        The plan. When ``plan.pin`` is set, the caller must call ``verify_pin`` on the
        connection before sending anything.

    Raises:
        TrustError: ``"declined"`` if the callback said no, ``"untrusted"`` if there is no
            callback, both carrying the presented fingerprint; ``"unavailable"`` if the
            endpoint cannot be reached over TLS.
        ValueError: If ``pin`` is not a valid fingerprint.
    """
    if pin is not None:
        return _pinned_plan(normalize_fingerprint(pin))

    if await system_trusts(host, port, timeout=timeout):
        return TlsPlan(
            context=system_client_context(), pin=None, server_hostname=strip_brackets(host)
        )

    endpoint = format_endpoint(host, port)
    fingerprint = await probe_fingerprint(host, port, timeout=timeout)
    if trust_callback is None:
        raise TrustError("untrusted", endpoint, actual=fingerprint)
    prompt = TrustPrompt(
        endpoint=endpoint,
        host=host,
        port=port,
        fingerprint=fingerprint,
        hint=_normalized_or_none(hint),
        previous_pin=_normalized_or_none(previous_pin),
    )
    accepted = await trust_callback(prompt)
    if accepted is not True:
        raise TrustError("declined", endpoint, actual=fingerprint)
    if save_pin is not None:
        save_pin(fingerprint)
    return _pinned_plan(fingerprint)
