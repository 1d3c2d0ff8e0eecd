"""Structured logs without secrets: ``python -m gateway -vv run`` (debug logging, every
library logger included) walks through every credential it handles, and none of them, not
even a 12-character piece, shows up in what the process writes.

One gateway with token auth and manual pairing: the shared token (right and wrong), a device
paired and reconnecting on its device token, ``device.token.rotate`` (the new token used
too), a setup code minted over RPC and one by the CLI (``python -m gateway -vv setup-code``,
whose stderr is checked as well), both bootstrap tokens redeemed by phone nodes, their node
and hand-off operator tokens used, ``device.token.revoke``. A second gateway with
``--auth password``: the right and a wrong password.

Our own log lines must carry none of them. The websockets library's frame log (DEBUG, so
only at ``-vv``) is checked separately: it shows the last ~24 characters of every frame, the
tail of a device-less ``connect`` is its ``auth.token``, and until the gateway keeps that
logger at INFO the test ends as an expected failure naming the leaked pieces.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import secrets
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.bundled_gateway import (
    ANDROID_PHONE,
    BundledGateway,
    RawClient,
    run_gateway_cli,
)

pytestmark = pytest.mark.timeout(120)

#: A secret counts as leaked when any piece of it this long appears in the log.
PIECE = 12
#: Lines logged by the websockets library itself (``websockets.server: < TEXT ...``).
WEBSOCKETS_LOG = re.compile(r"\bwebsockets(\.\w+)*: ")
ADMIN_SCOPES = ["operator.admin", "operator.read", "operator.write", "operator.pairing"]
#: operator.pairing lets the device rotate its own token.
LAPTOP_SCOPES = ["operator.read", "operator.pairing"]


@pytest.fixture
def verbose_gateways() -> Iterator[list[BundledGateway]]:
    """Start gateways with :func:`start`; every one is killed and reaped at teardown."""
    started: list[BundledGateway] = []
    yield started
    for gw in started:
        gw.cleanup()


def start(started: list[BundledGateway], state_dir: Path, *args: str) -> BundledGateway:
    """Our gateway at ``-vv`` (debug, every library logger) on ``state_dir``."""
    root = state_dir.parent / f"{state_dir.name}-gw"
    gw = BundledGateway.start(args=args, root=root, state_dir=state_dir, options=["-vv"])
    started.append(gw)
    return gw


def leaks(text: str, secrets_: Iterable[tuple[str, str]]) -> list[str]:
    """``"what: piece in line"`` for every secret with a :data:`PIECE`-long piece in
    ``text``."""
    found = []
    for what, secret in secrets_:
        assert len(secret) >= PIECE, what
        for start_at in range(len(secret) - PIECE + 1):
            piece = secret[start_at : start_at + PIECE]
            at = text.find(piece)
            if at >= 0:
                line_start = text.rfind("\n", 0, at) + 1
                line_end = text.find("\n", at)
                found.append(f"{what}: {piece!r} in {text[line_start:line_end][:300]!r}")
                break
    return found


def cli_setup_code(state_dir: Path, url: str) -> subprocess.CompletedProcess[str]:
    """``python -m gateway -vv --state-dir STATE setup-code --url URL``, finished."""
    return run_gateway_cli(
        "-vv", "--state-dir", str(state_dir), "setup-code", "--url", url, timeout=60
    )


async def connect(url: str, identity: DeviceIdentity | None, **kw: Any) -> dict[str, Any]:
    """One ``connect`` on a fresh socket (closed afterwards); its response frame."""
    client = await RawClient.open(url)
    try:
        return await client.connect(identity, **kw)
    finally:
        await client.close()


def decode_code(code: str) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(base64.urlsafe_b64decode(code + "=" * (-len(code) % 4)))
    return payload


async def redeem(url: str, bootstrap_token: str) -> tuple[DeviceIdentity, dict[str, Any]]:
    """A phone node connecting with only the bootstrap token: its identity and hello auth."""
    phone = DeviceIdentity.generate()
    res = await connect(
        url,
        phone,
        auth={"bootstrapToken": bootstrap_token},
        **ANDROID_PHONE,
    )
    assert res["ok"] is True, res
    auth: dict[str, Any] = res["payload"]["auth"]
    return phone, auth


async def test_debug_logs_carry_no_secrets(
    tmp_path: Path, verbose_gateways: list[BundledGateway]
) -> None:
    found: list[tuple[str, str]] = []
    gw = start(verbose_gateways, tmp_path / "token", "--manual-pairing")
    shared = gw.token
    found.append(("shared token", shared))
    wrong_token = secrets.token_urlsafe(32)
    found.append(("wrong shared token", wrong_token))

    admin = await RawClient.open(gw.url)
    try:
        res = await admin.connect(None, scopes=ADMIN_SCOPES, auth={"token": shared})
        assert res["ok"] is True, res

        # A wrong shared token is refused (and not logged either).
        res = await connect(gw.url, DeviceIdentity.generate(), auth={"token": wrong_token})
        assert res["error"]["details"]["code"] == "AUTH_TOKEN_MISMATCH", res

        # A device is paired, gets a device token and reconnects with it.
        laptop = DeviceIdentity.generate()
        res = await connect(gw.url, laptop, scopes=LAPTOP_SCOPES, auth={"token": shared})
        request_id = res["error"]["details"]["requestId"]
        await admin.ok("device.pair.approve", {"requestId": request_id})
        res = await connect(gw.url, laptop, scopes=LAPTOP_SCOPES, auth={"token": shared})
        assert res["ok"] is True, res
        device_token = res["payload"]["auth"]["deviceToken"]
        found.append(("device token", device_token))
        res = await connect(
            gw.url, laptop, scopes=LAPTOP_SCOPES, auth={"deviceToken": device_token}
        )
        assert res["ok"] is True, res
        assert res["payload"]["auth"]["method"] == "device-token"
        wrong_device_token = secrets.token_urlsafe(32)
        found.append(("wrong device token", wrong_device_token))
        res = await connect(
            gw.url, laptop, scopes=LAPTOP_SCOPES, auth={"deviceToken": wrong_device_token}
        )
        assert res["ok"] is False, res

        # The device rotates its own token and uses the new one.
        own = await RawClient.open(gw.url)
        try:
            res = await own.connect(
                laptop, scopes=LAPTOP_SCOPES, auth={"deviceToken": device_token}
            )
            assert res["ok"] is True, res
            rotated = await own.ok(
                "device.token.rotate", {"deviceId": laptop.device_id, "role": "operator"}
            )
        finally:
            await own.close()
        new_token = rotated["token"]
        assert new_token != device_token
        found.append(("rotated device token", new_token))
        res = await connect(gw.url, laptop, scopes=LAPTOP_SCOPES, auth={"deviceToken": new_token})
        assert res["ok"] is True, res

        # A setup code over RPC, redeemed by a phone; its tokens are used.
        minted = await admin.ok("device.pair.setupCode")
        code = minted["setupCode"]
        bootstrap = decode_code(code)["bootstrapToken"]
        found += [("setup code (RPC)", code), ("bootstrap token (RPC)", bootstrap)]
        phone, auth = await redeem(gw.url, bootstrap)
        node_token = auth["deviceToken"]
        (handoff,) = auth["deviceTokens"]
        found += [("phone node token", node_token), ("hand-off token", handoff["deviceToken"])]
        res = await connect(
            gw.url,
            phone,
            auth={"deviceToken": node_token},
            **ANDROID_PHONE,
        )
        assert res["ok"] is True, res
        res = await connect(
            gw.url,
            phone,
            scopes=handoff["scopes"],
            client_id="openclaw-android",
            client_mode="ui",
            platform="android",
            device_family="Android",
            auth={"deviceToken": handoff["deviceToken"]},
        )
        assert res["ok"] is True, res

        # A setup code from the CLI (debug logging too), redeemed as well.
        cli = await asyncio.to_thread(cli_setup_code, gw.state_dir, gw.url)
        assert cli.returncode == 0, cli.stderr
        match = re.search(r"valid 10 minutes\):\n([A-Za-z0-9_-]+)\n", cli.stdout)
        assert match is not None, cli.stdout
        cli_code = match.group(1)
        cli_bootstrap = decode_code(cli_code)["bootstrapToken"]
        found += [("setup code (CLI)", cli_code), ("bootstrap token (CLI)", cli_bootstrap)]
        _phone, auth = await redeem(gw.url, cli_bootstrap)
        found.append(("second phone node token", auth["deviceToken"]))

        # Revocation (by an admin) of the rotated token.
        await admin.ok("device.token.revoke", {"deviceId": laptop.device_id, "role": "operator"})
        res = await connect(gw.url, laptop, scopes=LAPTOP_SCOPES, auth={"deviceToken": new_token})
        assert res["ok"] is False, res
    finally:
        await admin.close()

    # Password auth on a second gateway: right and wrong.
    password = f"pw-{secrets.token_urlsafe(24)}"
    wrong_password = f"pw-{secrets.token_urlsafe(24)}"
    found += [("password", password), ("wrong password", wrong_password)]
    pw_gw = start(
        verbose_gateways, tmp_path / "password", "--auth", "password", f"--password={password}"
    )
    res = await connect(pw_gw.url, DeviceIdentity.generate(), auth={"password": password})
    assert res["ok"] is True, res
    assert res["payload"]["auth"]["method"] == "password"
    res = await connect(pw_gw.url, DeviceIdentity.generate(), auth={"password": wrong_password})
    assert res["error"]["details"]["code"] == "AUTH_PASSWORD_MISMATCH", res

    # Stop both (so everything is flushed), then read what they wrote.
    for proc in (gw, pw_gw):
        code, _elapsed = await asyncio.to_thread(proc.terminate)
        assert code == 0, proc.log()
    log = gw.log() + pw_gw.log()
    # The logs are really at debug level, and do talk about these events.
    assert " DEBUG " in log, log[-3000:]
    assert "(device-token)" in log, log[-3000:]
    # The CLI prints the code on stdout on purpose; its log (stderr) must not carry it.
    assert leaks(cli.stderr, found) == [], cli.stderr
    # Our own log lines (and those of every other library) carry none of them.
    lines = log.splitlines(keepends=True)
    frames = "".join(line for line in lines if WEBSOCKETS_LOG.search(line))
    ours = "".join(line for line in lines if not WEBSOCKETS_LOG.search(line))
    assert leaks(ours, found) == []
    # At -vv the websockets library would log every frame with its tail, and the tail of a
    # connect frame is a piece of auth.token: its logger stays at WARNING.
    assert leaks(frames, found) == []
