"""The desktop window against the REAL OpenClaw gateway with the fake model: the reply
streams, an exec approval opens "Allow command?" and Allow once lets the tool run (its card
fills in), Stop keeps the partial answer, the pending approvals are backfilled after
connecting, and Pair a phone shows why a loopback-only gateway mints no code. Screenshots
go to the folder the test prints."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox

from tests.helpers.fake_llm import FakeLLM
from tests.helpers.qt import run_in_qt, screenshot_folder, shot, window_home  # noqa: F401 (autouse)
from tests.helpers.real_openclaw import GatewayFactory
from tests.ui.test_chat_window import assistant, until
from ui.app import DesktopApp
from ui.dialogs.approval import ApprovalDialog
from ui.runtime import DesktopRuntime, RuntimeTarget

pytestmark = [pytest.mark.ui, pytest.mark.timeout(300)]

EXEC_PROMPT = 'CALLTOOL:exec:{"command":"ls"}'


def approval_dialog() -> ApprovalDialog | None:
    """The visible "Allow command?" dialog, if any."""
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, ApprovalDialog) and widget.isVisible():
            return widget
    return None


def test_window_on_the_real_gateway(
    qapp: QApplication, real_gateway: GatewayFactory, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Send, stream, approve an exec from the dialog, see the tool card, stop mid-stream."""
    from openclaw_desktop.config import AppPaths

    screens = screenshot_folder(tmp_path_factory, "window-real-gateway")
    with FakeLLM(chunk_delay_s=0.03) as llm:
        gateway = real_gateway(fake_llm_port=llm.port)
        target = RuntimeTarget(url=gateway.url, token=gateway.token, node=False)
        app = DesktopApp(DesktopRuntime(AppPaths.default(), target))
        app.window.show()

        async def scenario() -> None:
            await app.start()
            chat = app.window.chat
            client = app.runtime.client
            assert chat is not None and client is not None, app.window.placeholder.text()
            chat.composer.setPlainText("hello real gateway")
            QTest.keyClick(chat.composer, Qt.Key.Key_Return)
            await until(lambda: assistant(app, "done"), "the reply", timeout=120)
            assert assistant(app, "done")[-1].text.startswith("FAKE-LLM reply")
            shot(app.window, screens / "01-real-chat.png")

            # Exec asks every time; the window asks the user, who allows once.
            snapshot = await client.call("exec.approvals.get", {})
            original = dict(snapshot["file"])
            strict = {**original, "defaults": {"security": "allowlist", "ask": "always"}}
            await client.call("exec.approvals.set", {"file": strict, "baseHash": snapshot["hash"]})
            try:
                presenter = app.presenter
                assert presenter is not None
                await presenter.send(EXEC_PROMPT)
                await until(lambda: approval_dialog() is not None, "Allow command?", timeout=90)
                dialog = approval_dialog()
                assert dialog is not None
                assert dialog.command_view.toPlainText() == "ls"
                assert dialog.agent_label.text() == "main"
                assert dialog.cwd_label.text().endswith("workspace")
                dialog.grab().save(str(screens / "02-real-approval.png"))
                dialog.allow_once_button.click()
                await until(
                    lambda: any(
                        i.tool is not None
                        and i.tool.status == "completed"
                        and i.tool.name == "exec"
                        for i in presenter.timeline.items
                    ),
                    "the exec card",
                    timeout=90,
                )
                await until(lambda: len(assistant(app, "done")) == 2, "the reply after exec", 90)
                card = next(i.tool for i in presenter.timeline.items if i.tool is not None)
                assert "AGENTS.md" in card.preview
                assert await client.approvals.list() == []
                shot(app.window, screens / "03-real-tool-card.png")
            finally:
                current = await client.call("exec.approvals.get", {})
                await client.call(
                    "exec.approvals.set", {"file": original, "baseHash": current["hash"]}
                )

            # Stop mid-stream keeps the partial answer.
            await presenter.send("SLOW:150")
            await until(lambda: assistant(app, "streaming"), "streaming", timeout=90)
            QTest.keyClick(chat.composer, Qt.Key.Key_Escape)
            await until(lambda: assistant(app, "aborted"), "the stopped reply", timeout=60)
            assert assistant(app, "aborted")[-1].text
            keys = [i.key for i in presenter.timeline.items]
            assert len(keys) == len(set(keys))

            # Pair a phone: the real gateway serves setup codes without advertising them;
            # bound to loopback only it refuses, and the window says why, whole.
            assert await app.pair_phone() is None
            (box,) = [
                w
                for w in QApplication.topLevelWidgets()
                if w.objectName() == "setup-code-refused" and w.isVisible()
            ]
            assert isinstance(box, QMessageBox)
            assert box.informativeText().startswith("Gateway is only bound to loopback.")
            box.grab().save(str(screens / "04-real-pair-phone-refused.png"))
            box.close()
            await app.aclose()

        run_in_qt(qapp, scenario, timeout=280)
