"""Unpadded base64url, the encoding the gateway uses for keys and signatures."""

from __future__ import annotations

import base64
import binascii
import re

__all__ = ["b64url_decode", "b64url_encode"]

_B64URL = re.compile(r"[A-Za-z0-9_-]*")


def b64url_encode(data: bytes) -> str:
    """Encode bytes as base64url without ``=`` padding.

    Args:
        data: The bytes to encode.

    Returns:
        The ASCII text, using ``-`` and ``_`` and no padding.
    """
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """Decode base64url text, with or without ``=`` padding.

    Args:
        text: base64url text. Padding is optional but, when present, must be correct.

    Returns:
        The decoded bytes.

    Raises:
        ValueError: If the text holds characters outside the base64url alphabet, has
            wrong padding, or has an impossible length.
    """
    body = text.rstrip("=")
    padding = len(text) - len(body)
    if not _B64URL.fullmatch(body):
        raise ValueError("not base64url text")
    if len(body) % 4 == 1:
        raise ValueError("impossible base64url length")
    if padding and (padding > 2 or len(text) % 4 != 0):
        raise ValueError("wrong base64url padding")
    try:
        return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except binascii.Error as exc:  # pragma: no cover - the checks above catch every case
        raise ValueError("not base64url text") from exc
