"""Every control a person (or a screen reader, or a journey) can reach has an accessible name
and role, as Qt's accessibility bridge reports them to AT-SPI; every chat row has text and a
description. The walk covers the main window against our bundled gateway (a real subprocess
on loopback, with the fake model and this computer's node), its menus, and each dialog.

Also here, because they are what the bridge says about controls that cannot work: Dictate
and Talk without a microphone, and the capabilities this computer lacks (no D-Bus
notification service, no camera) in Settings and the tray."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QAbstractItemModel, Qt
from PySide6.QtGui import QAccessible, QColor, QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QHeaderView,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QScrollBar,
    QTabBar,
    QTextEdit,
    QWidget,
)

from openclaw_desktop.node import Availability, CommandSpec, SurfaceEntry
from openclaw_desktop.sdk import Approval
from tests.helpers.alsa_mic import AlsaTestMic, no_input_config
from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.chat_trace import write_fake_providers
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.qt import run_in_qt, screenshot_folder, shot, window_home  # noqa: F401 (autouse)
from tests.ui.test_chat_window import assistant, until
from tests.ui.test_chat_window_more import new_app
from ui.dialogs.approval import ApprovalDialog
from ui.dialogs.pairing import PairingRequestDialog, PairingWaitPanel
from ui.dialogs.settings import SettingsDialog
from ui.dialogs.trust import PinChangedDialog, TrustDialog
from ui.menus import show_about, show_report
from ui.presenters.failure import card_for_error
from ui.widgets.capture import CaptureIndicator
from ui.widgets.composer import ask_send_images
from ui.widgets.connect import ConnectScreen
from ui.widgets.error_card import ErrorCard

pytestmark = pytest.mark.timeout(150)

FP = "7270b9b1eec5fe809163ace8c347501d3c6ee850aeb91b4d4e56c03eb4f1fd6b"
OTHER_FP = "0f" * 32

#: Widgets a person operates (whatever their focus policy says).
INTERACTIVE = (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSlider,
    QAbstractSpinBox,
    QComboBox,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QTabBar,
    QTextEdit,
)


def _is_part_of_another(widget: QWidget) -> bool:
    """Qt's own pieces of a named control (a scroll area's bars, a table's headers and corner
    button, a menu bar's overflow button, a combo box's popup), which the bridge reports as
    parts of that control."""
    if isinstance(widget, QScrollBar | QHeaderView) or widget.objectName().startswith("qt_"):
        return True
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QComboBox):
            return True
        parent = parent.parentWidget()
    return False


def accessible(widget: QWidget) -> tuple[str, QAccessible.Role]:
    """The name and role the accessibility bridge reports for ``widget``."""
    iface = QAccessible.queryAccessibleInterface(widget)
    assert iface is not None and iface.isValid(), f"no accessible interface for {widget!r}"
    return iface.text(QAccessible.Text.Name).strip(), iface.role()


def describe(widget: QWidget) -> str:
    """Where a widget is, for the failure message."""
    path = []
    node: QWidget | None = widget
    while node is not None:
        path.append(f"{type(node).__name__}({node.objectName() or '-'})")
        node = node.parentWidget()
    return " < ".join(path)


def unnamed_controls(root: QWidget) -> list[str]:
    """The focusable or interactive controls under ``root`` that a person can reach (shown)
    and that have no accessible name (or no role); menus' actions without text too."""
    missing = []
    for widget in [root, *root.findChildren(QWidget)]:
        if not widget.isVisibleTo(root) and widget is not root and not isinstance(widget, QMenu):
            continue
        interactive = isinstance(widget, INTERACTIVE)
        focusable = widget.focusPolicy() != Qt.FocusPolicy.NoFocus
        if isinstance(widget, QMenu):
            missing += [
                f"an action without text in {describe(widget)}"
                for action in widget.actions()
                if not action.isSeparator() and not action.text().strip()
            ]
        if not (interactive or focusable) or _is_part_of_another(widget):
            continue
        name, role = accessible(widget)
        if not name or role == QAccessible.Role.NoRole:
            missing.append(describe(widget))
    return missing


def unnamed_rows(model: QAbstractItemModel) -> list[int]:
    """Rows of a list model with no accessible text or no description."""
    bad = []
    for row in range(model.rowCount()):
        index = model.index(row, 0)
        text = index.data(Qt.ItemDataRole.AccessibleTextRole) or index.data()
        description = index.data(Qt.ItemDataRole.AccessibleDescriptionRole)
        if not str(text or "").strip() or not str(description or "").strip():
            bad.append(row)
    return bad


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[BundledGateway, FakeLLM]]:
    """A gateway of its own with the fake model."""
    with FakeLLM() as llm:
        write_fake_providers(tmp_path / "gw" / "state", llm.port)
        gw = BundledGateway.start(root=tmp_path / "gw")
        try:
            yield gw, llm
        finally:
            gw.cleanup()


def sample_approval() -> Approval:
    """An exec approval as the SDK builds it."""
    return Approval(
        id="approval-1",
        run_id="run-1",
        kind="exec",
        summary=None,
        command="ls -la /home/ada/project",
        risk=None,
        decisions=["allow-once", "allow-always", "deny"],
        expires_at=None,
        raw={"agentId": "main", "cwd": "/home/ada/project"},
    )


PAIRING_REQUEST = {
    "requestId": "req-1",
    "deviceId": "d" * 64,
    "displayName": "Ada's phone",
    "platform": "android",
    "role": "operator",
    "scopes": ["operator.read", "operator.write"],
}


class NoBrowser:
    """Finds nothing on the LAN (the walk needs the screen, not discovery)."""

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    def on_change(self, listener: object) -> object:
        return lambda: None


def test_every_control_of_the_window_and_its_dialogs_has_a_name(
    qapp: QApplication,
    served: tuple[BundledGateway, FakeLLM],
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The main window with a conversation (and its menus, the sessions' dialogs, the image
    warning), Settings, pairing, approval, trust, pin change, the connect screen, the error
    card, About and the Doctor report: no unnamed control, no unnamed chat row."""
    gw, _llm = served
    screens = screenshot_folder(tmp_path_factory, "accessibility")
    app = new_app(gw, node=True)
    app.window.show()
    walked: dict[str, list[str]] = {}

    def walk(what: str, root: QWidget) -> None:
        walked[what] = unnamed_controls(root)

    async def scenario() -> None:
        await app.start()
        chat = app.window.chat
        presenter = app.presenter
        assert chat is not None and presenter is not None and app.panel is not None
        await presenter.send("hello, who is there?")
        await until(lambda: assistant(app, "done"), "a reply")
        picture = QImage(20, 20, QImage.Format.Format_RGB32)
        picture.fill(QColor("#264653"))
        assert chat.attachments.add_image(picture)  # a removable chip
        await until(lambda: app.panel is not None and app.panel.list.count() > 0, "sessions")
        chat.flush()
        walk("main window", app.window)
        for menu in app.window.menuBar().findChildren(QMenu):
            walk(f"menu {menu.title()}", menu)
        walk("tray menu", app.tray.menu)
        rows = chat.messages.model()
        assert rows.rowCount() >= 2
        assert unnamed_rows(rows) == []
        first = rows.index(0, 0)
        assert first.data(Qt.ItemDataRole.AccessibleTextRole) == "hello, who is there?"
        assert str(first.data(Qt.ItemDataRole.AccessibleDescriptionRole)).startswith("Your message")
        iface = QAccessible.queryAccessibleInterface(chat.messages)
        assert iface is not None and iface.childCount() >= 2
        cells = [iface.child(i) for i in range(iface.childCount())]
        said = [
            (c.text(QAccessible.Text.Name), c.text(QAccessible.Text.Description)) for c in cells
        ]
        assert ("hello, who is there?", "Your message, sent") in said, said
        assert any(d.startswith("OpenClaw's reply") and n for n, d in said), said
        shot(app.window, screens / "01-window.png")

        rename = app.panel.ask_rename("agent:main:main")
        walk("rename dialog", rename)
        rename.reject()
        delete = app.panel.ask_delete("agent:main:main")
        walk("delete question", delete)
        delete.reject()
        warning = ask_send_images(app.window, "Fake Model", 1, lambda: None)
        walk("image warning", warning)
        warning.reject()

        pair = await app.pair_phone()  # a real setup code from the gateway
        assert pair is not None
        walk("pair a phone", pair)
        pair.reject()
        settings = app.open_settings()
        walk("settings", settings)
        shot(settings, screens / "02-settings.png")
        settings.reject()
        about = show_about(app.window)
        walk("about", about)
        about.reject()
        report = show_report(app.window, "Doctor: what works here", "camera: no camera found")
        walk("doctor report", report)
        report.reject()
        await app.aclose()

    run_in_qt(qapp, scenario)
    app.window.close()

    dialogs: list[tuple[str, QWidget]] = [
        ("pairing request", PairingRequestDialog(PAIRING_REQUEST)),
        ("approval", ApprovalDialog(sample_approval())),
        ("trust", TrustDialog("lab gateway", "192.168.1.10:18789", FP)),
        ("pin changed", PinChangedDialog("lab gateway", "192.168.1.10:18789", FP, OTHER_FP)),
        ("connect screen", ConnectScreen(tmp_path / "known.json", browser_factory=NoBrowser)),
        (
            "error card",
            ErrorCard(card_for_error(ConnectionRefusedError("refused"), bundled=False)),
        ),
    ]
    capture = CaptureIndicator(lambda _prefix: 0)
    capture.report("camera", "camera.snap", True)  # what shows while the agent records
    dialogs += [
        ("waiting for approval", PairingWaitPanel("req-1", "openclaw devices approve req-1")),
        ("capture indicator", capture),
    ]
    for what, dialog in dialogs:
        dialog.show()
        walk(what, dialog)
        dialog.close()
        dialog.deleteLater()
    missing = {what: names for what, names in walked.items() if names}
    assert missing == {}, "controls without an accessible name:\n" + "\n".join(
        f"{what}: {name}" for what, names in missing.items() for name in names
    )
    assert len(walked) >= 18


def entries_without_camera() -> list[SurfaceEntry]:
    """A survey where the camera and the notification service are missing."""
    return [
        SurfaceEntry(
            CommandSpec("camera.snap", "camera"), Availability.no("no camera found"), True
        ),
        SurfaceEntry(
            CommandSpec("system.notify", "system"),
            Availability.no("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)"),
            True,
        ),
        SurfaceEntry(CommandSpec("screen.snapshot", "screen"), Availability.yes(), True),
    ]


def test_capabilities_this_computer_lacks_are_shown_unavailable(
    qapp: QApplication,
    served: tuple[BundledGateway, FakeLLM],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without a D-Bus session (so no notification service) and without a camera, this
    computer's node finds both unavailable; the tray and Settings show them disabled, not
    ticked, with the reason, and saving Settings keeps what the user had chosen."""
    gw, _llm = served
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(Path(gw.root) / "no-runtime-dir"))
    app = new_app(gw, node=True)
    app.window.show()

    async def scenario() -> None:
        await app.start()
        node = app.runtime.node
        assert node is not None
        await until(lambda: node.entries, "the node's survey")
        survey = {e.spec.name: e.availability for e in node.entries}
        assert not survey["system.notify"].available, survey["system.notify"]
        notify = app.tray.capability_actions["node.notifications"]
        assert app.tray.settings.load().node.notifications is True  # the user's choice ...
        assert not notify.isChecked() and not notify.isEnabled()  # ... shown unavailable
        assert notify.toolTip().startswith("Unavailable here: ")
        assert "unavailable" in notify.text()
        settings = app.open_settings()
        box = settings.capabilities["notifications"]
        assert not box.isChecked() and not box.isEnabled()
        assert box.accessibleDescription() == f"Unavailable here: {survey['system.notify'].reason}"
        settings.save()
        assert app.tray.settings.load().node.notifications is True, "the choice is kept"
        if not survey["camera.snap"].available:
            camera = app.tray.capability_actions["node.camera"]
            assert not camera.isEnabled() and not camera.isChecked()
        await app.aclose()

    run_in_qt(qapp, scenario)


def test_a_settings_dialog_of_a_computer_without_camera_or_notifications(
    qapp: QApplication, tmp_path: Path
) -> None:
    """The dialog alone, with a survey lacking both: neither is ticked, both say why."""
    from openclaw_desktop.config import SettingsStore

    store = SettingsStore(tmp_path / "settings.json")
    store.set("node.camera", "on")
    dialog = SettingsDialog(store, entries_without_camera())
    for key, reason in (("camera", "no camera found"), ("notifications", "no D-Bus")):
        box = dialog.capabilities[key]
        assert not box.isChecked() and not box.isEnabled(), key
        assert reason in box.toolTip() and reason in box.accessibleDescription()
    screen = dialog.capabilities["screen"]
    assert screen.isEnabled() and screen.accessibleDescription() == "available here"
    assert unnamed_controls(dialog) == []
    dialog.save()
    assert store.load().node.camera is True
    dialog.deleteLater()


def test_dictate_and_talk_say_why_without_a_microphone(
    qapp: QApplication,
    served: tuple[BundledGateway, FakeLLM],
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """No input device: Dictate and Talk are disabled and their tooltip and accessible
    description give the reason; once a microphone is there they work again."""
    gw, _llm = served
    screens = screenshot_folder(tmp_path_factory, "accessibility")
    app = new_app(gw)
    app.window.show()

    async def scenario() -> None:
        with no_input_config(tmp_path):
            await app.start()
            chat = app.window.chat
            assert chat is not None and chat.dictation is not None
            bar = chat.dictation
            await until(lambda: not bar.mic_button.isEnabled(), "Dictate disabled", 30)
            assert not bar.talk_button.isEnabled()
            for button in (bar.mic_button, bar.talk_button):
                assert button.toolTip().startswith("Unavailable: no microphone")
                assert button.accessibleDescription() == button.toolTip()
            # Push-to-talk says why too, instead of trying a device that is not there.
            chat.composer.setFocus()
            ctrl = Qt.KeyboardModifier.ControlModifier
            QTest.keyPress(chat.composer, Qt.Key.Key_Space, ctrl)
            QTest.keyRelease(chat.composer, Qt.Key.Key_Space, ctrl)
            assert not bar.voice.listening
            assert bar.transcript.text().startswith("Dictation unavailable: no microphone")
            shot(app.window, screens / "03-no-microphone.png")
            await bar.voice.aclose()  # stop the slow re-check; check often below
        with AlsaTestMic(tmp_path):
            bar.voice.watch_microphone(every_s=0.2)
            await until(lambda: bar.mic_button.isEnabled(), "Dictate enabled again", 30)
            assert bar.talk_button.isEnabled()
            assert not bar.mic_button.toolTip().startswith("Unavailable")
            await bar.voice.aclose()
            await asyncio.sleep(0)
        await app.aclose()

    run_in_qt(qapp, scenario)
