"""First frame, protocol range, role and browser admission checks."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.handshake import (
    ConnectRejection,
    admit_connect,
    check_browser_origin,
    check_protocol_range,
    parse_first_frame,
    resolve_role,
    validate_connect_params,
)
from openclaw_desktop.protocol import ConnectParams, Role


def _params(
    *,
    role: str | None = "operator",
    mode: str = "cli",
    client_id: str = "cli",
    low: int = 4,
    high: int = 4,
    **extra: Any,
) -> ConnectParams:
    raw: dict[str, Any] = {
        "minProtocol": low,
        "maxProtocol": high,
        "client": {"id": client_id, "version": "1", "platform": "linux", "mode": mode},
        **extra,
    }
    if role is not None:
        raw["role"] = role
    return validate_connect_params(raw)


def _rejected(call: Any, *args: Any, **kw: Any) -> ConnectRejection:
    with pytest.raises(ConnectRejection) as caught:
        call(*args, **kw)
    return caught.value


# ------------------------------------------------------------------ protocol range
@pytest.mark.parametrize(
    ("role", "mode", "low", "high", "legacy"),
    [
        ("operator", "cli", 4, 4, False),
        ("operator", "cli", 1, 9, False),
        ("node", "node", 3, 4, False),
        ("node", "node", 3, 3, True),
        ("operator", "probe", 3, 3, False),
        ("operator", "probe", 2, 3, False),
    ],
)
def test_protocol_accepted(role: str, mode: str, low: int, high: int, legacy: bool) -> None:
    """4 is always fine; node/node may use 3; probes may use 3."""
    assert check_protocol_range(_params(role=role, mode=mode, low=low, high=high)) is legacy


@pytest.mark.parametrize(
    ("role", "mode", "low", "high"),
    [
        ("operator", "cli", 3, 3),
        ("operator", "cli", 5, 5),
        ("node", "cli", 3, 3),
        ("operator", "node", 3, 3),
        ("node", "node", 2, 2),
        ("operator", "probe", 5, 6),
        ("operator", "probe", 1, 2),
    ],
)
def test_protocol_refused(role: str, mode: str, low: int, high: int) -> None:
    """Anything else is a protocol mismatch with close 1002."""
    rejection = _rejected(check_protocol_range, _params(role=role, mode=mode, low=low, high=high))

    assert rejection.close_code == 1002
    assert rejection.details is not None
    assert (rejection.details["clientMinProtocol"], rejection.details["clientMaxProtocol"]) == (
        low,
        high,
    )


# ------------------------------------------------------------------ role
def test_role_defaults_to_operator() -> None:
    """An omitted role is operator."""
    assert resolve_role(_params(role=None)) is Role.OPERATOR


@pytest.mark.parametrize("role", ["admin", "Operator", "worker", " node"])
def test_other_roles_are_invalid(role: str) -> None:
    """Only operator and node, exactly, are roles."""
    assert _rejected(resolve_role, _params(role=role)).message == "invalid role"


def test_protocol_is_checked_before_role() -> None:
    """A bad protocol and a bad role report the protocol."""
    rejection = _rejected(admit_connect, _params(role="admin", low=5, high=5))

    assert rejection.close_code == 1002


def test_admission_result() -> None:
    """Admission returns role, scopes and the legacy-node flag."""
    admission = admit_connect(_params(role="node", mode="node", low=3, high=3, scopes=[]))

    assert admission.role is Role.NODE
    assert admission.scopes == []
    assert admission.uses_legacy_node_protocol is True
    assert admission.is_control_ui is False
    assert admit_connect(_params(client_id="openclaw-tui", mode="ui")).is_control_ui is True


# ------------------------------------------------------------------ browser clients
COPILOT_CAPS = ["run-tool-bindings", "session-scoped-events"]
EXTENSION = "chrome-extension://" + "abcdefghijklmnop" * 2


def test_copilot_needs_ui_mode_and_caps() -> None:
    """The copilot without its caps is refused before its origin is looked at."""
    rejection = _rejected(admit_connect, _params(client_id="openclaw-browser-copilot", mode="ui"))

    assert rejection.message.startswith("browser copilot requires ui mode")


@pytest.mark.parametrize(
    "origin", [None, "https://example.com", "chrome-extension://xyz", EXTENSION + "/path"]
)
def test_copilot_needs_an_extension_origin(origin: str | None) -> None:
    """Only a canonical chrome-extension origin will do."""
    params = _params(client_id="openclaw-browser-copilot", mode="ui", caps=COPILOT_CAPS)

    rejection = _rejected(admit_connect, params, origin=origin)

    assert rejection.details == {
        "code": "CONTROL_UI_ORIGIN_NOT_ALLOWED",
        "reason": "invalid browser copilot origin",
    }


def test_copilot_with_extension_origin_is_admitted() -> None:
    """A canonical extension origin admits the copilot."""
    params = _params(client_id="openclaw-browser-copilot", mode="ui", caps=COPILOT_CAPS)

    assert admit_connect(params, origin=EXTENSION.upper()).role is Role.OPERATOR


def test_webchat_without_origin_is_refused() -> None:
    """Browser clients need an Origin header."""
    rejection = _rejected(admit_connect, _params(client_id="webchat", mode="webchat"))

    assert rejection.details == {
        "code": "CONTROL_UI_ORIGIN_NOT_ALLOWED",
        "reason": "origin missing or invalid",
    }


@pytest.mark.parametrize(
    ("origin", "host", "allowed", "local", "ok"),
    [
        ("http://127.0.0.1:18789", "127.0.0.1:18789", (), True, True),
        ("http://localhost:5173", "127.0.0.1:18789", (), True, True),
        ("http://localhost:5173", "127.0.0.1:18789", (), False, False),
        ("https://evil.example", "127.0.0.1:18789", (), True, False),
        ("https://evil.example", "127.0.0.1:18789", ("https://EVIL.example",), True, True),
        ("https://evil.example", "127.0.0.1:18789", ("*",), True, True),
        ("http://192.168.1.5:18789", "192.168.1.5:18789", (), False, True),
        ("http://box.local:18789", "box.local:18789", (), False, True),
        ("http://user@127.0.0.1", "127.0.0.1", (), True, False),
        ("null", "127.0.0.1", (), True, False),
    ],
)
def test_browser_origin_policy(
    origin: str, host: str, allowed: tuple[str, ...], local: bool, ok: bool
) -> None:
    """Allowlist, trusted same host and local loopback origins pass; others do not."""
    params = _params(client_id="openclaw-control-ui", mode="webchat")

    def check() -> None:
        check_browser_origin(
            params, origin, request_host=host, allowed_origins=allowed, is_local_client=local
        )

    if ok:
        check()
    else:
        assert _rejected(check).details is not None


def test_origin_header_is_checked_for_any_client() -> None:
    """A CLI sending an Origin header is held to the same policy."""
    rejection = _rejected(
        admit_connect, _params(), origin="https://evil.example", request_host="127.0.0.1"
    )

    assert rejection.details == {
        "code": "CONTROL_UI_ORIGIN_NOT_ALLOWED",
        "reason": "origin not allowed",
    }


# ------------------------------------------------------------------ first frame
def _frame(**fields: Any) -> str:
    return json.dumps({"type": "req", "id": "r1", "method": "connect", **fields})


def test_connect_frame_gives_id_and_params() -> None:
    """A connect request unpacks as request id and raw params."""
    request_id, params = parse_first_frame(_frame(params={"a": 1}))

    assert (request_id, params) == ("r1", {"a": 1})
    assert parse_first_frame(_frame().encode()).params is None


@pytest.mark.parametrize(
    ("data", "code", "reason"),
    [
        ("not json{", 1000, ""),
        ('{"type":"req","id":"a","method":"connect","params":NaN}', 1000, ""),
        ("\ufeff" + _frame(), 1000, ""),
        ("5", 1008, "invalid request frame"),
        ("[1,2]", 1008, "invalid request frame"),
        ('{"type":"event","event":"x"}', 1008, "invalid request frame"),
        (_frame(bogus=1), 1008, "invalid request frame"),
        (_frame(id=""), 1008, "invalid request frame"),
        (_frame(id=5), 1008, "invalid request frame"),
        (_frame(traceparent="x" * 129), 1008, "invalid request frame"),
        (_frame(expectedProfileId=""), 1008, "invalid request frame"),
        (_frame(params={"role": "worker"}), 1008, "invalid-handshake"),
        (_frame(params={"client": {"id": "openclaw-worker"}}), 1008, "invalid-handshake"),
        ('{"type":"event","params":{"client":{"mode":"worker"}}}', 1008, "invalid-handshake"),
        (_frame(params={"x": "a" * 70_000}), 1009, ""),
    ],
)
def test_first_frames_closed_without_answer(data: str, code: int, reason: str) -> None:
    """Frames that are not connect requests are closed without a res."""
    rejection = _rejected(parse_first_frame, data)

    assert (rejection.close_code, rejection.close_reason) == (code, reason)
    assert rejection.response_frame("r1") is None


def test_first_request_must_be_connect() -> None:
    """Another method is answered, then closed with the same text."""
    rejection = _rejected(parse_first_frame, _frame(method="health"))

    assert rejection.response_frame() == {
        "type": "res",
        "id": "r1",
        "ok": False,
        "error": {
            "code": "INVALID_REQUEST",
            "message": "invalid handshake: first request must be connect",
        },
    }
    assert (rejection.close_code, rejection.close_reason) == (
        1008,
        "invalid handshake: first request must be connect",
    )


def test_64_kib_frame_is_still_read() -> None:
    """Exactly 65 536 bytes is within the limit."""
    head = _frame(params={"x": ""})
    data = head.replace('"x": ""', '"x": "' + "a" * (65_536 - len(head)) + '"')

    assert len(data.encode()) == 65_536
    assert parse_first_frame(data).request_id == "r1"
