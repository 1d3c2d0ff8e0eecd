"""The chat engine's pure parts: event shapes and delta coalescing, the
model context (compaction summary, interrupted tool calls), the sessions index."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from gateway.chat.compaction import build_context, estimate_tokens
from gateway.chat.events import DELTA_INTERVAL_S, RunEvents
from gateway.chat.offline import is_slash_command
from gateway.state import GatewayState


class Recorder:
    """Collects broadcasts."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any], bool]] = []

    def __call__(self, event: str, payload: dict[str, Any], tools: bool) -> None:
        self.sent.append((event, payload, tools))


def events(recorder: Recorder) -> RunEvents:
    """A RunEvents for run r1 of agent:main:main."""
    return RunEvents(
        recorder, run_id="r1", session_key="agent:main:main", agent_id="main", session_id="s1"
    )


async def test_run_events_share_one_seq_and_coalesce_deltas() -> None:
    """Status and run_status share a seq; agent deltas go out each, chat deltas coalesced."""
    rec = Recorder()
    ev = events(rec)
    ev.status("preparing_workspace")
    ev.model_turn("fake", "m")
    for word in ("a", "b", "c", "d"):
        ev.delta(word)
    await asyncio.sleep(DELTA_INTERVAL_S * 2)
    ev.final(ev.assistant_message(), "stop")
    chat = [p for e, p, _ in rec.sent if e == "chat"]
    agent = [p for e, p, _ in rec.sent if e == "agent"]
    assert chat[0]["seq"] == agent[0]["seq"] == 1
    assert agent[0] == {
        **agent[0],
        "stream": "run_status",
        "data": {"phase": "preparing_workspace"},
    }
    deltas = [p for p in chat if p["state"] == "delta"]
    assert 1 <= len(deltas) < 4, "chat deltas are coalesced"
    assert "".join(d["deltaText"] for d in deltas) == "abcd"
    assert deltas[-1]["message"]["content"][0]["text"] == "abcd"
    assistant = [p for p in agent if p["stream"] == "assistant"]
    assert [a["data"]["delta"] for a in assistant] == ["a", "b", "c", "d"]
    assert assistant[-1]["data"]["text"] == "abcd"
    seqs = [p["seq"] for _, p, _ in rec.sent]
    assert seqs == sorted(seqs)
    final = chat[-1]
    assert set(final) == {"runId", "sessionKey", "agentId", "seq", "state", "stopReason", "message"}


def test_tool_streams_are_marked_for_tool_event_clients_only() -> None:
    """item/tool agent events are flagged so the hub sends them only to tool-events clients."""
    rec = Recorder()
    ev = events(rec)
    ev.tool_start("c1", "node_invoke", {"command": "x"}, "Node invoke x", 1)
    ev.tool_end("c1", "node_invoke", {"content": []}, is_error=False, title="t", started_at=1)
    assert [(p["stream"], flag) for _, p, flag in rec.sent] == [
        ("item", True),
        ("tool", True),
        ("tool", True),
        ("item", True),
    ]
    assert rec.sent[-1][1]["data"]["status"] == "completed"


def test_a_running_tool_call_updates_in_the_real_shape() -> None:
    """A node's streamed output reaches tool-events clients as the real gateway's tool
    ``update`` phase (``partialResult``) and the item's running ``update``."""
    rec = Recorder()
    ev = events(rec)
    partial = {"content": [{"type": "text", "text": "line 1\n"}]}
    ev.tool_update("c1", "node_invoke", partial, "Node invoke system.run", 5)
    (tool, tool_flag), (item, item_flag) = [(p, flag) for _, p, flag in rec.sent]
    assert tool_flag is item_flag is True
    assert (tool["stream"], tool["data"]) == (
        "tool",
        {"phase": "update", "name": "node_invoke", "toolCallId": "c1", "partialResult": partial},
    )
    assert item["stream"] == "item"
    assert item["data"] == {
        "itemId": "tool:c1",
        "toolCallId": "c1",
        "name": "node_invoke",
        "kind": "tool",
        "phase": "update",
        "title": "Node invoke system.run",
        "status": "running",
        "commandBearing": False,
        "startedAt": 5,
    }


def test_context_answers_interrupted_tool_calls_and_uses_the_summary() -> None:
    """A tool call without a result gets an error result; a compaction replaces old turns."""
    path: list[dict[str, Any]] = [
        {"id": "1", "role": "user", "content": "old question"},
        {"id": "2", "role": "assistant", "content": [{"type": "text", "text": "old answer"}]},
        {"id": "3", "role": "user", "content": "take a photo"},
        {
            "id": "4",
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c1", "name": "node_invoke", "arguments": {}}],
        },
        {"id": "5", "role": "compaction", "summary": "they talked", "keptFromId": "3"},
        {"id": "6", "role": "user", "content": "and now?"},
    ]
    context = build_context(path)
    assert context[0]["content"].startswith("[Summary of the earlier conversation]\nthey talked")
    roles = [m["role"] for m in context]
    assert roles == ["user", "user", "assistant", "toolResult", "user"]
    assert context[3]["isError"] is True and context[3]["toolCallId"] == "c1"
    assert all("id" not in m for m in context)
    assert estimate_tokens(context) > 0


def test_slash_commands_are_recognised() -> None:
    """Only the known commands count; ordinary text and unknown slashes do not."""
    assert is_slash_command("/nodes")
    assert is_slash_command("  /invoke laptop device.info {}")
    assert not is_slash_command("/unknown")
    assert not is_slash_command("hello /nodes")
    assert not is_slash_command("")


def test_sessions_index(tmp_path: Path) -> None:
    """ensure is idempotent, update/add_usage/renew/delete do what they say."""
    with GatewayState.in_state_dir(tmp_path) as state:
        first = state.sessions.ensure("agent:main:main", "main", 10)
        again = state.sessions.ensure("agent:main:main", "main", 11)
        assert again.session_id == first.session_id
        state.sessions.add_usage("agent:main:main", 12, 5, 7)
        row = state.sessions.update("agent:main:main", 13, label="Daily", status="done")
        assert row is not None
        assert (row.label, row.input_tokens, row.output_tokens) == ("Daily", 5, 7)
        with pytest.raises(ValueError, match="cannot update session_id"):
            state.sessions.update("agent:main:main", 14, session_id="x")
        renewed = state.sessions.renew("agent:main:main", 15)
        assert renewed is not None and renewed.session_id != first.session_id
        assert renewed.input_tokens == 0 and renewed.label == "Daily"
        assert [r.key for r in state.sessions.list()] == ["agent:main:main"]
        assert state.sessions.delete("agent:main:main") is True
        assert state.sessions.get("agent:main:main") is None


def test_check_fits_refuses_exactly_what_the_transcript_could_not_store(tmp_path: Path) -> None:
    """A message whose stored line is exactly 16 MiB fits (and really appends); one byte
    more is refused with its size and the limit; escaping counts (a quote is two bytes)."""
    from gateway.chat import MAX_RECORD_BYTES, TranscriptStore
    from gateway.chat.service import MessageTooLargeError, check_fits
    from gateway.chat.transcript_file import record_size

    base: dict[str, Any] = {"role": "user", "content": ""}
    room = MAX_RECORD_BYTES - record_size(base)
    fits = {"role": "user", "content": "x" * room}
    assert record_size(fits) == MAX_RECORD_BYTES
    check_fits(fits)
    store = TranscriptStore(tmp_path / "sessions")
    try:
        store.open("main").append(fits)
    finally:
        store.close()
    for over in ({"role": "user", "content": "x" * (room + 1)}, {**fits, "content": '"' * room}):
        with pytest.raises(MessageTooLargeError) as caught:
            check_fits(over)
        assert caught.value.size == record_size(over) > MAX_RECORD_BYTES
        assert caught.value.limit == MAX_RECORD_BYTES
        assert f"the limit is {MAX_RECORD_BYTES} bytes" in str(caught.value)
    check_fits({"role": "user", "content": '"' * (room // 2)})  # 2 bytes each: fits
