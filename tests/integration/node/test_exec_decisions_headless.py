"""The headless node (``openclaw-desktop node``, no window) logs every exec decision as the
window's Activity view shows it: who decided and why, the executable and how many
arguments, who asked; never the arguments (a secret in them stays out of the log).

Our bundled gateway and our headless node run as subprocesses over loopback; an operator
invokes ``system.run`` through the gateway as the agent's exec tool does.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.config import NodeSettings, Settings, SettingsStore
from openclaw_desktop.node.exec.approvals import FILE_NAME
from tests.helpers.bundled_gateway import BundledGateway, DesktopNode, RawClient, raw_operator

pytestmark = pytest.mark.timeout(180)

SECRET = "hunter2-s3cr3t-value"
ECHO = os.path.realpath(shutil.which("echo") or "/bin/echo")


async def _approved(gw: BundledGateway, node_id: str) -> None:
    async with asyncio.timeout(90):
        while True:
            for row in (await asyncio.to_thread(gw.cli_json, "nodes", "pending"))["pending"]:
                if row["nodeId"] == node_id:
                    await asyncio.to_thread(gw.cli, "nodes", "approve", row["requestId"])
            nodes = (await asyncio.to_thread(gw.cli_json, "nodes", "list"))["nodes"]
            entry = next((n for n in nodes if n["nodeId"] == node_id), None)
            if entry and entry.get("connected") and "system.run" in entry["commands"]:
                return
            await asyncio.sleep(0.2)


async def _run(op: RawClient, node_id: str, argv: list[str]) -> dict[str, Any]:
    params = {"command": argv, "agentId": "main", "sessionKey": "agent:main:main"}
    request = {
        "nodeId": node_id,
        "command": "system.run",
        "params": params,
        "idempotencyKey": f"headless-{time.monotonic_ns()}",
    }
    return await op.call("node.invoke", request, timeout=60)


async def test_the_headless_node_logs_each_decision_without_the_arguments(
    tmp_path: Path,
) -> None:
    home = tmp_path / "desktop"
    SettingsStore(home / "config" / "settings.json").save(Settings(node=NodeSettings(exec=True)))
    approvals = home / "config" / FILE_NAME
    approvals.write_text(
        json.dumps(
            {
                "version": 1,
                "defaults": {"security": "allowlist", "ask": "on-miss"},
                "agents": {"main": {"allowlist": [{"pattern": ECHO, "argPattern": "^listed$"}]}},
            }
        ),
        encoding="utf-8",
    )
    with BundledGateway.start() as gw:
        node = DesktopNode.start(home, url=gw.url, token=gw.token)
        try:
            node_id = await asyncio.to_thread(lambda: node.device_id)
            await _approved(gw, node_id)
            async with raw_operator(gw.url, auth={"token": gw.token}) as op:
                assert (await _run(op, node_id, ["echo", "listed"]))["ok"]
                # Not listed, and nobody to ask: the ask fallback (deny) decides.
                refused = await _run(op, node_id, ["echo", f"password={SECRET}", "x"])
                assert refused["ok"] is False, refused
                message = refused["error"]["details"]["nodeError"]["message"]
                assert message == "SYSTEM_RUN_DENIED: approval required"
            allowed = await asyncio.to_thread(
                node.wait_for_log, r"exec allowed \(allowlist entry", 20
            )
            denied = await asyncio.to_thread(node.wait_for_log, r"exec denied \(no window", 20)
        finally:
            node.stop()
    asked_by = "asked by agent main, session agent:main:main"
    assert "INFO" in allowed and "openclaw.node.exec" in allowed
    assert allowed.endswith(
        f"exec allowed (allowlist entry {ECHO} (with an argument pattern)): {ECHO} with 1 "
        f"argument in the node's own folder, {asked_by}"
    ), allowed
    assert "WARNING" in denied
    assert denied.endswith(
        f"exec denied (no window to ask; ask fallback deny): {ECHO} with 2 arguments in the node's "
        f"own folder, {asked_by}"
    ), denied
    assert SECRET not in node.log()
