"""The live stream and ``chat.history`` reduce to the same timeline.

Sessions are generated (:mod:`tests.helpers.transcripts`): runs whose assistant messages have
text before tool calls, tool calls (some failing), text after them, messages steered in,
replies stopped by the user, failed, or cut by the gateway being killed (and recorded from
its checkpoint on restart), in the event shapes of the real gateway (its golden trace) and
of ours. A client lives through them with reconnects anywhere: the frames sent while it is
away are lost, and back online it merges a ``chat.history`` page (the latest messages, never
fewer than the running turn's), as the window does; after a reconnect during a run it loads
the history once more when that run ends (``ChatPresenter``). Whatever the interleaving, the
timeline it ends with is the one the last page of history gives alone. Without reconnects,
the live stream alone gives the history's timeline.

Limits of what the live stream can know (so not generated): a steered message takes its
place when the turn that took it in starts its next *text* (the gateways do not say when it
was injected), so the message after a steer has text.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openclaw_desktop.chat import ChatItem, ChatTimeline
from openclaw_desktop.chat.history import from_history
from openclaw_desktop.sdk.normalize import Normalizer
from tests.helpers.transcripts import (
    SESSION,
    CallPlan,
    Ending,
    MessagePlan,
    RunPlan,
    Step,
    session_steps,
    transcript,
)

pytestmark = pytest.mark.unit

TRACE = Path(__file__).resolve().parents[2] / "fixtures" / "gateway" / "real-chat-trace.json"
LOCAL = frozenset({"send", "steer", "stop"})
_TERMINAL = frozenset({"run.completed", "run.cancelled", "run.failed", "run.timed_out"})


def shown(items: list[ChatItem]) -> list[tuple[Any, ...]]:
    """What the chat shows of each item (not timestamps or ids the live stream lacks)."""
    return [
        (
            i.key,
            i.role,
            i.text,
            i.status,
            (i.tool.name, i.tool.status, i.tool.arg_count, i.tool.preview) if i.tool else None,
        )
        for i in items
    ]


def history_alone(messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    timeline = ChatTimeline(SESSION)
    timeline.merge_history(messages)
    assert shown(timeline.items) == shown(from_history(messages).items)
    return shown(timeline.items)


class Client:
    """The window's chat state: a timeline fed by one normalizer, the presenter's reloads."""

    def __init__(self) -> None:
        self.timeline = ChatTimeline(SESSION)
        self.normalizer = Normalizer()
        self.reload_at_end: set[str] = set()
        self.page_start = 0

    def merge(self, messages: list[dict[str, Any]], limit: int) -> None:
        start = max(0, len(messages) - limit)
        self.timeline.merge_history(messages[start:])
        self.page_start = start

    def local(self, step: Step) -> None:
        kind, run_id = step[0], step[1]
        if kind == "send":
            self.timeline.send(run_id, step[2])
        elif kind == "steer":
            queued = self.timeline.send(run_id, step[2])
            assert queued.status == "queued"
            self.timeline.steered(run_id)
        else:
            self.timeline.stop_requested(run_id)

    def frame(self, step: Step, stored: Callable[[], list[dict[str, Any]]]) -> None:
        for event in self.normalizer.feed(step[1], step[2], 0):
            self.timeline.apply(event)
            if event.type in _TERMINAL and event.run_id in self.reload_at_end:
                self.reload_at_end.discard(event.run_id)
                messages = stored()
                self.merge(messages, len(messages))


def live(steps: list[Step], cuts: dict[int, tuple[int, int]]) -> Client:
    """Live through ``steps``; ``cuts`` maps a step index to (steps away, page size)."""
    client = Client()
    away_until = -1
    limit = 0
    for index, step in enumerate([*steps, ("end",)]):
        if index == away_until:  # back online: merge a page of the history
            client.merge(transcript(steps, index), limit)
            if client.timeline.active_run:
                client.reload_at_end.add(client.timeline.active_run)
        if step[0] == "end":
            break
        if index in cuts and index >= away_until:
            length, limit = cuts[index]
            away_until = index + length
        if step[0] == "crash" and away_until < index + 2:
            # away at least until the restarted gateway recorded the cut reply
            limit += sum(1 for s in steps[max(away_until, index) : index + 2] if s[0] == "persist")
            away_until = index + 2
        away = index < away_until
        if step[0] in LOCAL:
            assert not away, "the window does nothing while the gateway is away"
            client.local(step)
        elif step[0] == "frame" and not away:
            client.frame(step, functools.partial(transcript, steps, index + 1))
    return client


# ------------------------------------------------------------------------- generated sessions
WORDS = st.text(alphabet="ab <>*_`x\n", min_size=1, max_size=5)
CHUNKS = st.lists(WORDS, min_size=1, max_size=3).map(tuple)
MAYBE_TEXT = st.one_of(st.just(()), CHUNKS)
ENDINGS: list[Ending] = ["stop", "stop", "aborted", "error", "interrupted"]


@st.composite
def sessions(draw: st.DrawFn) -> list[RunPlan]:
    plans: list[RunPlan] = []
    calls = 0
    for r in range(draw(st.integers(1, 3))):
        ending: Ending = draw(st.sampled_from(ENDINGS))
        count = draw(st.integers(1, 3))
        steer_before = draw(st.integers(0, count - 1)) if count > 1 else 0
        steers: dict[int, tuple[tuple[str, str], ...]] = {}
        if steer_before and draw(st.booleans()):
            steers[steer_before] = ((f"steer-{r}", draw(WORDS)),)
        messages = []
        for j in range(count):
            cut = j == count - 1 and ending == "interrupted"  # a checkpoint needs text
            text = draw(CHUNKS) if j in steers or cut else draw(MAYBE_TEXT)
            if j == count - 1:
                messages.append(MessagePlan(text))
                continue
            made = []
            for _ in range(draw(st.integers(1, 2))):
                calls += 1
                made.append(
                    CallPlan(
                        f"call_{calls}",
                        draw(st.sampled_from(["ls", "exec", "nodes_list"])),
                        draw(st.dictionaries(st.sampled_from("abc"), st.integers(0, 9))),
                        draw(st.text(alphabet="xyz AGENTS.md\n", max_size=12)),
                        draw(st.booleans()),
                    )
                )
            messages.append(MessagePlan(text, tuple(made)))
        plans.append(
            RunPlan(
                f"run-{r}",
                f"question {r}",
                tuple(messages),
                ending,
                steers=steers,
                checkpoint=draw(st.integers(1, 6)),
            )
        )
    return plans


@st.composite
def interleavings(draw: st.DrawFn, steps: list[Step]) -> dict[int, tuple[int, int]]:
    """Where the client is away, how long, and how big a history page it gets back."""
    cuts: dict[int, tuple[int, int]] = {}
    starts = [i for i, s in enumerate(steps) if s[0] == "crash"]
    optional = [i for i, s in enumerate(steps) if s[0] in ("frame", "persist")]
    starts += draw(st.lists(st.sampled_from(optional), max_size=3)) if optional else []
    for start in sorted(set(starts)):
        room = 0
        while start + room < len(steps) and steps[start + room][0] not in LOCAL:
            room += 1
        need = 2 if steps[start][0] == "crash" else 1  # the crash and the recorded marker
        length = draw(st.integers(min(need, room), room))
        stored = transcript(steps, start + length)
        running = [s[1] for s in steps[: start + length] if s[0] == "send"][-1:]
        ikeys = [m.get("idempotencyKey") for m in stored]
        latest = ikeys.index(f"{running[0]}:user") if running else 0  # never cut that turn
        limit = draw(st.integers(len(stored) - latest, max(len(stored), 1)))
        cuts[start] = (length, limit)
    return cuts


@pytest.mark.parametrize("flavor", ["real", "bundled"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_interleaving_gives_the_history_timeline(flavor: str, data: st.DataObject) -> None:
    plans = data.draw(sessions())
    steps = session_steps(plans, flavor)  # type: ignore[arg-type]
    cuts = data.draw(interleavings(steps))
    client = live(steps, cuts)
    stored = transcript(steps)
    assert shown(client.timeline.items) == history_alone(stored[client.page_start :])


@pytest.mark.parametrize("flavor", ["real", "bundled"])
@settings(max_examples=50, deadline=None)
@given(plans=sessions())
def test_the_live_stream_alone_gives_the_history_timeline(
    flavor: str, plans: list[RunPlan]
) -> None:
    plans = [p for p in plans if p.ending != "interrupted"]  # a crash needs a reconnect
    steps = session_steps(plans, flavor)  # type: ignore[arg-type]
    client = live(steps, {})
    assert shown(client.timeline.items) == history_alone(transcript(steps))
    assert client.timeline.active_run is None


# ------------------------------------------------------------------------- the golden trace
def golden() -> tuple[list[Step], list[dict[str, Any]]]:
    """The real gateway's recorded frames as steps (sends where each run begins), and its
    ``chat.history`` after both runs."""
    entries: list[dict[str, Any]] = json.loads(TRACE.read_text("utf-8"))
    steps: list[Step] = []
    sent: set[str] = set()
    texts = {"8c9aeacd-b659-465e-8924-55421f3ea129": "hello there"}
    for entry in entries:
        if "history" in entry:
            return steps, entry["history"]["messages"]
        if entry.get("event") not in ("chat", "agent"):
            continue
        run_id = entry["payload"]["runId"]
        if run_id not in sent:
            sent.add(run_id)
            steps.append(("send", run_id, texts.get(run_id, 'CALLTOOL:ls:{"path":"."}')))
        steps.append(("frame", entry["event"], entry["payload"]))
    raise AssertionError("the trace has no history")


def test_the_golden_trace_live_is_its_history() -> None:
    steps, messages = golden()
    client = live(steps, {})
    assert shown(client.timeline.items) == history_alone(messages)
    keys = [i.key for i in client.timeline.items]
    tool_run = "3ff60336-2dcd-4714-b4cb-b4273f2890fa"
    assert keys[-2:] == [f"{tool_run}:tool:call_fake_1", f"{tool_run}:assistant:1"]


@pytest.mark.parametrize("cut", range(0, 60, 3))
def test_the_golden_trace_with_a_reconnect_anywhere(cut: int) -> None:
    """Away from frame ``cut`` to the end of the trace, then its history merged."""
    steps, messages = golden()
    frames = [i for i, s in enumerate(steps) if s[0] == "frame"]
    start = frames[min(cut, len(frames) - 1)]
    client = Client()
    for step in steps[:start]:
        if step[0] == "frame":
            client.frame(step, list)
        else:
            client.local(step)
    for step in steps[start:]:
        if step[0] == "send":
            client.local(step)
    client.merge(messages, len(messages))
    assert shown(client.timeline.items) == history_alone(messages)
