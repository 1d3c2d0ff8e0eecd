"""A tool's returned image reaches its card in the window, live and after a reload.

The window runs with its own node (camera on, its source a test video) on our bundled
gateway (a subprocess over loopback, allowing the node commands the app's own bundled gateway
allows) with the fake model. The model calls ``node_invoke
camera.snap`` on this computer; the node's picture comes back as the tool result's image
block; the tool card shows it (decoded, at the size the node reported, the test picture's
red box where the video has it), and a new window on the same gateway shows the same
picture from ``chat.history``. A tracking-pixel server on loopback, named in the message,
is never asked for anything: images come from the tool result alone.
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from openclaw_desktop.chat import ChatItem
from openclaw_desktop.config import AppPaths, NodeSettings, Settings, SettingsStore
from openclaw_desktop.integration.command import EMBEDDED_ALLOW
from tests.helpers.bundled_gateway import ALL_OPERATOR_SCOPES, BundledGateway, RawClient
from tests.helpers.chat_trace import write_fake_providers
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.qt import run_in_qt, screenshot_folder, shot, window_home  # noqa: F401 (autouse)
from tests.helpers.video_sources import write_video
from tests.ui.test_chat_window import pairing_dialog, until
from tests.ui.test_chat_window_more import new_app
from ui.app import DesktopApp
from ui.widgets.chat_delegate import decode_image
from ui.widgets.chat_model import ITEM_ROLE

pytestmark = pytest.mark.timeout(180)

#: The test video's frame size and the width the model asks for (the node scales to it).
VIDEO = (640, 480)
SNAP_WIDTH = 320


class _Pixel(BaseHTTPRequestHandler):
    seen: list[str]

    def do_GET(self) -> None:
        self.seen.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def pixel_server() -> Iterator[tuple[int, list[str]]]:
    """A tracking-pixel server on loopback: (port, the paths it was asked for)."""
    seen: list[str] = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Pixel", (_Pixel,), {"seen": seen}))
    thread = threading.Thread(target=server.serve_forever, name="pixel", daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def tool_cards(app: DesktopApp) -> list[ChatItem]:
    """The tool rows the window's list shows (what the delegate paints)."""
    assert app.window.chat is not None
    app.window.chat.flush()
    model = app.window.chat.model
    items = [model.index(r, 0).data(ITEM_ROLE) for r in range(model.rowCount())]
    return [i for i in items if isinstance(i, ChatItem) and i.role == "tool"]


def shown_pictures(app: DesktopApp) -> list[QImage]:
    """The decoded pictures of the window's finished tool cards."""
    out: list[QImage] = []
    for card in tool_cards(app):
        if card.tool is not None and card.tool.status == "completed":
            out += [p for p in (decode_image(i) for i in card.images) if p is not None]
    return out


def describe(app: DesktopApp) -> list[str]:
    """The timeline's rows in short (for a failure's message)."""
    assert app.presenter is not None
    return [
        f"{i.role}/{i.status}: {i.text[:80]!r} {i.tool} images={len(i.images)}"
        for i in app.presenter.timeline.items
    ]


def check_picture(picture: QImage, width: int = SNAP_WIDTH) -> None:
    """The test video's frame at the asked width: its red box (an eighth to a third of the
    width, a quarter to a half of the height) is red, the rest grey."""
    height = width * VIDEO[1] // VIDEO[0]
    assert (picture.width(), picture.height()) == (width, height)
    red = QColor(picture.pixel(width * 11 // 48, height * 3 // 8))
    assert red.red() > 150 and red.green() < 80 and red.blue() < 80, red.name()
    grey = QColor(picture.pixel(width * 3 // 4, height * 3 // 4))
    assert abs(grey.red() - grey.blue()) < 30 and grey.green() > 40, grey.name()


async def approve_camera(client: RawClient, node_id: str) -> None:
    """The user approves this computer's commands in the window's pairing dialog."""
    async with asyncio.timeout(40):
        while True:
            dialog = pairing_dialog()
            if dialog is not None:
                dialog.approve_button.click()
            nodes = (await client.ok("node.list"))["nodes"]
            entry = next((n for n in nodes if n["nodeId"] == node_id), None)
            if entry and entry.get("connected") and "camera.snap" in entry.get("commands", []):
                return
            await asyncio.sleep(0.1)


def test_a_snapshot_from_this_computers_camera_is_shown_on_its_tool_card_live_and_after_reload(
    qapp: QApplication,
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    pixel_server: tuple[int, list[str]],
) -> None:
    screens = screenshot_folder(tmp_path_factory, "tool-images")
    port, seen = pixel_server
    video = write_video(tmp_path / "camera.mp4", width=VIDEO[0], height=VIDEO[1], frames=10)
    paths = AppPaths.default()
    SettingsStore(paths.settings_file).save(
        Settings(node=NodeSettings(camera=True, camera_source=str(video)))
    )
    with FakeLLM() as llm:
        write_fake_providers(tmp_path / "gw" / "state", llm.port)
        # What the app allows on the gateway it bundles (camera.snap needs an opt-in).
        gw = BundledGateway.start(root=tmp_path / "gw", args=("--allow", ",".join(EMBEDDED_ALLOW)))
        try:
            app = new_app(gw, node=True)
            app.window.show()
            live: list[QImage] = []

            async def first_window() -> None:
                await app.start()
                node = app.runtime.node
                assert node is not None and node.options.signer is not None
                node_id = node.options.signer.device_id
                client = await RawClient.open(gw.url)
                try:
                    hello = await client.connect(
                        None, auth={"token": gw.token}, scopes=ALL_OPERATOR_SCOPES
                    )
                    assert hello["ok"], hello
                    await approve_camera(client, node_id)
                finally:
                    await client.close()
                chat = app.window.chat
                assert chat is not None
                args = {"node": node_id, "command": "camera.snap", "params": {"maxWidth": 320}}
                chat.composer.setPlainText(
                    f"![pixel](http://127.0.0.1:{port}/p.png) CALLTOOL:node_invoke:"
                    + json.dumps(args)
                )
                QTest.keyClick(chat.composer, Qt.Key.Key_Return)
                try:
                    await until(lambda: shown_pictures(app), "the picture on the tool card", 60)
                except TimeoutError:
                    raise AssertionError(f"no picture: {describe(app)}") from None
                assert app.presenter is not None
                await until(
                    lambda: any(
                        i.role == "assistant"
                        and i.status == "done"
                        and i.text.startswith("FAKE-LLM tool result")
                        for i in app.presenter.timeline.items  # type: ignore[union-attr]
                    ),
                    "the final answer",
                    60,
                )
                await asyncio.sleep(1.0)  # a fetch the rows' rendering started has arrived
                live.extend(shown_pictures(app))
                shot(app.window, screens / "01-tool-image-live.png")
                await app.aclose()

            run_in_qt(qapp, first_window, timeout=120)
            app.window.close()
            assert len(live) == 1, f"{len(live)} pictures on the tool cards"
            check_picture(live[0])
            (card,) = [c for c in tool_cards(app) if c.images]
            assert card.tool is not None and "camera.snap" in card.tool.summary
            assert card.images[0]["mimeType"] == "image/jpeg"
            raw = base64.b64decode(card.images[0]["data"])
            assert raw[:3] == b"\xff\xd8\xff", "the node's JPEG, as it sent it"

            again = new_app(gw, node=True)
            again.window.show()
            reloaded: list[QImage] = []

            async def second_window() -> None:
                await again.start()
                await until(lambda: shown_pictures(again), "the picture after a reload", 30)
                await asyncio.sleep(1.0)
                reloaded.extend(shown_pictures(again))
                shot(again.window, screens / "02-tool-image-after-reload.png")
                history = [c for c in tool_cards(again) if c.images]
                assert [c.images for c in history] == [card.images], "the same image block"
                await again.aclose()

            run_in_qt(qapp, second_window, timeout=60)
            again.window.close()
            assert len(reloaded) == 1
            check_picture(reloaded[0])
            assert reloaded[0] == live[0]
            assert seen == [], f"showing the chat fetched {seen}"
        finally:
            gw.cleanup()
