"""ConnectionVault: when the one stored-device-token retry is offered (trusted endpoints)."""

from __future__ import annotations

from typing import Any

import pytest

from openclaw_desktop.errors import gateway_error_from_shape
from openclaw_desktop.identity import CredentialStore, DeviceIdentity, MemorySecretStore
from openclaw_desktop.identity.credentials import StoredDeviceToken
from openclaw_desktop.identity.gateway_id import gateway_key
from openclaw_desktop.protocol import ClientId, ClientInfo, ClientMode, Role
from openclaw_desktop.session import ErrorCategory, select_auth
from openclaw_desktop.transport import ConnectionOptions, Endpoint
from openclaw_desktop.transport.vault import ConnectionVault

PIN = "ab" * 32
MISMATCH = gateway_error_from_shape(
    {
        "code": "INVALID_REQUEST",
        "message": "unauthorized: gateway token mismatch",
        "details": {
            "code": "AUTH_TOKEN_MISMATCH",
            "canRetryWithDeviceToken": True,
            "recommendedNextStep": "retry_with_device_token",
        },
    },
    method="connect",
)


def vault(url: str, *, stored: bool = True, **overrides: Any) -> ConnectionVault:
    """A vault for ``url`` with an explicit shared token and, optionally, a stored token."""
    signer = DeviceIdentity.generate()
    creds = CredentialStore(MemorySecretStore())
    if stored:
        creds.save_device_token(
            gateway_key(url),
            signer.device_id,
            StoredDeviceToken("dev-tok", "operator", ("operator.read",), 1),
        )
    base: dict[str, Any] = {
        "url": url,
        "role": Role.OPERATOR,
        "client": ClientInfo(id=ClientId.CLI, version="t", platform="linux", mode=ClientMode.CLI),
        "signer": signer,
        "credentials": creds,
        "shared_token": "typed-token",
        "shared_token_first": True,
    }
    base.update(overrides)
    options = ConnectionOptions(**base)
    return ConnectionVault(options, Endpoint.parse(url))


@pytest.mark.parametrize(
    ("url", "overrides"),
    [
        ("ws://127.0.0.1:18789", {}),
        ("ws://192.168.1.20:18789", {}),
        ("ws://gateway.local:18789", {}),
        ("wss://gateway.example.com:443", {"tls_fingerprint": PIN}),
    ],
    ids=["loopback", "lan", "mdns", "pinned-tls"],
)
def test_trusted_endpoints_get_one_device_token_retry(url: str, overrides: dict[str, Any]) -> None:
    """Loopback/LAN cleartext and pinned TLS: retry at once with the device token, once."""
    v = vault(url, **overrides)
    first = v.decide(MISMATCH, "shared-token")
    assert first.retry_with_device_token and first.retry_now and not first.pause
    retry = select_auth(
        v.credentials(), role=Role.OPERATOR, requested_scopes=(), device_token_retry=True
    )
    assert retry.source == "device-token-retry"
    assert retry.auth is not None and retry.auth.device_token == "dev-tok"
    assert retry.auth.token == "typed-token"
    second = v.decide(MISMATCH, "device-token-retry")
    assert second.pause and not second.retry_with_device_token
    assert second.category is ErrorCategory.AUTH


def test_public_tls_without_a_pin_gets_no_retry() -> None:
    """wss:// trusted only by the system CAs (no pin) is not a trusted endpoint: pause."""
    decision = vault("wss://gateway.example.com:443").decide(MISMATCH, "shared-token")
    assert decision.pause and not decision.retry_with_device_token


def test_no_stored_device_token_no_retry() -> None:
    """Nothing to retry with: pause."""
    decision = vault("ws://127.0.0.1:18789", stored=False).decide(MISMATCH, "shared-token")
    assert decision.pause and not decision.retry_with_device_token


def test_only_an_explicit_shared_token_goes_first() -> None:
    """The flag covers the token given for this connection, not one from the store."""
    explicit = vault("ws://127.0.0.1:18789").credentials()
    assert explicit.shared_token_first
    assert select_auth(explicit, role=Role.OPERATOR, requested_scopes=()).source == "shared-token"
    v = vault("ws://127.0.0.1:18789", shared_token=None)
    assert v.options.credentials is not None
    v.options.credentials.save_shared_token(v.gateway, "stored-shared")
    stored = v.credentials()
    assert stored.shared_token == "stored-shared" and not stored.shared_token_first
    assert select_auth(stored, role=Role.OPERATOR, requested_scopes=()).source == "device-token"
    default = vault("ws://127.0.0.1:18789", shared_token_first=False).credentials()
    assert select_auth(default, role=Role.OPERATOR, requested_scopes=()).source == "device-token"
