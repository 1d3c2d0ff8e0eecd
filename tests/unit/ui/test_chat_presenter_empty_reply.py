"""A reply is shown once it has text: the assistant items the real gateway opens for attempts
at the model that fail (no text ever) make no empty bubbles, and the history (which has no
such message) and the live timeline agree."""

from __future__ import annotations

from typing import Any

from openclaw_desktop.chat import ChatTimeline
from openclaw_desktop.sdk import Event
from ui.presenters.chat import opens_an_empty_reply

RUN = "run-1"


def event(kind: str, **data: Any) -> Event:
    return Event(id=f"{kind}-{len(data)}", ts=1, type=kind, data=data, run_id=RUN)


def attempt(index: int, text: str = "", cumulative: str | None = "", **more: Any) -> Event:
    """``assistant.delta`` as the SDK makes it of the real gateway's ``agent`` events."""
    return event(
        "assistant.delta",
        text=text,
        cumulative=cumulative,
        replace=more.get("replace", False),
        itemId=f"item-{index}",
        messageIndex=index,
    )


def fold(timeline: ChatTimeline, events: list[Event]) -> None:
    """What the presenter does with the events it follows."""
    for e in events:
        if not opens_an_empty_reply(timeline, e):
            timeline.apply(e)


def test_failed_attempts_leave_no_empty_bubble_and_the_message_stays_sent() -> None:
    timeline = ChatTimeline("main")
    timeline.send(RUN, "FAIL:500 please")
    failure = "⚠️ fake/fake-model request failed (provider internal error, HTTP 500)."
    events = [event("run.started"), *(attempt(i) for i in range(6))]
    events.append(event("run.failed", errorMessage=failure, errorKind="unknown"))
    fold(timeline, events)
    assert [(i.role, i.status, i.text) for i in timeline.items] == [
        ("user", "sent", "FAIL:500 please"),
        ("error", "failed", failure),
    ]


def test_without_the_filter_the_attempts_are_empty_bubbles() -> None:
    """The case the filter is for (so the test above can fail)."""
    timeline = ChatTimeline("main")
    timeline.send(RUN, "hi")
    for e in [event("run.started"), attempt(0), attempt(1)]:
        timeline.apply(e)
    assert [i.text for i in timeline.items if i.role == "assistant"] == ["", ""]


def test_text_after_failed_attempts_is_one_reply_and_an_empty_replace_still_clears() -> None:
    timeline = ChatTimeline("main")
    timeline.send(RUN, "hi")
    fold(timeline, [event("run.started"), attempt(0), attempt(1, "Hel", "Hel")])
    fold(timeline, [attempt(1, "lo", "Hello")])
    assert [i.text for i in timeline.items if i.role == "assistant"] == ["Hello"]
    shown = timeline.items[-1]
    assert not opens_an_empty_reply(timeline, attempt(1, "", "", replace=True))
    fold(timeline, [attempt(1, "", "", replace=True)])
    assert shown.text == "", "a replace with nothing empties the shown reply"
    assert opens_an_empty_reply(timeline, attempt(2, "", "", replace=True))
