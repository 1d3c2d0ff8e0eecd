"""Every answer of the bundled gateway fits its result model: a scripted operator session
(and a node's own calls) over real loopback WebSockets calls a broad set of methods with
valid params, and each ok answer is validated against
:data:`openclaw_desktop.protocol.results.RESULTS`; an answer that does not fit fails with
the method and the field named."""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from openclaw_desktop.identity import DeviceIdentity
from openclaw_desktop.protocol.results import RESULTS
from tests.helpers.bundled_gateway import RawClient, raw_node
from tests.integration.gateway.chat.test_gw_chat_runs import Chat, approved_node, chat_gateway

pytestmark = [pytest.mark.timeout(120), pytest.mark.usefixtures("no_ambient_providers")]

TRANSCRIPTION = {"mode": "transcription", "transport": "gateway-relay", "brain": "none"}
SESSION_PANELS = (
    "board.get",
    "progressCard.get",
    "session.discussion.info",
    "sessions.branches.list",
    "sessions.companion.state",
    "session.members.listEvidence",
    "sessions.github.options",
)
EMPTY_PARAMS = (
    "config.get",
    "cron.status",
    "exec.approval.list",
    "plugin.approval.list",
    "openclaw.approval.list",
    "exec.approvals.get",
    "agents.list",
    "models.list",
    "models.authStatus",
    "talk.catalog",
    "talk.config",
    "sessions.catalog.list",
    "sessions.groups.list",
    "sessions.groups.defaults",
    "mentions.list",
    "question.list",
    "projects.list",
    "taskSuggestions.list",
    "tasks.list",
    "users.prefs.get",
    "plugins.controlUi.list",
    "system.info",
    "update.status",
)

#: Answers of ours that differ from the real gateway's, each with the misfit it shows: the
#: test fails when one is fixed (drop its entry) or changes. None today.
KNOWN_DIVERGENCES: list[str] = []


def misfits(method: str, payload: Any) -> list[str]:
    """Why ``payload`` does not fit ``RESULTS[method]`` ("method: field: problem" lines)."""
    try:
        RESULTS[method].model_validate(payload)
    except ValidationError as exc:
        return [
            f"{method}: {'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}"
            for e in exc.errors()
        ]
    return []


@dataclass
class Recorder:
    """Calls methods and keeps each ok answer (by method) for validation."""

    answers: dict[str, list[Any]] = field(default_factory=dict)

    async def ok(self, client: RawClient, method: str, params: Any = None) -> Any:
        """Call ``method``, assert it answered ok, and record the answer."""
        payload = await client.ok(method, params, timeout=30)
        self.answers.setdefault(method, []).append(payload)
        return payload

    def problems(self) -> list[str]:
        """Every misfit of every recorded answer."""
        return [line for m, ps in self.answers.items() for p in ps for line in misfits(m, p)]


async def _operator_session(chat: Chat, rec: Recorder, node_id: str) -> None:
    op = chat.op
    for method in ("health", "status", "system-presence"):
        await rec.ok(op, method)
    await rec.ok(op, "node.list", {})
    await rec.ok(op, "node.describe", {"nodeId": node_id})
    await rec.ok(op, "node.rename", {"nodeId": node_id, "displayName": "results-node"})
    invoke = {"nodeId": node_id, "command": "probe.echo", "params": {"a": 1}}
    await rec.ok(op, "node.invoke", {**invoke, "idempotencyKey": str(uuid.uuid4())})
    await rec.ok(op, "node.pair.list", {})
    await rec.ok(op, "device.pair.list", {})
    run_id = await chat.send("hello results")
    rec.answers.setdefault("chat.send", []).append({"runId": run_id, "status": "started"})
    await chat.finished(run_id)
    await rec.ok(op, "agent.wait", {"runId": run_id, "timeoutMs": 0})
    await rec.ok(op, "chat.history", {"sessionKey": "main"})
    await rec.ok(op, "chat.message.get", {"sessionKey": "main", "messageId": "nope"})
    await rec.ok(op, "chat.inject", {"sessionKey": "main", "message": "injected"})
    await rec.ok(op, "chat.abort", {"sessionKey": "main"})
    await rec.ok(op, "chat.metadata", {"agentId": "main", "sessionKey": "main"})
    await rec.ok(op, "chat.startup", {"agentId": "main", "sessionKey": "main"})
    await rec.ok(op, "sessions.list", {})
    await rec.ok(op, "sessions.describe", {"key": "main"})
    await rec.ok(op, "commands.list", {"agentId": "main", "scope": "text"})
    await rec.ok(op, "sessions.create", {"key": "results-x"})
    await rec.ok(op, "sessions.patch", {"key": "results-x", "label": "Results"})
    await rec.ok(op, "sessions.reset", {"key": "results-x"})
    await rec.ok(op, "sessions.subscribe", {"agentId": "main", "limit": 1})
    await rec.ok(op, "sessions.messages.subscribe", {"key": "main"})
    await rec.ok(op, "sessions.messages.unsubscribe", {"key": "agent:main:main"})
    await rec.ok(op, "sessions.delete", {"key": "results-x"})
    for method in EMPTY_PARAMS:
        await rec.ok(op, method, {})
    await rec.ok(op, "talk.mode", {"enabled": True, "phase": "listening"})
    await rec.ok(op, "logs.tail", {"limit": 2})
    await rec.ok(op, "diagnostics.stability", {"limit": 5})
    await rec.ok(op, "usage.cost", {"days": 7})
    await rec.ok(op, "cron.list", {"includeDisabled": False, "limit": 50, "offset": 0})
    await rec.ok(op, "agent.identity.get", {"agentId": "main"})
    for method in SESSION_PANELS:
        await rec.ok(op, method, {"sessionKey": "main"})
    await rec.ok(op, "sessions.viewers.set", {"sessionKeys": ["main"]})
    await rec.ok(op, "controlUi.sessionPullRequests.subscribe", {"sessionKeys": ["main"]})
    await rec.ok(op, "sessions.observer.visibility", {"visible": True})
    code = await rec.ok(op, "device.pair.setupCode", {"includeQr": False})
    await rec.ok(op, "device.pair.setupStatus", {"setupId": code["setupId"]})
    await rec.ok(op, "agent", {"message": "hi", "idempotencyKey": str(uuid.uuid4())})


async def _talk_session(op: RawClient, rec: Recorder) -> None:
    await rec.ok(op, "talk.speak", {"text": "hello"})
    created = await rec.ok(op, "talk.session.create", TRANSCRIPTION)
    session = {"sessionId": created["sessionId"]}
    audio = base64.b64encode(b"\0\0" * 160).decode()
    await rec.ok(op, "talk.session.appendAudio", {**session, "audioBase64": audio})
    await rec.ok(op, "talk.session.cancelOutput", session)
    await rec.ok(op, "talk.session.close", session)


async def _node_session(chat: Chat, rec: Recorder) -> None:
    identity = DeviceIdentity.generate()
    async with raw_node(chat.gw.url, ["device.info"], identity) as node:
        await rec.ok(node, "node.pending.pull", {})
        await rec.ok(node, "node.pending.drain", {})
        await rec.ok(node, "node.pending.ack", {"ids": [" a ", "a", "b"]})
        event = {"event": "node.presence.alive", "payload": {"trigger": "manual"}}
        await rec.ok(node, "node.event", event)
        await rec.ok(node, "node.skills.update", {"skills": []})
        await rec.ok(node, "node.pluginTools.update", {"tools": []})
    op = chat.op
    device = {"deviceId": identity.device_id}
    await rec.ok(op, "device.pair.rename", {**device, "label": "results"})
    await rec.ok(op, "device.token.rotate", {**device, "role": "node"})
    await rec.ok(op, "device.token.revoke", {**device, "role": "node"})
    await rec.ok(op, "device.pair.remove", device)


async def test_every_answer_fits_its_result_model(tmp_path: Path) -> None:
    """At least 40 methods answer ok, and every answer fits RESULTS[method]."""
    rec = Recorder()
    async with chat_gateway(tmp_path) as chat:
        node = await approved_node(chat)
        try:
            await _operator_session(chat, rec, node.node_id)
            await _talk_session(chat.op, rec)
            await _node_session(chat, rec)
        finally:
            await node.aclose()
        await rec.ok(chat.op, "node.pair.remove", {"nodeId": node.node_id})
    assert sorted(rec.problems()) == KNOWN_DIVERGENCES
    assert len(rec.answers) >= 40, sorted(rec.answers)


def test_a_misfit_names_the_method_and_field() -> None:
    """The check reports which field of which method's answer is wrong."""
    assert misfits("chat.abort", {"ok": True, "aborted": "maybe", "runIds": []}) == [
        "chat.abort: aborted: Input should be a valid boolean, unable to interpret input"
    ]
    assert misfits("node.list", {"ts": 1}) == ["node.list: nodes: Field required"]
