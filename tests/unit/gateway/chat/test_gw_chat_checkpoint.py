"""Reply checkpoints on real files: a streaming reply's checkpoint trails its text and goes
away when the run ends; at start a left-over checkpoint becomes one interrupted assistant
message (partial text, stopReason, errorMessage, openclawAbort), and only when the run had
not recorded its end."""

from __future__ import annotations

import asyncio
import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.chat import TranscriptStore
from gateway.chat.checkpoint import (
    CHECKPOINT_INTERVAL_S,
    INTERRUPTED_ERROR,
    CheckpointFolder,
    ReplyCheckpoint,
    recover_interrupted,
)

KEY = "agent:main:main"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TranscriptStore]:
    """A real transcript store in a temp folder."""
    opened = TranscriptStore(tmp_path / "sessions")
    yield opened
    opened.close()


@pytest.fixture
def folder(tmp_path: Path) -> CheckpointFolder:
    """The checkpoint folder beside it."""
    return CheckpointFolder(tmp_path / "sessions" / "inflight")


def _leave(folder: CheckpointFolder, run_id: str, text: str, thinking: str = "") -> None:
    """A checkpoint as a killed process leaves it."""
    record = {
        "version": 1,
        "runId": run_id,
        "sessionKey": KEY,
        "startedAt": 1,
        "provider": "fake",
        "model": "fake-model",
        "text": text,
        "thinking": thinking,
    }
    folder.write(folder.name(run_id), record)


def _user(store: TranscriptStore, run_id: str) -> None:
    message = {"role": "user", "content": "hi", "idempotencyKey": f"{run_id}:user"}
    store.open(KEY).append(message)


def _assistant(store: TranscriptStore, run_id: str, text: str, stop: str) -> None:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stopReason": stop,
        "__openclaw": {"runId": run_id},
    }
    store.open(KEY).append(message)


def test_a_left_over_checkpoint_becomes_an_interrupted_message(
    store: TranscriptStore, folder: CheckpointFolder
) -> None:
    """The partial text and reasoning, with the abort marker and the error; the file goes."""
    _user(store, "r1")
    _leave(folder, "r1", "half a rep", thinking="hmm")
    assert recover_interrupted(folder, store) == [KEY]
    last = store.open(KEY).visible_path()[-1]
    assert last["content"] == [
        {"type": "thinking", "thinking": "hmm"},
        {"type": "text", "text": "half a rep"},
    ]
    assert last["stopReason"] == "aborted"
    assert last["errorMessage"] == INTERRUPTED_ERROR
    assert last["openclawAbort"] == {"aborted": True, "origin": "interrupted", "runId": "r1"}
    assert last["__openclaw"] == {"runId": "r1", "interrupted": True}
    assert (last["provider"], last["model"]) == ("fake", "fake-model")
    assert list(folder.folder.iterdir()) == []
    assert recover_interrupted(folder, store) == [], "recovered once"


def test_a_run_that_recorded_its_end_gets_nothing_more(
    store: TranscriptStore, folder: CheckpointFolder
) -> None:
    """Killed between the final message and removing the checkpoint: no second message."""
    _user(store, "r1")
    _assistant(store, "r1", "done", "stop")
    _leave(folder, "r1", "done")
    assert recover_interrupted(folder, store) == []
    assert len(store.open(KEY)) == 2
    assert list(folder.folder.iterdir()) == []


def test_a_recorded_tool_turn_is_not_repeated(
    store: TranscriptStore, folder: CheckpointFolder
) -> None:
    """Cut during a tool call, the checkpoint still holding the recorded turn's text: the
    marker has no text (the turn's text is in the transcript once)."""
    _user(store, "r1")
    _assistant(store, "r1", "let me look", "toolUse")
    _leave(folder, "r1", "let me look")
    assert recover_interrupted(folder, store) == [KEY]
    path = store.open(KEY).visible_path()
    assert [m["stopReason"] for m in path[1:]] == ["toolUse", "aborted"]
    assert path[-1]["content"] == []


def test_bad_checkpoints_are_dropped(store: TranscriptStore, folder: CheckpointFolder) -> None:
    """Unreadable JSON, a torn temp file and a bad session key: removed, nothing appended."""
    folder.folder.mkdir(parents=True)
    (folder.folder / (folder.name("x") + ".tmp")).write_text("{", encoding="utf-8")
    (folder.folder / folder.name("y")).write_text("{not json", encoding="utf-8")
    folder.write(folder.name("z"), {"runId": "z", "sessionKey": "agent::bad", "text": "t"})
    assert recover_interrupted(folder, store) == []
    assert list(folder.folder.iterdir()) == []


async def test_the_checkpoint_trails_the_stream_and_goes_when_the_run_ends(
    folder: CheckpointFolder,
) -> None:
    """0600, rewritten as the text grows (at most every interval, the last text included),
    a new model turn starts empty, and finish removes it."""
    checkpoint = ReplyCheckpoint(folder, "r1", KEY)
    await checkpoint.start()
    path = folder.folder / folder.name("r1")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["text"] == ""
    text = ""
    for word in ("a ", "b ", "c "):
        text += word
        checkpoint.update(text, "")
    for _ in range(100):  # bounded: the trailing write comes within one interval
        if json.loads(path.read_text())["text"] == text:
            break
        await asyncio.sleep(CHECKPOINT_INTERVAL_S / 5)
    record = json.loads(path.read_text())
    assert (record["runId"], record["sessionKey"], record["text"]) == ("r1", KEY, "a b c ")
    checkpoint.turn("fake", "fake-model")
    for _ in range(100):
        if json.loads(path.read_text())["text"] == "":
            break
        await asyncio.sleep(CHECKPOINT_INTERVAL_S / 5)
    assert json.loads(path.read_text())["model"] == "fake-model"
    checkpoint.update("late", "")
    await checkpoint.finish()
    assert not path.exists()
    assert list(folder.folder.iterdir()) == []
