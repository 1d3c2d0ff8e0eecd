"""Record and normalise the operator-side chat traffic of a gateway, for side-by-side tests.

Both the real OpenClaw gateway and ours broadcast ``chat`` and ``agent`` events of every run
to every operator connection. :class:`ChatRecorder` collects them in arrival order;
the shape functions below reduce one run's events to comparable sets (event/state pairs,
payload keys, data keys) so that two gateways' traces can be compared without their ids,
timestamps and texts. :func:`chat_operator` connects an operator with the ``tool-events``
cap (tool streams are sent only to such clients) and :func:`write_fake_providers` points our
gateway at a :class:`tests.helpers.fake_llm.FakeLLM`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openclaw_desktop.config.client_profile import cli_client
from openclaw_desktop.identity import CredentialStore, DeviceIdentity, MemorySecretStore
from openclaw_desktop.protocol import Role
from openclaw_desktop.session import EventReceived
from openclaw_desktop.transport import ConnectionOptions, GatewayConnection
from tests.helpers.bundled_gateway import BundledGateway

__all__ = [
    "OPERATOR_SCOPES",
    "TERMINAL_STATES",
    "ChatRecorder",
    "RunEvent",
    "agent_data_keys",
    "chat_operator",
    "chat_state_keys",
    "concatenated_deltas",
    "cumulative_problems",
    "event_pairs",
    "final_text",
    "last_turn",
    "message_keys",
    "seq_problems",
    "write_fake_providers",
]

#: How the real gateway's synthetic user message (appended after the user's own) begins.
OPERATOR_SCOPES = ("operator.read", "operator.write", "operator.admin")
#: Chat states that end a run.
TERMINAL_STATES = frozenset({"final", "error", "aborted"})


@dataclass(frozen=True)
class RunEvent:
    """One ``chat`` or ``agent`` event as received (``event`` name and its payload).

    ``at`` is when the recorder got it (:func:`time.perf_counter`), for benchmarks.
    """

    event: str
    payload: dict[str, Any]
    at: float = field(default=0.0, compare=False)

    @property
    def run_id(self) -> str | None:
        """The payload's ``runId``."""
        value = self.payload.get("runId")
        return value if isinstance(value, str) else None

    @property
    def state(self) -> str | None:
        """The chat state (``status``/``delta``/``final``/...) of a ``chat`` event."""
        value = self.payload.get("state")
        return value if isinstance(value, str) else None

    @property
    def stream(self) -> str | None:
        """The agent stream (``assistant``/``lifecycle``/``tool``/...) of an ``agent`` event."""
        value = self.payload.get("stream")
        return value if isinstance(value, str) else None

    @property
    def data(self) -> dict[str, Any]:
        """The ``data`` object of an ``agent`` event (empty for chat events)."""
        value = self.payload.get("data")
        return value if isinstance(value, dict) else {}


class ChatRecorder:
    """Collects ``chat`` and ``agent`` events in arrival order; use as an event listener.

    ``conn.on_event(recorder)`` subscribes it. Other events (health, cron, sessions.changed
    and so on) are ignored.
    """

    def __init__(self) -> None:
        self.events: list[RunEvent] = []
        self._changed = asyncio.Event()

    def __call__(self, received: EventReceived) -> None:
        """Record one event when it is ``chat`` or ``agent`` with a dict payload."""
        if received.event in ("chat", "agent") and isinstance(received.payload, dict):
            self.events.append(RunEvent(received.event, received.payload, time.perf_counter()))
            self._changed.set()

    def run(self, run_id: str) -> list[RunEvent]:
        """Every recorded event of ``run_id``, in arrival order."""
        return [e for e in self.events if e.run_id == run_id]

    def terminal(self, run_id: str) -> RunEvent | None:
        """The run's terminal chat event (final/error/aborted), if it arrived."""
        for e in self.run(run_id):
            if e.event == "chat" and e.state in TERMINAL_STATES:
                return e
        return None

    async def wait_terminal(self, run_id: str, timeout: float) -> list[RunEvent]:
        """Wait (at most ``timeout`` s) for the run's terminal chat event; its events.

        Raises:
            TimeoutError: the run did not end in time.
        """
        async with asyncio.timeout(timeout):
            while self.terminal(run_id) is None:
                self._changed.clear()
                await self._changed.wait()
        return self.run(run_id)

    async def wait_for(self, run_id: str, timeout: float) -> RunEvent:
        """Wait (at most ``timeout`` s) for the first chat event of ``run_id``."""
        async with asyncio.timeout(timeout):
            while True:
                found = [e for e in self.run(run_id) if e.event == "chat"]
                if found:
                    return found[0]
                self._changed.clear()
                await self._changed.wait()


# ---------------------------------------------------------------------------------- shapes


def _phase(e: RunEvent) -> str | None:
    phase = e.data.get("phase")
    return phase if isinstance(phase, str) else None


def event_pairs(events: Iterable[RunEvent]) -> set[tuple[str, ...]]:
    """The run's shape: ``("chat", state)`` and ``("agent", stream, phase-or-"")`` pairs."""
    pairs: set[tuple[str, ...]] = set()
    for e in events:
        if e.event == "chat":
            pairs.add(("chat", e.state or ""))
        else:
            pairs.add(("agent", e.stream or "", _phase(e) or ""))
    return pairs


def chat_state_keys(events: Iterable[RunEvent]) -> dict[str, frozenset[str]]:
    """For each chat state, the union of the payload keys its events carried."""
    keys: dict[str, set[str]] = {}
    for e in events:
        if e.event == "chat":
            keys.setdefault(e.state or "", set()).update(e.payload)
    return {state: frozenset(found) for state, found in keys.items()}


def agent_data_keys(
    events: Iterable[RunEvent], streams: Sequence[str] | None = None
) -> dict[tuple[str, str], frozenset[str]]:
    """For each ``(stream, phase)`` of agent events, the union of their ``data`` keys.

    ``phase`` is ``""`` for streams without one (assistant, usage). Only ``streams`` when
    given.
    """
    keys: dict[tuple[str, str], set[str]] = {}
    for e in events:
        if e.event != "agent" or (streams is not None and e.stream not in streams):
            continue
        keys.setdefault((e.stream or "", _phase(e) or ""), set()).update(e.data)
    return {where: frozenset(found) for where, found in keys.items()}


def seq_problems(events: Sequence[RunEvent]) -> list[str]:
    """What is wrong with the run's ``payload.seq`` numbering (empty when all is well).

    * agent events: strictly increasing in arrival order;
    * chat events: strictly increasing in arrival order, except that the terminal event may
      repeat the seq of the delta just before it (the real gateway flushes its last
      coalesced delta at the end of the run under the terminal event's seq);
    * one counter for both families: every ``status`` chat event has the seq of the
      ``run_status`` agent event of the same phase. (Chat delta seqs need not be those of
      broadcast ``assistant`` events: the real gateway numbers a coalesced delta with a seq
      no client saw.)

    Arrival order across the two families may differ from seq order (the real gateway
    sends a coalesced chat delta after later agent events), so they are not merged.
    """
    problems: list[str] = []
    for family in ("chat", "agent"):
        found = [e for e in events if e.event == family]
        seqs = [s for e in found if isinstance(s := e.payload.get("seq"), int)]
        if len(seqs) != len(found):
            problems.append(f"{family}: non-integer seq in {[e.payload.get('seq') for e in found]}")
            continue
        for (a, prev), (b, cur) in itertools.pairwise(zip(seqs, found, strict=True)):
            tie_ok = b == a and cur.state in TERMINAL_STATES and prev.state == "delta"
            if b <= a and not tie_ok:
                problems.append(f"{family}: seq not strictly increasing: {seqs}")
                break
    status = {
        e.payload.get("phase"): e.payload.get("seq")
        for e in events
        if e.event == "chat" and e.state == "status"
    }
    run_status = {_phase(e): e.payload.get("seq") for e in events if e.stream == "run_status"}
    if status != run_status:
        problems.append(f"chat status seqs {status} differ from agent run_status {run_status}")
    return problems


def _deltas(events: Iterable[RunEvent]) -> Iterator[tuple[RunEvent, str]]:
    """Each chat delta with the text accumulated so far (a ``replace`` delta restarts it)."""
    so_far = ""
    for e in events:
        if e.event != "chat" or e.state != "delta":
            continue
        text = str(e.payload.get("deltaText", ""))
        so_far = text if e.payload.get("replace") is True else so_far + text
        yield e, so_far


def concatenated_deltas(events: Iterable[RunEvent]) -> str:
    """Every chat delta's ``deltaText`` joined in arrival order (``replace: true`` deltas,
    which the real gateway sends when it rewrites the text, start over)."""
    texts = [so_far for _e, so_far in _deltas(events)]
    return texts[-1] if texts else ""


def _first_text(message: Any) -> str | None:
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict):
        text = content[0].get("text")
        return text if isinstance(text, str) else None
    return content if isinstance(content, str) else None


def final_text(events: Iterable[RunEvent]) -> str | None:
    """``message.content[0].text`` of the run's ``final`` chat event (None without one)."""
    for e in events:
        if e.event == "chat" and e.state == "final":
            return _first_text(e.payload.get("message"))
    return None


def cumulative_problems(events: Iterable[RunEvent]) -> list[str]:
    """Deltas whose ``message.content[0].text`` is not the concatenation of deltas so far."""
    problems: list[str] = []
    for e, so_far in _deltas(events):
        shown = _first_text(e.payload.get("message"))
        if shown != so_far:
            problems.append(f"seq {e.payload.get('seq')}: message text {shown!r} != {so_far!r}")
    return problems


# --------------------------------------------------------------------------------- history


def last_turn(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages of the last turn: from the last ``user`` message to the end."""
    starts = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    return list(messages[starts[-1] :]) if starts else []


def message_keys(message: dict[str, Any]) -> frozenset[str]:
    """The top-level keys of a history message."""
    return frozenset(message)


# ------------------------------------------------------------------------------ connections


@contextlib.asynccontextmanager
async def chat_operator(
    url: str,
    token: str,
    *,
    ready_timeout: float = 60,
    scopes: tuple[str, ...] = OPERATOR_SCOPES,
) -> AsyncIterator[GatewayConnection]:
    """A connected operator (read/write/admin scopes unless given, ``tool-events`` cap);
    closed on exit."""
    conn = GatewayConnection(
        ConnectionOptions(
            url=url,
            role=Role.OPERATOR,
            client=cli_client(),
            signer=DeviceIdentity.generate(),
            credentials=CredentialStore(MemorySecretStore()),
            shared_token=token,
            scopes=scopes,
            caps=("tool-events",),
        )
    )
    conn.start()
    try:
        await conn.wait_ready(ready_timeout)
        yield conn
    finally:
        await conn.aclose()


def write_fake_providers(state_dir: Path, llm_port: int) -> Path:
    """Write ``providers.json`` naming the fake model at ``127.0.0.1:llm_port`` the default.

    Must be written before our gateway starts (providers are read at start).
    """
    state_dir.mkdir(parents=True, exist_ok=True)
    config = {
        "defaultModel": "fake/fake-model",
        "providers": {
            "fake": {
                "api": "openai-completions",
                "baseUrl": f"http://127.0.0.1:{llm_port}/v1",
                "models": [
                    {
                        "id": "fake-model",
                        "name": "Fake Model",
                        "contextWindow": 128000,
                        "maxTokens": 4096,
                    }
                ],
            }
        },
    }
    path = state_dir / "providers.json"
    path.write_text(json.dumps(config, indent=2), "utf-8")
    return path


@contextlib.asynccontextmanager
async def bundled_with_fake_llm(llm_port: int, root: Path) -> AsyncIterator[BundledGateway]:
    """Our gateway in a subprocess under ``root`` with the fake model at
    ``127.0.0.1:llm_port`` its default; started and cleaned up off the event loop."""
    write_fake_providers(root / "state", llm_port)
    gw = await asyncio.to_thread(BundledGateway.start, root=root)
    try:
        yield gw
    finally:
        await asyncio.to_thread(gw.cleanup)
