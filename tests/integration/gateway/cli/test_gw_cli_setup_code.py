"""``python -m gateway setup-code`` as a real process: what it prints, and that it works.

The command runs in a temporary ``OPENCLAW_DESKTOP_HOME`` (state in ``<home>/state/gateway``).
The printed code is decoded by hand (unpadded base64url of JSON ``{url, urls?,
bootstrapToken, expiresAtMs, tlsFingerprint?}``): its URL is this machine's first LAN address
from the network adapters (never 127.0.0.1 when the machine has another address), ``--tls``
gives ``wss://`` and the fingerprint of the certificate in the same state dir, and a gateway
started on that state dir redeems the bootstrap tokens: full access hands the phone an
operator token with ``operator.admin``, ``--limited`` one without.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import re
import ssl
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from gateway.cli import lan_urls
from gateway.hub import now_ms
from gateway.tls import CERT_FILENAME
from openclaw_desktop.discovery import decode_setup_code
from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.bundled_gateway import (
    ANDROID_PHONE,
    BundledGateway,
    RawClient,
    run_gateway_cli,
)
from tests.integration.gateway.server.test_gw_server_setup_code import HANDOFF_SCOPES

pytestmark = pytest.mark.timeout(90)

FULL_SCOPES = HANDOFF_SCOPES
_CODE_RE = re.compile(r"Setup code \(single use, valid 10 minutes\):\n([A-Za-z0-9_-]+)\n")


def setup_code(
    home: Path, *args: str
) -> tuple[dict[str, Any], str, subprocess.CompletedProcess[str]]:
    """Run ``python -m gateway setup-code ARGS`` with ``OPENCLAW_DESKTOP_HOME=home``; returns
    the decoded payload, the code and the finished process."""
    result = run_gateway_cli(
        "setup-code", *args, timeout=60, env={"OPENCLAW_DESKTOP_HOME": str(home)}
    )
    assert result.returncode == 0, result.stderr
    found = _CODE_RE.search(result.stdout)
    assert found is not None, result.stdout
    code = found.group(1)
    assert "=" not in code  # unpadded base64url
    raw = base64.urlsafe_b64decode(code + "=" * (-len(code) % 4))
    payload: dict[str, Any] = json.loads(raw.decode("utf-8"))
    # Our client's decoder reads the same thing.
    decoded = decode_setup_code(code)
    assert decoded.url == payload["url"]
    assert decoded.bootstrap_token == payload["bootstrapToken"]
    return payload, code, result


def expected_urls(port: int, tls: bool) -> list[str]:
    """What the command should offer on this machine (loopback only without a LAN)."""
    return lan_urls(port, tls) or [f"{'wss' if tls else 'ws'}://127.0.0.1:{port}"]


async def redeem(url: str, bootstrap_token: str) -> dict[str, Any]:
    """Connect as the Android app's node with only the bootstrap token; returns
    ``hello-ok.auth``. (Platform and device family as the app sends them: the real gateway
    hands a code's operator token only to the official app whose metadata agree.)"""
    node = await RawClient.open(url)
    try:
        res = await node.connect(
            DeviceIdentity.generate(),
            auth={"bootstrapToken": bootstrap_token},
            **ANDROID_PHONE,
        )
    finally:
        await node.close()
    assert res["ok"] is True, res
    auth: dict[str, Any] = res["payload"]["auth"]
    return auth


async def test_setup_code_points_at_the_lan_and_is_redeemable(tmp_path: Path) -> None:
    """Full and ``--limited`` codes: LAN URL, keys and order, 10-minute expiry; a gateway on the
    same state dir redeems both, handing out operator.admin only for the full one."""
    home = tmp_path / "home"
    full, full_code, printed = setup_code(home)
    limited, _code, _ = setup_code(home, "--limited")

    urls = expected_urls(18789, False)
    for payload in (full, limited):
        assert list(payload) == (
            ["url", "urls", "bootstrapToken", "expiresAtMs"]
            if len(urls) > 1
            else ["url", "bootstrapToken", "expiresAtMs"]
        )
        assert payload["url"] == urls[0]
        assert payload.get("urls", [urls[0]]) == urls
        assert 9 * 60_000 < payload["expiresAtMs"] - now_ms() <= 10 * 60_000
        assert payload["bootstrapToken"]
    assert full["bootstrapToken"] != limited["bootstrapToken"]
    host = urlsplit(full["url"]).hostname
    assert host is not None
    if lan_urls(18789, False):
        assert not ipaddress.ip_address(host).is_loopback, full
    else:
        assert "no LAN address found" in printed.stderr
    assert f"Gateway URL: {full['url']}" in printed.stdout
    assert full_code in printed.stdout
    assert "▀" in printed.stdout or "▄" in printed.stdout  # the terminal QR code
    assert (home / "state" / "gateway" / "gateway.sqlite3").exists()

    state = home / "state" / "gateway"
    with BundledGateway.start(args=["--manual-pairing"], root=home / "gw", state_dir=state) as proc:
        auth = await redeem(proc.url, full["bootstrapToken"])
        assert auth["method"] == "bootstrap-token"
        assert auth["role"] == "node"
        (handoff,) = auth["deviceTokens"]
        assert handoff["role"] == "operator"
        assert sorted(handoff["scopes"]) == FULL_SCOPES

        auth = await redeem(proc.url, limited["bootstrapToken"])
        (handoff,) = auth["deviceTokens"]
        assert sorted(handoff["scopes"]) == [s for s in FULL_SCOPES if s != "operator.admin"]


async def test_setup_code_with_tls_pins_the_state_dirs_certificate(tmp_path: Path) -> None:
    """``--tls --port 4443``: wss:// LAN URLs and the SHA-256 of the certificate the CLI wrote
    into the state dir (the one ``gateway run --tls`` serves)."""
    home = tmp_path / "home"
    payload, _code, _ = setup_code(home, "--tls", "--port", "4443")

    urls = expected_urls(4443, True)
    assert payload["url"] == urls[0]
    assert payload["url"].startswith("wss://") and payload["url"].endswith(":4443")
    assert payload.get("urls", [urls[0]]) == urls
    pem = (home / "state" / "gateway" / "tls" / CERT_FILENAME).read_text("ascii")
    fingerprint = hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem)).hexdigest()
    assert payload["tlsFingerprint"] == fingerprint
    assert list(payload)[-1] == "tlsFingerprint"

    # A second code reuses the certificate.
    again, _code, _ = setup_code(home, "--tls", "--port", "4443")
    assert again["tlsFingerprint"] == fingerprint
    assert again["bootstrapToken"] != payload["bootstrapToken"]


async def test_explicit_urls_win(tmp_path: Path) -> None:
    """``--url`` (repeatable) replaces the adapter addresses, in the given order."""
    payload, _code, _ = setup_code(
        tmp_path / "home", "--url", "ws://gateway.example:18789", "--url", "ws://10.9.8.7:18789"
    )
    assert payload["url"] == "ws://gateway.example:18789"
    assert payload["urls"] == ["ws://gateway.example:18789", "ws://10.9.8.7:18789"]
