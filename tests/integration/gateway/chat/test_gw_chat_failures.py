"""A run that fails on the model, on the bundled gateway over real loopback WebSockets with
the fake model over real HTTP: told in words (the reference's classes, never the provider's
raw codes), kept in the transcript as the reference keeps it (an assistant message of key
``<runId>:terminal-error``, the failure as its text), so ``chat.history`` still shows it
after a restart, and never sent back to the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.chat import ChatTimeline
from tests.helpers.fake_llm import FakeLLM
from tests.integration.gateway.chat.test_gw_chat_runs import Chat, chat_gateway

# Only the providers a test configures (never the developer's own keys).
pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("no_ambient_providers")]

TEMPORARY = "This is usually temporary — try again shortly."
LIVE_500 = f"⚠️ fake/fake-model request failed (provider internal error, HTTP 500). {TEMPORARY}"
STORED_500 = f"⚠️ LLM request failed (provider internal error, HTTP 500). {TEMPORARY}"


def model_prompts(llm: FakeLLM) -> list[list[tuple[str, Any]]]:
    """(role, content) of the messages of each chat completion the fake model got."""
    return [
        [(m["role"], m.get("content")) for m in r.body["messages"] if m["role"] != "system"]
        for r in llm.requests
        if r.path.endswith("/chat/completions")
    ]


def terminal_error(history: dict[str, Any], run_id: str) -> dict[str, Any]:
    """The history's record of the failed run ``run_id`` (asserted to be the only one)."""
    key = f"{run_id}:terminal-error"
    found = [m for m in history["messages"] if m.get("idempotencyKey") == key]
    assert len(found) == 1, history["messages"]
    record: dict[str, Any] = found[0]
    return record


async def fail_once(chat: Chat) -> tuple[str, dict[str, Any]]:
    """``FAIL:500 x`` to the main session: (its run id, its terminal chat event)."""
    run_id = await chat.send("FAIL:500 x")
    return run_id, await chat.finished(run_id)


async def test_a_model_error_is_told_in_words(tmp_path: Path) -> None:
    """The error event and the lifecycle error say the failure in the reference's words."""
    async with chat_gateway(tmp_path) as chat:
        run_id, error = await fail_once(chat)
        assert error["state"] == "error"
        assert error["errorMessage"] == LIVE_500
        assert error["errorDetail"]["failoverReason"] == "server_error"
        assert error["errorDetail"]["provider"] == "fake"
        lifecycle = [
            e["data"] for e in chat.run_events(run_id, "agent") if e["stream"] == "lifecycle"
        ]
        assert lifecycle[-1]["phase"] == "error" and lifecycle[-1]["error"] == LIVE_500


@pytest.mark.parametrize(
    ("message", "live"),
    [
        (
            "FAIL:401 x",
            "Authentication failed (provider returned HTTP 401). Your provider token may "
            "have expired — try the request again in a moment. If the failure persists, "
            "re-authenticate this provider.",
        ),
        ("FAIL:429 x", f"⚠️ fake/fake-model request failed (rate limited, HTTP 429). {TEMPORARY}"),
        (
            "FAIL:context x",
            "Context overflow: prompt too large for the model. Try /reset (or /new) to start "
            "a fresh session, or use a larger-context model.",
        ),
    ],
)
async def test_each_class_has_its_words(tmp_path: Path, message: str, live: str) -> None:
    """401, 429 and a context overflow: the words the reference said for them live."""
    async with chat_gateway(tmp_path) as chat:
        error = await chat.finished(await chat.send(message))
        assert error["state"] == "error"
        assert error["errorMessage"] == live
        assert "_error" not in error["errorMessage"]


async def test_a_failed_run_is_kept_and_not_sent_to_the_model_again(tmp_path: Path) -> None:
    """History has the failure as the run's record, after a restart too; the next turn's
    model request has the failed message but not the failure."""
    with FakeLLM() as llm:
        async with chat_gateway(tmp_path, llm=llm) as chat:
            run_id, _error = await fail_once(chat)
            before = (await chat.history())["messages"]
        async with chat_gateway(tmp_path, llm=llm) as chat:
            history = await chat.history()
            assert history["messages"] == before, "the same history after a restart"
            record = terminal_error(history, run_id)
            assert [m["role"] for m in history["messages"]] == ["user", "assistant"]
            assert record["content"] == [{"type": "text", "text": STORED_500}]
            assert record["stopReason"] == "error"
            assert "errorMessage" not in record
            assert record["__openclaw"]["runId"] == run_id
            assert record["__openclaw"]["idempotencyKey"] == f"{run_id}:terminal-error"
            assert (record["provider"], record["model"]) == ("fake", "fake-model")
            # The window reads it as it reads the real gateway's: the error row, not a reply.
            timeline = ChatTimeline("main")
            timeline.merge_history(history["messages"])
            assert [(i.role, i.status, i.text) for i in timeline.items] == [
                ("user", "sent", "FAIL:500 x"),
                ("error", "failed", STORED_500),
            ]

            asked = len(llm.requests)
            final = await chat.finished(await chat.send("next one"))
            assert final["state"] == "final"
            prompts = model_prompts(llm)[-1:]
            assert len(llm.requests) == asked + 1 and prompts, llm.requests
            assert prompts[0] == [("user", "FAIL:500 x"), ("user", "next one")]
