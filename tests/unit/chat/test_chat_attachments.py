"""Attachments are checked against the gateway's ``policy.attachments`` before sending, and
the timeline shows them at once and again after ``chat.history``."""

from __future__ import annotations

import base64
from pathlib import Path
from types import SimpleNamespace

import pytest

from openclaw_desktop.chat import ChatTimeline
from openclaw_desktop.chat.attachments import (
    Attachment,
    AttachmentError,
    AttachmentLimits,
    check_total,
)
from openclaw_desktop.errors import OpenClawError

SMALL = AttachmentLimits(max_bytes=1000, max_image_bytes=100, max_payload=200_000)


def test_limits_come_from_the_policy() -> None:
    """The real gateway's numbers (and its defaults when a gateway announces none)."""
    policy = SimpleNamespace(
        attachments={"maxBytes": 19_464_192, "maxImageBytes": 6_291_456}, max_payload=26_214_400
    )
    limits = AttachmentLimits.from_policy(policy)
    assert (limits.max_bytes, limits.max_image_bytes) == (19_464_192, 6_291_456)
    assert AttachmentLimits.from_policy(SimpleNamespace()) == AttachmentLimits()


def test_a_file_becomes_a_chat_send_attachment(tmp_path: Path) -> None:
    """Type from the name, base64 content, the wire shape the reference clients send."""
    path = tmp_path / "notes.md"
    path.write_text("# hi\n", encoding="utf-8")
    item = Attachment.from_path(path)
    assert item.mime_type == "text/markdown" and not item.is_image
    wire = item.to_wire()
    assert wire == {
        "type": "file",
        "mimeType": "text/markdown",
        "fileName": "notes.md",
        "content": base64.b64encode(b"# hi\n").decode(),
    }
    image = Attachment.from_bytes(b"\x89PNG...", "paste.png")
    assert image.is_image and image.to_wire()["type"] == "image"
    assert image.preview() == {"mimeType": "image/png", "data": wire_b64(b"\x89PNG...")}


def wire_b64(data: bytes) -> str:
    """Base64 as sent."""
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("name", "size", "message"),
    [
        ("big.png", 101, "images up to"),
        ("big.bin", 1001, "accepts up to"),
        ("empty.txt", 0, "is empty"),
    ],
)
def test_too_big_or_empty_is_refused_clearly(
    tmp_path: Path, name: str, size: int, message: str
) -> None:
    """A clear, typed error naming the file; nothing is read past the limit."""
    path = tmp_path / name
    path.write_bytes(b"x" * size)
    with pytest.raises(AttachmentError, match=message) as caught:
        Attachment.from_path(path, SMALL)
    assert name in str(caught.value)
    assert isinstance(caught.value, OpenClawError)


def test_missing_and_directory_paths_are_refused(tmp_path: Path) -> None:
    """A vanished file or a folder dropped on the window: a typed error, no crash."""
    with pytest.raises(AttachmentError, match=r"cannot read gone\.txt"):
        Attachment.from_path(tmp_path / "gone.txt")
    with pytest.raises(AttachmentError, match="not a file"):
        Attachment.from_path(tmp_path)


def test_the_total_is_bounded_by_the_policy_and_the_frame_cap() -> None:
    """Several files that each fit may still be too much for one message."""
    parts = [Attachment.from_bytes(b"x" * 600, f"f{i}.bin", None, SMALL) for i in range(2)]
    with pytest.raises(AttachmentError, match="add up to"):
        check_total(parts, SMALL)
    check_total(parts[:1], SMALL)
    tight = AttachmentLimits(max_bytes=10**9, max_image_bytes=10**9, max_payload=100_000)
    big = [Attachment.from_bytes(b"x" * 40_000, "a.bin", None, tight)]
    with pytest.raises(AttachmentError, match="too big for one message"):
        check_total(big, tight)


def test_the_timeline_shows_attachments_at_once_and_after_history() -> None:
    """Sent images and file names appear optimistically; history brings them back once."""
    timeline = ChatTimeline("main")
    image = {"mimeType": "image/png", "data": "aW1n"}
    item = timeline.send("r1", "see", images=[image], files=["notes.md (1 KB)"])
    assert item.images == [image] and item.files == ["notes.md (1 KB)"]
    history = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "see"},
                {"type": "text", "text": "[attached file notes.md (text/markdown, 5 bytes)]\n# hi"},
                {"type": "image", "data": "aW1n", "mimeType": "image/png"},
            ],
            "idempotencyKey": "r1:user",
            "__openclaw": {"id": "m1"},
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "a picture"}],
            "stopReason": "stop",
            "__openclaw": {"id": "m2", "runId": "r1"},
        },
    ]
    timeline.merge_history(history)
    timeline.merge_history(history)
    user = [i for i in timeline.items if i.role == "user"]
    assert len(user) == 1
    assert user[0].text == "see", "the file's text is for the model, not the bubble"
    assert user[0].files == ["notes.md (text/markdown, 5 bytes)"]
    assert user[0].images == [image]
