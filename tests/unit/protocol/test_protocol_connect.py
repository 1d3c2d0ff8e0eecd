"""Unit tests for openclaw_desktop.protocol.connect: the handshake models."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from openclaw_desktop.protocol import (
    ClientId,
    ClientInfo,
    ClientMode,
    ConnectAuth,
    ConnectChallenge,
    ConnectParams,
    DeviceProof,
    DeviceTokenGrant,
    HelloAuth,
    HelloOk,
    Policy,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "protocol"

#: The enums exactly as listed in the reference (dist/client-info-*.mjs).
REAL_CLIENT_IDS = [
    "webchat-ui",
    "openclaw-control-ui",
    "openclaw-browser-copilot",
    "openclaw-tui",
    "webchat",
    "cli",
    "gateway-client",
    "openclaw-macos",
    "openclaw-linux",
    "openclaw-ios",
    "openclaw-watchos",
    "openclaw-android",
    "node-host",
    "openclaw-worker",
    "test",
    "fingerprint",
    "openclaw-probe",
]
REAL_CLIENT_MODES = ["webchat", "cli", "ui", "backend", "node", "worker", "probe", "test"]


def operator_params() -> dict[str, Any]:
    """A fresh copy of the real operator connect params."""
    data = json.loads((FIXTURES / "connect_request_operator.json").read_text(encoding="utf-8"))
    params: dict[str, Any] = data["params"]
    return copy.deepcopy(params)


# ---------------------------------------------------------------- ConnectParams


def test_client_id_enum_matches_the_real_gateway() -> None:
    """ClientId holds exactly the ids the real gateway accepts."""
    assert [c.value for c in ClientId] == REAL_CLIENT_IDS


def test_client_mode_enum_matches_the_real_gateway() -> None:
    """ClientMode holds exactly the modes the real gateway accepts."""
    assert [m.value for m in ClientMode] == REAL_CLIENT_MODES


@pytest.mark.parametrize(
    ("path", "where"),
    [
        ((), "bogus"),
        (("client",), "client.bogus"),
        (("device",), "device.bogus"),
        (("auth",), "auth.bogus"),
    ],
)
def test_connect_params_reject_extra_property(path: tuple[str, ...], where: str) -> None:
    """ConnectParams is closed at every level, like the gateway's schema."""
    params = operator_params()
    target = params
    for key in path:
        target = target[key]
    target["bogus"] = 1
    with pytest.raises(ValidationError) as info:
        ConnectParams.model_validate(params)
    locs = [".".join(str(p) for p in e["loc"]) for e in info.value.errors()]
    assert locs == [where]
    assert info.value.errors()[0]["type"] == "extra_forbidden"


@pytest.mark.parametrize(
    ("field", "value"),
    [("id", "openclaw-desktop"), ("id", "CLI"), ("mode", "desktop"), ("mode", "")],
)
def test_connect_params_reject_unknown_client_id_or_mode(field: str, value: str) -> None:
    """An id or mode outside the gateway's enums is refused before sending."""
    params = operator_params()
    params["client"][field] = value
    with pytest.raises(ValidationError) as info:
        ConnectParams.model_validate(params)
    assert info.value.errors()[0]["loc"] == ("client", field)


@pytest.mark.parametrize("client_id", REAL_CLIENT_IDS)
def test_every_real_client_id_is_accepted(client_id: str) -> None:
    """Each id the gateway knows is a valid client.id."""
    params = operator_params()
    params["client"]["id"] = client_id
    assert ConnectParams.model_validate(params).client.id.value == client_id


@pytest.mark.parametrize("value", ["4", 4.0, True, None])
def test_protocol_numbers_are_strict_integers(value: Any) -> None:
    """minProtocol must be a JSON integer, not a string, float or bool."""
    params = operator_params()
    params["minProtocol"] = value
    with pytest.raises(ValidationError):
        ConnectParams.model_validate(params)


def test_connect_params_require_client_and_protocols() -> None:
    """client, minProtocol and maxProtocol are required."""
    for key in ("client", "minProtocol", "maxProtocol"):
        params = operator_params()
        del params[key]
        with pytest.raises(ValidationError):
            ConnectParams.model_validate(params)


def test_connect_params_optional_fields_are_left_out() -> None:
    """A minimal ConnectParams serialises without any None field."""
    params = ConnectParams(
        min_protocol=4,
        max_protocol=4,
        client=ClientInfo(id=ClientId.LINUX, version="1", platform="linux", mode=ClientMode.UI),
    )
    assert params.to_wire() == {
        "minProtocol": 4,
        "maxProtocol": 4,
        "client": {"id": "openclaw-linux", "version": "1", "platform": "linux", "mode": "ui"},
    }


def test_client_info_limits() -> None:
    """buildId is at most 96 characters and timeZone at most 64; empty strings are refused."""
    base: dict[str, Any] = {"id": "cli", "version": "1", "platform": "linux", "mode": "cli"}
    ClientInfo.model_validate({**base, "buildId": "b" * 96, "timeZone": "t" * 64})
    for extra in ({"buildId": "b" * 97}, {"timeZone": "t" * 65}, {"displayName": ""}):
        with pytest.raises(ValidationError):
            ClientInfo.model_validate({**base, **extra})
    with pytest.raises(ValidationError):
        ClientInfo.model_validate({**base, "version": ""})


def test_device_proof_signed_at_is_a_strict_non_negative_integer() -> None:
    """device.signedAt refuses strings, floats and negative numbers."""
    base = {"id": "d", "publicKey": "k", "signature": "s", "nonce": "n"}
    assert DeviceProof.model_validate({**base, "signedAt": 0}).signed_at == 0
    for bad in ("1", 1.5, -1, True):
        with pytest.raises(ValidationError):
            DeviceProof.model_validate({**base, "signedAt": bad})


def test_device_proof_signature_length_is_capped() -> None:
    """An absurdly long signature is refused (the gateway caps it too)."""
    base = {"id": "d", "publicKey": "k", "nonce": "n", "signedAt": 1}
    with pytest.raises(ValidationError):
        DeviceProof.model_validate({**base, "signature": "s" * 257})


def test_connect_auth_wire_names() -> None:
    """ConnectAuth writes camelCase names and leaves unset fields out."""
    auth = ConnectAuth(token="t", device_token="d", bootstrap_token="b")
    assert auth.to_wire() == {"token": "t", "deviceToken": "d", "bootstrapToken": "b"}


def test_connect_auth_repr_never_shows_secrets() -> None:
    """repr and str of ConnectAuth name the fields present, never their values."""
    auth = ConnectAuth(token="secret-1", device_token="secret-2", password="secret-3")
    for text in (repr(auth), str(auth), f"{auth}"):
        assert "secret" not in text
        assert "token" in text
        assert "password" in text
    assert repr(ConnectAuth()) == "ConnectAuth(<redacted: none>)"


def test_connect_params_repr_never_shows_the_token() -> None:
    """repr of whole connect params (as a log line would show them) hides auth secrets."""
    params = ConnectParams.model_validate(operator_params())
    assert "test-token-123" not in repr(params)
    assert "test-token-123" not in str(params)


# ---------------------------------------------------------------- ConnectChallenge


@pytest.mark.parametrize(
    "payload",
    [
        {"nonce": "n"},
        {"nonce": "n", "ts": "1796023931231"},
        {"nonce": "n", "ts": -1},
        {"nonce": "n", "ts": 1.5},
        {"nonce": "n", "ts": True},
        {"nonce": "", "ts": 1},
        {"ts": 1},
        {"nonce": 5, "ts": 1},
        {"nonce": "n", "ts": 1, "capabilities": "x"},
    ],
)
def test_challenge_rejects_bad_payloads(payload: dict[str, Any]) -> None:
    """A challenge needs a non-empty nonce and a non-negative integer ts."""
    with pytest.raises(ValidationError):
        ConnectChallenge.model_validate(payload)


def test_challenge_tolerates_new_fields_and_missing_capabilities() -> None:
    """The challenge is an open model: new fields are kept, capabilities default to []."""
    challenge = ConnectChallenge.model_validate({"nonce": "n", "ts": 0, "future": True})
    assert challenge.capabilities == []
    assert (challenge.model_extra or {})["future"] is True


# ---------------------------------------------------------------- HelloOk


def minimal_hello() -> dict[str, Any]:
    """The smallest hello-ok the schema allows."""
    return {
        "type": "hello-ok",
        "protocol": 4,
        "server": {"version": "1", "connId": "c"},
        "auth": {"role": "operator"},
    }


def test_minimal_hello_ok_gets_defaults() -> None:
    """Missing features, snapshot and policy fall back to the documented defaults."""
    hello = HelloOk.model_validate(minimal_hello())
    assert hello.features.methods == []
    assert hello.policy == Policy()
    assert hello.policy.max_payload == 25 * 1024 * 1024
    assert hello.policy.tick_interval_ms == 30_000
    assert hello.auth.scopes == []
    assert hello.auth.device_token is None


@pytest.mark.parametrize("missing", ["type", "protocol", "server", "auth"])
def test_hello_ok_requires_its_core_fields(missing: str) -> None:
    """type, protocol, server and auth are required."""
    payload = minimal_hello()
    del payload[missing]
    with pytest.raises(ValidationError):
        HelloOk.model_validate(payload)


def test_hello_ok_type_must_be_hello_ok() -> None:
    """Another type string is not a hello-ok."""
    payload = minimal_hello()
    payload["type"] = "hello"
    with pytest.raises(ValidationError):
        HelloOk.model_validate(payload)


def test_policy_tick_interval_must_be_positive() -> None:
    """tickIntervalMs 0 would make the watchdog fire at once; it is refused."""
    payload = minimal_hello()
    payload["policy"] = {"tickIntervalMs": 0}
    with pytest.raises(ValidationError):
        HelloOk.model_validate(payload)


def test_hello_auth_device_tokens_and_reprs() -> None:
    """Bootstrap hand-off tokens parse, and no repr shows any token."""
    auth = HelloAuth.model_validate(
        {
            "role": "node",
            "deviceToken": "tok-main",
            "deviceTokens": [
                {"deviceToken": "tok-op", "role": "operator", "scopes": ["operator.read"]}
            ],
        }
    )
    assert auth.device_tokens == [
        DeviceTokenGrant(device_token="tok-op", role="operator", scopes=["operator.read"])
    ]
    assert "tok-" not in repr(auth)
    assert "tok-" not in repr(auth.device_tokens[0])
    assert "device_token=<redacted>" in repr(auth)
    assert "device_token=None" in repr(HelloAuth(role="operator"))
