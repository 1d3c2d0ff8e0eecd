"""``location.get`` and ``device.apps`` on our node over a real loopback WebSocket.

The real stack (``GatewayConnection`` + ``NodeSession`` + the spec table, as the running node
builds it) connects to a scripted gateway that sends ``node.invoke.request`` as a gateway
does. ``location.get`` asks a GeoClue2-compatible service on a private dbus-daemon;
``device.apps`` reads real ``.desktop`` files from a temporary ``XDG_DATA_HOME`` and
``XDG_DATA_DIRS``. Every malformed request gets one typed answer and the node stays connected.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.config import NodeSettings
from openclaw_desktop.errors import GatewayError
from openclaw_desktop.integration.command import EMBEDDED_ALLOW
from openclaw_desktop.node import NodeContext, NodeSession, build_dispatcher
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.approved_node import approved_node
from tests.helpers.bundled_gateway import (
    bundled_gateway,
    operator_options,
)
from tests.helpers.desktop_session import (
    dbus_session_fixture,  # noqa: F401 - provides the dbus_session fixture
)
from tests.helpers.geoclue_service import Fix, GeoClueService
from tests.helpers.scripted_gateway import ScriptedPeer, node_behind_script

pytestmark = pytest.mark.timeout(60)


@dataclass
class Node:
    """Our node behind a scripted gateway peer."""

    peer: ScriptedPeer
    session: NodeSession
    settings: dict[str, Any]
    counter: int = 0

    def results(self) -> list[dict[str, Any]]:
        return self.peer.invoke_results()

    async def invoke(self, command: str, params: Any = None, raw: str | None = None) -> Any:
        self.counter += 1
        invoke_id = f"inv-{self.counter}"
        payload: dict[str, Any] = {"id": invoke_id, "nodeId": "node-1", "command": command}
        if raw is not None:
            payload["paramsJSON"] = raw
        elif params is not None:
            payload["paramsJSON"] = json.dumps(params)
        await self.peer.send({"type": "event", "event": "node.invoke.request", "payload": payload})
        return await self.peer.invoke_result(invoke_id)


def write_entry(folder: Path, name: str, body: str) -> Path:
    """One ``.desktop`` file under ``folder/applications``."""
    path = folder / "applications" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    return path


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A user data folder and two system data folders with real desktop entries."""
    home, first, second = tmp_path / "home", tmp_path / "sys1", tmp_path / "sys2"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.setenv("XDG_DATA_DIRS", f"{first}:{second}")
    monkeypatch.setenv("LANG", "de_AT.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    app = "[Desktop Entry]\nType=Application\nName={name}\nExec={name}\n"
    write_entry(first, "org.gnome.Calculator.desktop", app.format(name="Calculator"))
    write_entry(second, "org.gnome.Calculator.desktop", app.format(name="Shadowed"))
    write_entry(
        first,
        "firefox.desktop",
        "# comment\n[Desktop Entry]\nType=Application\nName=Firefox\nName[de]=Feuerfuchs\n"
        "Exec=firefox %u\n[Desktop Action new-window]\nName=Other\n",
    )
    write_entry(first, "kde/org.kde.kate.desktop", app.format(name="Kate"))
    write_entry(
        first,
        "mimeinfo-helper.desktop",
        "[Desktop Entry]\nType=Application\nName=Open With Helper\nNoDisplay=true\n",
    )
    write_entry(
        first, "gone.desktop", "[Desktop Entry]\nType=Application\nName=Gone\nHidden=true\n"
    )
    write_entry(first, "link.desktop", "[Desktop Entry]\nType=Link\nName=A Link\nURL=x\n")
    write_entry(
        first,
        "missing.desktop",
        "[Desktop Entry]\nType=Application\nName=Missing\nTryExec=/nonexistent/tool\n",
    )
    write_entry(home, "my-script.desktop", app.format(name="aardvark notes"))
    write_entry(second, "broken.desktop", "\x00\x01 no group here\n")
    return {"home": home, "first": first, "second": second}


@pytest.fixture
async def node(dbus_session: str) -> AsyncIterator[Node]:
    settings: dict[str, Any] = {
        "location": True,
        "installed_apps": True,
        "location_bus": dbus_session,
    }
    ctx = NodeContext(settings=lambda: NodeSettings(**settings))
    commands, caps = ("location.get", "device.apps", "device.info"), ("location", "device")
    async with node_behind_script(ctx, commands, caps) as (peer, session):
        yield Node(peer, session, settings)


# ---------------------------------------------------------------- device.apps


async def test_apps_are_listed_from_the_desktop_entries(node: Node, xdg: dict[str, Path]) -> None:
    """Applications only, sorted by label, localized names, ids from the relative path, the
    user's folder first and the first file of an id winning; hidden, not installed and
    NoDisplay entries are left out."""
    result = await node.invoke("device.apps", {})
    assert result["ok"] is True, result
    payload = result["payload"]
    first, home = xdg["first"] / "applications", xdg["home"] / "applications"
    assert payload == {
        "count": 4,
        "totalMatched": 4,
        "truncated": False,
        "apps": [
            {
                "label": "aardvark notes",
                "id": "my-script.desktop",
                "path": str(home / "my-script.desktop"),
                "system": False,
            },
            {
                "label": "Calculator",
                "id": "org.gnome.Calculator.desktop",
                "path": str(first / "org.gnome.Calculator.desktop"),
                "system": False,
            },
            {
                "label": "Feuerfuchs",
                "id": "firefox.desktop",
                "path": str(first / "firefox.desktop"),
                "system": False,
            },
            {
                "label": "Kate",
                "id": "kde-org.kde.kate.desktop",
                "path": str(first / "kde" / "org.kde.kate.desktop"),
                "system": False,
            },
        ],
    }


async def test_query_limit_and_include_system(node: Node, xdg: dict[str, Path]) -> None:
    """query matches label or id case-insensitively; limit cuts and says truncated (clamped
    to 1..200); includeSystem adds the NoDisplay entries, marked system."""
    by_id = await node.invoke("device.apps", {"query": "  GNOME "})
    assert [a["label"] for a in by_id["payload"]["apps"]] == ["Calculator"]
    by_label = await node.invoke("device.apps", {"query": "feuer"})
    assert [a["id"] for a in by_label["payload"]["apps"]] == ["firefox.desktop"]
    cut = (await node.invoke("device.apps", {"limit": 2}))["payload"]
    assert (cut["count"], cut["totalMatched"], cut["truncated"]) == (2, 4, True)
    clamped = (await node.invoke("device.apps", {"limit": 0}))["payload"]
    assert (clamped["count"], clamped["truncated"]) == (1, True)
    everything = (await node.invoke("device.apps", {"includeSystem": True, "limit": 500}))[
        "payload"
    ]
    assert everything["count"] == 5 and everything["truncated"] is False
    helper = next(a for a in everything["apps"] if a["id"] == "mimeinfo-helper.desktop")
    assert helper == {
        "label": "Open With Helper",
        "id": "mimeinfo-helper.desktop",
        "path": str(xdg["first"] / "applications" / "mimeinfo-helper.desktop"),
        "system": True,
    }
    none = (await node.invoke("device.apps", {"query": "zzz"}))["payload"]
    assert none == {"count": 0, "totalMatched": 0, "truncated": False, "apps": []}


async def test_apps_off_is_the_reference_code(node: Node, xdg: dict[str, Path]) -> None:
    """Installed-app sharing off (the default): INSTALLED_APPS_SHARING_DISABLED."""
    node.settings["installed_apps"] = False
    result = await node.invoke("device.apps", {})
    assert result["ok"] is False
    assert result["error"]["code"] == "INSTALLED_APPS_SHARING_DISABLED"
    assert "Installed applications" in result["error"]["message"]
    assert NodeSettings().installed_apps is False


# ---------------------------------------------------------------- location.get


async def test_location_over_the_node_session(node: Node) -> None:
    """A fix from GeoClue comes back as the node.invoke.result payload."""
    async with GeoClueService.running(node.settings["location_bus"], fix=Fix(1.0, 2.0, 50.0)):
        result = await node.invoke("location.get", {"desiredAccuracy": "precise"})
    assert result["ok"] is True, result
    payload = result["payload"]
    assert (payload["lat"], payload["lon"], payload["accuracyMeters"]) == (1.0, 2.0, 50.0)
    assert payload["isPrecise"] is True and payload["source"] == "unknown"


async def test_location_errors_over_the_node_session(node: Node) -> None:
    """Off, refused by GeoClue and no fix: the reference's codes, the message without a
    doubled prefix (the gateway adds it)."""
    bus = node.settings["location_bus"]
    node.settings["location"] = False
    off = await node.invoke("location.get", {})
    assert off["error"] == {"code": "LOCATION_DISABLED", "message": "enable Location in Settings"}
    node.settings["location"] = True
    async with GeoClueService.running(bus, mode="disabled"):
        refused = await node.invoke("location.get", {})
    assert refused["error"]["code"] == "LOCATION_DISABLED"
    async with GeoClueService.running(bus, mode="no_fix"):
        late = await node.invoke("location.get", {"timeoutMs": 1000})
    assert late["error"] == {"code": "LOCATION_TIMEOUT", "message": "no fix in time"}


# ---------------------------------------------------------------- bad input


MALFORMED: list[tuple[str, Any, str | None]] = [
    ("device.apps", None, "[1, 2]"),
    ("device.apps", None, '"text"'),
    ("device.apps", None, "{not json"),
    ("device.apps", {"query": ""}, None),
    ("device.apps", {"query": "   "}, None),
    ("device.apps", {"query": 5}, None),
    ("device.apps", {"limit": "10"}, None),
    ("device.apps", {"limit": 2.5}, None),
    ("device.apps", {"limit": True}, None),
    ("device.apps", {"includeSystem": "yes"}, None),
    ("device.apps", {"includeNonLaunchable": True}, None),
    ("location.get", None, "[]"),
    ("location.get", None, "{not json"),
    ("location.get", {"timeoutMs": "10s"}, None),
    ("location.get", {"maxAgeMs": [1]}, None),
    ("location.get", {"desiredAccuracy": "best"}, None),
]


async def test_malformed_requests_get_typed_errors_and_the_node_stays(
    node: Node, xdg: dict[str, Path]
) -> None:
    """Each malformed request: exactly one INVALID_REQUEST answer; the node still answers."""
    async with GeoClueService.running(node.settings["location_bus"], fix=Fix(1, 2, 3)) as service:
        for command, params, raw in MALFORMED:
            result = await node.invoke(command, params, raw=raw)
            assert result["ok"] is False, (command, params, raw, result)
            assert result["error"]["code"] == "INVALID_REQUEST", (command, params, raw, result)
            assert result["error"]["message"], result
        assert service.state.clients == [], "no malformed request reached GeoClue"
        fine = await node.invoke("location.get", {})
        assert fine["ok"] is True, fine
    apps = await node.invoke("device.apps", {"limit": 1})
    assert apps["ok"] is True and apps["payload"]["count"] == 1
    info = await node.invoke("device.info", {})
    assert info["ok"] is True
    assert len(node.results()) == len(MALFORMED) + 3


# ---------------------------------------------------------------- through our gateway


async def test_through_the_bundled_gateway_with_its_embedded_allowlist(
    tmp_path: Path, dbus_session: str, xdg: dict[str, Path]
) -> None:
    """An operator's node.invoke reaches both commands through our gateway started with the
    app's allowlist: the node advertises them once enabled, the approved surface carries
    them, a fix and the app list come back, and a node error keeps its code and text."""
    settings = NodeSettings(location=True, installed_apps=True, location_bus=dbus_session)
    dispatcher = build_dispatcher(NodeContext(settings=lambda: settings))
    async with (
        GeoClueService.running(dbus_session, fix=Fix(47.5, 8.5, 25.0)) as geoclue,
        bundled_gateway(tmp_path / "gw", nodes_allow=list(EMBEDDED_ALLOW)) as gw,
        GatewayConnection(operator_options(gw.url)) as operator,
        approved_node(gw.url, operator, dispatcher, settings) as node,
    ):
        assert {"location.get", "device.apps"} <= set(node.surface.commands)
        assert "location" in node.surface.caps and node.surface.permissions["location"] is True
        assert {"location.get", "device.apps"} <= set(node.requested["commands"])
        located = await node.invoke("location.get", {"desiredAccuracy": "coarse"})
        fix = located["payload"]
        assert (fix["lat"], fix["lon"], fix["accuracyMeters"]) == (47.5, 8.5, 25.0)
        geoclue.state.mode = "no_fix"
        with pytest.raises(GatewayError) as late:
            await node.invoke("location.get", {"timeoutMs": 1000})
        # location.get goes through the linux-node invoke policy, as on the real gateway:
        # the node's text bare, its code in details.
        assert (late.value.code, late.value.message) == ("INVALID_REQUEST", "no fix in time")
        assert late.value.details["code"] == "LOCATION_TIMEOUT"
        listed = await node.invoke("device.apps", {"query": "kate"})
        assert [a["id"] for a in listed["payload"]["apps"]] == ["kde-org.kde.kate.desktop"]
        with pytest.raises(GatewayError) as caught:
            await node.invoke("device.apps", {"limit": "ten"})
        assert "INVALID_REQUEST: limit must be an integer" in caught.value.message
        still = await node.invoke("device.info", {})
        assert still["payload"]["deviceName"]
