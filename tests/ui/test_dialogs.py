"""The trust, approval and pairing dialogs (offscreen): default buttons, Escape, results,
what they show and hide, and the ``ask_*`` adapters on a real qasync loop. Screenshots of
every dialog are saved under the folder the ``screens`` fixture prints."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import shiboken6
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QFont, QFontDatabase, QFontInfo, QGuiApplication, QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QLabel, QWidget
from pytestqt.qtbot import QtBot

from openclaw_desktop.sdk import Approval
from openclaw_desktop.trust import TrustPrompt, format_fingerprint
from tests.helpers.qt import run_in_qt, screenshot_folder
from ui.dialogs import (
    ApprovalDialog,
    PairingRequestDialog,
    PairingWaitPanel,
    PinChangedDialog,
    TrustDialog,
    ask_approval,
    ask_trust,
)

pytestmark = pytest.mark.timeout(60)

FP = hashlib.sha256(b"the gateway certificate").hexdigest()
OTHER = hashlib.sha256(b"somebody else's certificate").hexdigest()
SECRET = "abcdefghijklmnop1234"
W = TypeVar("W", bound=QWidget)


@pytest.fixture(scope="module")
def screens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go (printed, so a reviewer can look at them)."""
    return screenshot_folder(tmp_path_factory, "dialogs")


@pytest.fixture
def clipboard(qapp: QApplication) -> Iterator[None]:
    """An empty clipboard, emptied again afterwards."""
    QGuiApplication.clipboard().clear()
    yield
    QGuiApplication.clipboard().clear()


def shown(qtbot: QtBot, widget: W) -> W:
    """Show ``widget`` and wait until it is on screen (closed after the test)."""
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def snap(widget: QWidget, screens: Path, name: str) -> None:
    """Save a screenshot of ``widget``."""
    path = screens / f"{name}.png"
    assert widget.grab().save(str(path)), path
    assert path.stat().st_size > 0


def texts(widget: QWidget) -> str:
    """All label texts of ``widget`` and its children, one per line."""
    return "\n".join(label.text() for label in widget.findChildren(QLabel))


def monospaced(widget: QWidget) -> bool:
    """Whether the widget's font advances a narrow and a wide glyph the same width (what a
    fingerprint or a command needs; Qt's fixedPitch flag is wrong for some monospace fonts,
    such as Noto Sans Mono)."""
    metrics = widget.fontMetrics()
    return metrics.horizontalAdvance("i") == metrics.horizontalAdvance("W") > 0


def is_warning_red(label: QLabel) -> bool:
    colour = label.palette().color(QPalette.ColorRole.WindowText)
    return colour.red() > 150 and colour.green() < 100 and colour.blue() < 100


def approval(**changes: Any) -> Approval:
    """An exec approval like the SDK builds it."""
    fields: dict[str, Any] = {
        "id": "approval-1",
        "run_id": "run-1",
        "kind": "exec",
        "summary": None,
        "command": f'curl -H "Authorization: Bearer {SECRET}" https://example.test/api',
        "risk": None,
        "decisions": ["allow-once", "allow-always", "deny"],
        "expires_at": None,
        "raw": {"agentId": "main", "cwd": "/home/ada/project"},
    }
    fields.update(changes)
    return Approval(**fields)


DEVICE_REQUEST: dict[str, Any] = {
    "requestId": "req-7f3a",
    "deviceId": "dev-1",
    "publicKey": "key",
    "displayName": "Ada's laptop\x1b[31m",
    "platform": "linux",
    "deviceFamily": "desktop",
    "clientId": "openclaw-desktop",
    "clientMode": "ui",
    "role": "operator",
    "roles": ["operator"],
    "scopes": ["operator.read", "operator.write", "operator.admin"],
    "remoteIp": "192.168.1.23",
    "silent": False,
    "isRepair": False,
    "ts": 0,
}
NODE_REQUEST: dict[str, Any] = {
    "requestId": "node-req-2",
    "nodeId": "node-1",
    "displayName": "Build box",
    "platform": "linux",
    "caps": ["camera", "system"],
    "commands": ["camera.snap", "system.run", "system.notify"],
    "remoteIp": "10.0.0.5",
    "ts": 0,
}


# ---------------------------------------------------------------- TLS trust
def test_trust_dialog_shows_the_grouped_fingerprint_and_how_to_verify_it(
    qtbot: QtBot, screens: Path
) -> None:
    dialog = shown(qtbot, TrustDialog("lab gateway", "192.168.1.10:18789", FP))
    assert dialog.fingerprint_label.text() == format_fingerprint(FP)
    assert dialog.fingerprint_label.text().split("\n")[0].count(" ") == 7  # 8 groups a line
    assert monospaced(dialog.fingerprint_label)
    flags = dialog.fingerprint_label.textInteractionFlags()
    assert flags & Qt.TextInteractionFlag.TextSelectableByMouse
    assert dialog.name_label.text() == "lab gateway"
    assert dialog.address_label.text() == "192.168.1.10:18789"
    shown_text = texts(dialog)
    assert "openclaw-desktop gateway run" in shown_text
    assert "openclaw gateway status" in shown_text
    assert dialog.hint_label.isHidden()  # no hint, no hint line
    snap(dialog, screens, "01-trust")


def test_trust_dialog_defaults_to_cancel(qtbot: QtBot) -> None:
    dialog = shown(qtbot, TrustDialog("gw", "gw.example:443", FP))
    assert dialog.cancel_button.isDefault()
    assert not dialog.trust_button.isDefault()
    assert not dialog.trust_button.autoDefault()
    assert dialog.focusWidget() is dialog.cancel_button
    # Enter on the focused Trust button still goes to the default button: Cancel.
    dialog.trust_button.setFocus()
    QTest.keyClick(dialog.trust_button, Qt.Key.Key_Return)
    assert dialog.result() == QDialog.DialogCode.Rejected
    assert not dialog.isVisible()
    assert dialog.result_trusted is False


def test_trust_dialog_escape_cancels(qtbot: QtBot) -> None:
    dialog = shown(qtbot, TrustDialog("gw", "gw.example:443", FP, hint=FP))
    QTest.keyClick(dialog, Qt.Key.Key_Escape)
    assert not dialog.isVisible()
    assert dialog.result() == QDialog.DialogCode.Rejected
    assert dialog.result_trusted is False  # a matching hint trusts nothing


def test_trust_dialog_results(qtbot: QtBot) -> None:
    trusting = shown(qtbot, TrustDialog("gw", "gw.example:443", FP))
    trusting.trust_button.click()
    assert trusting.result_trusted is True
    assert trusting.result() == QDialog.DialogCode.Accepted
    cancelling = shown(qtbot, TrustDialog("gw", "gw.example:443", FP))
    cancelling.cancel_button.click()
    assert cancelling.result_trusted is False


def test_trust_dialog_hint_is_only_a_hint(qtbot: QtBot, screens: Path) -> None:
    matching = shown(qtbot, TrustDialog("gw", "gw.local:18789", FP, hint=FP.upper()))
    assert not matching.hint_label.isHidden()
    assert "Advertised on the LAN: matches" in matching.hint_label.text()
    assert "not proof" in matching.hint_label.text()
    assert not is_warning_red(matching.hint_label)

    other = shown(qtbot, TrustDialog("gw", "gw.local:18789", FP, hint=OTHER))
    assert "Advertised on the LAN: does not match" in other.hint_label.text()
    assert is_warning_red(other.hint_label)
    assert other.cancel_button.isDefault()
    snap(other, screens, "02-trust-hint-mismatch")

    bogus = shown(qtbot, TrustDialog("gw", "gw.local:18789", FP, hint="not-a-fingerprint"))
    assert "not a valid fingerprint" in bogus.hint_label.text()


def test_trust_dialog_shows_network_names_as_plain_text(qtbot: QtBot) -> None:
    dialog = shown(qtbot, TrustDialog("<b>evil</b>\u202egw", "gw:1", FP))
    assert dialog.name_label.textFormat() == Qt.TextFormat.PlainText
    assert dialog.name_label.text() == "<b>evil</b>gw"  # bidi override stripped


def test_pin_changed_dialog_needs_the_checkbox_before_replacing(
    qtbot: QtBot, screens: Path
) -> None:
    dialog = shown(qtbot, PinChangedDialog("lab gateway", "192.168.1.10:18789", FP, OTHER))
    assert dialog.title_label.text() == "The gateway's certificate changed"
    assert is_warning_red(dialog.title_label)
    assert dialog.icon_label.pixmap() is not None
    assert not dialog.icon_label.pixmap().isNull()
    assert dialog.old_label.text() == format_fingerprint(FP)
    assert dialog.new_label.text() == format_fingerprint(OTHER)
    assert "intercept" in texts(dialog)
    assert "reinstalled" in texts(dialog)
    assert dialog.keep_button.isDefault()
    assert not dialog.replace_button.isEnabled()
    snap(dialog, screens, "03-pin-changed")

    dialog.replace_button.click()  # disabled: nothing happens
    assert dialog.isVisible()
    assert dialog.result() != QDialog.DialogCode.Accepted
    dialog.verified_box.setChecked(True)
    assert dialog.replace_button.isEnabled()
    dialog.verified_box.setChecked(False)
    assert not dialog.replace_button.isEnabled()
    box = dialog.verified_box
    QTest.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))
    assert dialog.verified_box.isChecked()
    assert dialog.replace_button.isEnabled()
    snap(dialog, screens, "04-pin-changed-verified")
    dialog.replace_button.click()
    assert dialog.result_replace is True
    assert dialog.result() == QDialog.DialogCode.Accepted


def test_pin_changed_dialog_keeps_refusing_by_default(qtbot: QtBot) -> None:
    escaped = shown(qtbot, PinChangedDialog("gw", "gw:1", FP, OTHER))
    escaped.verified_box.setChecked(True)  # even when ticked, Escape refuses
    QTest.keyClick(escaped, Qt.Key.Key_Escape)
    assert not escaped.isVisible()
    assert escaped.result_replace is False

    entered = shown(qtbot, PinChangedDialog("gw", "gw:1", FP, OTHER))
    entered.verified_box.setChecked(True)
    QTest.keyClick(entered.replace_button, Qt.Key.Key_Return)
    assert entered.result() == QDialog.DialogCode.Rejected
    assert entered.result_replace is False


# ---------------------------------------------------------------- exec approval
def test_approval_dialog_shows_the_command_redacted_and_stripped(
    qtbot: QtBot, screens: Path
) -> None:
    item = approval(
        command=f'\x1b[31mcurl\x1b[0m -H "Authorization: Bearer {SECRET}" https://example.test',
        summary="Fetch the API status",
        expires_at=int((time.time() + 300) * 1000),
    )
    dialog = shown(qtbot, ApprovalDialog(item))
    assert dialog.windowTitle() == "Allow command?"
    command = dialog.command_view.toPlainText()
    assert "[redacted]" in command
    assert SECRET not in command
    assert "\x1b" not in command
    assert "[31m" not in command
    assert command.startswith('curl -H "Authorization: Bearer [redacted]"')
    assert dialog.command_view.isReadOnly()
    assert monospaced(dialog.command_view)
    assert SECRET not in texts(dialog)
    assert dialog.agent_label.text() == "main"
    assert dialog.cwd_label.text() == "/home/ada/project"
    assert dialog.expiry_label.text().startswith("Expires in 4:")
    assert not dialog.allow_always_button.isHidden()
    snap(dialog, screens, "05-approval")


def test_approval_dialog_reads_the_run_plan(qtbot: QtBot) -> None:
    item = approval(
        command=None,
        raw={"agentId": "ops", "systemRunPlan": {"cwd": "/srv/app", "argv": ["ls", "-la", "a b"]}},
    )
    dialog = shown(qtbot, ApprovalDialog(item))
    assert dialog.cwd_label.text() == "/srv/app"
    assert dialog.agent_label.text() == "ops"
    assert dialog.command_view.toPlainText() == "ls -la 'a b'"
    assert dialog.expiry_label.isHidden()


def test_approval_dialog_hides_allow_always_when_not_offered(qtbot: QtBot, screens: Path) -> None:
    dialog = shown(qtbot, ApprovalDialog(approval(decisions=["allow-once", "deny"])))
    assert dialog.allow_always_button.isHidden()
    assert not dialog.allow_once_button.isHidden()
    assert not dialog.deny_button.isHidden()
    snap(dialog, screens, "06-approval-once-only")


def test_approval_dialog_defaults_to_deny_and_escape_defers(qtbot: QtBot) -> None:
    escaped = shown(qtbot, ApprovalDialog(approval()))
    assert escaped.deny_button.isDefault()
    assert not escaped.allow_once_button.autoDefault()
    assert not escaped.allow_always_button.autoDefault()
    QTest.keyClick(escaped, Qt.Key.Key_Escape)
    assert not escaped.isVisible()
    assert escaped.decision is None

    entered = shown(qtbot, ApprovalDialog(approval()))
    entered.allow_once_button.setFocus()
    QTest.keyClick(entered.allow_once_button, Qt.Key.Key_Return)
    assert entered.decision == "deny"


@pytest.mark.parametrize(
    ("button", "decision"),
    [
        ("allow_once_button", "allow-once"),
        ("allow_always_button", "allow-always"),
        ("deny_button", "deny"),
    ],
)
def test_approval_dialog_decisions(qtbot: QtBot, button: str, decision: str) -> None:
    dialog = shown(qtbot, ApprovalDialog(approval()))
    getattr(dialog, button).click()
    assert dialog.decision == decision
    assert not dialog.isVisible()


def test_approval_dialog_counts_down_and_expires(qtbot: QtBot, screens: Path) -> None:
    now = [1_800_000_000.0]
    item = approval(expires_at=int((now[0] + 125) * 1000))
    dialog = shown(qtbot, ApprovalDialog(item, clock=lambda: now[0]))
    assert dialog.expiry_label.text() == "Expires in 2:05"
    now[0] += 65
    dialog.update_countdown()
    assert dialog.expiry_label.text() == "Expires in 1:00"
    assert dialog.allow_once_button.isEnabled()
    now[0] += 60
    dialog.update_countdown()
    assert dialog.expired
    assert dialog.expiry_label.text().startswith("Expired")
    assert not dialog.allow_once_button.isEnabled()
    assert not dialog.allow_always_button.isEnabled()
    assert dialog.deny_button.isEnabled()
    snap(dialog, screens, "07-approval-expired")


def test_approval_dialog_timer_ticks(qtbot: QtBot) -> None:
    item = approval(expires_at=int((time.time() + 1.2) * 1000))
    dialog = shown(qtbot, ApprovalDialog(item))
    assert dialog.expiry_label.text().startswith("Expires in 0:0")
    qtbot.waitUntil(lambda: dialog.expiry_label.text().startswith("Expired"), timeout=5000)
    assert not dialog.allow_once_button.isEnabled()


# ---------------------------------------------------------------- pairing
def test_pairing_dialog_highlights_admin_scopes(qtbot: QtBot, screens: Path) -> None:
    dialog = shown(qtbot, PairingRequestDialog(DEVICE_REQUEST))
    assert dialog.title_label.text() == "Approve Ada's laptop?"
    assert dialog.highlighted_scopes == ["operator.admin"]
    admin = dialog.scope_labels["operator.admin"]
    read = dialog.scope_labels["operator.read"]
    assert is_warning_red(admin)
    assert admin.font().bold()
    assert not is_warning_red(read)
    assert not read.font().bold()
    shown_text = texts(dialog)
    for value in ("linux · desktop", "192.168.1.23", "operator", "req-7f3a", "openclaw-desktop"):
        assert value in shown_text
    assert "\x1b" not in shown_text
    assert dialog.commands_label is None
    snap(dialog, screens, "08-pairing-device")


def test_pairing_dialog_lists_node_commands(qtbot: QtBot, screens: Path) -> None:
    dialog = shown(qtbot, PairingRequestDialog(NODE_REQUEST))
    assert dialog.title_label.text() == "Approve Build box?"
    assert dialog.is_node
    assert dialog.commands_label is not None
    assert dialog.commands_label.text() == "camera.snap, system.run, system.notify"
    assert dialog.highlighted_scopes == []
    snap(dialog, screens, "09-pairing-node")


def test_pairing_dialog_defaults_to_later(qtbot: QtBot) -> None:
    escaped = shown(qtbot, PairingRequestDialog(DEVICE_REQUEST))
    assert escaped.later_button.isDefault()
    QTest.keyClick(escaped, Qt.Key.Key_Escape)
    assert not escaped.isVisible()
    assert escaped.decision is None

    entered = shown(qtbot, PairingRequestDialog(DEVICE_REQUEST))
    entered.approve_button.setFocus()
    QTest.keyClick(entered.approve_button, Qt.Key.Key_Return)
    assert entered.decision is None

    approving = shown(qtbot, PairingRequestDialog(DEVICE_REQUEST))
    approving.approve_button.click()
    assert approving.decision == "approve"
    rejecting = shown(qtbot, PairingRequestDialog({"requestId": "r", "scopes": "junk"}))
    assert rejecting.title_label.text() == "Approve a new device?"
    rejecting.reject_button.click()
    assert rejecting.decision == "reject"


def test_pairing_wait_panel_copies_the_command(
    qtbot: QtBot, screens: Path, clipboard: None
) -> None:
    command = "openclaw devices approve req-7f3a"
    panel = shown(qtbot, PairingWaitPanel("req-7f3a", command))
    assert panel.command_field.text() == command
    assert panel.command_field.isReadOnly()
    assert "req-7f3a" in panel.request_label.text()
    first = panel.status_label.text()
    assert first.startswith("Waiting for approval")
    qtbot.waitUntil(lambda: panel.status_label.text() != first, timeout=3000)
    snap(panel, screens, "10-pairing-wait")

    assert QGuiApplication.clipboard().text() == ""
    QTest.mouseClick(panel.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == command
    assert panel.copy_button.text() == "Copied"

    panel.stop("Approved.")
    assert not panel.waiting
    assert panel.status_label.text() == "Approved."


# ---------------------------------------------------------------- adapters on qasync
T = TypeVar("T")


def run_on_qasync(qapp: QApplication, scenario: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``scenario`` on the qasync loop over the test's QApplication, bounded."""
    return run_in_qt(qapp, scenario, 30)


async def child_dialog(parent: QWidget, kind: type[W]) -> W:
    """The open dialog of ``kind`` under ``parent``, once it is visible."""
    async with asyncio.timeout(10):
        while True:
            found = [d for d in parent.findChildren(kind) if d.isVisible()]
            if found:
                return found[0]
            await asyncio.sleep(0.01)


def test_ask_trust_and_ask_approval_on_qasync(qapp: QApplication, qtbot: QtBot) -> None:
    parent = shown(qtbot, QWidget())
    prompt = TrustPrompt(endpoint="gw.example:443", host="gw.example", port=443, fingerprint=FP)

    async def scenario() -> list[Any]:
        answers: list[Any] = []
        # First use: TrustDialog, window-modal, Trust -> True.
        asking = asyncio.ensure_future(ask_trust(prompt, parent, gateway_name="lab"))
        dialog = await child_dialog(parent, TrustDialog)
        assert dialog.isModal()
        assert dialog.name_label.text() == "lab"
        assert not asking.done()
        dialog.trust_button.click()
        answers.append(await asyncio.wait_for(asking, 5))
        await asyncio.sleep(0.05)
        assert not shiboken6.isValid(dialog)  # deleted after use

        # Escape -> False.
        asking = asyncio.ensure_future(ask_trust(prompt, parent))
        dialog = await child_dialog(parent, TrustDialog)
        assert dialog.name_label.text() == "gw.example"
        QTest.keyClick(dialog, Qt.Key.Key_Escape)
        answers.append(await asyncio.wait_for(asking, 5))

        # A replaced pin: the changed-pin warning, which needs the checkbox.
        replacing = TrustPrompt(
            endpoint="gw.example:443",
            host="gw.example",
            port=443,
            fingerprint=OTHER,
            previous_pin=FP,
        )
        asking = asyncio.ensure_future(ask_trust(replacing, parent))
        changed = await child_dialog(parent, PinChangedDialog)
        changed.verified_box.setChecked(True)
        changed.replace_button.click()
        answers.append(await asyncio.wait_for(asking, 5))

        # Cancelling the waiting task closes the dialog without trusting.
        asking = asyncio.ensure_future(ask_trust(prompt, parent))
        dialog = await child_dialog(parent, TrustDialog)
        closed: list[int] = []
        dialog.finished.connect(closed.append)
        asking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asking
        answers.append(closed)

        # The approval adapter returns the decision, None when deferred.
        deciding = asyncio.ensure_future(ask_approval(approval(), parent))
        dialog_a = await child_dialog(parent, ApprovalDialog)
        dialog_a.allow_once_button.click()
        answers.append(await asyncio.wait_for(deciding, 5))
        deciding = asyncio.ensure_future(ask_approval(approval(), parent))
        dialog_a = await child_dialog(parent, ApprovalDialog)
        QTest.keyClick(dialog_a, Qt.Key.Key_Escape)
        answers.append(await asyncio.wait_for(deciding, 5))
        return answers

    answers = run_on_qasync(qapp, scenario)
    assert answers == [
        True,
        False,
        True,
        [QDialog.DialogCode.Rejected.value],
        "allow-once",
        None,
    ]


# ---------------------------------------------------------------- fonts
_FONT_PROBE = """
import json, sys
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QApplication
from ui.dialogs import TrustDialog
from ui.fonts import is_monospace, mono_font
app = QApplication([])
system = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
dialog = TrustDialog("lab", "10.0.0.1:18789", sys.argv[1])
metrics = dialog.fingerprint_label.fontMetrics()
print(json.dumps({
    "system_monospace": is_monospace(system),
    "chosen_monospace": is_monospace(mono_font()),
    "label_i_w": [metrics.horizontalAdvance("i"), metrics.horizontalAdvance("W")],
}))
"""


def test_a_monospace_font_is_chosen_when_the_systems_fixed_font_is_proportional(
    qapp: QApplication, tmp_path: Path
) -> None:
    """A machine whose "monospace" is a proportional font (fontconfig told so here, in a
    child process): fingerprints are still drawn in a font whose glyphs are all as wide."""
    from ui.fonts import is_monospace

    families = QFontDatabase.families()
    ui_font = QFontInfo(qapp.font()).family()  # the window's own text font, when proportional
    candidates = [ui_font, *families] if not is_monospace(qapp.font()) else families
    proportional = next((f for f in candidates if not is_monospace(QFont(f))), None)
    if proportional is None or not any(is_monospace(QFont(f)) for f in families):
        pytest.skip("this machine lacks a proportional or a monospace font to set the scene")
    conf = tmp_path / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n'
        '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n'
        '  <match target="pattern"><test name="family"><string>monospace</string></test>\n'
        f'    <edit name="family" mode="assign" binding="strong"><string>{proportional}'
        "</string></edit></match>\n</fontconfig>\n",
        encoding="utf-8",
    )
    env = {**os.environ, "FONTCONFIG_FILE": str(conf), "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run(
        [sys.executable, "-c", _FONT_PROBE, FP],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        check=True,
    )
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    assert probe["system_monospace"] is False, f"the scene is set: {proportional} is monospace"
    assert probe["chosen_monospace"] is True
    narrow, wide = probe["label_i_w"]
    assert narrow == wide > 0
