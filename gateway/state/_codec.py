"""Small pure helpers shared by the state modules: list normalisation, JSON columns, tokens."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "TOKEN_BYTES",
    "decode_flags",
    "decode_list",
    "encode_flags",
    "encode_list",
    "hash_token",
    "merge_lists",
    "new_token",
    "normalize_list",
    "require_text",
    "wall_clock_ms",
    "wire_dict",
]

#: Random bytes in a device, bootstrap or shared token (the real gateway uses 32 too).
TOKEN_BYTES = 32


def require_text(name: str, value: str) -> str:
    """Return ``value`` stripped, or raise ValueError if nothing is left."""
    stripped = value.strip()
    if not stripped:
        raise ValueError(f"{name} must be a non-empty string")
    return stripped


def normalize_list(values: Iterable[str] | None) -> tuple[str, ...]:
    """Strip each value, drop empty ones and duplicates, keep first-seen order."""
    seen: dict[str, None] = {}
    for value in values or ():
        stripped = value.strip()
        if stripped:
            seen.setdefault(stripped, None)
    return tuple(seen)


def merge_lists(*groups: Iterable[str] | None) -> tuple[str, ...]:
    """Union of several lists in first-seen order (the real gateway's scope merge)."""
    merged: list[str] = []
    for group in groups:
        merged.extend(group or ())
    return normalize_list(merged)


def encode_list(values: Iterable[str]) -> str:
    """A JSON array column value."""
    return json.dumps(list(values), separators=(",", ":"))


def decode_list(raw: str) -> tuple[str, ...]:
    """Parse a JSON array column written by :func:`encode_list`.

    Raises:
        ValueError: If the column does not hold an array of strings.
    """
    value = json.loads(raw)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"expected a JSON array of strings, got {raw[:60]!r}")
    return tuple(value)


def encode_flags(values: Mapping[str, bool] | None) -> str | None:
    """A JSON object column value for a ``{name: bool}`` map, None when absent."""
    if values is None:
        return None
    return json.dumps({str(key): bool(flag) for key, flag in values.items()}, sort_keys=True)


def decode_flags(raw: str | None) -> dict[str, bool] | None:
    """Parse a column written by :func:`encode_flags`.

    Raises:
        ValueError: If the column does not hold an object of booleans.
    """
    if raw is None:
        return None
    value = json.loads(raw)
    if not isinstance(value, dict) or not all(isinstance(flag, bool) for flag in value.values()):
        raise ValueError(f"expected a JSON object of booleans, got {raw[:60]!r}")
    return {str(key): flag for key, flag in value.items()}


def new_token() -> str:
    """32 random bytes as unpadded base64url (43 characters), never starting with ``-``.

    Users paste these tokens after ``--token`` on command lines, where a leading dash reads
    as an option (argparse then says "expected one argument"). Drawing again in that case
    (1 in 64) costs well under one bit of the 256.
    """
    while True:
        raw = secrets.token_bytes(TOKEN_BYTES)
        token = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
        if not token.startswith("-"):
            return token


def hash_token(token: str) -> bytes:
    """SHA-256 of the token's UTF-8 bytes: what tokens are looked up and compared by.

    A plain hash (no salt, no stretching) is enough: the tokens are 256-bit random values,
    so there is nothing to brute-force, and a fast hash keeps verification cheap.
    """
    return hashlib.sha256(token.encode("utf-8")).digest()


def wire_dict(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """A dict of the pairs whose value is not None (JSON ``undefined`` fields are omitted)."""
    return {key: value for key, value in pairs if value is not None}


def wall_clock_ms() -> int:
    """Now, in ms since the epoch: only for the few calls whose ``now_ms`` is optional."""
    return time.time_ns() // 1_000_000
