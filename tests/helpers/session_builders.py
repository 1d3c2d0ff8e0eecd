"""Builders for driving the sans-I/O GatewayClientProtocol in unit tests.

Frames go in as bytes, time as plain numbers; nothing here opens a socket or sleeps.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from openclaw_desktop.protocol import ClientId, ClientInfo, ClientMode, Role
from openclaw_desktop.session import (
    ConnectPlan,
    Credentials,
    GatewayClientProtocol,
    HandshakeComplete,
    Signer,
    select_auth,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "protocol"

NONCE = "d9b822e8-4000-4987-9480-cf4472d36881"
TS = 1796023931231
OPERATOR_SCOPES = ("operator.read", "operator.write")


def load_fixture(name: str) -> Any:
    """A golden frame from ``tests/fixtures/protocol``."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def counter_ids(prefix: str = "r") -> Callable[[], str]:
    """A deterministic request id factory: r1, r2, ..."""
    counter = itertools.count(1)
    return lambda: f"{prefix}{next(counter)}"


def client_info(
    *,
    client_id: ClientId = ClientId.LINUX,
    mode: ClientMode = ClientMode.UI,
    platform: str = "linux",
    device_family: str | None = None,
) -> ClientInfo:
    """A ClientInfo for the desktop app."""
    return ClientInfo(
        id=client_id,
        version="0.1.0",
        platform=platform,
        mode=mode,
        device_family=device_family,
    )


def make_plan(
    *,
    signer: Signer | None = None,
    role: Role = Role.OPERATOR,
    creds: Credentials | None = None,
    scopes: tuple[str, ...] = OPERATOR_SCOPES,
    client: ClientInfo | None = None,
    commands: tuple[str, ...] | None = None,
    caps: tuple[str, ...] = (),
    permissions: Mapping[str, bool] | None = None,
    path_env: str | None = None,
) -> ConnectPlan:
    """A ConnectPlan with a shared token unless other credentials are given."""
    if creds is None:
        creds = Credentials(shared_token="shared-tok")
    if client is None:
        client = (
            client_info(client_id=ClientId.NODE_HOST, mode=ClientMode.NODE)
            if role is Role.NODE
            else client_info()
        )
    return ConnectPlan(
        client=client,
        role=role,
        auth=select_auth(creds, role=role, requested_scopes=scopes),
        signer=signer,
        caps=caps,
        commands=commands,
        permissions=permissions,
        path_env=path_env,
    )


def make_core(
    plan: ConnectPlan | None = None,
    *,
    now: float = 0.0,
    **kwargs: Any,
) -> GatewayClientProtocol:
    """A fresh core with deterministic request ids."""
    kwargs.setdefault("id_factory", counter_ids())
    return GatewayClientProtocol(plan or make_plan(), now=now, **kwargs)


def event_bytes(event: str, payload: Any = None, **extra: Any) -> bytes:
    """An event frame as bytes."""
    frame: dict[str, Any] = {"type": "event", "event": event}
    if payload is not None:
        frame["payload"] = payload
    frame.update(extra)
    return orjson.dumps(frame)


def challenge_bytes(nonce: str = NONCE, ts: Any = TS, **extra: Any) -> bytes:
    """A connect.challenge frame (pass ``ts=...`` to break it)."""
    payload: dict[str, Any] = {"nonce": nonce, "ts": ts, **extra}
    return event_bytes("connect.challenge", payload)


def res_bytes(request_id: str, *, ok: bool = True, payload: Any = None, error: Any = None) -> bytes:
    """A res frame as bytes."""
    frame: dict[str, Any] = {"type": "res", "id": request_id, "ok": ok}
    if payload is not None:
        frame["payload"] = payload
    if error is not None:
        frame["error"] = error
    return orjson.dumps(frame)


def hello_payload(
    *,
    role: str = "operator",
    tick_interval_ms: int | None = None,
    max_payload: int | None = None,
) -> dict[str, Any]:
    """The real hello-ok payload, optionally with another role or policy."""
    name = "hello_ok_node.json" if role == "node" else "hello_ok_operator.json"
    payload: dict[str, Any] = copy.deepcopy(load_fixture(name)["payload"])
    if tick_interval_ms is not None:
        payload["policy"]["tickIntervalMs"] = tick_interval_ms
    if max_payload is not None:
        payload["policy"]["maxPayload"] = max_payload
    return payload


def sent_frames(core: GatewayClientProtocol) -> list[dict[str, Any]]:
    """Drain and decode what the core wants written."""
    return [orjson.loads(data) for data in core.data_to_send()]


def ready_core(
    plan: ConnectPlan | None = None,
    *,
    now: float = 0.0,
    tick_interval_ms: int | None = None,
    max_payload: int | None = None,
    **kwargs: Any,
) -> GatewayClientProtocol:
    """A core taken through challenge and hello-ok at time ``now``, buffers drained."""
    core = make_core(plan, now=now, **kwargs)
    core.receive_data(challenge_bytes(), now)
    (connect,) = sent_frames(core)
    hello = hello_payload(tick_interval_ms=tick_interval_ms, max_payload=max_payload)
    core.receive_data(res_bytes(connect["id"], payload=hello), now)
    events = core.events_received()
    assert len(events) == 1
    assert isinstance(events[0], HandshakeComplete)
    return core


__all__ = [
    "NONCE",
    "OPERATOR_SCOPES",
    "TS",
    "challenge_bytes",
    "client_info",
    "counter_ids",
    "event_bytes",
    "hello_payload",
    "load_fixture",
    "make_core",
    "make_plan",
    "ready_core",
    "res_bytes",
    "sent_frames",
]
