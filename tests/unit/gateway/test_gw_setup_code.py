"""Unit tests: the gateway's setup payload, its encoding, and QR codes that really scan."""

from __future__ import annotations

import base64
import json
import re

import cv2
import numpy as np

from gateway.setup_code import (
    MAX_QR_DATA_URL_LENGTH,
    build_setup_payload,
    encode_setup_code,
    qr_png_data_url,
    render_qr_terminal,
)
from openclaw_desktop.discovery.setup_code import decode_setup_code

TOKEN = "bt_" + "Q" * 40
FINGERPRINT = "7270b9b1eec5fe809163ace8c347501d3c6ee850aeb91b4d4e56c03eb4f1fd6b"


def _code(**extra: object) -> str:
    payload = build_setup_payload(
        "wss://192.168.1.20:18789",
        ["wss://192.168.1.20:18789", "wss://studio.local:18789", "ws://10.0.0.7:18789"],
        TOKEN,
        expires_at_ms=1_796_023_941_992,
        tls_fingerprint=FINGERPRINT,
    )
    payload.update(extra)
    return encode_setup_code(payload)


def _decode_image(image: np.ndarray) -> str:
    text, points, _ = cv2.QRCodeDetector().detectAndDecode(image)
    assert points is not None, "no QR code found"
    return str(text)


def test_payload_keys_follow_the_real_order() -> None:
    payload = build_setup_payload(
        "ws://a:1", ["ws://a:1", "ws://b:1"], "t", expires_at_ms=5, tls_fingerprint="ff"
    )
    assert list(payload) == ["url", "urls", "bootstrapToken", "expiresAtMs", "tlsFingerprint"]


def test_payload_omits_urls_that_only_repeat_url() -> None:
    assert build_setup_payload("ws://a:1", ["ws://a:1"], "t") == {
        "url": "ws://a:1",
        "bootstrapToken": "t",
    }
    assert build_setup_payload("ws://a:1", None, "t") == {"url": "ws://a:1", "bootstrapToken": "t"}


def test_encoding_is_unpadded_base64url_of_compact_json() -> None:
    payload = {"url": "wss://höst.local:18789", "bootstrapToken": "t?>~"}
    code = encode_setup_code(payload)
    assert re.fullmatch(r"[A-Za-z0-9_-]+", code)
    raw = base64.urlsafe_b64decode(code + "=" * (-len(code) % 4)).decode("utf-8")
    assert raw == '{"url":"wss://höst.local:18789","bootstrapToken":"t?>~"}'
    assert json.loads(raw) == payload


def test_gateway_codes_decode_on_the_client() -> None:
    decoded = decode_setup_code(_code())
    assert decoded.url == "wss://192.168.1.20:18789"
    assert decoded.bootstrap_token == TOKEN
    assert decoded.tls_fingerprint == FINGERPRINT
    assert decoded.expires_at_ms == 1_796_023_941_992


def test_png_data_url_is_a_scannable_qr_code() -> None:
    code = _code()
    url = qr_png_data_url(code)
    prefix = "data:image/png;base64,"
    assert url.startswith(prefix)
    assert len(url) <= MAX_QR_DATA_URL_LENGTH
    png = base64.b64decode(url[len(prefix) :])
    image = cv2.imdecode(np.frombuffer(png, dtype=np.uint8), cv2.IMREAD_GRAYSCALE)
    assert image is not None
    assert _decode_image(image) == code


def _terminal_to_image(text: str, *, scale: int = 8) -> np.ndarray:
    """Turn the half-block rendering back into pixels (dark module = black)."""
    halves = {"█": (1, 1), "▀": (1, 0), "▄": (0, 1), " ": (0, 0)}
    rows: list[list[int]] = []
    for line in text.splitlines():
        plain = re.sub(r"\x1b\[[0-9;]*m", "", line)
        assert set(plain) <= set(halves), f"unexpected characters in {plain!r}"
        rows.append([halves[ch][0] for ch in plain])
        rows.append([halves[ch][1] for ch in plain])
    modules = np.array(rows, dtype=np.uint8)
    pixels = np.where(modules == 1, 0, 255).astype(np.uint8)
    pixels = np.kron(pixels, np.ones((scale, scale), dtype=np.uint8))
    # Extra white margin so the detector sees a generous quiet zone.
    return np.pad(pixels, 4 * scale, constant_values=255)


def test_terminal_rendering_scans_and_fits_80_columns() -> None:
    code = _code()
    text = render_qr_terminal(code)
    lines = text.splitlines()
    assert all(line.startswith("\x1b[47m\x1b[30m") and line.endswith("\x1b[0m") for line in lines)
    widths = {len(re.sub(r"\x1b\[[0-9;]*m", "", line)) for line in lines}
    assert len(widths) == 1
    assert widths.pop() <= 80
    assert _decode_image(_terminal_to_image(text)) == code


def test_terminal_rendering_without_color_has_a_quiet_zone() -> None:
    text = render_qr_terminal("wss://a:1", border=2, color=False)
    lines = text.splitlines()
    assert "\x1b" not in text
    assert lines[0].strip() == ""  # two blank module rows on top
    assert all(line[:2] == "  " and line[-2:] == "  " for line in lines)
    assert _decode_image(_terminal_to_image(text)) == "wss://a:1"


def test_four_routes_still_fit_80_columns() -> None:
    """LAN IP, .local, tailnet IP and MagicDNS routes, a TLS pin and an expiry: under 80."""
    urls = [
        "wss://192.168.178.20:18789",
        "wss://studio-mac-mini.local:18789",
        "wss://100.101.102.103:18789",
        "wss://studio-mac-mini.tail1234.ts.net:18789",
    ]
    payload = build_setup_payload(
        urls[0],
        urls,
        "bt_" + "x" * 43,
        expires_at_ms=1_796_023_941_992,
        tls_fingerprint=FINGERPRINT,
    )
    code = encode_setup_code(payload)
    text = render_qr_terminal(code, color=False)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert _decode_image(_terminal_to_image(text)) == code
