"""``chat.send_timing`` of the bundled gateway over real loopback WebSockets, with the fake
model over real HTTP: an operator UI (the TUI's client id) gets ``serverTiming`` on its ack
and the phases of its run, in the real gateway's order, on its own connection only; a CLI
client gets neither. (The Control UI's side-by-side check is in
``tests/interop/test_control_ui_real_client.py``.)"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.bundled_gateway import ALL_OPERATOR_SCOPES, RawClient, raw_operator
from tests.integration.gateway.methods.test_gw_session_subscriptions import gateway

pytestmark = pytest.mark.timeout(60)

PHASES = [
    "dispatch-started",
    "model-selected",
    "agent-run-started",
    "first-assistant-event",
    "dispatch-completed",
    "post-dispatch-completed",
]


async def _send(op: RawClient, message: str = "hello") -> tuple[str, dict[str, Any]]:
    run_id = str(uuid.uuid4())
    params = {"sessionKey": "main", "message": message, "idempotencyKey": run_id}
    ack = await op.ok("chat.send", params)
    await op.wait_event(
        "chat", lambda e: e["payload"]["runId"] == run_id and e["payload"]["state"] == "final"
    )
    return run_id, ack


async def test_a_ui_send_is_timed_to_its_sender_only(tmp_path: Any) -> None:
    async with gateway(tmp_path) as gw:
        ui = await RawClient.open(gw.url)
        other_ui = await RawClient.open(gw.url)
        try:
            for client in (ui, other_ui):
                res = await client.connect(
                    DeviceIdentity.generate(),
                    scopes=ALL_OPERATOR_SCOPES,
                    client_id="openclaw-tui",
                    client_mode="ui",
                )
                assert res["ok"] is True, res
            run_id, ack = await _send(ui)
            assert set(ack["serverTiming"]) == {"receivedToAckMs", "loadSessionMs"}
            assert all(v >= 0 for v in ack["serverTiming"].values())
            await ui.wait_event(
                "chat.send_timing", lambda e: e["payload"]["phase"] == "post-dispatch-completed"
            )
            timings = [e["payload"] for e in ui.events_named("chat.send_timing")]
            assert [t["phase"] for t in timings] == PHASES
            assert {t["runId"] for t in timings} == {run_id}
            assert {t["sessionKey"] for t in timings} == {"agent:main:main"}
            first, *rest = timings
            assert "dispatchStartedToPhaseMs" not in first
            assert all("dispatchStartedToPhaseMs" in t for t in rest)
            assert all(t["ackToPhaseMs"] <= t["receivedToPhaseMs"] for t in timings)
            model = timings[1]
            assert (model["provider"], model["model"]) == ("fake", "fake-model")
            assert timings[-1]["postDispatchMs"] >= 0
            assert other_ui.events_named("chat.send_timing") == []
        finally:
            await ui.close()
            await other_ui.close()


async def test_a_cli_send_is_not_timed(tmp_path: Any) -> None:
    async with gateway(tmp_path) as gw, raw_operator(gw.url) as cli:
        _run_id, ack = await _send(cli)
        assert "serverTiming" not in ack
        assert cli.events_named("chat.send_timing") == []
