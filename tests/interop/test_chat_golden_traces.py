"""Golden chat traces of both gateways: recorded from the live gateways, replayed offline.

Four scenarios run on the REAL OpenClaw gateway (2026.9.6) and on our bundled gateway, each
against its own :class:`tests.helpers.fake_llm.FakeLLM` and in its own session:

* ``tool``: text, then a tool call, then the final text (``PREAMBLE CALLTOOL:...``);
* ``steer``: a slow reply (``SLOW:...``) and, while it streams, a message sent with
  ``queueMode: "steer"`` that makes the model call a tool (so the steered message is followed
  only by a tool call before the answer);
* ``abort``: a slow reply stopped by ``chat.abort`` after a few deltas;
* ``stopsteer``: a message steered into a slow reply that is stopped before a model
  boundary took it in: it runs next as a turn of its own (it is not lost).

Every ``chat`` / ``agent`` / ``session*`` event the operator received is kept in arrival
order, with the ``chat.send`` acks and ``chat.history`` of the session afterwards. Run ids
are ours (idempotency keys); the machine's temporary folders are scrubbed, nothing else.

With ``OPENCLAW_RECORD_CHAT_TRACES=1`` the test (re)writes
``tests/fixtures/chat-traces/<gateway>-<scenario>.json`` (review ``git diff``); otherwise it
checks that what both gateways emit live still has the recorded shapes (the same event,
state, stream and phase pairs, per chat state the same payload keys, the same history roles
and stop reasons) and that the live trace, fed to the window's timeline, gives the
timeline of its ``chat.history``. ``tests/unit/chat/test_chat_timeline_property.py`` feeds
the recorded traces, chunked and interleaved with reconnects and history pages.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.session import EventReceived
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.chat_trace import (
    RunEvent,
    bundled_with_fake_llm,
    chat_operator,
    event_pairs,
)
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.golden_chat import (
    FIXTURES,
    GATEWAYS,
    SCENARIOS,
    history_alone,
    shown,
    trace_session,
    trace_steps,
)
from tests.helpers.golden_chat import live as replay
from tests.helpers.real_openclaw import GatewayFactory, OpenClawInstall

pytestmark = pytest.mark.timeout(420)

RECORD = os.environ.get("OPENCLAW_RECORD_CHAT_TRACES") == "1"
RUN_TIMEOUT_S = 150.0
#: Each gateway's tool (neither has the other's).
TOOL = {"real": 'CALLTOOL:ls:{"path":"."}', "bundled": "CALLTOOL:nodes_list:{}"}


class Recorder:
    """Every run and session event of one session key, in arrival order."""

    def __init__(self, session: str) -> None:
        self.session = session
        self.events: list[dict[str, Any]] = []
        self._changed = asyncio.Event()

    def _mine(self, payload: dict[str, Any]) -> bool:
        key = payload.get("sessionKey")
        if not isinstance(key, str):
            session = payload.get("session")
            key = session.get("key") if isinstance(session, dict) else None
        return isinstance(key, str) and key.split(":")[-1] == self.session

    def __call__(self, received: EventReceived) -> None:
        name, payload = received.event, received.payload
        wanted = name in ("chat", "agent") or name.startswith("session")
        if wanted and isinstance(payload, dict) and self._mine(payload):
            self.events.append({"event": name, "payload": payload})
            self._changed.set()

    def local(self, kind: str, run_id: str, text: str = "") -> None:
        """What the window did here (``send`` / ``steer`` / ``stop``), for the replay."""
        self.events.append({"local": kind, "runId": run_id, "text": text})

    def chats(self, run_id: str, state: str | None = None) -> list[dict[str, Any]]:
        return [
            e
            for e in self.events
            if e.get("event") == "chat"
            and e["payload"].get("runId") == run_id
            and (state is None or e["payload"].get("state") == state)
        ]

    def ended(self, run_id: str) -> bool:
        return any(
            e["payload"].get("state") in ("final", "error", "aborted") for e in self.chats(run_id)
        )

    async def until(self, check: Any, timeout: float) -> None:
        async with asyncio.timeout(timeout):
            while not check():
                self._changed.clear()
                await self._changed.wait()


async def _idle(conn: GatewayConnection, session: str, timeout: float) -> dict[str, Any]:
    """``chat.history`` once the runs ended and it no longer grows (two reads 0.3 s apart
    with the same messages; at most ``timeout`` s)."""
    deadline = time.monotonic() + timeout
    params = {"sessionKey": session, "limit": 200}
    history: dict[str, Any] = await conn.request("chat.history", params, timeout_s=30)
    while time.monotonic() < deadline:
        await asyncio.sleep(0.3)
        again: dict[str, Any] = await conn.request("chat.history", params, timeout_s=30)
        if again.get("messages") == history.get("messages"):
            return again
        history = again
    return history


async def _send(
    conn: GatewayConnection, session: str, key: str, message: str, **extra: Any
) -> dict[str, Any]:
    params = {"sessionKey": session, "message": message, "idempotencyKey": key, **extra}
    ack: dict[str, Any] = await conn.request("chat.send", params, timeout_s=30)
    return ack


async def scenario(conn: GatewayConnection, gateway: str, name: str) -> dict[str, Any]:
    """Drive one scenario in session ``golden-<name>``; the trace as stored."""
    session = f"golden-{name}"
    recorder = Recorder(session)
    conn.on_event(recorder)
    acks: list[dict[str, Any]] = []
    main = f"golden-{name}-1"
    if name == "tool":
        recorder.local("send", main, f"PREAMBLE {TOOL[gateway]}")
        acks.append(await _send(conn, session, main, f"PREAMBLE {TOOL[gateway]}"))
        await recorder.until(lambda: recorder.ended(main), RUN_TIMEOUT_S)
    elif name == "steer":
        steer = f"golden-{name}-2"
        recorder.local("send", main, "SLOW:60")
        acks.append(await _send(conn, session, main, "SLOW:60"))
        await recorder.until(lambda: len(recorder.chats(main, "delta")) >= 2, RUN_TIMEOUT_S)
        recorder.local("steer", steer, TOOL[gateway])
        acks.append(await _send(conn, session, steer, TOOL[gateway], queueMode="steer"))
        await recorder.until(lambda: recorder.ended(main), RUN_TIMEOUT_S)
        with contextlib.suppress(TimeoutError):  # when the steer became a turn of its own
            await recorder.until(lambda: recorder.ended(steer), 5)
    elif name == "stopsteer":
        steer = f"golden-{name}-2"
        recorder.local("send", main, "SLOW:100")
        acks.append(await _send(conn, session, main, "SLOW:100"))
        await recorder.until(lambda: len(recorder.chats(main, "delta")) >= 2, RUN_TIMEOUT_S)
        recorder.local("steer", steer, "after the stop")
        acks.append(await _send(conn, session, steer, "after the stop", queueMode="steer"))
        recorder.local("stop", main)
        acks.append(
            await conn.request("chat.abort", {"sessionKey": session, "runId": main}, timeout_s=30)
        )
        await recorder.until(lambda: recorder.ended(main) and recorder.ended(steer), RUN_TIMEOUT_S)
    else:
        recorder.local("send", main, "SLOW:100")
        acks.append(await _send(conn, session, main, "SLOW:100"))
        await recorder.until(lambda: len(recorder.chats(main, "delta")) >= 3, RUN_TIMEOUT_S)
        recorder.local("stop", main)
        acks.append(
            await conn.request("chat.abort", {"sessionKey": session, "runId": main}, timeout_s=30)
        )
        await recorder.until(lambda: recorder.ended(main), RUN_TIMEOUT_S)
    history = await _idle(conn, session, 30)
    await asyncio.sleep(0.5)  # the last session events
    return {
        "gateway": gateway,
        "scenario": name,
        "acks": acks,
        "events": list(recorder.events),
        "history": history,
    }


def _scrub(value: Any, folders: list[str]) -> Any:
    """The machine's temporary folders as ``<state-dir>``, everything else as recorded."""
    if isinstance(value, str):
        for folder in folders:
            value = value.replace(folder, "<state-dir>")
        return value
    if isinstance(value, list):
        return [_scrub(v, folders) for v in value]
    if isinstance(value, dict):
        return {k: _scrub(v, folders) for k, v in value.items()}
    return value


async def _drive(url: str, token: str, gateway: str, folders: list[str]) -> dict[str, Any]:
    traces: dict[str, Any] = {}
    async with chat_operator(url, token) as conn:
        for name in SCENARIOS:
            traces[name] = _scrub(await scenario(conn, gateway, name), folders)
    return traces


async def record_both(install: OpenClawInstall, root: Path) -> dict[str, dict[str, Any]]:
    """Every scenario on both gateways (concurrently): ``{gateway: {scenario: trace}}``."""
    factory = GatewayFactory(install)
    with FakeLLM(chunk_delay_s=0.03) as real_llm, FakeLLM(chunk_delay_s=0.03) as our_llm:
        try:

            async def real_side() -> dict[str, Any]:
                gw = await asyncio.to_thread(factory, fake_llm_port=real_llm.port)
                return await _drive(gw.url, gw.token, "real", [str(gw.state_dir)])

            async def our_side() -> dict[str, Any]:
                async with bundled_with_fake_llm(our_llm.port, root) as gw:
                    return await _drive(gw.url, gw.token, "bundled", [str(root)])

            real, ours = await asyncio.gather(real_side(), our_side())
        finally:
            await asyncio.to_thread(factory.close)
    return {"real": real, "bundled": ours}


@pytest.fixture(scope="module")
def live(
    openclaw_install: OpenClawInstall, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    """The scenarios recorded now from both gateways."""
    root = tmp_path_factory.mktemp("golden-ours")

    async def go() -> dict[str, dict[str, Any]]:
        async with asyncio.timeout(400):
            return await record_both(openclaw_install, root)

    traces = asyncio.run(go())
    if RECORD:
        FIXTURES.mkdir(parents=True, exist_ok=True)
        for gateway, scenarios in traces.items():
            for name, trace in scenarios.items():
                path = FIXTURES / f"{gateway}-{name}.json"
                path.write_text(json.dumps(trace, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return traces


def _stored(gateway: str, name: str) -> dict[str, Any]:
    trace: dict[str, Any] = json.loads((FIXTURES / f"{gateway}-{name}.json").read_text("utf-8"))
    return trace


def _run_events(trace: dict[str, Any]) -> list[RunEvent]:
    return [
        RunEvent(e["event"], e["payload"])
        for e in trace["events"]
        if e.get("event") in ("chat", "agent")
    ]


def _chat_keys(trace: dict[str, Any]) -> dict[str, set[str]]:
    keys: dict[str, set[str]] = {}
    for e in _run_events(trace):
        if e.event == "chat":
            keys.setdefault(e.state or "", set()).update(e.payload)
    return keys


def _history_shape(trace: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Roles, stop reasons and content block types of the history, in order."""
    return [
        (
            m.get("role"),
            m.get("stopReason"),
            tuple(b.get("type") for b in m.get("content", []) if isinstance(b, dict))
            if isinstance(m.get("content"), list)
            else "text",
        )
        for m in trace["history"].get("messages", [])
    ]


@pytest.mark.parametrize("gateway", GATEWAYS)
@pytest.mark.parametrize("name", SCENARIOS)
def test_recorded_shapes_still_match_the_live_gateways(
    live: dict[str, dict[str, Any]], gateway: str, name: str
) -> None:
    now, then = live[gateway][name], _stored(gateway, name)
    assert event_pairs(_run_events(now)) == event_pairs(_run_events(then))
    assert _chat_keys(now) == _chat_keys(then)
    assert _history_shape(now) == _history_shape(then)
    assert [a.get("status") for a in now["acks"]] == [a.get("status") for a in then["acks"]]


@pytest.mark.parametrize("gateway", GATEWAYS)
@pytest.mark.parametrize("name", SCENARIOS)
def test_the_live_trace_gives_its_history_timeline(
    live: dict[str, dict[str, Any]], gateway: str, name: str
) -> None:
    steps, messages = trace_steps(live[gateway][name])
    session = trace_session(live[gateway][name])
    client = replay(steps, {}, session)
    assert shown(client.timeline.items) == history_alone(messages, session)


def _who(trace: dict[str, Any]) -> list[tuple[str, str]]:
    """Whose each history message is (a user message's key, an assistant or tool result's
    run); consecutive assistant entries of one run count once (the real gateway stores a
    message with text and tool calls as two)."""
    out: list[tuple[str, str]] = []
    for m in trace["history"].get("messages", []):
        meta = m.get("__openclaw") if isinstance(m.get("__openclaw"), dict) else {}
        owner = str(m.get("idempotencyKey") if m.get("role") == "user" else meta.get("runId"))
        entry = (str(m.get("role")), owner)
        if not out or out[-1] != entry or m.get("role") == "user":
            out.append(entry)
    return out


def _steered_states(trace: dict[str, Any]) -> list[str]:
    steered = f"golden-{trace['scenario']}-2"
    return [
        str(e["payload"].get("state"))
        for e in trace["events"]
        if e.get("event") == "chat" and e["payload"].get("runId") == steered
    ]


@pytest.mark.parametrize("name", ["steer", "stopsteer"])
def test_ours_takes_a_steer_in_as_the_real_gateway_does(
    live: dict[str, dict[str, Any]], name: str
) -> None:
    """Taken in by the running turn (its own run ends then, with one ``final``), or, when
    that turn is stopped first, run next as a turn of its own: the same on both gateways."""
    real, ours = live["real"][name], live["bundled"][name]
    assert _who(ours) == _who(real)
    if name == "steer":
        assert _steered_states(ours) == _steered_states(real) == ["final"]
    else:
        assert (
            set(_steered_states(ours)) == set(_steered_states(real)) == {"status", "delta", "final"}
        )
