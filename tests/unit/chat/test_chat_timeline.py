"""The chat window's reducer, fed with frames recorded from the real gateway."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.chat import ChatTimeline, redact, strip_control
from openclaw_desktop.sdk.normalize import Normalizer

pytestmark = pytest.mark.unit

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
