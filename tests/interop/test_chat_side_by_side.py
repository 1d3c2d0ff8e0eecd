"""The same operator-side chat scenario against the real OpenClaw gateway and against ours.

Both gateways talk to a :class:`tests.helpers.fake_llm.FakeLLM` of their own (same script,
same chunking). One scenario per gateway runs once for the module (the real gateway takes
10-30 s to start and to prepare its first run) and records:

* a plain reply (``hello there``): the three ``chat.send`` acks (started / in_flight / ok)
  and every ``chat`` / ``agent`` event of the run;
* a tool run (``CALLTOOL:<tool>:<json>``; ``ls`` on the real gateway, ``nodes_list`` on
  ours: neither has the other's tools) and ``chat.history`` afterwards;
* three invalid-params errors, ``chat.history`` at the maximum limit (1000) and
  ``chat.abort`` with nothing running;
* ``chat.inject`` and its broadcast.

The tests then compare the shapes (see :mod:`tests.helpers.chat_trace`), never ids, texts
or timestamps.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.errors import GatewayError
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.chat_trace import (
    ChatRecorder,
    RunEvent,
    agent_data_keys,
    bundled_with_fake_llm,
    chat_operator,
    chat_state_keys,
    concatenated_deltas,
    cumulative_problems,
    event_pairs,
    final_text,
    last_turn,
    message_keys,
    seq_problems,
)
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.real_openclaw import GatewayFactory, OpenClawInstall

pytestmark = pytest.mark.timeout(300)

RUN_TIMEOUT_S = 120.0
#: How long the real gateway may still answer a re-send "in_flight" after a run's final event.
SETTLE_S = 5.0
#: The largest ``chat.history`` limit the real gateway's schema accepts.
HISTORY_MAX_LIMIT = 1000
#: The chunk delay of both fakes: slow enough that a re-send while running is ``in_flight``
#: and that the coalesced chat deltas (about one per 70 ms) are several.
CHUNK_DELAY_S = 0.03
#: The fields every chat event of a run carries on both gateways.
CHAT_COMMON = frozenset({"runId", "sessionKey", "agentId", "seq", "state"})
#: Agent streams whose data keys are compared (real may add extras; ours must be a subset).
TEXT_STREAMS = ("assistant", "lifecycle", "run_status", "usage")
#: Data keys that matter on both, per (stream, phase).
REQUIRED_DATA = {
    ("assistant", ""): {"text", "delta", "itemId"},
    ("run_status", "preparing_workspace"): {"phase"},
    ("lifecycle", "start"): {"phase", "startedAt"},
    ("lifecycle", "model"): {"phase", "provider", "model"},
    ("lifecycle", "end"): {"phase", "stopReason", "aborted", "endedAt", "startedAt"},
    ("usage", ""): {"outputTokens"},
}
#: Tool data keys the real gateway sends only when the tool's args give a summary (``ls``
#: has its path; an argument-less tool such as ``nodes_list`` would have none): the real
#: ``projectAgentToolActivity`` adds ``...meta ? { meta } : {}``.
OPTIONAL_TOOL_KEYS = frozenset({"meta"})
ERROR_CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("history limit 0", "chat.history", {"sessionKey": "main", "limit": 0}),
    ("send without idempotencyKey", "chat.send", {"sessionKey": "main", "message": "x"}),
    (
        "send with unknown property",
        "chat.send",
        {"sessionKey": "main", "message": "x", "idempotencyKey": "k-bogus", "bogus": 1},
    ),
    ("inject into an unused session", "chat.inject", {"sessionKey": "never-used", "message": "n"}),
    ("history with an unknown property", "chat.history", {"sessionKey": "main", "x": 1}),
]


@dataclass
class ChatTrace:
    """What one gateway did in the scenario."""

    acks: list[dict[str, Any]] = field(default_factory=list)
    plain: list[RunEvent] = field(default_factory=list)
    tool_acks: list[dict[str, Any]] = field(default_factory=list)
    tool: list[RunEvent] = field(default_factory=list)
    history: dict[str, Any] = field(default_factory=dict)
    history_max: tuple[str, str] | None = None
    errors: dict[str, tuple[str, str] | None] = field(default_factory=dict)
    abort: Any = None
    inject_result: dict[str, Any] = field(default_factory=dict)
    inject_event: RunEvent | None = None


async def _send_run(
    conn: GatewayConnection, recorder: ChatRecorder, message: str, *, settles: bool
) -> tuple[list[dict[str, Any]], list[RunEvent]]:
    """send / re-send while running / wait for the end / re-send: (acks, run events).

    ``settles``: the gateway records a run's end some time after it sends the final event
    (the real one: under load a re-send came in between and was answered ``in_flight``), so
    the last re-send is asked again until the answer changes, for at most
    :data:`SETTLE_S`. Ours records the end in the same step as it sends that event, so it is
    asked once and must say ``ok`` at once."""
    key = str(uuid.uuid4())
    params = {"sessionKey": "main", "message": message, "idempotencyKey": key}
    acks = [await conn.request("chat.send", params, timeout_s=30)]
    acks.append(await conn.request("chat.send", params, timeout_s=30))
    events = await recorder.wait_terminal(key, RUN_TIMEOUT_S)
    last = await conn.request("chat.send", params, timeout_s=30)
    deadline = asyncio.get_running_loop().time() + SETTLE_S
    while settles and last.get("status") == "in_flight":
        if asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.05)
        last = await conn.request("chat.send", params, timeout_s=30)
    acks.append(last)
    for ack in acks:
        ack["__key"] = key
    return acks, events


async def _error_of(
    conn: GatewayConnection, method: str, params: dict[str, Any]
) -> tuple[str, str] | None:
    """The (code, message) the call failed with; None when it succeeded."""
    try:
        await conn.request(method, params, timeout_s=30)
    except GatewayError as exc:
        return exc.code, exc.message
    return None


async def run_scenario(url: str, token: str, tool_message: str, *, settles: bool) -> ChatTrace:
    """Drive the whole scenario on one gateway (``settles``: see :func:`_send_run`)."""
    trace = ChatTrace()
    recorder = ChatRecorder()
    async with chat_operator(url, token) as conn:
        conn.on_event(recorder)
        trace.acks, trace.plain = await _send_run(conn, recorder, "hello there", settles=settles)
        trace.tool_acks, trace.tool = await _send_run(conn, recorder, tool_message, settles=settles)
        trace.history = await conn.request(
            "chat.history", {"sessionKey": "main", "limit": 50}, timeout_s=30
        )
        trace.history_max = await _error_of(
            conn, "chat.history", {"sessionKey": "main", "limit": HISTORY_MAX_LIMIT}
        )
        for label, method, params in ERROR_CALLS:
            trace.errors[label] = await _error_of(conn, method, params)
        trace.abort = await conn.request("chat.abort", {"sessionKey": "main"}, timeout_s=30)
        trace.inject_result = await conn.request(
            "chat.inject", {"sessionKey": "main", "message": "note"}, timeout_s=30
        )
        run_id = f"inject-{trace.inject_result.get('messageId')}"
        with contextlib.suppress(TimeoutError):
            trace.inject_event = await recorder.wait_for(run_id, 15)
    return trace


async def _both(install: OpenClawInstall, root: Path) -> tuple[ChatTrace, ChatTrace]:
    factory = GatewayFactory(install)
    with (
        FakeLLM(chunk_delay_s=CHUNK_DELAY_S) as real_llm,
        FakeLLM(chunk_delay_s=CHUNK_DELAY_S) as our_llm,
    ):
        try:

            async def real_side() -> ChatTrace:
                gw = await asyncio.to_thread(factory, fake_llm_port=real_llm.port)
                return await run_scenario(
                    gw.url, gw.token, 'CALLTOOL:ls:{"path":"."}', settles=True
                )

            async def our_side() -> ChatTrace:
                async with bundled_with_fake_llm(our_llm.port, root) as gw:
                    return await run_scenario(
                        gw.url, gw.token, "CALLTOOL:nodes_list:{}", settles=False
                    )

            real, ours = await asyncio.gather(real_side(), our_side())
        finally:
            await asyncio.to_thread(factory.close)
    return real, ours


@pytest.fixture(scope="module")
def traces(
    openclaw_install: OpenClawInstall, tmp_path_factory: pytest.TempPathFactory
) -> tuple[ChatTrace, ChatTrace]:
    """(real, ours): the scenario run once on each gateway, concurrently."""
    root = tmp_path_factory.mktemp("chat-ours")
    return asyncio.run(asyncio.wait_for(_both(openclaw_install, root), 280))


@pytest.fixture
def real(traces: tuple[ChatTrace, ChatTrace]) -> ChatTrace:
    """The real gateway's trace."""
    return traces[0]


@pytest.fixture
def ours(traces: tuple[ChatTrace, ChatTrace]) -> ChatTrace:
    """Our gateway's trace."""
    return traces[1]


# ------------------------------------------------------------------------------ plain reply


@pytest.mark.parametrize("side", ["real", "ours"])
def test_send_acks(side: str, traces: tuple[ChatTrace, ChatTrace]) -> None:
    """started, then in_flight while running, then ok once final; runId = idempotencyKey."""
    trace = traces[0] if side == "real" else traces[1]
    for acks in (trace.acks, trace.tool_acks):
        key = acks[0]["__key"]
        assert [(a["runId"], a["status"]) for a in acks] == [
            (key, "started"),
            (key, "in_flight"),
            (key, "ok"),
        ]


def test_plain_event_pairs_match(real: ChatTrace, ours: ChatTrace) -> None:
    """Same (event, state) and (event, stream, phase) pairs in a plain reply."""
    assert event_pairs(ours.plain) == event_pairs(real.plain)
    assert {("chat", "status"), ("chat", "delta"), ("chat", "final")} <= event_pairs(ours.plain)


def test_plain_chat_payload_keys(real: ChatTrace, ours: ChatTrace) -> None:
    """Per chat state, our payload keys are the real gateway's, and the important ones exist."""
    real_keys, our_keys = chat_state_keys(real.plain), chat_state_keys(ours.plain)
    assert set(our_keys) == set(real_keys)
    important = {
        "status": CHAT_COMMON | {"phase"},
        "delta": CHAT_COMMON | {"deltaText", "message"},
        "final": CHAT_COMMON | {"message", "stopReason"},
    }
    for state, keys in our_keys.items():
        assert keys <= real_keys[state], (state, keys - real_keys[state])
        assert important.get(state, CHAT_COMMON) <= keys, state
        assert important.get(state, CHAT_COMMON) <= real_keys[state], state


def test_plain_agent_data_keys(real: ChatTrace, ours: ChatTrace) -> None:
    """Agent text streams: our data keys are a subset of the real ones; required ones on both."""
    real_keys = agent_data_keys(real.plain, TEXT_STREAMS)
    our_keys = agent_data_keys(ours.plain, TEXT_STREAMS)
    assert set(our_keys) == set(real_keys)
    for where, keys in our_keys.items():
        assert keys <= real_keys[where], (where, keys - real_keys[where])
    for where, required in REQUIRED_DATA.items():
        assert required <= our_keys.get(where, frozenset()), ("ours", where)
        assert required <= real_keys.get(where, frozenset()), ("real", where)


@pytest.mark.parametrize("side", ["real", "ours"])
def test_plain_event_fields(side: str, traces: tuple[ChatTrace, ChatTrace]) -> None:
    """Canonical session key, agent id, run id and agent envelope fields on every event."""
    trace = traces[0] if side == "real" else traces[1]
    key = trace.acks[0]["__key"]
    for e in trace.plain:
        assert e.payload["runId"] == key
        assert e.payload["sessionKey"] == "agent:main:main"
        assert e.payload["agentId"] == "main"
        assert isinstance(e.payload["seq"], int)
        if e.event == "agent":
            assert {"stream", "data", "ts"} <= set(e.payload)


@pytest.mark.parametrize("side", ["real", "ours"])
def test_plain_seq_and_text(side: str, traces: tuple[ChatTrace, ChatTrace]) -> None:
    """seq strictly increasing per family on one shared counter; final = joined deltas."""
    trace = traces[0] if side == "real" else traces[1]
    assert seq_problems(trace.plain) == []
    assert cumulative_problems(trace.plain) == []
    text = final_text(trace.plain)
    assert text and text.startswith("FAKE-LLM reply #")
    assert concatenated_deltas(trace.plain) == text
    final = next(e for e in trace.plain if e.event == "chat" and e.state == "final")
    assert final.payload["stopReason"] == "stop"
    assert final.payload["message"]["role"] == "assistant"
    assert final.payload["seq"] >= max(
        e.payload["seq"] for e in trace.plain if e.event == "chat" and e.state == "delta"
    )


# -------------------------------------------------------------------------------- tool run


def test_tool_streams_match(real: ChatTrace, ours: ChatTrace) -> None:
    """item start/end and tool start/result streams with the same data keys (``meta`` aside)."""
    streams = ("item", "tool")
    real_keys, our_keys = agent_data_keys(real.tool, streams), agent_data_keys(ours.tool, streams)
    expected = {("item", "start"), ("item", "end"), ("tool", "start"), ("tool", "result")}
    assert set(real_keys) == expected
    assert set(our_keys) == expected
    for where in expected:
        want, got = real_keys[where] - OPTIONAL_TOOL_KEYS, our_keys[where] - OPTIONAL_TOOL_KEYS
        assert got == want, (
            where,
            "real only",
            sorted(want - got),
            "ours only",
            sorted(got - want),
        )


def test_tool_event_pairs_match(real: ChatTrace, ours: ChatTrace) -> None:
    """The tool run as a whole has the same (event, state/stream, phase) pairs."""
    assert event_pairs(ours.tool) == event_pairs(real.tool)


@pytest.mark.parametrize("side", ["real", "ours"])
def test_tool_run_text(side: str, traces: tuple[ChatTrace, ChatTrace]) -> None:
    """The tool run ends final with the reply quoting the result; deltas add up to it."""
    trace = traces[0] if side == "real" else traces[1]
    assert seq_problems(trace.tool) == []
    assert cumulative_problems(trace.tool) == []
    text = final_text(trace.tool)
    assert text and text.startswith("FAKE-LLM tool result:")
    assert concatenated_deltas(trace.tool) == text
    tools = [e for e in trace.tool if e.stream == "tool"]
    assert tools[-1].data["isError"] is False


def _turn(trace: ChatTrace) -> list[dict[str, Any]]:
    return last_turn(trace.history["messages"])


def test_tool_history_roles(real: ChatTrace, ours: ChatTrace) -> None:
    """user, assistant(toolCall), toolResult, assistant on both."""
    for trace in (real, ours):
        turn = _turn(trace)
        assert [m["role"] for m in turn] == ["user", "assistant", "toolResult", "assistant"]
        assert turn[1]["content"][0]["type"] == "toolCall"
        assert turn[1]["stopReason"] == "toolUse"
        assert turn[2]["toolCallId"] == turn[1]["content"][0]["id"]
        assert turn[3]["stopReason"] == "stop"


def test_tool_history_message_keys(real: ChatTrace, ours: ChatTrace) -> None:
    """Each message of the tool turn has the same keys on both gateways."""
    for real_msg, our_msg in zip(_turn(real), _turn(ours), strict=True):
        assert message_keys(our_msg) == message_keys(real_msg), (
            real_msg["role"],
            "real only",
            sorted(message_keys(real_msg) - message_keys(our_msg)),
            "ours only",
            sorted(message_keys(our_msg) - message_keys(real_msg)),
        )


def test_history_envelope_keys(real: ChatTrace, ours: ChatTrace) -> None:
    """chat.history's top-level fields that clients read are on both."""
    needed = {"sessionKey", "sessionId", "messages"}
    assert needed <= set(real.history)
    assert needed <= set(ours.history)
    assert ours.history["sessionKey"] == real.history["sessionKey"] == "main"


# ---------------------------------------------------------------------------------- errors


@pytest.mark.parametrize("label", [label for label, _m, _p in ERROR_CALLS])
def test_same_errors(label: str, real: ChatTrace, ours: ChatTrace) -> None:
    """Same error code and message for invalid params."""
    expected = real.errors[label]
    assert expected is not None and expected[0] == "INVALID_REQUEST"
    assert ours.errors[label] == expected


def test_history_max_limit_real(real: ChatTrace) -> None:
    """The real gateway answers ``chat.history`` with the schema's maximum limit (1000)."""
    assert real.history_max is None


def test_history_max_limit_ours(ours: ChatTrace) -> None:
    """Ours answers ``chat.history`` with limit 1000 too."""
    assert ours.history_max is None


def test_abort_with_nothing_running(real: ChatTrace, ours: ChatTrace) -> None:
    """``chat.abort`` with nothing running: ``{ok: true, aborted: false, runIds: []}``."""
    assert real.abort == {"ok": True, "aborted": False, "runIds": []}
    assert ours.abort == real.abort


# ---------------------------------------------------------------------------------- inject


def test_inject_broadcast(real: ChatTrace, ours: ChatTrace) -> None:
    """A chat final with runId ``inject-<messageId>``, seq 0 and the note, on both."""
    for trace in (real, ours):
        assert trace.inject_result["ok"] is True
        event = trace.inject_event
        assert event is not None
        assert event.payload["runId"] == f"inject-{trace.inject_result['messageId']}"
        assert event.payload["seq"] == 0
        assert event.payload["state"] == "final"
        assert event.payload["sessionKey"] == "agent:main:main"
        assert event.payload["agentId"] == "main"
        message = event.payload["message"]
        assert message["content"][0]["text"] == "note"
        assert (message["role"], message["stopReason"], message["model"]) == (
            "assistant",
            "stop",
            "gateway-injected",
        )


def test_inject_payload_keys(real: ChatTrace, ours: ChatTrace) -> None:
    """The inject broadcast's payload keys are the same on both."""
    assert real.inject_event is not None and ours.inject_event is not None
    assert set(ours.inject_event.payload) == set(real.inject_event.payload)


def test_inject_message_keys(real: ChatTrace, ours: ChatTrace) -> None:
    """The injected message carries the same keys on both."""
    assert real.inject_event is not None and ours.inject_event is not None
    assert set(ours.inject_event.payload["message"]) == set(real.inject_event.payload["message"])
