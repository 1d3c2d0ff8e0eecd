"""A run that failed on the model, as each gateway's ``chat.history`` records it, is one
error row in words after the user's message, as it was live (no reply bubble)."""

from __future__ import annotations

from typing import Any

from openclaw_desktop.chat import ChatTimeline

RUN = "8b6421cf-6d9e-4573-b833-6bcdf5bcdab3"
COPY = (
    "⚠️ LLM request failed (provider internal error, HTTP 500). This is usually temporary "
    "— try again shortly."
)


def user(text: str) -> dict[str, Any]:
    key = f"{RUN}:user"
    return {"role": "user", "content": text, "idempotencyKey": key, "__openclaw": {"id": "u1"}}


def real_terminal_error() -> dict[str, Any]:
    """The real gateway's record of a run whose model answered HTTP 500 (captured from
    ``openclaw`` 2026.9.6 with the fake model, ids and usage trimmed)."""
    key = f"{RUN}:terminal-error"
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": COPY}],
        "api": "openai-completions",
        "provider": "fake",
        "model": "fake-model",
        "stopReason": "error",
        "timestamp": 1796170660717,
        "idempotencyKey": key,
        "__openclaw": {"runId": RUN, "id": "a1", "idempotencyKey": key, "seq": 2},
    }


def rows(messages: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    timeline = ChatTimeline("main")
    timeline.merge_history(messages)
    return [(i.role, i.status, i.text) for i in timeline.items]


def test_the_real_gateways_terminal_error_is_the_error_row_not_a_reply() -> None:
    assert rows([user("FAIL:500 x"), real_terminal_error()]) == [
        ("user", "sent", "FAIL:500 x"),
        ("error", "failed", COPY),
    ]


def test_a_reply_cut_by_an_error_keeps_its_text_and_the_error_message() -> None:
    """A partial reply that ended in an error (``errorMessage`` given) stays a reply."""
    partial = {
        "role": "assistant",
        "content": [{"type": "text", "text": "Half an ans"}],
        "stopReason": "error",
        "errorMessage": "openai: HTTP 500: The server had an error",
        "__openclaw": {"runId": RUN, "id": "a1"},
    }
    assert rows([user("hi"), partial]) == [
        ("user", "sent", "hi"),
        ("assistant", "failed", "Half an ans"),
        ("error", "failed", "openai: HTTP 500: The server had an error"),
    ]


def test_without_the_terminal_error_key_text_is_a_reply() -> None:
    """Only the real gateway's terminal-error record is read as the failure itself."""
    message = real_terminal_error()
    message["idempotencyKey"] = f"{RUN}:assistant"
    message["__openclaw"]["idempotencyKey"] = f"{RUN}:assistant"
    assert [r[0] for r in rows([user("x"), message])] == ["user", "assistant", "error"]
