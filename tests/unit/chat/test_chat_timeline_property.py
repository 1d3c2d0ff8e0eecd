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

The same holds for the *recorded* traces of both gateways (``tests/fixtures/chat-traces``,
recorded live by ``tests/interop/test_chat_golden_traces.py``: text, a tool call and the final
text; a steer while a reply streams, taken in by a turn that only calls a tool; a reply
stopped by ``chat.abort``): fed with their text frames coalesced at random, with reconnects
and history pages anywhere, and the steer in the live stream (:mod:`tests.helpers.golden_chat`).

Limits of what the generated sessions can say: they do not send the ``chat`` ``final`` both
gateways send for a steered message's own run when it is taken in, so there a steered
message takes its place when the turn that took it in starts its next *text*, and the
message after a steer has text. The recorded traces have that event.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openclaw_desktop.chat import ChatTimeline
from openclaw_desktop.chat.history import from_history
from tests.helpers.golden_chat import (
    GATEWAYS,
    LOCAL,
    SCENARIOS,
    Client,
    coalesce,
    history_alone,
    live,
    load_trace,
    shown,
    trace_session,
    trace_steps,
)
from tests.helpers.transcripts import (
    CallPlan,
    Ending,
    MessagePlan,
    RunPlan,
    Step,
    session_steps,
    transcript,
)

TRACE = Path(__file__).resolve().parents[2] / "fixtures" / "gateway" / "real-chat-trace.json"
#: The project's hypothesis settings: bounded, no example database, derandomized in CI.
BOUNDED = settings(
    deadline=None,
    database=None,
    derandomize=bool(os.environ.get("CI")),
    suppress_health_check=[HealthCheck.too_slow],
)


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
@settings(BOUNDED, max_examples=60)
@given(data=st.data())
def test_any_interleaving_gives_the_history_timeline(flavor: str, data: st.DataObject) -> None:
    plans = data.draw(sessions())
    steps = session_steps(plans, flavor)  # type: ignore[arg-type]
    cuts = data.draw(interleavings(steps))
    client = live(steps, cuts)
    stored = transcript(steps)
    assert shown(client.timeline.items) == history_alone(stored[client.page_start :])


@pytest.mark.parametrize("flavor", ["real", "bundled"])
@settings(BOUNDED, max_examples=50)
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


# ------------------------------------------------------------------------- recorded traces
STEER_TARGET, STEERED = "golden-steer-1", "golden-steer-2:user"
#: Every recorded trace (``tests/fixtures/chat-traces``): both gateways, every scenario.
TRACES = [(gateway, scenario) for gateway in GATEWAYS for scenario in SCENARIOS]


def live_equals_history(trace: dict[str, Any]) -> None:
    """Without reconnects, the live stream of ``trace`` gives its history's timeline."""
    steps, messages = trace_steps(trace)
    session = trace_session(trace)
    client = live(steps, {}, session)
    assert shown(client.timeline.items) == history_alone(messages, session)
    assert client.timeline.active_run is None


@pytest.mark.parametrize(("gateway", "scenario"), TRACES)
def test_a_recorded_trace_live_is_its_history(gateway: str, scenario: str) -> None:
    live_equals_history(load_trace(gateway, scenario))


@pytest.mark.parametrize("gateway", GATEWAYS)
def test_a_steered_message_followed_only_by_tool_calls_is_above_them_live(gateway: str) -> None:
    """The steer arrived while the first reply streamed; the turn that took it in only
    called a tool before answering: live, the message is above the card at once."""
    trace = load_trace(gateway, "steer")
    steps, _messages = trace_steps(trace)
    client = Client(trace_session(trace))
    for step in steps:
        if step[0] in LOCAL:
            client.local(step)
        elif step[0] == "frame":
            client.frame(step, list)
        tools = [i.key for i in client.timeline.items if i.role == "tool"]
        if tools:  # the card has just appeared
            break
    keys = [i.key for i in client.timeline.items]
    assert keys == [
        "golden-steer-1:user",
        "golden-steer-1:assistant",
        "golden-steer-2:user",
        "golden-steer-1:tool:call_fake_4",
    ]


@pytest.mark.parametrize("gateway", GATEWAYS)
def test_a_stopped_reply_shows_what_the_gateway_kept_of_it(gateway: str) -> None:
    """The gateway stored more of a stopped reply than it had streamed (seen live on the
    real gateway: its last text frames were still coalescing): the stop's partial completes
    the reply, as the history has it. The recorded trace without its last text frames."""
    trace = load_trace(gateway, "abort")
    steps, messages = trace_steps(trace)
    texts = [
        i
        for i, s in enumerate(steps)
        if s[0] == "frame" and (s[2].get("state") == "delta" or s[2].get("stream") == "assistant")
    ]
    late = set(texts[len(texts) // 2 :])
    client = live([s for i, s in enumerate(steps) if i not in late], {}, trace_session(trace))
    assert shown(client.timeline.items) == history_alone(messages, trace_session(trace))


@pytest.mark.parametrize("gateway", GATEWAYS)
def test_a_history_with_a_steer_taken_in_shows_its_run_going_on(gateway: str) -> None:
    """Back online between the first turn and the answer to the steer (the history's run
    ends with text, then the steered message): the run is still going, so the window loads
    the history again when it ends and shows the answer."""
    trace = load_trace(gateway, "steer")
    messages = trace["history"]["messages"]
    steered = next(i for i, m in enumerate(messages) if m.get("idempotencyKey") == STEERED)
    page = messages[: steered + 1]
    assert from_history(page).runs[STEER_TARGET].ended is None
    timeline = ChatTimeline(trace_session(trace))
    timeline.send(STEER_TARGET, "SLOW:60")
    timeline.merge_history(page)
    assert timeline.active_run == STEER_TARGET


@st.composite
def recorded(draw: st.DrawFn) -> tuple[dict[str, Any], list[Step]]:
    """A recorded trace, its text frames coalesced here and there (as a gateway that
    batches deltas, or a slower socket, would deliver them)."""
    gateway, scenario = draw(st.sampled_from(TRACES))
    trace = load_trace(gateway, scenario)
    steps, _messages = trace_steps(trace)
    out: list[Step] = []
    for step in steps:
        merged = coalesce(out[-1], step) if out else None
        if merged is not None and draw(st.booleans()):
            out[-1] = merged
        else:
            out.append(step)
    return trace, out


@settings(BOUNDED, max_examples=80)
@given(data=st.data())
def test_recorded_traces_with_any_interleaving_give_the_history_timeline(
    data: st.DataObject,
) -> None:
    trace, steps = data.draw(recorded())
    cuts = data.draw(interleavings(steps))
    session = trace_session(trace)
    client = live(steps, cuts, session)
    stored = transcript(steps)
    assert shown(client.timeline.items) == history_alone(stored[client.page_start :], session)
