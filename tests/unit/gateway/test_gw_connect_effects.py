"""The server's side of the connect decision without a socket: the state view over a real
:class:`GatewayApp` (SQLite in a temporary directory) and the effects carried out on it,
in the order the decision yields them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.app import GatewayApp
from gateway.connect import DecisionStateView, perform, run_decision
from gateway.handshake import ConnectRejection, validate_connect_params
from gateway.handshake import decision as d
from gateway.handshake.decide import decide
from openclaw_desktop.identity import DeviceIdentity, build_payload_v3, signature_token
from tests.helpers.bundled_gateway import TOKEN
from tests.helpers.method_dispatch import gateway_app

NONCE = "5c1d9f1e-7a64-4c1e-8d0f-1a2b3c4d5e6f"
IDENTITY = DeviceIdentity.from_seed(bytes(range(1, 33)), created_at_ms=0)


@pytest.fixture
def app(tmp_path: Path) -> Iterator[GatewayApp]:
    with gateway_app(tmp_path, auto_approve_local=True) as gateway:
        yield gateway


def _params(auth: dict[str, Any], now: int) -> Any:
    scopes = ["operator.read"]
    payload = build_payload_v3(
        device_id=IDENTITY.device_id,
        client_id="cli",
        client_mode="cli",
        role="operator",
        scopes=scopes,
        signed_at_ms=now,
        token=signature_token(auth),
        nonce=NONCE,
        platform="linux",
        device_family=None,
    )
    return validate_connect_params(
        {
            "minProtocol": 4,
            "maxProtocol": 4,
            "client": {"id": "cli", "version": "1.0", "platform": "linux", "mode": "cli"},
            "role": "operator",
            "scopes": scopes,
            "auth": auth,
            "device": {
                "id": IDENTITY.device_id,
                "publicKey": IDENTITY.public_key,
                "signature": IDENTITY.sign(payload),
                "signedAt": now,
                "nonce": NONCE,
            },
        }
    )


def _connect(
    app: GatewayApp, auth: dict[str, Any], now: int, done: list[str] | None = None
) -> d.Admitted:
    ctx = d.ConnectContext(
        address="127.0.0.1", local=True, origin=None, host=None, nonce=NONCE, now_ms=now
    )

    def carry_out(effect: d.Effect) -> object:
        if done is not None:
            done.append(type(effect).__name__)
        return perform(app, effect)

    outcome = run_decision(decide(_params(auth, now), ctx, DecisionStateView(app)), carry_out)
    assert isinstance(outcome, d.Admitted), outcome
    return outcome


def test_first_connect_pairs_and_the_issued_token_works_next_time(app: GatewayApp) -> None:
    """Shared token on this machine: the device is approved silently and its hello-ok token
    is the one stored; the next connect with it is a device-token connect, and its use is
    recorded only when the after-hello effects run."""
    now = 1_796_023_931_000
    done: list[str] = []
    first = _connect(app, {"token": TOKEN}, now, done)
    assert done == ["LimiterReset", "RequestPairing", "ResolvePairing", "Broadcast", "IssueToken"]
    record = app.state.devices.get(IDENTITY.device_id)
    assert record is not None and record.approved_via == "silent"
    token = first.hello_auth["deviceToken"]
    assert app.state.tokens.verify(IDENTITY.device_id, "operator", token) is not None

    second = _connect(app, {"deviceToken": token}, now + 1_000)
    assert second.auth_method == "device-token"
    assert second.hello_auth["deviceToken"] == token
    stored = app.state.tokens.get(IDENTITY.device_id, "operator")
    assert stored is not None and stored.last_used_at_ms is None
    for effect in second.after_hello:
        perform(app, effect)
    stored = app.state.tokens.get(IDENTITY.device_id, "operator")
    assert stored is not None and stored.last_used_at_ms is not None


def test_a_wrong_device_token_writes_nothing(app: GatewayApp) -> None:
    now = 1_796_023_931_000
    _connect(app, {"token": TOKEN}, now)
    ctx = d.ConnectContext(
        address="127.0.0.1", local=True, origin=None, host=None, nonce=NONCE, now_ms=now
    )
    before = app.state.devices.get(IDENTITY.device_id)
    outcome = run_decision(
        decide(_params({"deviceToken": "not-it"}, now), ctx, DecisionStateView(app)),
        lambda effect: perform(app, effect),
    )
    assert isinstance(outcome, ConnectRejection)
    assert outcome.details is not None
    assert outcome.details["code"] == "AUTH_DEVICE_TOKEN_MISMATCH"
    assert app.state.devices.get(IDENTITY.device_id) == before
