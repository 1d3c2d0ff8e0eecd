"""Unit tests: ``openclaw://pair?code=...`` links parse to the setup code, and hostile links
are refused with a LinkError that says why and never repeats the code or its token."""

from __future__ import annotations

import base64
import json
import logging
from urllib.parse import quote

import pytest

from openclaw_desktop.discovery.setup_code import MAX_CODE_CHARS, encode_setup_code
from openclaw_desktop.errors import ConfigError, LinkError, OpenClawError
from openclaw_desktop.links import MAX_LINK_CHARS, PairLink, is_link, parse_link
from openclaw_desktop.log import RedactingFilter

TOKEN = "bt_Secret_Zq3xQ9w"
FP = "7270b9b1eec5fe809163ace8c347501d3c6ee850aeb91b4d4e56c03eb4f1fd6b"


def _raw(payload: object) -> str:
    """Any JSON as unpadded base64url, bypassing the encoder's validation."""
    data = json.dumps(payload).encode("utf-8")
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


GOOD = encode_setup_code(
    {
        "url": "wss://192.168.1.20:18789",
        "urls": ["wss://192.168.1.20:18789", "ws://studio.local:18789"],
        "bootstrapToken": TOKEN,
        "tlsFingerprint": FP,
    }
)


def test_pair_link_gives_the_decoded_setup_code() -> None:
    link = parse_link(f"openclaw://pair?code={GOOD}")
    assert isinstance(link, PairLink)
    assert link.url == "wss://192.168.1.20:18789"
    assert link.setup.candidate_urls == ["wss://192.168.1.20:18789", "ws://studio.local:18789"]
    assert link.setup.bootstrap_token == TOKEN
    assert link.setup.tls_fingerprint == FP
    assert link.code == GOOD
    assert TOKEN not in repr(link)
    assert GOOD not in repr(link)
    assert TOKEN not in str(link)


@pytest.mark.parametrize(
    "text",
    [
        f"OPENCLAW://PAIR?code={GOOD}",
        f"  openclaw://pair/?code={GOOD}\n",
        f"openclaw://pair?v=1&code={GOOD}",
        f"openclaw://pair?code={quote(GOOD, safe='')}",
    ],
)
def test_tolerated_variants(text: str) -> None:
    assert parse_link(text).setup.bootstrap_token == TOKEN


def test_padded_code_is_accepted() -> None:
    padded = GOOD + "=" * (-len(GOOD) % 4)
    assert parse_link(f"openclaw://pair?code={quote(padded)}").setup.bootstrap_token == TOKEN


def _code_with(**payload: object) -> str:
    return _raw({"url": "ws://127.0.0.1:18789", "bootstrapToken": TOKEN, **payload})


HOSTILE: list[tuple[str, str]] = [
    # wrong scheme
    (f"https://pair?code={GOOD}", "expected an openclaw:// link, not scheme 'https'"),
    (f"oc-pair://{GOOD}", "not scheme 'oc-pair'"),
    (f"openclaw-evil://pair?code={GOOD}", "not scheme 'openclaw-evil'"),
    (GOOD, "expected an openclaw:// link"),
    ("", "expected an openclaw:// link"),
    (f"openclaw:pair?code={GOOD}", "expected openclaw://<action>"),
    # unknown / malformed action
    (f"openclaw://connect?code={GOOD}", "unknown action 'connect'"),
    (f"openclaw://?code={GOOD}", "no valid action"),
    (f"openclaw://user@pair?code={GOOD}", "no valid action"),
    (f"openclaw://pair:80?code={GOOD}", "no valid action"),
    (f"openclaw://pair/extra?code={GOOD}", "a pair link has no path"),
    (f"openclaw://pair?code={GOOD}#frag", "no #fragment"),
    # missing / duplicate code
    ("openclaw://pair", "the link has no code"),
    ("openclaw://pair?token=abc", "the link has no code"),
    ("openclaw://pair?code=", "the link's code is empty"),
    (f"openclaw://pair?code={GOOD}&code={GOOD}", "more than one code"),
    ("openclaw://pair?code", "query is malformed"),
    # characters that have no place in a link
    (f"openclaw://pair?code={GOOD[:10]} {GOOD[10:]}", "spaces, control characters"),
    (f"openclaw://pair?code={GOOD}\x00", "spaces, control characters"),
    ("openclaw://pair?code=é", "non-ASCII"),
    # oversized
    ("openclaw://pair?code=" + "A" * (MAX_LINK_CHARS + 1), f"longer than {MAX_LINK_CHARS}"),
    ("openclaw://pair?code=" + "A" * (MAX_CODE_CHARS + 4), f"longer than {MAX_CODE_CHARS}"),
    # invalid base64
    ("openclaw://pair?code=abc%2Bdef", "not base64url"),
    ("openclaw://pair?code=ab+cd", "not base64url"),
    ("openclaw://pair?code=%25%25%25", "not base64url"),
    ("openclaw://pair?code=A", "truncated"),
    (f"openclaw://pair?code={quote('openclaw://pair?code=' + GOOD, safe='')}", "not base64url"),
    # not JSON
    (f"openclaw://pair?code={_b64(b'hello, not json')}", "does not hold UTF-8 JSON"),
    (f"openclaw://pair?code={_b64(bytes([0xFF, 0xFE, 0x00]))}", "does not hold UTF-8 JSON"),
    (f"openclaw://pair?code={_b64(b'[' * 1600)}", f"longer than {MAX_CODE_CHARS}"),
    (f"openclaw://pair?code={_b64(b'[' * 1500)}", "does not hold UTF-8 JSON"),
    # unexpected JSON
    (f"openclaw://pair?code={_raw(['ws://a:1'])}", "must be a JSON object"),
    (f"openclaw://pair?code={_raw('ws://a:1')}", "must be a JSON object"),
    (f"openclaw://pair?code={_raw({})}", "neither a url nor a bootstrapToken"),
    (f"openclaw://pair?code={_code_with(url=42)}", "url must be a non-empty string"),
    (f"openclaw://pair?code={_code_with(url='https://evil.example')}", "ws:// or wss://"),
    (f"openclaw://pair?code={_code_with(url='file:///etc/passwd')}", "ws:// or wss://"),
    (f"openclaw://pair?code={_code_with(url='ws://u:p@h:1')}", "must not carry credentials"),
    (f"openclaw://pair?code={_code_with(url='ws://h:99999')}", "not a valid URL"),
    (f"openclaw://pair?code={_code_with(urls='ws://a:1')}", "urls must be a list"),
    (f"openclaw://pair?code={_code_with(urls=['http://a'])}", "ws:// or wss://"),
    (f"openclaw://pair?code={_code_with(bootstrapToken=7)}", "bootstrapToken must be"),
    (f"openclaw://pair?code={_code_with(bootstrapToken='x' * 600)}", "bootstrapToken is longer"),
    (f"openclaw://pair?code={_code_with(expiresAtMs='soon')}", "expiresAtMs must be"),
    (f"openclaw://pair?code={_code_with(tlsFingerprint='zz')}", "tlsFingerprint"),
    (f"openclaw://pair?code={_raw({'bootstrapToken': TOKEN})}", "has no gateway URL"),
    (f"openclaw://pair?code={_raw({'url': 'ws://a:1'})}", "has no bootstrap token"),
]


@pytest.mark.parametrize(("text", "expected"), HOSTILE)
def test_hostile_links_are_refused_clearly(text: str, expected: str) -> None:
    with pytest.raises(LinkError) as caught:
        parse_link(text)
    error = caught.value
    assert isinstance(error, ConfigError)
    assert isinstance(error, OpenClawError)
    assert expected in str(error)
    assert str(error).startswith("unusable openclaw:// link: ")
    assert TOKEN not in str(error)
    assert GOOD not in str(error)
    # No chained exception (shown in a traceback) carries the code either.
    assert error.__cause__ is None
    assert error.__context__ is None or error.__suppress_context__


def test_non_text_is_refused() -> None:
    with pytest.raises(LinkError, match="expected text, not bytes"):
        parse_link(b"openclaw://pair")  # type: ignore[arg-type]


def test_error_messages_are_bounded() -> None:
    with pytest.raises(LinkError) as caught:
        parse_link("x" * 3000 + "://pair?code=" + GOOD)
    assert len(str(caught.value)) < 120


@pytest.mark.parametrize(
    ("arg", "expected"),
    [
        (f"openclaw://pair?code={GOOD}", True),
        ("OpenClaw:whatever", True),
        (" openclaw://x", True),
        ("--headless", False),
        ("node", False),
        ("openclaw-desktop", False),
        ("", False),
    ],
)
def test_is_link(arg: str, expected: bool) -> None:
    assert is_link(arg) is expected


@pytest.mark.parametrize(
    "template",
    [
        "opening {link}",
        "argv=['openclaw-desktop', '{link}']",
        'got "{link}" from the browser',
        "link {link}&v=1 and more",
    ],
)
def test_the_log_filter_hides_a_link_code(template: str) -> None:
    record = logging.LogRecord("openclaw.ui", logging.INFO, __file__, 1, "%s", None, None)
    record.args = (template.format(link=f"openclaw://pair?code={GOOD}"),)
    assert RedactingFilter().filter(record)
    message = record.getMessage()
    assert GOOD not in message and GOOD[:20] not in message
    assert "openclaw://pair?code=<redacted>" in message
