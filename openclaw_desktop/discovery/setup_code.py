"""Setup codes: the base64url JSON a gateway hands out for pairing (QR code or paste).

A setup code is unpadded base64url of compact UTF-8 JSON::

    {"url": "wss://host:port", "urls": [...], "bootstrapToken": "<single use>"}

The real gateway adds ``expiresAtMs`` and, for a pinnable certificate, ``tlsFingerprint``
(``dist/setup-code-*.mjs``); both are accepted here. Decoding follows the Windows node's
limits (``SetupCodeDecoder.cs``): code at most 2048 characters, JSON at most 4 KB,
``bootstrapToken`` at most 512 characters, at least one of ``url`` and ``bootstrapToken``;
URLs must be ``ws://`` or ``wss://``. Padded codes are accepted, and so are the wrappers
``oc-pair://<code>`` and ``openclaw://pair?code=<code>``.

This module is pure. Nothing here puts the token in a message or a ``repr``.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.trust.fingerprint import normalize_fingerprint

__all__ = [
    "MAX_BOOTSTRAP_TOKEN_CHARS",
    "MAX_CODE_CHARS",
    "MAX_JSON_BYTES",
    "MAX_URLS",
    "SetupCode",
    "SetupCodeError",
    "decode_setup_code",
    "encode_setup_code",
]

MAX_CODE_CHARS = 2048
MAX_JSON_BYTES = 4096
MAX_BOOTSTRAP_TOKEN_CHARS = 512
MAX_URLS = 8
"""The real gateway's ``PAIRING_SETUP_MAX_URLS``."""

_CODE_ALPHABET = re.compile(r"[A-Za-z0-9_-]+={0,2}")
_OC_PAIR = "oc-pair://"


class SetupCodeError(OpenClawError, ValueError):
    """The text is not a usable setup code; the message says why (never with the token)."""


@dataclass(frozen=True)
class SetupCode:
    """A decoded setup code."""

    url: str | None
    """The primary gateway URL (``ws://`` or ``wss://``)."""
    urls: tuple[str, ...] = ()
    """Further routes in preference order (LAN, tailnet); may repeat ``url``."""
    bootstrap_token: str | None = field(default=None, repr=False)
    """The single-use bootstrap token: a secret."""
    expires_at_ms: int | None = None
    tls_fingerprint: str | None = None
    """A TLS pin carried by the code (normalized)."""

    def __repr__(self) -> str:
        token = "None" if self.bootstrap_token is None else "<redacted>"
        return (
            f"SetupCode(url={self.url!r}, urls={self.urls!r}, bootstrap_token={token}, "
            f"expires_at_ms={self.expires_at_ms!r}, tls_fingerprint={self.tls_fingerprint!r})"
        )

    __str__ = __repr__

    @property
    def candidate_urls(self) -> list[str]:
        """``url`` then ``urls``, without duplicates."""
        seen: list[str] = []
        for url in (self.url, *self.urls):
            if url and url not in seen:
                seen.append(url)
        return seen

    def is_expired(self, now_ms: int) -> bool:
        """Whether the code carries an expiry that has passed."""
        return self.expires_at_ms is not None and self.expires_at_ms <= now_ms


def encode_setup_code(payload: Mapping[str, Any]) -> str:
    """Encode a setup payload (``url``, ``urls``?, ``bootstrapToken``, ...) as a setup code.

    The result is checked with :func:`decode_setup_code`, so a code that would not decode is
    never produced.

    Raises:
        SetupCodeError: If the payload would not make a valid setup code.
    """
    text = json.dumps(dict(payload), separators=(",", ":"), ensure_ascii=False)
    code = base64.urlsafe_b64encode(text.encode("utf-8")).rstrip(b"=").decode("ascii")
    decode_setup_code(code)
    return code


def _unwrap(text: str) -> str:
    """The bare code inside ``oc-pair://`` or ``openclaw://pair?code=`` (or the text itself)."""
    if text[: len(_OC_PAIR)].lower() == _OC_PAIR:
        return text[len(_OC_PAIR) :].rstrip("/")
    if text[:11].lower() == "openclaw://":
        parts = urlsplit(text)
        target = (parts.netloc or parts.path.strip("/")).lower()
        codes = parse_qs(parts.query).get("code", [])
        if target != "pair" or len(codes) != 1:
            raise SetupCodeError("not a pairing link: expected openclaw://pair?code=<setup code>")
        return codes[0].strip()
    return text


def _check_url(value: object, what: str) -> str:
    """A ``ws://``/``wss://`` URL with a host and no credentials."""
    if not isinstance(value, str) or not value.strip():
        raise SetupCodeError(f"setup code {what} must be a non-empty string")
    url = value.strip()
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for an invalid port
    except ValueError as exc:
        raise SetupCodeError(f"setup code {what} is not a valid URL") from exc
    if parts.scheme.lower() not in ("ws", "wss"):
        raise SetupCodeError(f"setup code {what} must use ws:// or wss://, not {parts.scheme}:")
    if not parts.hostname:
        raise SetupCodeError(f"setup code {what} has no host")
    if parts.username is not None or parts.password is not None:
        raise SetupCodeError(f"setup code {what} must not carry credentials")
    return url


def _decode_json(code: str) -> dict[str, Any]:
    """Base64url (padding optional) -> UTF-8 -> a JSON object, within the size limits."""
    if not _CODE_ALPHABET.fullmatch(code):
        raise SetupCodeError("setup code is not base64url text")
    body = code.rstrip("=")
    if len(body) % 4 == 1:
        raise SetupCodeError("setup code is truncated (invalid base64url length)")
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError) as exc:
        raise SetupCodeError("setup code is not valid base64url") from exc
    if len(raw) > MAX_JSON_BYTES:
        raise SetupCodeError(f"setup code payload is larger than {MAX_JSON_BYTES} bytes")
    try:
        decoded = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise SetupCodeError("setup code does not hold UTF-8 JSON") from exc
    if not isinstance(decoded, dict):
        raise SetupCodeError("setup code payload must be a JSON object")
    return decoded


def decode_setup_code(text: str) -> SetupCode:
    """Decode a pasted or scanned setup code.

    Args:
        text: The code, possibly padded, possibly wrapped in ``oc-pair://`` or
            ``openclaw://pair?code=``, with surrounding whitespace.

    Returns:
        The decoded code (unknown fields ignored).

    Raises:
        SetupCodeError: If the text is not a valid setup code.
    """
    stripped = text.strip()
    if len(stripped) > MAX_CODE_CHARS + len("openclaw://pair?code="):
        raise SetupCodeError(f"setup code is longer than {MAX_CODE_CHARS} characters")
    code = _unwrap(stripped)
    if not code:
        raise SetupCodeError("setup code is empty")
    if len(code) > MAX_CODE_CHARS:
        raise SetupCodeError(f"setup code is longer than {MAX_CODE_CHARS} characters")
    payload = _decode_json(code)

    url = None if payload.get("url") is None else _check_url(payload["url"], "url")
    raw_urls = payload.get("urls")
    urls: tuple[str, ...] = ()
    if raw_urls is not None:
        if not isinstance(raw_urls, list) or not 0 < len(raw_urls) <= MAX_URLS:
            raise SetupCodeError(f"setup code urls must be a list of 1 to {MAX_URLS} URLs")
        urls = tuple(_check_url(u, f"urls[{i}]") for i, u in enumerate(raw_urls))

    token = payload.get("bootstrapToken")
    if token is not None:
        if not isinstance(token, str) or not token.strip():
            raise SetupCodeError("setup code bootstrapToken must be a non-empty string")
        token = token.strip()
        if len(token) > MAX_BOOTSTRAP_TOKEN_CHARS:
            raise SetupCodeError(
                f"setup code bootstrapToken is longer than {MAX_BOOTSTRAP_TOKEN_CHARS} characters"
            )
    if url is None and token is None:
        raise SetupCodeError("setup code has neither a url nor a bootstrapToken")

    expires = payload.get("expiresAtMs")
    if expires is not None and (
        isinstance(expires, bool) or not isinstance(expires, int) or expires < 0
    ):
        raise SetupCodeError("setup code expiresAtMs must be a non-negative integer")

    fingerprint = payload.get("tlsFingerprint")
    if fingerprint is not None:
        try:
            if not isinstance(fingerprint, str):
                raise ValueError("not a string")
            fingerprint = normalize_fingerprint(fingerprint)
        except ValueError as exc:
            raise SetupCodeError("setup code tlsFingerprint is not a SHA-256 fingerprint") from exc
    return SetupCode(url, urls, token, expires, fingerprint)
