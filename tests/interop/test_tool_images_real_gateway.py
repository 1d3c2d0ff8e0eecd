"""A tool's returned image on its card, on the REAL OpenClaw gateway: its ``nodes`` tool
(``camera_snap``) runs ``camera.snap`` on the window's own node (camera on, a test video as
its source); the fake model reads images (else the real tool hands it only the saved file's
path). The live tool event carries the image without its data (``omitted: true``), but Tool Search's
``tool_call`` answers with the nested result as JSON text, the image data inside: the card
shows that picture, and a new window on the
same gateway shows the same picture. Nothing is fetched for it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from openclaw_desktop.config import AppPaths, NodeSettings, Settings, SettingsStore
from tests.helpers.bundled_gateway import ALL_OPERATOR_SCOPES, RawClient
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.qt import run_in_qt, screenshot_folder, shot, window_home  # noqa: F401 (autouse)
from tests.helpers.real_openclaw import GatewayFactory
from tests.helpers.video_sources import write_video
from tests.ui.test_chat_window import until
from tests.ui.test_tool_images import (
    VIDEO,
    approve_camera,
    check_picture,
    describe,
    pixel_server,  # noqa: F401 (fixture)
    shown_pictures,
    tool_cards,
)
from ui.app import DesktopApp
from ui.runtime import DesktopRuntime, RuntimeTarget

pytestmark = [pytest.mark.ui, pytest.mark.timeout(420)]

#: Small: the real gateway cuts ``tool_call``'s text at 8,000 characters, so a bigger
#: picture's data arrives cut (and is not shown; the full one is only in the gateway's media
#: store, by URL, which the window does not fetch).
WIDTH = 128


def _app(url: str, token: str) -> DesktopApp:
    return DesktopApp(DesktopRuntime(AppPaths.default(), RuntimeTarget(url=url, token=token)))


def test_a_camera_snap_through_the_real_gateways_nodes_tool_is_shown_on_its_card(
    qapp: QApplication,
    real_gateway: GatewayFactory,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    pixel_server: tuple[int, list[str]],  # noqa: F811
) -> None:
    screens = screenshot_folder(tmp_path_factory, "tool-images-real-gateway")
    port, seen = pixel_server
    video = write_video(tmp_path / "camera.mp4", width=VIDEO[0], height=VIDEO[1], frames=10)
    SettingsStore(AppPaths.default().settings_file).save(
        Settings(node=NodeSettings(camera=True, camera_source=str(video)))
    )
    with FakeLLM() as llm:
        gateway = real_gateway(fake_llm_port=llm.port, allow=("camera.snap",), fake_llm_vision=True)
        app = _app(gateway.url, gateway.token)
        app.window.show()
        live: list[QImage] = []
        images: list[list[dict[str, str]]] = []

        async def first_window() -> None:
            await app.start()
            node = app.runtime.node
            assert node is not None and node.options.signer is not None
            node_id = node.options.signer.device_id
            client = await RawClient.open(gateway.url)
            try:
                hello = await client.connect(
                    None, auth={"token": gateway.token}, scopes=ALL_OPERATOR_SCOPES
                )
                assert hello["ok"], hello
                await approve_camera(client, node_id)
            finally:
                await client.close()
            chat = app.window.chat
            assert chat is not None and app.presenter is not None
            # The real gateway defers most tools behind Tool Search: ``tool_call`` runs one.
            snap = {"action": "camera_snap", "node": node_id, "maxWidth": WIDTH}
            args = {"id": "nodes", "args": snap}
            chat.composer.setPlainText(
                f"![pixel](http://127.0.0.1:{port}/p.png) CALLTOOL:tool_call:" + json.dumps(args)
            )
            QTest.keyClick(chat.composer, Qt.Key.Key_Return)
            try:
                await until(lambda: shown_pictures(app), "the picture on the tool card", 180)
            except TimeoutError:
                stored = await app.presenter.client.sessions.history("main", limit=50)
                kinds = [
                    (
                        m.get("role"),
                        [b.get("type") for b in m.get("content") or [] if isinstance(b, dict)],
                    )
                    for m in stored
                ]
                raise AssertionError(f"no picture: {describe(app)} history {kinds}") from None
            await asyncio.sleep(1.0)
            live.extend(shown_pictures(app))
            images.extend(c.images for c in tool_cards(app) if c.images)
            shot(app.window, screens / "01-real-tool-image-live.png")
            await app.aclose()

        run_in_qt(qapp, first_window, timeout=300)
        app.window.close()
        assert len(live) == 1, f"{len(live)} pictures on the tool cards"
        check_picture(live[0], WIDTH)

        again = _app(gateway.url, gateway.token)
        again.window.show()
        reloaded: list[QImage] = []

        async def second_window() -> None:
            await again.start()
            await until(lambda: shown_pictures(again), "the picture after a reload", 60)
            reloaded.extend(shown_pictures(again))
            assert [c.images for c in tool_cards(again) if c.images] == images
            shot(again.window, screens / "02-real-tool-image-after-reload.png")
            await again.aclose()

        run_in_qt(qapp, second_window, timeout=90)
        again.window.close()
        assert len(reloaded) == 1 and reloaded[0] == live[0]
        assert seen == [], f"showing the chat fetched {seen}"
