"""The ``agent`` family's params models (:mod:`openclaw_desktop.protocol.methods.agent`):
each derived schema is the real gateway's (its TypeBox ``AgentParamsSchema`` and
``AgentWaitParamsSchema`` of the openclaw 2026.9.6 package's ``dist/src-*.mjs``, below as
data) but for the properties this gateway takes without acting on them (admitted with any
value, as before); and bad params get the reference's exact text through a real dispatch
(``gateway.rpc.answer_request`` with the method table and a real app; the texts are the
ones the side-by-side agent method tests hold the real gateway to)."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.app import GatewayApp
from gateway.methods.closed import derived_schema
from openclaw_desktop.protocol.methods import PARAMS, unchecked_fields
from openclaw_desktop.protocol.methods.agent import PARAMS as AGENT_PARAMS
from tests.helpers.method_dispatch import answer

_NON_EMPTY = {"type": "string", "minLength": 1}
_STRING = {"type": "string"}
_BOOLEAN = {"type": "boolean"}

#: The reference's ``agent`` properties, in its order; the schema of each one checked here.
REAL_AGENT_PROPERTIES: dict[str, dict[str, Any] | None] = {
    "message": _NON_EMPTY,
    "agentId": _NON_EMPTY,
    "provider": _STRING,
    "model": _STRING,
    "to": None,
    "replyTo": None,
    "sessionId": _STRING,
    "sessionKey": _STRING,
    "expectedExistingSessionId": None,
    "thinking": _STRING,
    "deliver": _BOOLEAN,
    # The reference's items are ``{}`` (any): the same check without the key.
    "attachments": {"type": "array"},
    "channel": None,
    "replyChannel": None,
    "accountId": None,
    "replyAccountId": None,
    "threadId": None,
    "groupId": None,
    "groupChannel": None,
    "groupSpace": None,
    "timeout": {"type": "integer", "minimum": 0},
    "bestEffortDeliver": None,
    "lane": None,
    "cwd": None,
    "cleanupBundleMcpOnRunEnd": None,
    "modelRun": None,
    "promptMode": None,
    "extraSystemPrompt": None,
    "bootstrapContextMode": None,
    "bootstrapContextRunKind": None,
    "acpTurnSource": None,
    "internalRuntimeHandoffId": None,
    "internalExecutionIdentityRetry": None,
    "internalExecutionIdentityRecoveryAttempt": None,
    "execApprovalFollowupExpectedSessionId": None,
    "internalEvents": None,
    "inputProvenance": None,
    "suppressPromptPersistence": None,
    "sessionEffects": None,
    "sourceReplyDeliveryMode": None,
    "disableMessageTool": None,
    "swarmCollector": None,
    "swarmOutputSchema": None,
    "forceRestartSafeTools": None,
    "forceCodeModeTools": None,
    "voiceWakeTrigger": None,
    "idempotencyKey": _NON_EMPTY,
    "label": {"type": "string", "minLength": 1, "maxLength": 512},
}

REAL_AGENT_WAIT: dict[str, Any] = {
    "type": "object",
    "required": ["runId"],
    "properties": {
        "runId": _NON_EMPTY,
        "timeoutMs": {"type": "integer", "minimum": 0},
    },
    "additionalProperties": False,
}


def test_the_family_registers_its_models() -> None:
    assert set(AGENT_PARAMS) == {"agent", "agent.wait"}
    assert all(PARAMS[name] is model for name, model in AGENT_PARAMS.items())


def test_agent_schema_is_the_reference_schema() -> None:
    ours = derived_schema(PARAMS["agent"])
    assert ours["type"] == "object"
    assert ours["additionalProperties"] is False
    assert ours["required"] == ["message", "idempotencyKey"]
    assert list(ours["properties"]) == list(REAL_AGENT_PROPERTIES)
    unchecked = unchecked_fields(PARAMS["agent"])
    for name, real in REAL_AGENT_PROPERTIES.items():
        if real is None:
            assert name in unchecked and ours["properties"][name] == {}, name
        else:
            assert name not in unchecked and ours["properties"][name] == real, name


def test_agent_wait_schema_is_the_reference_schema() -> None:
    assert derived_schema(PARAMS["agent.wait"]) == REAL_AGENT_WAIT


#: (method, params, the reference's text after ``invalid <method> params: ``).
REFUSED: list[tuple[str, Any, str]] = [
    ("agents.list", {"x": 1}, "at root: unexpected property 'x'"),
    ("agent", {"message": "hi"}, "must have required property 'idempotencyKey'"),
    (
        "agent",
        {"message": "", "idempotencyKey": "k"},
        "at /message: must not have fewer than 1 characters",
    ),
    (
        "agent",
        {"message": "hi", "idempotencyKey": "k", "bogus": 1},
        "at root: unexpected property 'bogus'",
    ),
    (
        "agent",
        {"message": "hi", "idempotencyKey": "k", "timeout": 1.5},
        "at /timeout: must be integer",
    ),
    ("agent.wait", {}, "must have required property 'runId'"),
    ("agent.wait", {"runId": "r", "timeoutMs": -1}, "at /timeoutMs: must be >= 0"),
]


@pytest.mark.parametrize(
    ("method", "params", "text"), REFUSED, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(REFUSED)]
)
async def test_bad_params_get_the_reference_text(
    app: GatewayApp, method: str, params: Any, text: str
) -> None:
    frame = await answer(app, method, params)
    assert frame["ok"] is False
    assert frame["error"]["code"] == "INVALID_REQUEST"
    assert frame["error"]["message"] == f"invalid {method} params: {text}"


async def test_checked_params_reach_the_handler(app: GatewayApp) -> None:
    """Good params (an integral float timeout, an unchecked property of any value) pass
    the declared check: the handler answers (the chat engine is not up in this app)."""
    params = {"message": "hi", "idempotencyKey": "k", "timeout": 5.0, "cwd": 7}
    frame = await answer(app, "agent", params)
    assert frame["ok"] is False
    assert frame["error"]["code"] == "UNAVAILABLE"
    assert frame["error"]["message"] == "chat is starting"
