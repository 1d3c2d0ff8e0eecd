"""This computer's own node asking to pair: approved by the runtime on the bundled gateway it
started, asked about like any device on another gateway (where nothing else approves it)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from openclaw_desktop.config import AppPaths
from openclaw_desktop.identity import DeviceIdentity
from openclaw_desktop.session import EventReceived
from tests.helpers.qt import run_in_qt, window_home  # noqa: F401 (autouse)
from ui.app import DesktopApp
from ui.runtime import DesktopRuntime, RuntimeTarget

pytestmark = pytest.mark.timeout(60)


def _app_with_own_node(*, bundled: bool) -> tuple[DesktopApp, str, list[tuple[str, Any]]]:
    target = RuntimeTarget(node=True) if bundled else RuntimeTarget(url="ws://127.0.0.1:1")
    runtime = DesktopRuntime(AppPaths.default(), target)
    identity = DeviceIdentity.generate()
    # The runtime's node, as far as the window looks at it: its signing identity.
    runtime.node = SimpleNamespace(options=SimpleNamespace(signer=identity))  # type: ignore[assignment]
    if bundled:
        runtime._approver = SimpleNamespace()  # type: ignore[assignment]  # started by start()
    app = DesktopApp(runtime)
    asked: list[tuple[str, Any]] = []

    async def ask(kind: str, request: dict[str, Any]) -> None:
        asked.append((kind, request))

    app._ask_pairing = ask  # type: ignore[method-assign]
    return app, identity.device_id, asked


def _request(event: str, device_id: str) -> EventReceived:
    key = "deviceId" if event.startswith("device.") else "nodeId"
    return EventReceived(event, {"requestId": "r1", key: device_id}, 1, None)


def _deliver(qapp: QApplication, app: DesktopApp, *events: EventReceived) -> None:
    async def scenario() -> None:
        for event in events:
            app._gateway_event(event)
        await asyncio.sleep(0.05)  # the asks run as tasks of the window
        await app.tasks.cancel()

    run_in_qt(qapp, scenario)


@pytest.mark.parametrize("event", ["device.pair.requested", "node.pair.requested"])
def test_own_node_is_asked_about_on_another_gateway(qapp: QApplication, event: str) -> None:
    app, own, asked = _app_with_own_node(bundled=False)
    assert not app.runtime.approves_own_requests
    _deliver(qapp, app, _request(event, own), _request(event, "f" * 64))
    kind = event.split(".", 1)[0]
    assert [(k, r.get("deviceId") or r.get("nodeId")) for k, r in asked] == [
        (kind, own),
        (kind, "f" * 64),
    ]


@pytest.mark.parametrize("event", ["device.pair.requested", "node.pair.requested"])
def test_own_node_is_left_to_the_runtime_on_the_bundled_gateway(
    qapp: QApplication, event: str
) -> None:
    app, own, asked = _app_with_own_node(bundled=True)
    assert app.runtime.approves_own_requests
    _deliver(qapp, app, _request(event, own), _request(event, "f" * 64))
    assert [r.get("deviceId") or r.get("nodeId") for _, r in asked] == ["f" * 64]
