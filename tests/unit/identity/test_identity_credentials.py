"""Per-gateway credentials over a secret store: keys, scope keeping, forgetting."""

from __future__ import annotations

import json
import logging

import pytest

from openclaw_desktop.identity import (
    DEFAULT_GATEWAY_PORT,
    CredentialStore,
    MemorySecretStore,
    StoredDeviceToken,
    gateway_key,
)

GW = "gateway.local:18789"
DEV = "a" * 64
SECRET = "s3cr3t-token-value"


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("ws://Gateway.Local:18789", "gateway.local:18789"),
        ("wss://gateway.local:18789/", "gateway.local:18789"),
        ("ws://gateway.local", f"gateway.local:{DEFAULT_GATEWAY_PORT}"),
        ("wss://gateway.local", "gateway.local:18789"),
        ("WSS://GATEWAY.LOCAL./path?q=1", "gateway.local:18789"),
        ("ws://127.0.0.1:19001", "127.0.0.1:19001"),
        ("ws://[::1]:19001", "::1:19001"),
        ("wss://[FE80::1]", "fe80::1:18789"),
        ("ws://user:pw@host:1", "host:1"),
    ],
)
def test_gateway_key_forms(url: str, key: str) -> None:
    """Hosts are lowercased, IPv6 loses brackets, the port defaults to 18789."""
    assert gateway_key(url) == key


@pytest.mark.parametrize(
    "url", ["http://host:1", "https://host", "host:18789", "ws://", "ws://host:99999", "ws://h:x"]
)
def test_gateway_key_rejects(url: str) -> None:
    """Non-ws(s) URLs, missing hosts and bad ports raise ValueError."""
    with pytest.raises(ValueError):  # noqa: PT011 - several distinct messages
        gateway_key(url)


def _store() -> tuple[CredentialStore, MemorySecretStore]:
    secrets = MemorySecretStore()
    return CredentialStore(secrets), secrets


def test_device_token_round_trip_per_role() -> None:
    """Tokens are kept per gateway, device and role."""
    creds, _ = _store()
    op = StoredDeviceToken("op-token", "operator", ("operator.read",), 10)
    node = StoredDeviceToken("node-token", "node", (), None)
    creds.save_device_token(GW, DEV, op)
    creds.save_device_token(GW, DEV, node)
    assert creds.device_token(GW, DEV, "operator") == op
    assert creds.device_token(GW, DEV, "node") == node
    assert creds.device_token(GW, "b" * 64, "operator") is None
    assert creds.device_token("other:1", DEV, "operator") is None


def test_urls_and_keys_address_the_same_entries() -> None:
    """A ws URL and its gateway key refer to the same credentials."""
    creds, _ = _store()
    creds.save_shared_token("wss://Gateway.Local", SECRET)
    assert creds.shared_token(GW) == SECRET
    assert creds.shared_token("ws://gateway.local:18789/x") == SECRET


def test_same_token_keeps_stored_scopes() -> None:
    """Re-saving the same token with fewer scopes keeps the stored scopes."""
    creds, _ = _store()
    wide = ("operator.read", "operator.write", "operator.admin")
    creds.save_device_token(GW, DEV, StoredDeviceToken("tok", "operator", wide, 100))
    creds.save_device_token(GW, DEV, StoredDeviceToken("tok", "operator", ("operator.read",), 200))
    stored = creds.device_token(GW, DEV, "operator")
    assert stored is not None
    assert stored.scopes == wide
    assert stored.issued_at_ms == 100


def test_saving_the_same_token_again_writes_nothing() -> None:
    """A reconnect handing back the stored token costs no secret-store write."""
    creds, store = _store()
    token = StoredDeviceToken("tok", "operator", ("operator.read",), 100)
    creds.save_device_token(GW, DEV, token)
    writes: list[str] = []
    original = store.set

    def counting_set(key: str, value: str) -> None:
        writes.append(key)
        original(key, value)

    store.set = counting_set  # type: ignore[method-assign]
    creds.save_device_token(GW, DEV, token)
    assert writes == []
    creds.save_device_token(GW, DEV, StoredDeviceToken("tok2", "operator", ("operator.read",)))
    assert writes


def test_new_token_replaces_scopes() -> None:
    """A different token string replaces token and scopes."""
    creds, _ = _store()
    creds.save_device_token(GW, DEV, StoredDeviceToken("old", "operator", ("operator.admin",)))
    new = StoredDeviceToken("new", "operator", ("operator.read",), 5)
    creds.save_device_token(GW, DEV, new)
    assert creds.device_token(GW, DEV, "operator") == new


def test_values_are_compact_json() -> None:
    """Stored values are compact JSON documents."""
    creds, secrets = _store()
    creds.save_device_token(GW, DEV, StoredDeviceToken("tok", "node", (), 1))
    raw = secrets.get(f"gateway/{GW}/device-token/{DEV}/node")
    assert raw == '{"token":"tok","role":"node","scopes":[],"issuedAtMs":1}'


def test_clear_device_token() -> None:
    """Clearing one role's token leaves the other."""
    creds, _ = _store()
    creds.save_device_token(GW, DEV, StoredDeviceToken("a", "operator"))
    creds.save_device_token(GW, DEV, StoredDeviceToken("b", "node"))
    creds.clear_device_token(GW, DEV, "operator")
    assert creds.device_token(GW, DEV, "operator") is None
    assert creds.device_token(GW, DEV, "node") is not None
    assert creds.known_gateways() == [GW]


def test_shared_token_password_and_pin() -> None:
    """Shared token, password and TLS pin are stored and read per gateway."""
    creds, _ = _store()
    creds.save_shared_token(GW, SECRET)
    creds.save_password(GW, "pw")
    creds.save_tls_pin(GW, "sha256:AB:CD")
    assert creds.shared_token(GW) == SECRET
    assert creds.password(GW) == "pw"
    assert creds.tls_pin(GW) == "sha256:AB:CD"
    assert creds.shared_token("other.local:18789") is None
    assert creds.password("other.local:18789") is None
    assert creds.tls_pin("other.local:18789") is None
    assert creds.known_gateways() == [GW]


def test_forget_gateway_removes_everything() -> None:
    """forget_gateway removes every entry of that gateway, including its index."""
    creds, secrets = _store()
    other = "other.local:18789"
    creds.save_device_token(GW, DEV, StoredDeviceToken("a", "operator"))
    creds.save_device_token(GW, "b" * 64, StoredDeviceToken("b", "node"))
    creds.save_shared_token(GW, SECRET)
    creds.save_password(GW, "pw")
    creds.save_tls_pin(GW, "pin")
    creds.save_shared_token(other, "other-token")
    assert creds.known_gateways() == [GW, other]
    creds.forget_gateway("wss://gateway.local")
    assert creds.known_gateways() == [other]
    assert [key for key in secrets.snapshot() if GW in key] == []
    assert creds.shared_token(other) == "other-token"
    creds.forget_gateway(other)
    assert secrets.snapshot() == {}


@pytest.mark.parametrize(
    "raw",
    [
        f"not json {SECRET}",
        "[]",
        '{"token": 5, "role": "operator"}',
        f'{{"token":"{SECRET}","role":"node"}}',
        f'{{"token":"{SECRET}","role":"operator","scopes":"operator.read"}}',
        f'{{"token":"{SECRET}","role":"operator","issuedAtMs":"1"}}',
        '{"token":"","role":"operator"}',
    ],
)
def test_corrupt_device_token_is_absent_and_not_logged(
    raw: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A corrupt stored device token reads as absent; the warning omits the value."""
    creds = CredentialStore(MemorySecretStore({f"gateway/{GW}/device-token/{DEV}/operator": raw}))
    with caplog.at_level(logging.WARNING, logger="openclaw.identity"):
        assert creds.device_token(GW, DEV, "operator") is None
    assert len(caplog.records) == 1
    assert SECRET not in caplog.text


@pytest.mark.parametrize(
    "raw", [SECRET, f'"{SECRET}"', f'{{"password":"{SECRET}"}}', '{"token":""}', "null"]
)
def test_corrupt_shared_token_is_absent_and_not_logged(
    raw: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A corrupt stored shared token reads as absent; the warning omits the value."""
    creds = CredentialStore(MemorySecretStore({f"gateway/{GW}/shared-token": raw}))
    with caplog.at_level(logging.WARNING, logger="openclaw.identity"):
        assert creds.shared_token(GW) is None
    assert SECRET not in caplog.text


def test_corrupt_index_is_ignored(caplog: pytest.LogCaptureFixture) -> None:
    """A corrupt gateway index reads as empty, with a warning."""
    secrets = MemorySecretStore({"gateways": "{broken"})
    creds = CredentialStore(secrets)
    with caplog.at_level(logging.WARNING, logger="openclaw.identity"):
        assert creds.known_gateways() == []
    assert "gateway index" in caplog.text


def test_nothing_secret_in_reprs_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    """Token reprs, store reprs and debug logs never contain secrets."""
    token = StoredDeviceToken(SECRET, "operator", ("operator.read",), 1)
    assert SECRET not in repr(token)
    creds, _ = _store()
    with caplog.at_level(logging.DEBUG, logger="openclaw.identity"):
        creds.save_device_token(GW, DEV, token)
        creds.save_password(GW, SECRET + "pw")
        creds.device_token(GW, DEV, "operator")
        creds.password(GW)
    assert SECRET not in caplog.text
    assert SECRET not in repr(creds)


@pytest.mark.parametrize("bad", ["", "a/b", "with space"])
def test_bad_key_parts_rejected(bad: str) -> None:
    """Device ids, roles and gateway keys cannot smuggle '/' or spaces into keys."""
    creds, _ = _store()
    with pytest.raises(ValueError, match="must be non-empty"):
        creds.device_token(GW, bad, "operator")
    with pytest.raises(ValueError, match="must be non-empty"):
        creds.shared_token(bad)


def test_empty_secrets_rejected() -> None:
    """Saving an empty token, password or pin is a caller bug."""
    creds, _ = _store()
    with pytest.raises(ValueError, match="empty"):
        creds.save_shared_token(GW, "")
    with pytest.raises(ValueError, match="empty"):
        creds.save_device_token(GW, DEV, StoredDeviceToken("", "operator"))


def test_stored_value_format_is_json_list_index() -> None:
    """The per-gateway index lists the keys written, as a JSON list."""
    creds, secrets = _store()
    creds.save_tls_pin(GW, "pin")
    index = secrets.get(f"gateway/{GW}/index")
    assert index is not None
    assert json.loads(index) == [f"gateway/{GW}/tls-pin"]
    assert json.loads(secrets.get("gateways") or "null") == [GW]
