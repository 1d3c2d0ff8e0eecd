"""The real ``openclaw`` CLI edits our node's exec approvals through OUR bundled gateway.

Issue #18 asks that ``openclaw approvals allowlist add --node <ours>`` change our node's
document through either gateway. ``tests/interop/test_node_exec_side_by_side.py`` proves it
through the real gateway; here the real CLI (remote mode, its own device identity) is pointed
at our bundled gateway on its defaults, with our node (the real desktop node process, Run
commands on) paired there: ``approvals get --node`` shows the node's document, ``approvals
allowlist add --node`` writes the entry into the node's ``exec-approvals.json``, ``approvals
get --node`` then shows it, and the node runs the allowlisted command under
``security: allowlist`` while it still refuses one that is not on the list.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.config import NodeSettings, Settings, SettingsStore
from tests.helpers.bundled_gateway import BundledGateway, DesktopNode, RawClient, raw_operator
from tests.helpers.real_openclaw import OpenClawInstall, RemoteCli, strip_ansi

pytestmark = pytest.mark.timeout(300)

EXEC = {
    "system.run.prepare",
    "system.run",
    "system.which",
    "system.execApprovals.get",
    "system.execApprovals.set",
}


@dataclass
class Setup:
    """Our bundled gateway, our node on it, an operator, and the real CLI pointed at it."""

    gw: BundledGateway
    cli: RemoteCli
    op: RawClient
    node_id: str
    document: Path

    async def run(self, argv: list[str]) -> dict[str, Any]:
        res = await self.op.call(
            "node.invoke",
            {
                "nodeId": self.node_id,
                "command": "system.run",
                "params": {"command": argv},
                "idempotencyKey": f"k-{asyncio.get_running_loop().time()}",
            },
            timeout=60,
        )
        return res


async def until(probe: Any, what: str, timeout: float = 90) -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await asyncio.to_thread(probe)
        if value:
            return value
        if loop.time() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.5)


@pytest.fixture
async def setup(openclaw_install: OpenClawInstall, tmp_path: Path) -> AsyncIterator[Setup]:
    home = tmp_path / "desktop"
    SettingsStore(home / "config" / "settings.json").save(Settings(node=NodeSettings(exec=True)))
    with BundledGateway.start() as gw:  # its defaults, as the real gateway's: no --allow
        node = DesktopNode.start(home, url=gw.url, token=gw.token)
        cli = RemoteCli(openclaw_install, gw.url, gw.token)
        try:
            node_id = await asyncio.to_thread(lambda: node.device_id)

            def approved() -> bool:
                for row in gw.cli_json("nodes", "pending")["pending"]:
                    if row["nodeId"] == node_id:
                        gw.cli("nodes", "approve", row["requestId"])
                entry = next(
                    (n for n in gw.cli_json("nodes", "list")["nodes"] if n["nodeId"] == node_id),
                    None,
                )
                return bool(entry and entry.get("connected") and set(entry["commands"]) >= EXEC)

            await until(approved, "our node approved on the bundled gateway", 90)
            async with raw_operator(gw.url, auth={"token": gw.token}) as op:
                yield Setup(gw, cli, op, node_id, home / "config" / "exec-approvals.json")
        finally:
            cli.cleanup()
            node.stop()


def _without_token(file: dict[str, Any]) -> dict[str, Any]:
    """The document as it travels: the socket token is never sent."""
    socket = {k: v for k, v in file.get("socket", {}).items() if k != "token"}
    return {**file, "socket": socket}


def _entries(file: dict[str, Any], agent: str = "*") -> list[str]:
    return [e["pattern"] for e in file.get("agents", {}).get(agent, {}).get("allowlist", [])]


async def test_real_cli_allowlist_add_changes_our_nodes_document(setup: Setup) -> None:
    """``approvals get --node`` / ``approvals set --node`` / ``approvals allowlist add --node``
    from the real CLI reach our node through our gateway and change its file."""
    cli, node_id = setup.cli, setup.node_id
    before = await asyncio.to_thread(cli.cli_json, "approvals", "get", "--node", node_id)
    # The node's own file, as the node wrote it at start (the real CLI's shape of the answer).
    assert before["path"] == str(setup.document), before
    assert before["exists"] is True, before
    on_disk = json.loads(setup.document.read_text("utf-8"))
    assert on_disk["socket"]["token"], "the node keeps a socket token in its file"
    assert before["file"] == _without_token(on_disk), "the same document, its token withheld"
    assert _entries(before["file"]) == []

    # security allowlist, nobody to ask: what is not on the list is refused.
    policy = setup.document.parent / "policy.json"
    policy.write_text(
        json.dumps({"version": 1, "defaults": {"security": "allowlist", "ask": "off"}}), "utf-8"
    )
    await asyncio.to_thread(cli.cli, "approvals", "set", "--node", node_id, "--file", str(policy))
    refused = await setup.run(["/usr/bin/uname"])
    assert not refused["ok"], refused
    assert "SYSTEM_RUN_DENIED" in json.dumps(refused["error"]), refused

    added = await asyncio.to_thread(
        cli.cli, "approvals", "allowlist", "add", "--node", node_id, "/usr/bin/uname"
    )
    assert added.returncode == 0, added.stderr

    stored = json.loads(setup.document.read_text("utf-8"))
    assert stored["defaults"]["security"] == "allowlist", stored
    assert _entries(stored) == ["/usr/bin/uname"], stored
    (entry,) = stored["agents"]["*"]["allowlist"]
    assert entry["id"], entry  # the CLI gave it an id, as through the real gateway

    after = await asyncio.to_thread(cli.cli_json, "approvals", "get", "--node", node_id)
    assert after["hash"] != before["hash"]
    assert _entries(after["file"]) == ["/usr/bin/uname"], after
    assert after["file"] == _without_token(stored), after
    shown = await asyncio.to_thread(cli.cli, "approvals", "get", "--node", node_id)
    # The tables a person reads: one entry, on our node, its pattern (wrapped in its cell).
    table = strip_ansi(shown.stdout)
    assert re.search(r"Allowlist\s*│\s*1\s*│", table), table
    listing = table[table.index("\nAllowlist\n") :]
    assert f"node:{node_id}" in listing, table
    assert "/usr/bin/" in listing and "uname" in listing, table

    ran = await setup.run(["/usr/bin/uname"])
    assert ran["ok"], ran
    assert ran["payload"]["payload"]["exitCode"] == 0, ran
    assert ran["payload"]["payload"]["stdout"].strip(), ran
    still_refused = await setup.run(["/usr/bin/id"])
    assert not still_refused["ok"], still_refused
