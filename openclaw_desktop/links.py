"""``openclaw://`` links: what a browser, a chat message or a QR code hands the app.

Today one action exists: ``openclaw://pair?code=<setup code>`` (a gateway's setup code,
unpadded base64url JSON ``{"url", "urls"?, "bootstrapToken"}``), which opens the pairing
flow. A link comes from outside (any web page can make the system open one), so it is
parsed strictly and bounded before anything is decoded, and every refusal is a
:class:`~openclaw_desktop.errors.LinkError` whose message never contains the code.

This module is pure: no I/O, no logging.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

from openclaw_desktop.discovery.setup_code import (
    MAX_CODE_CHARS,
    SetupCode,
    SetupCodeError,
    decode_setup_code,
)
from openclaw_desktop.errors import LinkError

__all__ = ["MAX_LINK_CHARS", "SCHEME", "PairLink", "is_link", "parse_link"]

SCHEME = "openclaw"
MAX_LINK_CHARS = 4096
"""Longest link accepted (a setup code is at most 2048 characters; the rest is slack)."""

_CODE = re.compile(r"[A-Za-z0-9_-]+={0,2}")
_PRINTABLE_ASCII = re.compile(r"[!-~]*")
_NAME = re.compile(r"[a-z][a-z0-9.+-]{0,31}")


@dataclass(frozen=True)
class PairLink:
    """``openclaw://pair?code=...``: pair with (and connect to) the gateway in ``setup``."""

    setup: SetupCode
    """The decoded setup code; its ``repr`` hides the bootstrap token."""
    code: str = field(repr=False)
    """The setup code as text (to fill in the connect screen's field): a secret."""

    @property
    def url(self) -> str:
        """The gateway URL to connect to first."""
        return self.setup.candidate_urls[0]


def is_link(arg: str) -> bool:
    """Whether a command-line argument is meant as an ``openclaw:`` link (parse it to know
    whether it is a usable one)."""
    return arg.strip()[: len(SCHEME) + 1].lower() == SCHEME + ":"


def _shown(value: str) -> str:
    """A short, printable rendering of a scheme or action for an error message."""
    return repr(value[:32] + ("…" if len(value) > 32 else ""))


def parse_link(text: str) -> PairLink:
    """Parse an ``openclaw://`` link.

    Raises:
        LinkError: wrong scheme, unknown action, missing or repeated ``code``, oversized
            link or code, invalid base64url, a payload that is not JSON, or JSON of the
            wrong shape (for instance a gateway URL that is not ``ws://`` or ``wss://``).
    """
    if not isinstance(text, str):
        raise LinkError(f"expected text, not {type(text).__name__}")
    if len(text) > MAX_LINK_CHARS:
        raise LinkError(f"the link is longer than {MAX_LINK_CHARS} characters")
    link = text.strip()
    if not _PRINTABLE_ASCII.fullmatch(link):
        raise LinkError("the link contains spaces, control characters or non-ASCII text")
    scheme, sep, _ = link.partition(":")
    if not sep or scheme.lower() != SCHEME:
        raise LinkError(f"expected an {SCHEME}:// link, not scheme {_shown(scheme)}")
    try:
        parts = urlsplit(link)
    except ValueError:
        raise LinkError("the link is not a valid URL") from None
    if not link[len(scheme) + 1 :].startswith("//"):
        raise LinkError(f"expected {SCHEME}://<action>")
    action = parts.netloc.lower()
    if not _NAME.fullmatch(action):
        raise LinkError(f"the link has no valid action (got {_shown(parts.netloc)})")
    if action != "pair":
        raise LinkError(f"unknown action {_shown(action)}; this app knows only 'pair'")
    if parts.path not in ("", "/"):
        raise LinkError("a pair link has no path: expected openclaw://pair?code=<setup code>")
    if parts.fragment:
        raise LinkError("a pair link has no #fragment")
    code = _code(parts.query)
    return PairLink(_decode(code), code)


def _code(query: str) -> str:
    try:
        fields = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise LinkError("the link's query is malformed") from None
    codes = [value for key, value in fields if key == "code"]
    if not codes:
        raise LinkError("the link has no code: expected openclaw://pair?code=<setup code>")
    if len(codes) > 1:
        raise LinkError("the link has more than one code")
    code = codes[0]
    if not code:
        raise LinkError("the link's code is empty")
    if len(code) > MAX_CODE_CHARS:
        raise LinkError(f"the setup code is longer than {MAX_CODE_CHARS} characters")
    if not _CODE.fullmatch(code):
        raise LinkError("the setup code is not base64url text")
    return code


def _decode(code: str) -> SetupCode:
    try:
        setup = decode_setup_code(code)
    except SetupCodeError as exc:  # its messages never contain the token
        raise LinkError(str(exc)) from None
    if not setup.candidate_urls:
        raise LinkError("the setup code has no gateway URL")
    if setup.bootstrap_token is None:
        raise LinkError("the setup code has no bootstrap token")
    return setup
