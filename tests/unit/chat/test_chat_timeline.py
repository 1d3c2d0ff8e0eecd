"""The chat window's reducer, fed with frames recorded from the real gateway."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.chat import ChatTimeline, redact, strip_control
from openclaw_desktop.sdk.normalize import Normalizer

TRACE = Path(__file__).resolve().parents[2] / "fixtures" / "gateway" / "real-chat-trace.json"


def recorded() -> list[dict[str, Any]]:
    """The real gateway's frames and RPC results for a plain reply and a tool run."""
    data: list[dict[str, Any]] = json.loads(TRACE.read_text(encoding="utf-8"))
    return data


def runs() -> list[str]:
    """The two run ids of the recording."""
    return [e["ack"]["runId"] for e in recorded() if "ack" in e]


def fold(timeline: ChatTimeline) -> None:
    """Send both messages and fold every recorded event in."""
    normalizer = Normalizer()
    plain, tool = runs()
    timeline.send(plain, "hello there")
    for entry in recorded():
        if "history" in entry:
            break  # what came later (chat.inject, error probes) is not part of the two runs
        if "event" not in entry:
            continue
        for event in normalizer.feed(entry["event"], entry["payload"], 0):
            if event.run_id == tool and timeline.get(f"{tool}:user") is None:
                timeline.send(tool, 'CALLTOOL:ls:{"path":"."}')
            timeline.apply(event)


def test_live_events_build_the_chat() -> None:
    """User messages, streamed replies and a tool card, in order and final."""
    timeline = ChatTimeline("agent:main:main")
    fold(timeline)
    plain, tool = runs()
    roles = [(i.role, i.run_id) for i in timeline.items]
    assert roles == [
        ("user", plain),
        ("assistant", plain),
        ("user", tool),
        ("tool", tool),
        ("assistant", tool),
    ]
    reply = timeline.get(f"{plain}:assistant")
    assert reply is not None and reply.status == "done"
    assert reply.text == "FAKE-LLM reply #1: you said 'hello there'"
    card = timeline.get(f"{tool}:tool:call_fake_1")
    assert card is not None and card.tool is not None
    assert (card.tool.name, card.tool.status, card.tool.arg_count) == ("ls", "completed", 1)
    assert "AGENTS.md" in card.tool.preview
    assert all(i.status in ("sent", "done") for i in timeline.items)
    assert timeline.active_run is None


def test_history_merge_after_a_reconnect_has_no_duplicates() -> None:
    """Merging chat.history into the live timeline changes nothing visible and duplicates
    nothing; merging twice is the same as once."""
    timeline = ChatTimeline("agent:main:main")
    fold(timeline)
    history = next(e["history"] for e in recorded() if "history" in e)
    before = [(i.key, i.text) for i in timeline.items]
    timeline.merge_history(history["messages"])
    after = [(i.key, i.text) for i in timeline.items]
    assert [k for k, _ in after] == [k for k, _ in before]
    assert after[1][1] == before[1][1]
    timeline.merge_history(history["messages"])
    assert [(i.key, i.text) for i in timeline.items] == after
    fresh = ChatTimeline("agent:main:main")
    fresh.merge_history(history["messages"])
    assert [i.key for i in fresh.items] == [k for k, _ in after]


def test_sends_during_a_run_queue_and_can_be_steered() -> None:
    """A message sent while a run goes on is queued; steering marks it sent."""
    timeline = ChatTimeline("agent:main:main")
    first = timeline.send("r1", "first")
    second = timeline.send("r2", "second")
    assert (first.status, second.status) == ("sending", "queued")
    assert timeline.queued == [second]
    timeline.steered("r2")
    assert second.status == "sent" and timeline.queued == []


def test_a_refused_send_stays_visible_with_the_reason() -> None:
    """Nothing typed is lost: the message is marked failed and the reason shown."""
    timeline = ChatTimeline("agent:main:main")
    timeline.send("r1", "hello")
    timeline.failed_send("r1", "gateway unreachable")
    assert [(i.role, i.status) for i in timeline.items] == [("user", "failed"), ("error", "failed")]
    assert timeline.active_run is None


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuv", "sk-abcdefghijklmnopqrstuv"),
        ("Authorization: Bearer abcdefghijklmnop1234", "abcdefghijklmnop1234"),
        ("git clone https://me:s3cretpass@example.com/r.git", "s3cretpass"),
        ("mysql --password=topsecret -u root", "topsecret"),
        ("token: 'abc def ghi'", "abc def ghi"),
        ("ghp_abcdefghijklmnopqrstuvwxyz123456", "ghp_abcdefghijklmnopqrstuvwxyz123456"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----", "AAAA"),
    ],
)
def test_secrets_are_redacted(text: str, secret: str) -> None:
    """Tool previews and approvals never show secrets."""
    shown = redact(text)
    assert secret not in shown
    assert "[redacted]" in shown


def test_control_characters_are_stripped() -> None:
    """Terminal escapes and bidi overrides cannot disguise a command."""
    assert strip_control("rm\x1b[8m -rf /\x1b[0m\u202e txt.exe") == "rm -rf / txt.exe"
    assert strip_control("line1\nline2\ttab") == "line1\nline2\ttab"


# ------------------------------------------------------------------ one item per message
def events_of(frames: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    normalizer = Normalizer()
    return [e for name, payload in frames for e in normalizer.feed(name, payload, 0)]


def agent(run: str, seq: int, stream: str, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    payload = {"runId": run, "sessionKey": "agent:main:main", "seq": seq, "stream": stream}
    return "agent", {**payload, "data": data, "ts": seq}


def text(run: str, seq: int, n: int, cumulative: str) -> tuple[str, dict[str, Any]]:
    return agent(run, seq, "assistant", {"text": cumulative, "delta": "", "itemId": f"s:{n}"})


def chat(run: str, seq: int, state: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return "chat", {"runId": run, "sessionKey": "agent:main:main", "seq": seq, "state": state,
                    **fields}  # fmt: skip


def tool(run: str, seq: int, phase: str, call: str) -> tuple[str, dict[str, Any]]:
    data: dict[str, Any] = {"phase": phase, "name": "nodes_list", "toolCallId": call}
    if phase == "result":
        data |= {"isError": False, "result": {"content": [{"type": "text", "text": "[]"}]}}
    return agent(run, seq, "tool", data)


def test_text_before_a_tool_call_and_the_answer_after_it_are_two_items() -> None:
    """The screenshot of issue 15: the first text stays, above the card, and the final
    answer is its own row below it (the real gateway's final joins both: it changes
    nothing)."""
    timeline = ChatTimeline("agent:main:main")
    timeline.send("r", "TEXTTOOL check the nodes")
    for event in events_of(
        [
            agent("r", 1, "lifecycle", {"phase": "start"}),
            text("r", 2, 1, "Let me check the nodes first."),
            tool("r", 3, "start", "c1"),
            tool("r", 4, "result", "c1"),
            text("r", 5, 2, "The end."),
            chat(
                "r",
                6,
                "final",
                message={
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Let me check the nodes first.\n\nThe end."}
                    ],
                },
            ),
        ]
    ):
        timeline.apply(event)
    assert [(i.key, i.text, i.status) for i in timeline.items] == [
        ("r:user", "TEXTTOOL check the nodes", "sent"),
        ("r:assistant", "Let me check the nodes first.", "done"),
        ("r:tool:c1", "", "done"),
        ("r:assistant:1", "The end.", "done"),
    ]


def test_a_steered_message_takes_its_place_when_the_next_message_starts() -> None:
    timeline = ChatTimeline("agent:main:main")
    timeline.send("a", "first")
    events = events_of(
        [
            text("a", 1, 1, "Looking."),
            tool("a", 2, "start", "c1"),
            tool("a", 3, "result", "c1"),
            text("a", 4, 2, "Also that."),
            chat("a", 5, "final"),
        ]
    )
    timeline.apply(events[0])
    queued = timeline.send("s", "and that too")
    assert queued.status == "queued"
    timeline.steered("s")
    for event in events[1:3]:
        timeline.apply(event)
    assert [i.key for i in timeline.items][-1] == "s:user"  # below the card meanwhile
    for event in events[3:]:
        timeline.apply(event)
    assert [i.key for i in timeline.items] == [
        "a:user",
        "a:assistant",
        "a:tool:c1",
        "s:user",
        "a:assistant:1",
    ]


@pytest.mark.parametrize(("pressed", "status"), [(True, "aborted"), (False, "interrupted")])
def test_a_stop_is_shown_as_stopped_only_when_the_user_asked(pressed: bool, status: str) -> None:
    timeline = ChatTimeline("agent:main:main")
    timeline.send("r", "write a poem")
    for event in events_of([text("r", 1, 1, "Roses")]):
        timeline.apply(event)
    if pressed:
        timeline.stop_requested()
    for event in events_of([chat("r", 2, "aborted", stopReason="aborted")]):
        timeline.apply(event)
    reply = timeline.get("r:assistant")
    assert reply is not None and (reply.text, reply.status) == ("Roses", status)
    error = timeline.get("r:error")
    assert (error is None) == pressed
    assert error is None or error.text == "interrupted: the gateway stopped"


def test_a_reply_cut_by_a_crash_stays_and_the_history_marker_is_rendered() -> None:
    """Killed mid-reply: the live partial stays; the restarted gateway's record of it
    (the bundled gateway's checkpoint: ``stopReason: aborted``, ``openclawAbort`` of origin
    ``interrupted``) marks it interrupted, not stopped."""
    timeline = ChatTimeline("agent:main:main")
    timeline.send("r", "write a poem")
    for event in events_of([text("r", 1, 1, "Roses are red, vio")]):
        timeline.apply(event)
    user = {"role": "user", "content": "write a poem", "idempotencyKey": "r:user"}
    timeline.merge_history([user])  # reconnected before the gateway died: still streaming
    assert timeline.get("r:assistant") is not None
    marker = {
        "role": "assistant",
        "content": [{"type": "text", "text": "Roses are red"}],
        "stopReason": "aborted",
        "errorMessage": "the gateway stopped before this reply finished (interrupted)",
        "openclawAbort": {"aborted": True, "origin": "interrupted", "runId": "r"},
        "__openclaw": {"runId": "r"},
    }
    timeline.merge_history([user, marker])
    assert [(i.key, i.text, i.status) for i in timeline.items] == [
        ("r:user", "write a poem", "sent"),
        ("r:assistant", "Roses are red", "interrupted"),
        ("r:error", "interrupted: the gateway stopped", "failed"),
    ]
    assert timeline.active_run is None
    cut = ChatTimeline("agent:main:main")  # the history lost the text: the live one stays
    cut.send("r", "write a poem")
    for event in events_of([text("r", 1, 1, "Roses")]):
        cut.apply(event)
    cut.merge_history([user, {**marker, "content": []}])
    reply = cut.get("r:assistant")
    assert reply is not None and (reply.text, reply.status) == ("Roses", "interrupted")


def test_the_real_gateways_restart_abort_is_an_interruption() -> None:
    timeline = ChatTimeline("agent:main:main")
    timeline.merge_history(
        [
            {"role": "user", "content": "hi", "idempotencyKey": "r:user"},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "Hel"}],
                "stopReason": "error",
                "errorCode": "OPENCLAW_RESTART_ABORT",
                "errorMessage": "agent run aborted for restart",
                "__openclaw": {"runId": "r"},
            },
        ]
    )
    assert [(i.role, i.status, i.text) for i in timeline.items][1:] == [
        ("assistant", "interrupted", "Hel"),
        ("error", "failed", "interrupted: the gateway stopped"),
    ]
