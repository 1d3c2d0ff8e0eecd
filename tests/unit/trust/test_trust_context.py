"""Unit tests for openclaw_desktop.trust.context (no sockets: the TLS object is a stub)."""

from __future__ import annotations

import hashlib
import ssl
from typing import cast

import pytest

from openclaw_desktop.errors import TrustError
from openclaw_desktop.trust.context import (
    peer_fingerprint,
    pinned_client_context,
    system_client_context,
    verify_pin,
)

DER = b"leaf certificate DER"
FP = hashlib.sha256(DER).hexdigest()
OTHER = "ab" * 32


class FakeSSLObject:
    """Just enough of ssl.SSLObject for the pin check."""

    def __init__(
        self, der: bytes | None, *, server_hostname: str | None = "gw.local", error: bool = False
    ) -> None:
        self.der = der
        self.server_hostname = server_hostname
        self.error = error

    def getpeercert(self, binary_form: bool = False) -> bytes | None:
        assert binary_form
        if self.error:
            raise ValueError("handshake not done yet")
        return self.der


def fake(der: bytes | None, **kwargs: object) -> ssl.SSLObject:
    return cast(ssl.SSLObject, FakeSSLObject(der, **kwargs))  # type: ignore[arg-type]


def test_system_context_verifies_chain_and_hostname() -> None:
    """The system context requires a valid chain and a matching name, TLS 1.2+."""
    context = system_client_context()
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname is True
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2


def test_pinned_context_checks_nothing_itself() -> None:
    """The pinned context skips CA and hostname checks (the pin check does the work), TLS 1.2+."""
    context = pinned_client_context()
    assert context.verify_mode == ssl.CERT_NONE
    assert context.check_hostname is False
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2


def test_contexts_are_fresh_objects() -> None:
    """Each call builds a new context, so callers cannot leak settings into each other."""
    assert pinned_client_context() is not pinned_client_context()
    assert system_client_context() is not system_client_context()


def test_peer_fingerprint_hashes_the_der() -> None:
    """The peer fingerprint is the SHA-256 of the binary certificate."""
    assert peer_fingerprint(fake(DER)) == FP


def test_peer_fingerprint_without_certificate_is_unavailable() -> None:
    """No certificate raises TrustError('unavailable') naming the server host."""
    with pytest.raises(TrustError) as info:
        peer_fingerprint(fake(None))
    assert info.value.kind == "unavailable"
    assert info.value.endpoint == "gw.local"
    assert "no certificate" in str(info.value)


def test_peer_fingerprint_before_handshake_is_unavailable() -> None:
    """A getpeercert() failure becomes TrustError('unavailable') with the given endpoint."""
    with pytest.raises(TrustError) as info:
        peer_fingerprint(fake(DER, error=True), endpoint="10.0.0.5:18789")
    assert info.value.kind == "unavailable"
    assert info.value.endpoint == "10.0.0.5:18789"


def test_peer_fingerprint_default_endpoint_without_hostname() -> None:
    """Without a server hostname or endpoint, the error still names something."""
    with pytest.raises(TrustError, match="the TLS peer"):
        peer_fingerprint(fake(b"", server_hostname=None))


def test_verify_pin_accepts_the_pinned_certificate_in_any_form() -> None:
    """A matching pin (colon/uppercase/prefixed) returns the observed fingerprint."""
    colons = "SHA256:" + ":".join(FP[i : i + 2] for i in range(0, 64, 2)).upper()
    assert verify_pin(fake(DER), colons, "gw.local:18789") == FP


def test_verify_pin_mismatch_names_both_fingerprints() -> None:
    """A different certificate raises TrustError('mismatch') with expected and actual."""
    with pytest.raises(TrustError) as info:
        verify_pin(fake(DER), OTHER.upper(), "gw.local:18789")
    error = info.value
    assert error.kind == "mismatch"
    assert error.endpoint == "gw.local:18789"
    assert error.expected == OTHER
    assert error.actual == FP
    assert OTHER in str(error)
    assert FP in str(error)


def test_verify_pin_without_certificate_is_unavailable() -> None:
    """No peer certificate never passes a pin check."""
    with pytest.raises(TrustError) as info:
        verify_pin(fake(None), FP, "gw.local:18789")
    assert info.value.kind == "unavailable"


def test_verify_pin_rejects_a_malformed_pin() -> None:
    """A malformed stored pin is a ValueError, never a pass."""
    with pytest.raises(ValueError, match="invalid TLS fingerprint"):
        verify_pin(fake(DER), "not-a-pin", "gw.local:18789")
