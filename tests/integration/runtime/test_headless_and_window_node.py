"""The headless CLI and the window get this computer's node from one place
(:class:`DesktopRuntime`): run one after the other on the same home and port, each against
the real bundled gateway it starts on loopback, both join it as the same approved node (same
device, same name from ``node.display_name``, same command surface) without a prompt, and
both stop the gateway they started when they end."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.config import AppPaths, SettingsStore
from openclaw_desktop.identity import IdentityStore
from openclaw_desktop.runtime import DesktopRuntime, RuntimeTarget
from openclaw_desktop.supervisor import listening
from tests.helpers.bundled_gateway import clean_env, run_desktop_cli
from tests.helpers.ports import free_port
from tests.helpers.processes import stop_group, wait_for_log

pytestmark = pytest.mark.timeout(180)

#: What the two runs must agree on about this computer's node, as the gateway lists it.
SAME = ("nodeId", "displayName", "clientId", "clientMode", "caps", "commands", "approvalState")


def _ours(listing: Any, node_id: str) -> dict[str, Any] | None:
    """This computer's entry of a ``node.list`` answer, while it is connected."""
    for entry in listing.get("nodes", []):
        if entry.get("nodeId") == node_id and entry.get("connectedAtMs") is not None:
            return dict(entry)
    return None


async def until(predicate: Callable[[], object], what: str, timeout: float = 60) -> None:
    """Poll ``predicate`` (bounded)."""
    try:
        async with asyncio.timeout(timeout):
            while not predicate():
                await asyncio.sleep(0.05)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


def _headless_entry(root: Path, port: int, node_id: str) -> dict[str, Any]:
    """Run ``openclaw-desktop --gateway-port PORT`` headless until its node is approved;
    this node's ``node.list`` entry then (asked with the CLI), after a clean stop."""
    log = root / "headless.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "openclaw_desktop.cli", "--gateway-port", str(port)],
            env=clean_env({"OPENCLAW_DESKTOP_HOME": str(root)}),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        wait_for_log(log, "node commands approved and active", proc, 90)
        url = f"ws://127.0.0.1:{port}"
        listing = json.loads(run_desktop_cli(root, "call", "node.list", "--url", url).stdout)
        entry = _ours(listing, node_id)
        assert entry is not None, listing
        assert stop_group(proc) == 0, log.read_text()
    finally:
        stop_group(proc)
    return entry


async def test_the_headless_cli_and_the_window_join_as_the_same_node(
    home: AppPaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS"):
        monkeypatch.delenv(name, raising=False)  # the same desktop as the headless run's
    root = Path(os.environ["OPENCLAW_DESKTOP_HOME"])
    SettingsStore(home.settings_file).set("node.display_name", "Lab pc")
    node_id = IdentityStore(home.identity_file).load_or_create().device_id
    port = free_port()

    headless = await asyncio.to_thread(_headless_entry, root, port, node_id)
    await until(lambda: not listening(port), "the headless run's gateway to stop")
    assert headless["displayName"] == "Lab pc"
    assert headless["approvalState"] == "approved" and headless["commands"]

    runtime = DesktopRuntime(home, RuntimeTarget(port=port))
    try:
        async with asyncio.timeout(90):
            client = await runtime.start()
        assert runtime.approves_own_requests
        window: dict[str, Any] = {}

        async def listed() -> None:
            while True:
                entry = _ours(await client.call("node.list", {}), node_id)
                if entry is not None and entry["approvalState"] == "approved":
                    window.update(entry)
                    return
                await asyncio.sleep(0.1)

        async with asyncio.timeout(60):
            await listed()
    finally:
        await runtime.aclose()
    await until(lambda: not listening(port), "the window's gateway to stop")
    assert {k: window[k] for k in SAME} == {k: headless[k] for k in SAME}
