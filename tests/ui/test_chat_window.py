"""The desktop window against our bundled gateway (a real subprocess on loopback) with the
fake model: send and stream, a tool card, stop mid-stream, queue and steer. Screenshots of
the window are saved under the folder the test prints."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from openclaw_desktop.chat import ChatItem
from tests.helpers.bundled_gateway import BundledGateway, start_node
from tests.helpers.chat_trace import write_fake_providers
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.qt import run_in_qt, screenshot_folder, shot, window_home  # noqa: F401 (autouse)
from ui.app import DesktopApp
from ui.dialogs import PairingRequestDialog
from ui.presenters.sessions import session_title
from ui.runtime import DesktopRuntime, RuntimeTarget

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BundledGateway]:
    """Our gateway with the fake model, shared by the module."""
    with FakeLLM() as llm:
        root = tmp_path_factory.mktemp("ui-gateway")
        write_fake_providers(root / "state", llm.port)
        gw = BundledGateway.start(root=root)
        try:
            yield gw
        finally:
            gw.cleanup()


@pytest.fixture
def screens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go (printed, so a reviewer can look at them)."""
    return screenshot_folder(tmp_path_factory, "window")


async def until(predicate: Callable[[], object], what: str, timeout: float = 20) -> None:
    """Poll ``predicate`` while the Qt loop runs."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


def pairing_dialog() -> PairingRequestDialog | None:
    """The visible pairing request dialog, if any."""
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, PairingRequestDialog) and widget.isVisible():
            return widget
    return None


def assistant(app: DesktopApp, status: str | None = None) -> list[ChatItem]:
    """The assistant rows of the chat (with ``status``)."""
    assert app.presenter is not None
    return [
        i
        for i in app.presenter.timeline.items
        if i.role == "assistant" and (status is None or i.status == status)
    ]


def test_chat_window_end_to_end(
    qapp: QApplication,
    gateway: BundledGateway,
    screens: Path,
) -> None:
    """Send with Enter, see the reply stream, a tool card, Stop, queue and Steer."""
    from openclaw_desktop.config import AppPaths

    runtime = DesktopRuntime(
        AppPaths.default(), RuntimeTarget(url=gateway.url, token=gateway.token, node=False)
    )
    app = DesktopApp(runtime)
    app.window.show()
    shot(app.window, screens / "01-starting.png")

    async def scenario() -> None:
        await app.start()
        chat = app.window.chat
        assert chat is not None, app.window.placeholder.text()
        # Enter sends; the message appears at once, the reply streams in.
        chat.composer.setPlainText("hello from the window")
        chat.composer.setFocus()
        from PySide6.QtTest import QTest

        QTest.keyClick(chat.composer, Qt.Key.Key_Return)
        assert chat.composer.toPlainText() == ""
        await until(lambda: assistant(app, "done"), "the reply")
        reply = assistant(app, "done")[-1]
        assert reply.text.startswith("FAKE-LLM reply")
        await until(lambda: chat.model.rowCount() == 2, "the rows on screen")
        shot(app.window, screens / "02-chat.png")

        # The pickers: the gateway's models, and a thinking level saved on the session.
        await until(lambda: chat.model_picker.count() > 0, "the model list")
        assert chat.model_picker.currentText() == "fake/fake-model"
        assert app.presenter is not None
        await app.presenter.choose(thinking="high")
        row = await app.runtime.client.sessions.get("main")  # type: ignore[union-attr]
        assert row is not None and row.get("thinkingLevel") == "high"

        # A tool call shows as a card that fills in.
        await app.presenter.send("CALLTOOL:nodes_list:{}")
        await until(
            lambda: any(
                i.tool is not None and i.tool.status == "completed"
                for i in app.presenter.timeline.items  # type: ignore[union-attr]
            ),
            "the tool card",
        )
        await until(lambda: len(assistant(app, "done")) == 2, "the reply after the tool")
        activity = app.activity
        assert activity is not None
        await until(lambda: activity.list.count() >= 2, "the activity rows")
        rows = [activity.list.item(i).text() for i in range(activity.list.count())]
        assert any("✓ done nodes_list" in r for r in rows), rows
        shot(app.window, screens / "03-tool-card.png")

        # Stop mid-stream keeps the partial answer.
        await app.presenter.send("SLOW:150")
        await until(lambda: assistant(app, "streaming"), "streaming")
        assert chat.stop_button.isEnabled()
        QTest.keyClick(chat.composer, Qt.Key.Key_Escape)
        await until(lambda: assistant(app, "aborted"), "the stopped reply")
        assert assistant(app, "aborted")[-1].text
        shot(app.window, screens / "04-stopped.png")

        # A message sent during a run is queued; Steer injects it.
        await app.presenter.send("SLOW:60")
        await until(lambda: assistant(app, "streaming"), "the next reply")
        await app.presenter.send("steer this way")
        assert [i.text for i in app.presenter.timeline.queued] == ["steer this way"]
        assert chat.steer_button.isEnabled()
        shot(app.window, screens / "05-queued.png")
        chat.steer_button.click()
        await until(lambda: not app.presenter.timeline.queued, "the steer")  # type: ignore[union-attr]
        await until(
            lambda: any("steer this way" in i.text for i in assistant(app, "done")),
            "the steered reply",
        )

        # A second session: create, switch, chat, switch back (each keeps its chat).
        sessions = app.sessions
        assert sessions is not None
        main = app.presenter
        key = await sessions.create(label="Second")
        assert key is not None
        second = await app.open_session(key)
        await second.send("hello second")
        await until(
            lambda: any(
                i.role == "assistant" and i.status == "done" for i in second.timeline.items
            ),
            "the second session's reply",
        )
        await until(lambda: "Second" in [session_title(r) for r in sessions.rows], "the sidebar")
        shot(app.window, screens / "06-sessions.png")
        assert await app.open_session("main") is main
        # Pair a phone: the gateway's one-time setup code as a QR code.
        dialog = await app.pair_phone()
        assert dialog is not None and dialog.qr.pixmap() is not None
        assert not dialog.qr.pixmap().isNull()
        assert dialog.code.text()
        assert "only listens on this computer" in dialog.details.text()
        dialog.grab().save(str(screens / "07-pair-phone.png"))
        dialog.close()
        # The tray follows the work (its icon is optional on a desktop without a tray).
        assert "chat: connected" in app.tray.icon.toolTip()

        # Another device asks to pair (a node's command surface): the window asks the user.
        node = start_node(gateway.url, shared_token=gateway.token)
        try:
            await until(lambda: pairing_dialog() is not None, "the pairing dialog")
            request_dialog = pairing_dialog()
            assert request_dialog is not None
            from PySide6.QtWidgets import QLabel

            texts = " ".join(label.text() for label in request_dialog.findChildren(QLabel))
            assert "test-node" in texts and "system.notify" in texts
            request_dialog.grab().save(str(screens / "08-pairing-request.png"))
            request_dialog.approve_button.click()
            await until(node.surface_resolved, "the node approved from the window")
        finally:
            await node.aclose()
        assert len(main.timeline.items) > len(second.timeline.items)
        await app.aclose()

    run_in_qt(qapp, scenario)
    assert sorted(p.name for p in screens.glob("0*.png"))[:8] == [
        "01-starting.png",
        "02-chat.png",
        "03-tool-card.png",
        "04-stopped.png",
        "05-queued.png",
        "06-sessions.png",
        "07-pair-phone.png",
        "08-pairing-request.png",
    ]


def test_first_run_connect_screen_leads_to_the_chat(
    qapp: QApplication,
    gateway: BundledGateway,
    screens: Path,
) -> None:
    """First run: the connect screen; choosing a gateway connects and shows the chat, and
    forgetting a known gateway removes its stored secrets."""
    from openclaw_desktop.config import AppPaths
    from ui.widgets.connect import ConnectScreen

    paths = AppPaths.default()
    app = DesktopApp(DesktopRuntime(paths, RuntimeTarget(node=False)))
    app.window.show()

    async def scenario() -> None:
        choosing = asyncio.ensure_future(app.choose_gateway())
        await until(
            lambda: isinstance(app.window.stack.currentWidget(), ConnectScreen), "the screen"
        )
        screen = app.window.stack.currentWidget()
        assert isinstance(screen, ConnectScreen)
        shot(app.window, screens / "09-connect-screen.png")
        screen.chosen.emit(RuntimeTarget(url=gateway.url, token=gateway.token, node=False))
        await asyncio.wait_for(choosing, 30)
        assert app.window.chat is not None
        assert app.runtime.client is not None
        assert app.runtime.client.connection.endpoint.display.endswith(str(gateway.port))
        await app.aclose()

    run_in_qt(qapp, scenario)
