"""Unit tests: the setup-code codec round-trips and refuses hostile input with clear errors."""

from __future__ import annotations

import base64
import json

import pytest

from openclaw_desktop.discovery.setup_code import (
    MAX_BOOTSTRAP_TOKEN_CHARS,
    MAX_CODE_CHARS,
    MAX_JSON_BYTES,
    SetupCode,
    SetupCodeError,
    decode_setup_code,
    encode_setup_code,
)

TOKEN = "bt_secret_Zq3xQ9"
FP = "7270b9b1eec5fe809163ace8c347501d3c6ee850aeb91b4d4e56c03eb4f1fd6b"


def _raw_code(payload: object, *, pad: bool = False) -> str:
    """Encode anything as a code, bypassing the encoder's validation."""
    raw = base64.urlsafe_b64encode(json.dumps(payload).encode("utf-8")).decode("ascii")
    return raw if pad else raw.rstrip("=")


def test_round_trip() -> None:
    payload = {
        "url": "wss://192.168.1.20:18789",
        "urls": ["wss://192.168.1.20:18789", "ws://studio.local:18789/gw"],
        "bootstrapToken": TOKEN,
    }
    code = encode_setup_code(payload)
    assert "=" not in code
    decoded = decode_setup_code(code)
    assert decoded == SetupCode(
        url="wss://192.168.1.20:18789",
        urls=("wss://192.168.1.20:18789", "ws://studio.local:18789/gw"),
        bootstrap_token=TOKEN,
    )
    assert decoded.candidate_urls == ["wss://192.168.1.20:18789", "ws://studio.local:18789/gw"]


def test_encoding_is_compact_json() -> None:
    code = encode_setup_code({"url": "ws://a:1", "bootstrapToken": "t"})
    assert base64.urlsafe_b64decode(code + "==") == b'{"url":"ws://a:1","bootstrapToken":"t"}'


def test_real_gateway_extras_are_read() -> None:
    code = _raw_code(
        {
            "url": "wss://h:1",
            "bootstrapToken": "t",
            "expiresAtMs": 2_000,
            "tlsFingerprint": FP.upper(),
        }
    )
    decoded = decode_setup_code(code)
    assert decoded.expires_at_ms == 2_000
    assert decoded.tls_fingerprint == FP
    assert decoded.is_expired(2_000)
    assert not decoded.is_expired(1_999)


def test_padded_codes_and_whitespace_are_accepted() -> None:
    code = _raw_code({"url": "ws://a:1", "bootstrapToken": "tok"}, pad=True)
    assert code.endswith("=")
    assert decode_setup_code(f"  {code}\n").bootstrap_token == "tok"


@pytest.mark.parametrize(
    "wrap",
    [
        "oc-pair://{}",
        "OC-PAIR://{}",
        "oc-pair://{}/",
        "openclaw://pair?code={}",
        "openclaw:///pair?code={}",
        "OpenClaw://pair?code={}&v=1",
    ],
)
def test_link_wrappers(wrap: str) -> None:
    code = encode_setup_code({"url": "ws://a:1", "bootstrapToken": "tok"})
    assert decode_setup_code(wrap.format(code)).url == "ws://a:1"


@pytest.mark.parametrize(
    "link", ["openclaw://settings?code=abc", "openclaw://pair", "openclaw://pair?code=a&code=b"]
)
def test_foreign_openclaw_links_are_refused(link: str) -> None:
    with pytest.raises(SetupCodeError, match="not a pairing link"):
        decode_setup_code(link)


def test_only_url_or_only_token_is_enough() -> None:
    assert decode_setup_code(_raw_code({"url": "ws://a:1"})).bootstrap_token is None
    only_token = decode_setup_code(_raw_code({"bootstrapToken": "tok"}))
    assert only_token.url is None
    assert only_token.candidate_urls == []


def test_repr_never_shows_the_token() -> None:
    decoded = decode_setup_code(_raw_code({"url": "ws://a:1", "bootstrapToken": TOKEN}))
    assert TOKEN not in repr(decoded)
    assert TOKEN not in str(decoded)
    assert TOKEN not in f"{decoded}"
    assert "<redacted>" in repr(decoded)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("oc-pair://", "empty"),
        ("A" * (MAX_CODE_CHARS + 1), "longer than 2048"),
        ("x" * 100_000, "longer than 2048"),
        ("abc$def", "not base64url"),
        ("ab+/cd", "not base64url"),
        ("abcde", "truncated"),
        ("a===", "not base64url"),
        (base64.urlsafe_b64encode(b"\xff\xfe\xfd").decode(), "UTF-8 JSON"),
        (base64.urlsafe_b64encode(b"not json").decode().rstrip("="), "UTF-8 JSON"),
        (_raw_code(["ws://a:1", "tok"]), "JSON object"),
        (_raw_code("ws://a:1"), "JSON object"),
        (_raw_code(None), "JSON object"),
        (_raw_code({}), "neither a url nor a bootstrapToken"),
        (_raw_code({"other": 1}), "neither a url nor a bootstrapToken"),
        (_raw_code({"url": "http://a:1", "bootstrapToken": "t"}), "ws:// or wss://"),
        (_raw_code({"url": "https://a:1", "bootstrapToken": "t"}), "ws:// or wss://"),
        (_raw_code({"url": "javascript:alert(1)", "bootstrapToken": "t"}), "ws:// or wss://"),
        (_raw_code({"url": "ws://", "bootstrapToken": "t"}), "no host"),
        (_raw_code({"url": "ws://a:99999", "bootstrapToken": "t"}), "not a valid URL"),
        (_raw_code({"url": "ws://u:p@a:1", "bootstrapToken": "t"}), "credentials"),
        (_raw_code({"url": 5, "bootstrapToken": "t"}), "url must be a non-empty string"),
        (_raw_code({"url": "ws://a:1", "bootstrapToken": 5}), "bootstrapToken must be"),
        (_raw_code({"url": "ws://a:1", "bootstrapToken": "  "}), "bootstrapToken must be"),
        (_raw_code({"url": "ws://a:1", "urls": "ws://a:1"}), "urls must be a list"),
        (_raw_code({"url": "ws://a:1", "urls": []}), "urls must be a list"),
        (_raw_code({"url": "ws://a:1", "urls": ["ws://b:1"] * 9}), "urls must be a list"),
        (_raw_code({"url": "ws://a:1", "urls": ["http://b"]}), "urls[0]"),
        (_raw_code({"url": "ws://a:1", "expiresAtMs": -1}), "expiresAtMs"),
        (_raw_code({"url": "ws://a:1", "expiresAtMs": "1"}), "expiresAtMs"),
        (_raw_code({"url": "ws://a:1", "expiresAtMs": True}), "expiresAtMs"),
        (_raw_code({"url": "ws://a:1", "tlsFingerprint": "nope"}), "tlsFingerprint"),
        (_raw_code({"url": "ws://a:1", "tlsFingerprint": 7}), "tlsFingerprint"),
        # 4 KB of JSON needs more than 2048 characters of base64url: the code limit bites first.
        (_raw_code({"url": "ws://a:1", "pad": "x" * MAX_JSON_BYTES}), "longer than 2048"),
        (_raw_code([[[[[]]]]]), "JSON object"),
    ],
)
def test_hostile_input_is_refused(text: str, message: str) -> None:
    with pytest.raises(SetupCodeError) as info:
        decode_setup_code(text)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_deepest_nesting_within_the_size_limit_is_refused_cleanly() -> None:
    depth = (MAX_CODE_CHARS * 3 // 4) // 2  # as deep as 2048 characters of base64url allow
    code = base64.urlsafe_b64encode(("[" * depth + "]" * depth).encode()).decode().rstrip("=")
    assert len(code) <= MAX_CODE_CHARS
    with pytest.raises(SetupCodeError, match="JSON object"):
        decode_setup_code(code)


def test_huge_token_is_refused_without_echoing_it() -> None:
    token = "S" * (MAX_BOOTSTRAP_TOKEN_CHARS + 1)
    with pytest.raises(SetupCodeError) as info:
        decode_setup_code(_raw_code({"url": "ws://a:1", "bootstrapToken": token}))
    assert "longer than 512" in str(info.value)
    assert "SSSS" not in str(info.value)
    decoded = decode_setup_code(_raw_code({"url": "ws://a:1", "bootstrapToken": token[:-1]}))
    assert decoded.bootstrap_token == token[:-1]


def test_errors_never_contain_the_token() -> None:
    secret = "tok_DO_NOT_LEAK"
    for payload in (
        {"url": "http://a", "bootstrapToken": secret},
        {"url": "ws://a:1", "bootstrapToken": secret, "tlsFingerprint": "x"},
    ):
        with pytest.raises(SetupCodeError) as info:
            decode_setup_code(_raw_code(payload))
        assert secret not in str(info.value)


def test_encoder_refuses_what_the_decoder_would_refuse() -> None:
    with pytest.raises(SetupCodeError, match="ws:// or wss://"):
        encode_setup_code({"url": "http://a:1", "bootstrapToken": "t"})
    with pytest.raises(SetupCodeError, match="longer than 512"):
        encode_setup_code({"url": "ws://a:1", "bootstrapToken": "x" * 600})
