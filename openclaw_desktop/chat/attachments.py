"""Attachments of a chat message: images and files, checked against the gateway's
``policy.attachments`` before anything is sent (no Qt, no network).

A file that is too big, unreadable or empty is refused with :class:`AttachmentError`
naming the file and the limit, so the user can pick another; nothing is half-sent.
"""

from __future__ import annotations

import base64
import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.protocol import (
    MAX_ATTACHMENT_BYTES,
    MAX_ATTACHMENT_IMAGE_BYTES,
    MAX_PAYLOAD_BYTES,
)

__all__ = [
    "DEFAULT_LIMITS",
    "Attachment",
    "AttachmentError",
    "AttachmentLimits",
    "check_total",
]

#: Image types models read; other files are sent as files.
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


class AttachmentError(OpenClawError):
    """An attachment cannot be sent (too big, unreadable, empty)."""


@dataclass(frozen=True)
class AttachmentLimits:
    """``policy.attachments`` of ``hello-ok`` (decoded bytes) and the frame cap."""

    max_bytes: int = MAX_ATTACHMENT_BYTES
    max_image_bytes: int = MAX_ATTACHMENT_IMAGE_BYTES
    max_payload: int = MAX_PAYLOAD_BYTES

    @classmethod
    def from_policy(cls, policy: Any) -> AttachmentLimits:
        """The limits a gateway announced (its defaults where it announced none)."""
        raw = getattr(policy, "attachments", None) or {}
        payload = getattr(policy, "max_payload", None) or cls.max_payload
        return cls(
            max_bytes=int(raw.get("maxBytes") or cls.max_bytes),
            max_image_bytes=int(raw.get("maxImageBytes") or cls.max_image_bytes),
            max_payload=int(payload),
        )


DEFAULT_LIMITS = AttachmentLimits()


def _size(n: int) -> str:
    return f"{n / 1_048_576:.1f} MB" if n >= 1_048_576 else f"{max(1, n // 1024)} KB"


@dataclass(frozen=True)
class Attachment:
    """One file to send with a message."""

    file_name: str
    mime_type: str
    data: bytes

    @property
    def is_image(self) -> bool:
        """Whether the model receives it as an image."""
        return self.mime_type in IMAGE_TYPES

    @classmethod
    def from_bytes(
        cls,
        data: bytes,
        file_name: str,
        mime_type: str | None = None,
        limits: AttachmentLimits = DEFAULT_LIMITS,
    ) -> Attachment:
        """An attachment from memory (a pasted image); checked against ``limits``."""
        name = Path(file_name).name or "attachment"
        mime = mime_type or mimetypes.guess_type(name)[0] or "application/octet-stream"
        if not data:
            raise AttachmentError(f"{name} is empty")
        cap = limits.max_image_bytes if mime in IMAGE_TYPES else limits.max_bytes
        if len(data) > cap:
            kind = "images" if mime in IMAGE_TYPES else "files"
            raise AttachmentError(
                f"{name} is {_size(len(data))}; this gateway accepts {kind} up to {_size(cap)}"
            )
        return cls(name, mime, data)

    @classmethod
    def from_path(cls, path: Path, limits: AttachmentLimits = DEFAULT_LIMITS) -> Attachment:
        """An attachment from a file (picker, drag and drop)."""
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise AttachmentError(f"cannot read {path.name}: {exc.strerror}") from None
        if not path.is_file():
            raise AttachmentError(f"{path.name} is not a file")
        if size > limits.max_bytes:  # checked before reading a huge file into memory
            limit = _size(limits.max_bytes)
            raise AttachmentError(
                f"{path.name} is {_size(size)}; this gateway accepts up to {limit}"
            )
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise AttachmentError(f"cannot read {path.name}: {exc.strerror}") from None
        return cls.from_bytes(data, path.name, None, limits)

    def to_wire(self) -> dict[str, Any]:
        """The ``chat.send`` attachment: ``{type, mimeType, fileName, content}``."""
        return {
            "type": "image" if self.is_image else "file",
            "mimeType": self.mime_type,
            "fileName": self.file_name,
            "content": base64.b64encode(self.data).decode("ascii"),
        }

    def preview(self) -> dict[str, Any]:
        """How the chat shows it at once: an inline image."""
        return {"mimeType": self.mime_type, "data": base64.b64encode(self.data).decode("ascii")}

    def label(self) -> str:
        """``name (size)`` for the composer and the message."""
        return f"{self.file_name} ({_size(len(self.data))})"


def check_total(items: list[Attachment], limits: AttachmentLimits = DEFAULT_LIMITS) -> None:
    """Refuse a set whose total exceeds the gateway's limit or, base64-encoded, its frame cap."""
    total = sum(len(a.data) for a in items)
    if total > limits.max_bytes:
        raise AttachmentError(
            f"the attachments add up to {_size(total)}; "
            f"this gateway accepts up to {_size(limits.max_bytes)} per message"
        )
    encoded = sum(4 * ((len(a.data) + 2) // 3) for a in items)
    if encoded > limits.max_payload - 65_536:
        raise AttachmentError(
            f"the attachments add up to {_size(total)}, too big for one message to this gateway"
        )
