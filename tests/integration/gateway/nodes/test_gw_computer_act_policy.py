"""``computer.act`` arguments the real gateway's ``cua-computer`` policy cannot classify are
refused by our bundled gateway before dispatch, for an operator's ``node.invoke`` and for the
agent's ``node_invoke`` tool alike: the real refusal (code, message, details), and the node
(a real one on our client library, over loopback) never sees them. ``__close_execution``
and schema-valid actions still reach the node."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.node import InvokeResult
from tests.integration.gateway.chat.test_gw_chat_runs import approved_node, chat_gateway

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("no_ambient_providers")]

EXEC = str(uuid.uuid4())
REFUSAL = {
    "code": "INVALID_REQUEST",
    "message": "node.invoke computer.act arguments could not be classified by plugin cua-computer",
    "details": {"nodeCommandDispatched": False, "code": "PLUGIN_POLICY_RISK_CLASSIFICATION_FAILED"},
}
UNCLASSIFIABLE: list[Any] = [
    {"action": "scroll", "executionId": EXEC, "scrollDirection": "in"},
    {"action": "left_click", "executionId": "not-a-uuid"},
    {"action": "left_click", "executionId": EXEC, "x": None},
    {"action": "teleport"},
    {"action": "screenshot"},
    {"action": "kill_app"},
    [1, 2],
    "text",
    None,
]
CLASSIFIED: list[Any] = [
    {"action": "__close_execution", "executionId": EXEC, "anything": [1]},
    {"action": "left_click"},  # no executionId: the node's to refuse
    {"action": "kill_app", "app": "x"},  # high risk, still classified
]


async def acted(params: Any) -> InvokeResult:
    if isinstance(params, dict) and params.get("action") == "left_click" and "x" in params:
        return InvokeResult.error("COMPUTER_STALE_FRAME", "frame is missing")
    return InvokeResult.success({"ok": True, "echo": params})


async def test_unclassifiable_arguments_never_reach_the_node(tmp_path: Path) -> None:
    async with chat_gateway(tmp_path, allow=("computer.act",)) as chat:
        node = await approved_node(chat, handlers={"computer.act": ("computer", acted)})
        try:
            for params in UNCLASSIFIABLE:
                answer = await chat.op.call(
                    "node.invoke",
                    {
                        "nodeId": node.node_id,
                        "command": "computer.act",
                        "params": params,
                        "idempotencyKey": str(uuid.uuid4()),
                    },
                )
                assert answer["ok"] is False and answer["error"] == REFUSAL, (params, answer)
            absent = await chat.op.call(
                "node.invoke",
                {"nodeId": node.node_id, "command": "computer.act", "idempotencyKey": "k"},
            )
            assert absent["error"] == REFUSAL, absent  # no params: nothing to classify
            assert node.handled == []
            for params in CLASSIFIED:
                result = await chat.op.ok(
                    "node.invoke",
                    {
                        "nodeId": node.node_id,
                        "command": "computer.act",
                        "params": params,
                        "idempotencyKey": str(uuid.uuid4()),
                    },
                )
                assert result["payload"] == {"ok": True, "echo": params}, result
            assert node.handled == ["computer.act"] * len(CLASSIFIED)
            failed = await chat.op.call(
                "node.invoke",
                {
                    "nodeId": node.node_id,
                    "command": "computer.act",
                    "params": {"action": "left_click", "executionId": EXEC, "x": 1, "y": 1},
                    "idempotencyKey": str(uuid.uuid4()),
                },
            )
            # the node's refusal, relayed the policy's way (not a plain invoke's UNAVAILABLE)
            node_error = {
                "code": "COMPUTER_STALE_FRAME",
                "message": "frame is missing",
            }
            assert failed["error"] == {
                "code": "INVALID_REQUEST",
                "message": node_error["message"],
                "details": {
                    "nodeError": node_error,
                    "nodeCommandDispatched": True,
                    "code": "COMPUTER_STALE_FRAME",
                },
            }, failed
        finally:
            await node.aclose()


async def test_the_agents_node_invoke_tool_gets_the_same_refusal(tmp_path: Path) -> None:
    async with chat_gateway(tmp_path, allow=("computer.act",)) as chat:
        node = await approved_node(chat, handlers={"computer.act": ("computer", acted)})
        try:
            args = {
                "node": "test-node",
                "command": "computer.act",
                "params": {"action": "type", "executionId": EXEC, "text": 5},
            }
            run_id = await chat.send(f"CALLTOOL:node_invoke:{json.dumps(args)}")
            assert (await chat.finished(run_id))["state"] == "final"
            result = (await chat.history())["messages"][-2]
            assert result["role"] == "toolResult" and result["isError"] is True, result
            assert REFUSAL["message"] in result["content"][0]["text"], result
            assert node.handled == []
            args["params"] = {"action": "type", "executionId": EXEC, "text": "hi"}
            run_id = await chat.send(f"CALLTOOL:node_invoke:{json.dumps(args)}")
            assert (await chat.finished(run_id))["state"] == "final"
            assert node.handled == ["computer.act"]
        finally:
            await node.aclose()
