"""``location.get`` and ``device.apps`` on our node, invoked through the REAL OpenClaw gateway.

Our headless node (``openclaw-desktop node``) runs with both commands enabled, GeoClue2 served
by the test service on a private dbus-daemon and ``.desktop`` files in a temporary
``XDG_DATA_HOME``/``XDG_DATA_DIRS``; it pairs with the real gateway (2026.9.6) on its
defaults plus ``gateway.nodes.commands.allow: ["device.apps"]`` (the real gateway's Linux
defaults do not include ``device.apps``; ``location.get`` is allowed on Linux by its bundled
linux-node plugin). An operator's ``node.invoke`` gets a fix, the app list, and the node's
errors as the real gateway relays them.

Side by side: the real node host (``openclaw node run``) on this machine offers neither
command (its location needs GeoClue's ``where-am-i`` demo program, not installed here, and
it has no ``device.apps`` on Linux), so what the real gateway answers for a node that does
not declare them is compared instead: our node with the two settings off (gated like every other
command: no longer advertised; *Run commands* on, so both nodes declare ``system.run``) gets
exactly the real node host's answer.

The three tests share one real gateway in that config (:func:`apps_gateway`): each starts a
node of its own (a fresh home, so a fresh device identity and node id, with its own surface
approval, settings, GeoClue and desktop entries), invokes only its own nodes by id, and stops
them at its end; the real node host is told apart from the earlier tests' nodes as the
connected node that is not ours.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.config import NodeSettings, Settings, SettingsStore
from tests.helpers.bundled_gateway import DesktopNode, RawClient, raw_operator
from tests.helpers.computer_node import approve_pending, listed_commands
from tests.helpers.desktop_session import session_bus
from tests.helpers.geoclue_service import Fix, GeoClueService
from tests.helpers.real_openclaw import (
    GatewayFactory,
    NodeHostFactory,
    OpenClawInstall,
    RealGateway,
)

pytestmark = pytest.mark.timeout(420)

BOTH = {"location.get", "device.apps"}
APP = "[Desktop Entry]\nType=Application\nName={name}\nExec={exe}\n"


@dataclass
class Rig:
    """The real gateway, an operator on it, our node and the folders it reads."""

    gw: RealGateway
    op: RawClient
    node: DesktopNode
    node_id: str
    settings: SettingsStore
    geoclue: GeoClueService
    bus: str
    data: Path

    async def invoke(self, command: str, params: Any, node: str | None = None) -> Any:
        return await self.op.call(
            "node.invoke",
            {
                "nodeId": node or self.node_id,
                "command": command,
                "params": params,
                "idempotencyKey": f"k-{time.monotonic_ns()}",
            },
            timeout=90,
        )


async def until(probe: Callable[[], Any], what: str, timeout: float = 90) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = await asyncio.to_thread(probe)
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.5)


def _desktop_entries(root: Path) -> tuple[Path, Path]:
    """A user folder and a system folder with real desktop entries."""
    user, system = root / "user", root / "system"
    for folder, name, body in (
        (system, "org.gnome.Calculator.desktop", APP.format(name="Calculator", exe="calc")),
        (system, "firefox.desktop", APP.format(name="Firefox", exe="firefox %u")),
        (system, "helper.desktop", APP.format(name="Helper", exe="h") + "NoDisplay=true\n"),
        (user, "notes.desktop", APP.format(name="aardvark notes", exe="notes")),
    ):
        path = folder / "applications" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    return user, system


@pytest.fixture(scope="module")
def apps_gateway(openclaw_install: OpenClawInstall) -> Iterator[RealGateway]:
    """The module's real gateway: its defaults plus ``device.apps`` allowed (shared: see the
    module's docstring)."""
    with GatewayFactory(openclaw_install) as factory:
        yield factory(allow=("device.apps",))


@pytest.fixture
async def rig(apps_gateway: RealGateway, tmp_path: Path) -> AsyncIterator[Rig]:
    gw = apps_gateway
    user, system = _desktop_entries(tmp_path / "xdg")
    with session_bus() as bus:
        async with GeoClueService.running(bus, fix=Fix(48.2082, 16.3738, 12.5)) as geoclue:
            home = tmp_path / "desktop"
            store = SettingsStore(home / "config" / "settings.json")
            node_settings = NodeSettings(
                location=True, installed_apps=True, location_bus=bus, exec=True
            )
            store.save(Settings(node=node_settings))
            env = {"XDG_DATA_HOME": str(user), "XDG_DATA_DIRS": str(system)}
            node = DesktopNode.start(home, url=gw.url, token=gw.token, env=env)
            try:
                node_id = await asyncio.to_thread(lambda: node.device_id)

                def ready() -> bool:
                    approve_pending(gw, node_id)
                    return (listed_commands(gw, node_id) or set()) >= BOTH

                await until(ready, "our node with location.get and device.apps approved", 120)
                async with raw_operator(
                    gw.url, auth={"token": gw.token}, client_id="cli", client_mode="cli"
                ) as op:
                    yield Rig(gw, op, node, node_id, store, geoclue, bus, user.parent)
            finally:
                node.stop()


async def test_location_through_the_real_gateway(rig: Rig) -> None:
    """A fix, then GeoClue with no fix and GeoClue refusing: the node's codes as the real
    gateway relays them (its linux-node invoke policy: the code in ``details``)."""
    got = await rig.invoke("location.get", {"desiredAccuracy": "precise"})
    assert got["ok"] is True, got
    fix = got["payload"]["payload"]
    assert (fix["lat"], fix["lon"], fix["accuracyMeters"]) == (48.2082, 16.3738, 12.5)
    assert fix["isPrecise"] is True and fix["source"] == "unknown"
    assert fix["timestamp"].endswith("Z")
    assert rig.geoclue.state.requested_levels[-1] == 8

    rig.geoclue.state.mode = "no_fix"
    late = await rig.invoke("location.get", {"timeoutMs": 1000})
    assert _relayed(late) == ("INVALID_REQUEST", "no fix in time", "LOCATION_TIMEOUT"), late
    assert late["error"]["details"]["nodeCommandDispatched"] is True, late

    rig.geoclue.state.mode = "disabled"
    refused = await rig.invoke("location.get", {})
    code, message, node_code = _relayed(refused)
    assert (code, node_code) == ("INVALID_REQUEST", "LOCATION_DISABLED"), refused
    assert message, refused

    rig.geoclue.state.mode = "fix"
    bad = await rig.invoke("location.get", {"desiredAccuracy": "best"})
    code, message, node_code = _relayed(bad)
    assert (code, node_code) == ("INVALID_REQUEST", "INVALID_REQUEST"), bad
    assert "desiredAccuracy" in message, bad
    again = await rig.invoke("location.get", {"desiredAccuracy": "coarse"})
    assert again["ok"] is True, again
    assert rig.geoclue.state.requested_levels[-1] == 4


def _relayed(res: dict[str, Any]) -> tuple[str, str, str | None]:
    """A refused invoke: the real gateway's code and text, and the node's code it kept."""
    assert res["ok"] is False, res
    error = res["error"]
    details = error.get("details") or {}
    return error["code"], error["message"], details.get("code")


async def test_apps_through_the_real_gateway(rig: Rig) -> None:
    """The list from the desktop entries, a query, a bad param's typed error."""
    got = await rig.invoke("device.apps", {})
    assert got["ok"] is True, got
    listed = got["payload"]["payload"]
    assert [a["label"] for a in listed["apps"]] == ["aardvark notes", "Calculator", "Firefox"]
    assert (listed["count"], listed["totalMatched"], listed["truncated"]) == (3, 3, False)
    system = await rig.invoke("device.apps", {"includeSystem": True, "query": "help"})
    assert [a["id"] for a in system["payload"]["payload"]["apps"]] == ["helper.desktop"]
    bad = await rig.invoke("device.apps", {"limit": "ten"})
    assert bad["ok"] is False, bad
    assert "INVALID_REQUEST: limit must be an integer" in bad["error"]["message"], bad


async def test_off_answers_as_the_real_node_host_without_them(
    rig: Rig, real_node_host: NodeHostFactory
) -> None:
    """Settings off: our node stops advertising both (re-advertised at once) and the real
    gateway answers for it exactly as for the real node host, which never offers them."""
    host = real_node_host(rig.gw)
    assert host.running

    def real_id() -> str | None:
        # connected: the nodes of the tests before, on the same gateway, are listed too
        nodes = rig.gw.cli_json("nodes", "status")["nodes"]
        return next(
            (n["nodeId"] for n in nodes if n.get("connected") and n["nodeId"] != rig.node_id),
            None,
        )

    real = await until(real_id, "the real node host to appear")

    def real_ready() -> set[str] | None:
        approve_pending(rig.gw, real)
        commands = listed_commands(rig.gw, real)
        return commands if commands and "system.run" in commands else None

    real_commands = await until(real_ready, "the real node host approved")
    assert not (real_commands & BOTH), real_commands

    # Run commands stays on: like the real node host, ours still declares system.run.
    off = NodeSettings(location=False, installed_apps=False, location_bus=rig.bus, exec=True)
    rig.settings.save(Settings(node=off))
    await until(
        lambda: (c := listed_commands(rig.gw, rig.node_id)) is not None and not (c & BOTH),
        "our node to stop advertising both",
    )
    for command, params in (("location.get", {}), ("device.apps", {"limit": 1})):
        ours, theirs = await asyncio.gather(
            rig.invoke(command, params), rig.invoke(command, params, real)
        )
        assert ours["ok"] is False and theirs["ok"] is False, (ours, theirs)
        assert _without(ours["error"], rig.node_id) == _without(theirs["error"], real), command


def _without(error: dict[str, Any], node_id: str) -> str:
    """An error as JSON with the node's id taken out (its text and details name it)."""
    return json.dumps(error, sort_keys=True).replace(node_id, "<node>")
