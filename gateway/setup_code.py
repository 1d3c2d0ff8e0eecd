"""Setup codes on the gateway side: the payload, its encoding, and QR renderings.

The code is unpadded base64url of compact UTF-8 JSON, as the real gateway's
``encodePairingSetupCode`` (``dist/setup-code-*.mjs``) makes it. The client-side decoder lives
in ``openclaw_desktop.discovery.setup_code``, which the gateway may not import; the few lines
of encoding are repeated here on top of :func:`openclaw_desktop.identity.encoding.b64url_encode`.

QR codes: :func:`qr_png_data_url` gives the ``qrDataUrl`` of ``device.pair.setupCode`` (PNG,
scale 6, 4-module quiet zone, like the real one; the real gateway omits it when it is longer
than :data:`MAX_QR_DATA_URL_LENGTH`). :func:`render_qr_terminal` draws two module rows per
text line with half blocks, dark on a forced white background, so a code fits in 80 columns
(the quiet zone narrows to one module, as the real CLI draws it, when space is short).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import segno

from openclaw_desktop.identity.encoding import b64url_encode

__all__ = [
    "MAX_QR_DATA_URL_LENGTH",
    "build_setup_payload",
    "encode_setup_code",
    "qr_png_data_url",
    "render_qr_terminal",
]

MAX_QR_DATA_URL_LENGTH = 16384
"""The ``qrDataUrl`` schema's limit (``SetupCodeQrDataUrlSchema``)."""

_BLACK_ON_WHITE = "\x1b[47m\x1b[30m"
_RESET = "\x1b[0m"
_HALF_BLOCKS = {(True, True): "█", (True, False): "▀", (False, True): "▄", (False, False): " "}


def build_setup_payload(
    url: str,
    urls: Sequence[str] | None,
    bootstrap_token: str,
    *,
    expires_at_ms: int | None = None,
    tls_fingerprint: str | None = None,
) -> dict[str, Any]:
    """The JSON object inside a setup code, keys in the real gateway's order.

    ``urls`` is included only when it lists more than the primary ``url``, as the real
    gateway does. ``tls_fingerprint`` is the certificate pin for a ``wss://`` URL.
    """
    payload: dict[str, Any] = {"url": url}
    routes = list(urls or [])
    if routes and routes != [url]:
        payload["urls"] = routes
    payload["bootstrapToken"] = bootstrap_token
    if expires_at_ms is not None:
        payload["expiresAtMs"] = expires_at_ms
    if tls_fingerprint:
        payload["tlsFingerprint"] = tls_fingerprint
    return payload


def encode_setup_code(payload: Mapping[str, Any]) -> str:
    """Unpadded base64url of the payload as compact UTF-8 JSON."""
    text = json.dumps(dict(payload), separators=(",", ":"), ensure_ascii=False)
    return b64url_encode(text.encode("utf-8"))


def _qr(text: str) -> segno.QRCode:
    """A regular (not micro) QR code, error level L raised when the size allows."""
    import segno

    return segno.make_qr(text, error="L", boost_error=True)


def qr_png_data_url(text: str, *, scale: int = 6, border: int = 4) -> str:
    """A ``data:image/png;base64,...`` URL of a QR code holding ``text``."""
    return str(_qr(text).png_data_uri(scale=scale, border=border))


def render_qr_terminal(
    text: str, *, border: int = 2, color: bool = True, max_width: int | None = 80
) -> str:
    """A QR code as text: each line shows two module rows with ``▀``, ``▄`` and ``█``.

    Dark modules are drawn, so the code needs a light background. With ``color`` each line
    forces black on white with ANSI escapes (as the real CLI does), which keeps it scannable
    on dark terminals; without it the output is plain text for a light background.

    Args:
        text: What to encode (the setup code).
        border: The quiet zone in modules on each side.
        color: Wrap each line in ANSI black-on-white.
        max_width: Narrow the quiet zone (down to one module) when the code would
            otherwise be wider than this many columns; None keeps ``border``.

    Returns:
        The lines joined with ``\\n`` (no trailing newline). A setup code with up to four
        routes, a TLS pin and an expiry (about 500 characters) fits in 80 columns.
    """
    qr = _qr(text)
    if max_width is not None:
        size = int(qr.symbol_size(border=0)[0])
        border = max(1, min(border, (max_width - size) // 2))
    rows = [tuple(bool(m) for m in row) for row in qr.matrix_iter(border=border)]
    if len(rows) % 2:
        rows.append((False,) * len(rows[0]))
    lines = []
    for top, bottom in zip(rows[0::2], rows[1::2], strict=True):
        line = "".join(_HALF_BLOCKS[pair] for pair in zip(top, bottom, strict=True))
        lines.append(f"{_BLACK_ON_WHITE}{line}{_RESET}" if color else line)
    return "\n".join(lines)
