"""More of the desktop window against our bundled gateway (a real subprocess on loopback)
with the fake model: attachments by picker, paste and drop; the history merged without
duplicates after the gateway restarts; the tray's "Pause node"; dark mode."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QColor, QDropEvent, QImage, QPalette
from PySide6.QtWidgets import QApplication

from openclaw_desktop.transport import ConnectionState, ConnectionStatus
from tests.helpers.bundled_gateway import ALL_OPERATOR_SCOPES as ALL_SCOPES
from tests.helpers.bundled_gateway import BundledGateway, RawClient, raw_operator
from tests.helpers.chat_trace import write_fake_providers
from tests.helpers.dbus_notifications import NotificationServer
from tests.helpers.desktop_session import dbus_session_fixture  # noqa: F401 - dbus_session
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.qt import run_in_qt, screenshot_folder, shot, window_home  # noqa: F401 (autouse)
from tests.ui.test_chat_window import assistant, until
from ui.app import DesktopApp
from ui.runtime import DesktopRuntime, RuntimeTarget
from ui.theme import apply_theme

pytestmark = pytest.mark.timeout(150)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[BundledGateway, FakeLLM]]:
    """A gateway of its own (this module restarts it) with the fake model."""
    with FakeLLM() as llm:
        write_fake_providers(tmp_path / "gw" / "state", llm.port)
        gw = BundledGateway.start(root=tmp_path / "gw")
        try:
            yield gw, llm
        finally:
            gw.cleanup()


def new_app(gw: BundledGateway, *, node: bool = False) -> DesktopApp:
    """The window on ``gw`` (without this computer's node unless asked)."""
    from openclaw_desktop.config import AppPaths

    target = RuntimeTarget(url=gw.url, token=gw.token, node=node)
    return DesktopApp(DesktopRuntime(AppPaths.default(), target))


def test_attachments_by_picker_paste_and_drop(
    qapp: QApplication,
    served: tuple[BundledGateway, FakeLLM],
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Files and a pasted image go out with the message, within the gateway's policy; a
    too-big file is refused with a reason and the rest is kept."""
    gw, llm = served
    screens = screenshot_folder(tmp_path_factory, "window-more")
    notes = tmp_path / "notes.txt"
    notes.write_text("the secret word is heliotrope\n", encoding="utf-8")
    dropped = tmp_path / "dropped.md"
    dropped.write_text("# dropped\n", encoding="utf-8")
    huge = tmp_path / "huge.bin"
    huge.write_bytes(b"\0" * 19_500_000)
    app = new_app(gw)
    app.window.show()

    async def scenario() -> None:
        await app.start()
        chat = app.window.chat
        assert chat is not None
        # The picker's path and a refused file: the refusal is shown, the good file kept.
        assert chat.attachments.add_paths([notes, huge]) == 1
        assert "huge.bin" in chat.attach_error.text() and chat.attach_error.isVisible()
        # Pasting an image attaches it instead of inserting text.
        picture = QImage(64, 48, QImage.Format.Format_RGB32)
        picture.fill(QColor("#2a9d8f"))
        pasted = QMimeData()
        pasted.setImageData(picture)
        assert chat.composer.canInsertFromMimeData(pasted)
        chat.composer.insertFromMimeData(pasted)
        # Dropping a file on the pane attaches it.
        drop_data = QMimeData()
        drop_data.setUrls([QUrl.fromLocalFile(str(dropped))])
        drop = QDropEvent(
            QPointF(10, 10),
            Qt.DropAction.CopyAction,
            drop_data,
            Qt.MouseButton.LeftButton,
            Qt.KeyboardModifier.NoModifier,
        )
        chat.dropEvent(drop)
        labels = chat.attachments.labels()
        assert [label.split(" ")[0] for label in labels] == [
            "notes.txt",
            "pasted-image.png",
            "dropped.md",
        ]
        assert chat.composer.toPlainText() == ""
        shot(app.window, screens / "01-attachments.png")
        chat.composer.setPlainText("what is the secret word?")
        chat.send_button.click()
        # The fake model reads text only: the image is warned about first.
        warning = chat.image_warning
        assert warning is not None and warning.isVisible()
        next(b for b in warning.buttons() if b.text() == "Send anyway").click()
        assert chat.attachments.items == [] and not chat.attachments.isVisible()
        await until(lambda: assistant(app, "done"), "the reply")
        prompt = json.dumps(llm.bodies("/chat/completions")[-1]["messages"])
        assert "heliotrope" in prompt and "dropped.md" in prompt
        presenter = app.presenter
        assert presenter is not None
        mine = [i for i in presenter.timeline.items if i.role == "user"][-1]
        assert len(mine.images) == 1 and [f.split(" ")[0] for f in mine.files] == [
            "notes.txt",
            "dropped.md",
        ]
        # The history brings the same message back once, with its image and files.
        await presenter.reload()
        users = [i for i in presenter.timeline.items if i.role == "user"]
        assert len(users) == 1 and len(users[0].images) == 1
        assert [f.split(" ")[0] for f in users[0].files] == ["notes.txt", "dropped.md"]
        shot(app.window, screens / "02-sent-attachments.png")
        await app.aclose()

    run_in_qt(qapp, scenario)


def test_history_merges_after_a_gateway_restart(
    qapp: QApplication, served: tuple[BundledGateway, FakeLLM]
) -> None:
    """The gateway restarts; the window reconnects by itself, merges chat.history (with a
    note added while it was away), sends what was typed meanwhile, and shows every message
    exactly once."""
    gw, _llm = served
    app = new_app(gw)
    app.window.show()
    statuses: list[ConnectionStatus] = []

    async def scenario() -> None:
        await app.start()
        client = app.runtime.client
        presenter = app.presenter
        assert client is not None and presenter is not None
        client.connection.on_status(statuses.append)
        await presenter.send("before the restart")
        await until(lambda: assistant(app, "done"), "the first reply")
        before = [i.key for i in presenter.timeline.items]

        await asyncio.to_thread(gw.stop)
        # Wait until the client is in a long backoff, so the note below is added while it
        # is away (not seen live).
        await until(
            lambda: any(
                s.state is not ConnectionState.CONNECTED and (s.retry_in_s or 0) >= 4
                for s in statuses
            ),
            "a long reconnect backoff",
            timeout=40,
        )
        away = await presenter.send("typed while away")
        assert away is not None
        waiting = presenter.timeline.get(f"{away}:user")
        assert waiting is not None and waiting.status == "waiting"
        # The gateway comes back offering one more model: the picker shows it.
        providers = gw.state_dir / "providers.json"
        config = json.loads(providers.read_text("utf-8"))
        config["providers"]["fake"]["models"].append({"id": "second-model", "name": "Second"})
        providers.write_text(json.dumps(config), "utf-8")
        await asyncio.to_thread(gw.restart)
        async with raw_operator(gw.url, auth={"token": gw.token}) as raw:
            await raw.ok("chat.inject", {"sessionKey": "main", "message": "added while away"})
        await until(
            lambda: any("added while away" in i.text for i in presenter.timeline.items),
            "the merged history",
            timeout=40,
        )
        # What was typed while away went out once the gateway was back.
        await until(lambda: len(assistant(app, "done")) == 2, "the reply to the waiting message")
        await until(lambda: "fake/second-model" in presenter.models, "the models asked again")
        view = app.window.chat
        assert view is not None
        shown = [view.model_picker.itemText(i) for i in range(view.model_picker.count())]
        assert "fake/second-model" in shown
        keys = [i.key for i in presenter.timeline.items]
        assert len(keys) == len(set(keys)), "no message twice"
        assert keys[: len(before)] == before
        assert [i.text for i in presenter.timeline.items if i.role == "user"] == [
            "before the restart",
            "typed while away",
        ]
        # The note said while away is gone once the chat is back (the status bar would
        # otherwise still say "the chat resumes when back").
        assert "resumes when back" not in app.window.statusBar().currentMessage()
        # The chat works again after the restart.
        await presenter.send("after the restart")
        await until(lambda: len(assistant(app, "done")) == 3, "the reply after the restart")
        await app.aclose()

    run_in_qt(qapp, scenario, timeout=120)


def paused_runtime(runtime: DesktopRuntime) -> bool:
    """Whether the runtime has no node because the user paused it."""
    return runtime.node is None and runtime.node_paused


def test_tray_pause_node_disconnects_and_resumes(
    qapp: QApplication,
    served: tuple[BundledGateway, FakeLLM],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """ "Pause node" takes this computer off the gateway (the chat stays); unpausing brings
    it back. The window in dark mode is saved for review."""
    gw, _llm = served
    app = new_app(gw, node=True)
    app.window.show()
    screens = screenshot_folder(tmp_path_factory, "window-more")

    async def node_connected() -> bool:
        client = app.runtime.client
        assert client is not None
        nodes = await client.nodes.list()
        return any(n.get("connected") for n in nodes)

    async def wait_node(expected: bool) -> None:
        async with asyncio.timeout(30):
            while await node_connected() is not expected:
                await asyncio.sleep(0.1)

    async def scenario() -> None:
        await app.start()
        assert app.runtime.node is not None
        await wait_node(True)
        app.tray.pause_action.setChecked(True)
        await wait_node(False)
        assert paused_runtime(app.runtime) and "paused" in app.tray.icon.toolTip()
        assert app.window.node_status.text() == "node: paused"
        assert app.runtime.client is not None
        assert app.runtime.client.connection.status.state is ConnectionState.CONNECTED
        app.tray.pause_action.setChecked(False)
        await wait_node(True)
        assert app.runtime.node is not None
        presenter = app.presenter
        assert presenter is not None
        await presenter.send("In dark mode:\n\n```python\ndef hello():\n    return 'hi'  # ok\n```")
        await until(lambda: assistant(app, "done"), "a reply to show")
        try:
            apply_theme(qapp, "dark")
            await until(
                lambda: app.window.palette().color(QPalette.ColorRole.Window).lightness() < 128,
                "the window repainted dark",
            )
            shot(app.window, screens / "03-dark-mode.png")
        finally:
            apply_theme(qapp, "light")
        await app.aclose()

    run_in_qt(qapp, scenario)


def test_waiting_for_pairing_approval_then_continuing(
    qapp: QApplication, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """On a gateway that does not approve this computer by itself, the window shows the
    request id and the approve commands, and opens the chat by itself once approved."""
    screens = screenshot_folder(tmp_path_factory, "window-more")
    with FakeLLM() as llm:
        write_fake_providers(tmp_path / "manual" / "state", llm.port)
        gw = BundledGateway.start(root=tmp_path / "manual", args=["--manual-pairing"])
        try:
            app = new_app(gw)
            app.window.show()

            async def scenario() -> None:
                starting = asyncio.ensure_future(app.start())
                await until(lambda: app.wait_panel is not None, "the waiting panel", 30)
                panel = app.wait_panel
                assert panel is not None and app.window.stack.currentWidget() is panel
                rid = panel.request_id
                assert panel.command_field.text() == f"openclaw devices approve {rid}"
                assert f"openclaw-desktop devices approve {rid}" in panel.desktop_hint.text()
                assert "waiting for approval" in app.tray.icon.toolTip()
                shot(app.window, screens / "04-waiting-for-approval.png")
                admin = await RawClient.open(gw.url)  # deviceless: loopback + shared token
                try:
                    res = await admin.connect(None, auth={"token": gw.token}, scopes=ALL_SCOPES)
                    assert res["ok"], res
                    await admin.ok("device.pair.approve", {"requestId": rid})
                finally:
                    await admin.close()
                await asyncio.wait_for(starting, 60)
                assert app.window.chat is not None
                assert app.window.stack.currentWidget() is app.window.chat
                await app.aclose()

            run_in_qt(qapp, scenario)
        finally:
            gw.cleanup()


def test_a_reply_finished_while_hidden_is_notified(
    qapp: QApplication, served: tuple[BundledGateway, FakeLLM], dbus_session: str
) -> None:
    """Window hidden, no tray: the reply's first words arrive as a desktop notification over
    a real session bus; with ``ui.notify_replies`` off, nothing is sent."""
    gw, _llm = served
    app = new_app(gw)  # never shown: like a window closed to the tray

    async def scenario() -> None:
        async with NotificationServer.running(dbus_session) as server:
            await app.start()
            presenter = app.presenter
            assert presenter is not None and not app.tray.available()
            await presenter.send("ping while hidden")
            await until(lambda: server.received, "the notification")
            (notice,) = server.received
            assert notice.summary == "OpenClaw: the reply is ready"
            assert notice.body.startswith("FAKE-LLM reply")
            from openclaw_desktop.config import SettingsStore

            SettingsStore(app.runtime.paths.settings_file).set("ui.notify_replies", "off")
            await presenter.send("ping again")
            await until(lambda: len(assistant(app, "done")) == 2, "the second reply")
            await asyncio.sleep(0.5)
            assert len(server.received) == 1
            await app.aclose()

    run_in_qt(qapp, scenario)


def test_each_queued_message_can_be_steered_and_scrolling_up_is_respected(
    qapp: QApplication, served: tuple[BundledGateway, FakeLLM]
) -> None:
    """Two messages queued during a run: double-clicking the second steers that one (the
    first stays queued). A user who scrolled up to read is not pulled down by the stream."""
    gw, _llm = served
    app = new_app(gw)
    app.window.show()

    async def scenario() -> None:
        await app.start()
        chat, presenter = app.window.chat, app.presenter
        assert chat is not None and presenter is not None
        for n in range(12):  # enough rows to scroll
            await presenter.send(f"filler {n}")
            await until(lambda: not presenter.timeline.active_run, "a filler reply")
        assert len(assistant(app, "done")) == 12
        await presenter.send("SLOW:120")
        await until(lambda: assistant(app, "streaming"), "the slow reply")
        first = await presenter.send("first queued")
        second = await presenter.send("second queued")
        chat.flush()
        rows = [i.run_id for i in presenter.timeline.items]
        chat.messages.doubleClicked.emit(chat.model.index(rows.index(second)))
        await until(lambda: presenter.timeline.get(f"{second}:user").status != "queued", "steer")  # type: ignore[union-attr]
        assert [i.run_id for i in presenter.timeline.queued] == [first]
        bar = chat.messages.verticalScrollBar()
        chat.flush()
        assert bar.maximum() > 0
        bar.setValue(0)  # the user scrolls up to read
        await asyncio.sleep(0.5)  # the stream goes on
        assert bar.value() == 0
        await until(lambda: not presenter.timeline.queued, "the queue drained", 60)
        await app.aclose()

    run_in_qt(qapp, scenario)


def test_a_pairing_link_fills_the_connect_screen_and_never_connects_by_itself(
    qapp: QApplication, tmp_path: Path
) -> None:
    """openclaw://pair?code=…: the connect screen opens with the code decoded; a second
    link (another launch) replaces it on the screen already showing; nothing connects."""
    from openclaw_desktop.config import AppPaths
    from openclaw_desktop.discovery import encode_setup_code
    from openclaw_desktop.links import parse_link
    from ui.widgets.connect import ConnectScreen

    def link(host: str) -> str:
        code = encode_setup_code({"url": f"ws://{host}:18789", "bootstrapToken": "b" * 43})
        return f"openclaw://pair?code={code}"

    app = DesktopApp(DesktopRuntime(AppPaths.default(), RuntimeTarget(node=False)))
    app.window.show()

    async def scenario() -> None:
        app.open_pair_link(parse_link(link("192.168.1.20")))
        await until(lambda: app.connect_screen is not None, "the connect screen")
        screen = app.connect_screen
        assert isinstance(screen, ConnectScreen)
        assert screen.setup_result.text() == "Gateway: ws://192.168.1.20:18789"
        assert screen.connect_code.isEnabled() and screen.connect_code.hasFocus()
        app.open_pair_link(parse_link(link("192.168.1.30")))
        assert app.connect_screen is screen
        assert screen.setup_result.text() == "Gateway: ws://192.168.1.30:18789"
        await asyncio.sleep(0.3)
        assert app.runtime.client is None, "a link never connects by itself"
        await app.aclose()
        assert app.connect_screen is None

    run_in_qt(qapp, scenario)
