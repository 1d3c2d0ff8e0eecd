"""Session transcripts: JSONL tree, torn/bad lines, history, keys, archive, threads, crash."""

from __future__ import annotations

import json
import logging
import math
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.chat import (
    HISTORY_LIMIT_MAX,
    OMITTED_PLACEHOLDER,
    Transcript,
    TranscriptClosedError,
    TranscriptStore,
    canonical_session_key,
)


class Clock:
    """A settable millisecond clock."""

    def __init__(self, now: int = 1_700_000_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


@pytest.fixture
def store(folder: Path) -> Iterator[TranscriptStore]:
    s = TranscriptStore(folder, clock=Clock())
    yield s
    s.close()


def user(text: str, ts: int = 1) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": ts}


def lines_of(path: Path) -> list[dict[str, Any]]:
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


def reopen(folder: Path, store: TranscriptStore, key: str = "main") -> Transcript:
    store.close()
    return TranscriptStore(folder).open(key)


def test_append_and_reload_round_trip(store: TranscriptStore, folder: Path) -> None:
    """Messages come back after reopening, in order, with ids, parents and every field."""
    t = store.open("main")
    a = t.append(user("hello"))
    b = t.append(
        {"role": "assistant", "content": [{"type": "text", "text": "hi ✓"}], "timestamp": 2}
    )
    c = t.append({"role": "toolResult", "toolCallId": "call_1", "content": [], "isError": False})
    assert a["parentId"] is None
    assert b["parentId"] == a["id"]
    assert c["parentId"] == b["id"]
    assert t.leaf_id == c["id"]
    session_id = t.session_id
    assert session_id

    lines = lines_of(t.path)
    assert lines[0]["type"] == "session"
    assert lines[0]["sessionKey"] == "agent:main:main"
    assert lines[1:] == [a, b, c]

    again = reopen(folder, store, "agent:main:main")
    assert again.session_id == session_id
    assert again.visible_path() == [a, b, c]
    assert again.leaf_id == c["id"]
    assert again.get(b["id"]) == b
    assert again.get("nope") is None


def test_returned_messages_are_copies(store: TranscriptStore) -> None:
    """Mutating what the store returned does not change what it stores."""
    t = store.open("main")
    stored = t.append({"role": "user", "content": [{"type": "text", "text": "x"}]})
    stored["content"][0]["text"] = "changed"
    t.visible_path()[0]["role"] = "system"
    assert t.get(stored["id"]) == {**stored, "content": [{"type": "text", "text": "x"}]}


def test_branching_keeps_old_path(store: TranscriptStore, folder: Path) -> None:
    """A parent that is not the leaf starts a branch; the old path stays reachable."""
    t = store.open("main")
    a = t.append(user("a"), message_id="a")
    b = t.append(user("b"), message_id="b")
    c = t.append(user("c"), message_id="c")
    d = t.append(user("d"), parent_id="b", message_id="d")
    assert [m["id"] for m in t.visible_path()] == ["a", "b", "d"]
    assert t.get("c") == c
    assert len(t) == 4

    t.branch("c")
    assert [m["id"] for m in t.visible_path()] == ["a", "b", "c"]
    e = t.append(user("e"), message_id="e")
    assert e["parentId"] == "c"

    again = reopen(folder, store)
    assert [m["id"] for m in again.visible_path()] == ["a", "b", "c", "e"]
    assert again.get("d") == d
    assert again.get("a") == a and again.get("b") == b
    with pytest.raises(ValueError, match="unknown message id"):
        again.branch("zzz")


def test_parent_none_starts_a_new_root(store: TranscriptStore) -> None:
    """``parent_id=None`` starts a second root; the visible path is only that tree."""
    t = store.open("main")
    t.append(user("a"), message_id="a")
    r = t.append(user("r"), parent_id=None, message_id="r")
    assert r["parentId"] is None
    assert [m["id"] for m in t.visible_path()] == ["r"]


@pytest.mark.parametrize(
    "tail",
    [
        b'{"role":"user","content":"half',  # torn mid-record
        b'{"role":"user","id":"ok","parentId":null}',  # complete JSON, no newline: uncommitted
        b"\xff\xfe",  # garbage bytes
    ],
)
def test_torn_last_line_is_ignored_and_cut_before_next_append(
    store: TranscriptStore, folder: Path, tail: bytes
) -> None:
    """Bytes after the last newline are dropped on load; the next append is a clean line."""
    t = store.open("main")
    a = t.append(user("a"))
    b = t.append(user("b"))
    path = t.path
    store.close()
    good = path.read_bytes()
    with open(path, "ab") as fh:
        fh.write(tail)

    s2 = TranscriptStore(folder)
    t2 = s2.open("main")
    assert t2.visible_path() == [a, b]
    assert path.read_bytes() == good  # the torn tail was truncated
    c = t2.append(user("c"))
    s2.close()
    assert lines_of(path)[1:] == [a, b, c]
    s3 = TranscriptStore(folder)
    assert s3.open("main").visible_path() == [a, b, c]
    s3.close()


def test_bad_lines_in_the_middle_are_skipped_and_kept(
    store: TranscriptStore, folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Invalid lines are skipped with a warning, left in the file, and the rest loads."""
    t = store.open("main")
    a = t.append(user("a"), message_id="a")
    b = t.append(user("b"), message_id="b")
    path = t.path
    store.close()
    bad = [
        b"not json at all",
        b"[1, 2, 3]",
        b'{"id":"x","parentId":"a"}',  # no role
        b'{"id":"a","parentId":null,"role":"user","content":"dup"}',  # duplicate id
        b'{"id":5,"parentId":null,"role":"user"}',  # id not a string
        b"\xc3\x28",  # invalid UTF-8
    ]
    orphan = {"role": "user", "content": "o", "id": "o", "parentId": "lost"}
    after_b = {"role": "user", "content": "c", "id": "c", "parentId": "b"}
    with open(path, "ab") as fh:
        for line in bad:
            fh.write(line + b"\n")
        fh.write(json.dumps(after_b).encode() + b"\n")
    before = path.read_bytes()

    caplog.set_level(logging.WARNING, logger="gateway.chat")
    s2 = TranscriptStore(folder)
    t2 = s2.open("main")
    assert t2.visible_path() == [a, b, after_b]
    assert t2.get("a") == a  # the first occurrence wins over the duplicate
    assert t2.get("x") is None
    skipped = [r for r in caplog.records if "skipping invalid line" in r.getMessage()]
    assert len(skipped) == len(bad)
    assert "not json" not in caplog.text  # line numbers only, never content
    assert path.read_bytes() == before  # nothing rewritten

    with open(path, "ab") as fh:
        fh.write(json.dumps(orphan).encode() + b"\n")
    s2.close()
    s3 = TranscriptStore(folder)
    t3 = s3.open("main")
    assert t3.visible_path() == [orphan]  # its parent is gone: the path starts at it
    t3.append(user("d"), message_id="d")
    assert [m["id"] for m in t3.visible_path()] == ["o", "d"]
    s3.close()


def test_missing_header_still_loads(folder: Path) -> None:
    """A transcript whose first line is not a header loads its messages anyway."""
    s = TranscriptStore(folder)
    path = s.path_for("main")
    folder.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b'{"id":"a","parentId":null,"role":"user"}\n')
    t = s.open("main")
    assert t.session_id is None
    assert [m["id"] for m in t.visible_path()] == ["a"]
    assert s.list_sessions() == []  # not listable without a header naming the key
    s.close()


@pytest.mark.parametrize(
    ("message", "match"),
    [
        ({"role": "user", "content": {1, 2}}, "not JSON-serializable"),
        ({"role": "user", "content": b"bytes"}, "not JSON-serializable"),
        ({"role": "user", "content": math.nan}, "not JSON-serializable"),
        ({"role": "user", "content": object()}, "not JSON-serializable"),
        ({"role": "user", "content": "\ud800"}, "not JSON-serializable"),
        ({"role": "user", "meta": {1: "int key", (2,): "tuple key"}}, "not JSON-serializable"),
        ({"content": "no role"}, "role"),
        ({"role": "", "content": "x"}, "role"),
        ({"role": 3, "content": "x"}, "role"),
        ({"role": "user", "id": "mine"}, "'id' or 'parentId'"),
        ({"role": "user", "parentId": None}, "'id' or 'parentId'"),
        (["role", "user"], "JSON object"),
    ],
)
def test_bad_message_writes_nothing(store: TranscriptStore, message: Any, match: str) -> None:
    """Invalid messages raise ValueError before any byte reaches the file."""
    t = store.open("main")
    t.append(user("a"))
    before = t.path.read_bytes()
    with pytest.raises(ValueError, match=match):
        t.append(message)
    assert t.path.read_bytes() == before
    assert len(t) == 1


def test_unknown_parent_and_duplicate_id_write_nothing(store: TranscriptStore) -> None:
    """An unknown parentId or a reused id is a ValueError and leaves the file alone."""
    t = store.open("main")
    t.append(user("a"), message_id="a")
    before = t.path.read_bytes()
    with pytest.raises(ValueError, match="unknown parentId 'ghost'"):
        t.append(user("b"), parent_id="ghost")
    with pytest.raises(ValueError, match="already exists"):
        t.append(user("b"), message_id="a")
    with pytest.raises(ValueError, match="message_id"):
        t.append(user("b"), message_id="")
    assert t.path.read_bytes() == before
    assert t.leaf_id == "a"


def test_history_limit_takes_the_tail_of_the_visible_path(store: TranscriptStore) -> None:
    """``limit`` keeps the newest messages of the visible path, oldest first."""
    t = store.open("main")
    for i in range(10):
        t.append(user(f"m{i}", ts=i), message_id=f"m{i}")
    t.append(user("side"), parent_id="m3", message_id="side")
    t.branch("m9")
    assert [m["id"] for m in t.history(limit=3)] == ["m7", "m8", "m9"]
    assert len(t.history(limit=HISTORY_LIMIT_MAX)) == 10
    assert "side" not in [m["id"] for m in t.history()]


def test_history_replaces_oversized_messages(store: TranscriptStore) -> None:
    """A message longer than ``max_chars`` becomes a placeholder; ``get`` returns it whole."""
    t = store.open("main")
    small = t.append(user("short", ts=5))
    big_msg = {
        "role": "assistant",
        "content": [{"type": "text", "text": "é" * 5000}],
        "timestamp": 6,
        "model": "m",
    }
    big = t.append(big_msg)
    hist = t.history(limit=10, max_chars=1000)
    assert hist[0] == small
    stub = hist[1]
    assert stub["id"] == big["id"]
    assert stub["parentId"] == small["id"]
    assert stub["role"] == "assistant"
    assert stub["timestamp"] == 6
    assert stub["content"] == [{"type": "text", "text": OMITTED_PLACEHOLDER}]
    assert "model" not in stub
    assert t.get(big["id"]) == big
    # The size counts characters of the serialized line, not UTF-8 bytes.
    line_chars = len(json.dumps(big, ensure_ascii=False, separators=(",", ":")))
    assert t.history(max_chars=line_chars)[1] == big
    assert t.history(max_chars=line_chars - 1)[1]["content"][0]["text"] == OMITTED_PLACEHOLDER


@pytest.mark.parametrize("limit", [0, -1, 1001, 1.5, "5", True, None])
def test_history_rejects_bad_limit(store: TranscriptStore, limit: Any) -> None:
    """``limit`` must be an int from 1 to 1000."""
    with pytest.raises(ValueError, match="limit must be"):
        store.open("main").history(limit=limit)


@pytest.mark.parametrize("max_chars", [0, -5, 500_001, 2.0, "10"])
def test_history_rejects_bad_max_chars(store: TranscriptStore, max_chars: Any) -> None:
    """``max_chars`` must be an int from 1 to 500000."""
    with pytest.raises(ValueError, match="max_chars must be"):
        store.open("main").history(max_chars=max_chars)


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("main", "agent:main:main"),
        ("probe-tools2", "agent:main:probe-tools2"),
        ("  Main  ", "agent:main:main"),
        ("agent:main:main", "agent:main:main"),
        ("Agent:Coder:Main", "agent:coder:main"),
        ("agent:work:telegram:direct:42", "agent:work:telegram:direct:42"),
        ("telegram:group:-100", "agent:main:telegram:group:-100"),
        ("../../etc", "agent:main:../../etc"),
        ("x" * 512, "agent:main:" + "x" * 512),
    ],
)
def test_canonical_session_key(raw: str, canonical: str) -> None:
    """Keys are lowercased and put under ``agent:<default>:`` unless agent-scoped."""
    assert canonical_session_key(raw) == canonical


def test_canonical_session_key_default_agent() -> None:
    """A non-scoped key goes under the given default agent."""
    assert canonical_session_key("main", default_agent="Coder") == "agent:coder:main"
    with pytest.raises(ValueError, match="default agent"):
        canonical_session_key("main", default_agent="../x")


@pytest.mark.parametrize(
    ("raw", "match"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("x" * 513, "longer than 512"),
        ("main\n", "control"),
        ("ma\x00in", "control"),
        ("main\x7f", "control"),
        ("main\u2028", "control"),
        ("agent", "agent:<agentId>:<rest>"),
        ("agent:main", "agent:<agentId>:<rest>"),
        ("agent:main:", "empty ':' segment"),
        ("agent::main", "empty ':' segment"),
        ("agent:main::x", "empty ':' segment"),
        ("a::b", "empty ':' segment"),
        ("agent:../x:main", "valid agent id"),
        ("agent:-x:main", "valid agent id"),
        (None, "string"),
        (42, "string"),
    ],
)
def test_canonical_session_key_rejects(raw: Any, match: str) -> None:
    """Malformed keys raise ValueError with a clear reason."""
    with pytest.raises(ValueError, match=match):
        canonical_session_key(raw)


@pytest.mark.parametrize(
    "key",
    [
        "../../etc/passwd",
        "agent:main:../../../x",
        "/etc/passwd",
        "..\\..\\windows",
        "agent:main:/abs/path",
        "nul",
        ".",
    ],
)
def test_keys_cannot_escape_the_folder(tmp_path: Path, key: str) -> None:
    """Whatever the key, its file is a hashed name directly inside the folder."""
    folder = tmp_path / "deep" / "sessions"
    s = TranscriptStore(folder)
    path = s.path_for(key)
    assert path.parent == folder
    assert len(path.stem) == 64 and all(ch in "0123456789abcdef" for ch in path.stem)
    t = s.open(key)
    t.append(user("x"))
    s.close()
    created = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert created == [Path("deep"), Path("deep/sessions"), Path("deep/sessions", path.name)]


def test_equivalent_keys_share_one_transcript(store: TranscriptStore) -> None:
    """``main`` and ``Agent:Main:Main`` open the same object and file."""
    assert store.open("main") is store.open("Agent:Main:Main")
    assert store.open("main") is not store.open("agent:coder:main")


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_files_are_private(store: TranscriptStore, folder: Path) -> None:
    """The folder is 0700 and transcripts are 0600."""
    t = store.open("main")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(t.path.stat().st_mode) == 0o600


def test_list_sessions(store: TranscriptStore, folder: Path) -> None:
    """Live transcripts are listed by canonical key; archives and strays are not."""
    store.open("main").append(user("a"))
    store.open("agent:coder:x")
    store.open("beta")
    (folder / "stray.jsonl").write_text("junk\n")
    store.delete("beta")
    infos = store.list_sessions()
    assert [i.key for i in infos] == ["agent:coder:x", "agent:main:main"]
    main = infos[1]
    assert main.session_id == store.open("main").session_id
    assert main.created_at_ms == 1_700_000_000_000
    assert main.size_bytes == store.open("main").path.stat().st_size
    assert main.path == store.path_for("main")


def test_reset_archives_and_starts_empty(folder: Path) -> None:
    """Reset renames the file with a timestamp suffix and opens a fresh transcript."""
    clock = Clock(1000)
    s = TranscriptStore(folder, clock=clock)
    old = s.open("main")
    a = old.append(user("a"))
    old_bytes = old.path.read_bytes()
    old_id = old.session_id

    clock.now = 2000
    fresh = s.reset("main")
    archived = folder / (old.path.name + ".reset.2000")
    assert archived.read_bytes() == old_bytes
    assert fresh is s.open("main") and fresh is not old
    assert len(fresh) == 0 and fresh.visible_path() == []
    assert fresh.session_id != old_id
    with pytest.raises(TranscriptClosedError):
        old.append(user("late"))

    fresh.append(user("b"))
    s.reset("main")  # same clock value: a distinct archive name
    assert (folder / (old.path.name + ".reset.2000-1")).exists()
    assert [i.key for i in s.list_sessions()] == ["agent:main:main"]
    s.close()

    s2 = TranscriptStore(folder)
    assert len(s2.open("main")) == 0
    assert a not in s2.open("main").visible_path()
    s2.close()


def test_delete_archives(store: TranscriptStore, folder: Path) -> None:
    """Delete renames the file aside; a later open starts empty; unknown keys give None."""
    t = store.open("main")
    t.append(user("a"))
    archive = store.delete("main")
    assert archive is not None
    assert archive.name.startswith(t.path.name + ".deleted.")
    assert len(lines_of(archive)) == 2
    assert not t.path.exists()
    assert store.delete("main") is None
    assert store.delete("never") is None
    assert len(store.open("main")) == 0


def test_closed_store_refuses_work(folder: Path) -> None:
    """After close, the store and its transcripts refuse appends and opens."""
    s = TranscriptStore(folder)
    t = s.open("main")
    s.close()
    s.close()
    with pytest.raises(TranscriptClosedError):
        t.append(user("x"))
    with pytest.raises(TranscriptClosedError):
        s.open("main")
    with pytest.raises(TranscriptClosedError):
        s.reset("main")


def test_concurrent_appends_from_threads(store: TranscriptStore, folder: Path) -> None:
    """Threads appending to one session produce valid JSONL with every message once."""
    threads_n, per_thread = 8, 40
    errors: list[BaseException] = []
    start = threading.Barrier(threads_n)

    def worker(n: int) -> None:
        try:
            start.wait(timeout=10)
            for i in range(per_thread):
                store.open("main").append(user(f"{n}-{i}" * 50), message_id=f"{n}-{i}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(threads_n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=30)
    assert not any(th.is_alive() for th in threads)
    assert errors == []

    path = store.open("main").path
    records = lines_of(path)[1:]
    ids = [r["id"] for r in records]
    expected = {f"{n}-{i}" for n in range(threads_n) for i in range(per_thread)}
    assert len(ids) == len(expected) and set(ids) == expected
    # Appends were serialized: each one's parent is the line before it.
    assert [r["parentId"] for r in records] == [None, *ids[:-1]]
    again = reopen(folder, store)
    assert len(again.visible_path()) == len(expected)
