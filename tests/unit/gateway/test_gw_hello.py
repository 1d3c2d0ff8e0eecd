"""hello-ok built from the protocol's HelloOk model (:mod:`gateway.hello`)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gateway.hello import hello_ok
from openclaw_desktop.protocol import PROTOCOL_VERSION, HelloOk, ServerInfo


def test_hello_ok_holds_what_was_given_and_nothing_defaulted_in() -> None:
    payload = hello_ok(
        server=ServerInfo(version="1.0", boot_id="b", conn_id="c"),
        methods=["chat.send"],
        events=["chat"],
        capabilities=["published-model-catalog"],
        snapshot={
            "presence": [{"host": "h", "reason": None}],
            "health": {"ok": True, "detail": None},
            "stateVersion": {"presence": 1, "health": 2},
            "uptimeMs": 5,
            "authMode": "token",
        },
        auth={"role": "operator", "scopes": ["operator.read"], "issuedAtMs": 3, "newer": None},
        tick_interval_ms=15_000,
    )
    assert payload["type"] == "hello-ok" and payload["protocol"] == PROTOCOL_VERSION == 4
    assert payload["server"] == {"version": "1.0", "bootId": "b", "connId": "c"}
    assert payload["features"] == {
        "methods": ["chat.send"],
        "events": ["chat"],
        "capabilities": ["published-model-catalog"],
    }
    # Given values kept as they are (None included); no defaults added (no deviceTokens).
    assert payload["auth"] == {
        "role": "operator",
        "scopes": ["operator.read"],
        "issuedAtMs": 3,
        "newer": None,
    }
    assert payload["snapshot"]["health"] == {"ok": True, "detail": None}
    assert payload["snapshot"]["sessionDefaults"]["mainSessionKey"] == "agent:main:main"
    assert payload["policy"]["tickIntervalMs"] == 15_000
    assert set(payload["policy"]["attachments"]) == {"maxBytes", "maxImageBytes"}
    # What the client reads it with.
    hello = HelloOk.model_validate(payload)
    assert hello.server.conn_id == "c" and hello.policy.tick_interval_ms == 15_000


def test_a_hello_ok_the_model_refuses_is_not_sent() -> None:
    with pytest.raises(ValidationError, match="role"):
        hello_ok(
            server=ServerInfo(version="1.0", conn_id="c"),
            methods=[],
            events=[],
            capabilities=[],
            snapshot={},
            auth={"scopes": []},  # no role
            tick_interval_ms=0,
        )
