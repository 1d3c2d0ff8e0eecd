"""*Allow command?* in the window: the agent's ``system.run`` on this computer's node, when its
exec approvals ask, waits for the user's answer in a dialog of the window.

The window runs with its own node on our bundled gateway (a subprocess over loopback), with
"Run commands" on; an operator client calls ``node.invoke system.run`` through the gateway,
as the agent's exec tool does. The dialog is clicked as a person would; the command really
runs (or not) and the invoke's answer is what the gateway relays.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAccessible
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from openclaw_desktop.config import AppPaths, NodeSettings, Settings, SettingsStore
from openclaw_desktop.node.exec.approvals import FILE_NAME
from openclaw_desktop.node.exec.policy import ExecRequest
from tests.helpers.bundled_gateway import ALL_OPERATOR_SCOPES, BundledGateway, RawClient
from tests.helpers.chat_trace import write_fake_providers
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.qt import run_in_qt, screenshot_folder, window_home  # noqa: F401 (autouse)
from tests.ui.test_chat_window import pairing_dialog, until
from tests.ui.test_chat_window_more import new_app
from ui.dialogs import ExecPromptDialog, ask_exec
from ui.dialogs.exec_prompt import PROMPT_TIMEOUT_S, exec_command_text

pytestmark = pytest.mark.timeout(150)

DENIED = "SYSTEM_RUN_DENIED"


def exec_dialog() -> ExecPromptDialog | None:
    """The visible *Allow command?* dialog, if any."""
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, ExecPromptDialog) and widget.isVisible():
            return widget
    return None


def _request(argv: tuple[str, ...], *, allow_always: bool = False) -> ExecRequest:
    return ExecRequest(
        argv, " ".join(argv), "/tmp", "main", "agent:main:main", "/usr/bin/echo", allow_always
    )


class Operator:
    """An operator client of the gateway invoking this computer's node."""

    def __init__(self, client: RawClient, node_id: str) -> None:
        self.client = client
        self.node_id = node_id

    async def invoke(self, command: str, params: dict[str, Any]) -> dict[str, Any]:
        request = {
            "nodeId": self.node_id,
            "command": command,
            "params": params,
            "timeoutMs": 60_000,
            "idempotencyKey": f"exec-prompt-{time.monotonic_ns()}",
        }
        return await self.client.call("node.invoke", request, timeout=70)

    def run(self, argv: list[str], cwd: Path | None = None) -> asyncio.Future[dict[str, Any]]:
        params: dict[str, Any] = {
            "command": argv,
            "agentId": "main",
            "sessionKey": "agent:main:main",
        }
        if cwd is not None:
            params["cwd"] = str(cwd)
        return asyncio.ensure_future(self.invoke("system.run", params))


def write_policy(path: Path, defaults: dict[str, str]) -> None:
    """The user's exec approvals document (our gateway has no ``exec.approvals.node.*`` to
    edit it remotely; the node reads the file at every run)."""
    path.write_text(json.dumps({"version": 1, "defaults": defaults}), encoding="utf-8")


async def _prompted(what: str) -> ExecPromptDialog:
    await until(lambda: exec_dialog() is not None, what, 30)
    dialog = exec_dialog()
    assert dialog is not None
    return dialog


async def _closed(dialog: ExecPromptDialog) -> None:
    await until(lambda: exec_dialog() is not dialog, "the dialog closed", 10)


def _denied(res: dict[str, Any], reason: str) -> None:
    """The gateway relays the node's refusal (code UNAVAILABLE, the node's error inside)."""
    assert res["ok"] is False, res
    error = res["error"]
    assert error["code"] == "UNAVAILABLE", error
    assert error["details"]["nodeError"] == {"code": DENIED, "message": f"{DENIED}: {reason}"}


def test_allow_command_prompt_decides_the_nodes_system_run(
    qapp: QApplication, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Allow once runs ``echo hi``; Deny, Escape and Enter refuse it; under ``ask=always``
    Always allow is not offered; under ``allowlist``/``on-miss`` Always allow adds the
    command to the allowlist and the next identical run does not ask."""
    screens = screenshot_folder(tmp_path_factory, "exec-prompt")
    paths = AppPaths.default()
    SettingsStore(paths.settings_file).save(Settings(node=NodeSettings(exec=True)))
    approvals = paths.config_dir / FILE_NAME
    write_policy(approvals, {"security": "full", "ask": "always"})
    with FakeLLM() as llm:
        write_fake_providers(tmp_path / "gw" / "state", llm.port)
        gw = BundledGateway.start(root=tmp_path / "gw")
        try:
            app = new_app(gw, node=True)
            app.window.show()

            async def scenario() -> None:
                await app.start()
                node = app.runtime.node
                assert node is not None and node.ctx.exec_prompt is not None
                signer = node.options.signer
                assert signer is not None
                node_id = signer.device_id
                client = await RawClient.open(gw.url)
                try:
                    hello = await client.connect(
                        None, auth={"token": gw.token}, scopes=ALL_OPERATOR_SCOPES
                    )
                    assert hello["ok"], hello
                    await _approve_surface(client, node_id)
                    await _scenario(Operator(client, node_id), approvals, screens)
                finally:
                    await client.close()
                await app.aclose()

            run_in_qt(qapp, scenario, timeout=140)
        finally:
            gw.cleanup()


async def _approve_surface(client: RawClient, node_id: str) -> None:
    """The user approves this computer's commands in the window's pairing dialog."""
    async with asyncio.timeout(40):
        while True:
            dialog = pairing_dialog()
            if dialog is not None:
                dialog.approve_button.click()
            nodes = (await client.ok("node.list"))["nodes"]
            entry = next((n for n in nodes if n["nodeId"] == node_id), None)
            if entry and entry.get("connected") and "system.run" in entry.get("commands", []):
                return
            await asyncio.sleep(0.1)


async def _scenario(op: Operator, approvals: Path, screens: Path) -> None:
    # Allow once: the command runs and its output comes back through the gateway.
    pending = op.run(["echo", "hi"], cwd=approvals.parent)
    dialog = await _prompted("the prompt for echo hi")
    assert dialog.command_view.toPlainText() == "echo hi"
    assert dialog.who_label.text() == "agent main, session agent:main:main"
    assert dialog.executable_label.text().endswith("/echo")
    assert dialog.cwd_label.text() == str(approvals.parent)
    assert dialog.deny_button.isDefault() and not dialog.allow_once_button.autoDefault()
    assert not dialog.allow_always_button.isVisible(), "ask=always offers no durable trust"
    assert "the approvals fallback decides" in dialog.countdown_label.text()
    iface = QAccessible.queryAccessibleInterface(dialog.command_view)
    assert iface.text(QAccessible.Text.Name) == "Command"
    dialog.grab().save(str(screens / "01-allow-command.png"))
    dialog.allow_once_button.click()
    res = await pending
    assert res["ok"], res
    assert res["payload"]["payload"]["stdout"].strip() == "hi", res
    assert res["payload"]["payload"]["exitCode"] == 0

    # Deny: refused, nothing ran.
    pending = op.run(["echo", "hi"])
    dialog = await _prompted("the prompt again")
    assert dialog.cwd_label.text().endswith("(the node's own folder)")
    dialog.deny_button.click()
    _denied(await pending, "user denied")

    # Escape and Enter never allow.
    for key in (Qt.Key.Key_Escape, Qt.Key.Key_Return):
        pending = op.run(["echo", "hi"])
        dialog = await _prompted(f"the prompt for {key.name}")
        QTest.keyClick(dialog, key)
        _denied(await pending, "user denied")
        await _closed(dialog)

    # Under allowlist / on-miss, Always allow is offered and remembered.
    write_policy(approvals, {"security": "allowlist", "ask": "on-miss"})
    pending = op.run(["echo", "hi"])
    dialog = await _prompted("the prompt under allowlist")
    assert dialog.allow_always_button.isVisible()
    dialog.grab().save(str(screens / "02-allow-command-always.png"))
    dialog.allow_always_button.click()
    res = await pending
    assert res["ok"] and res["payload"]["payload"]["stdout"].strip() == "hi", res
    document = json.loads(await asyncio.to_thread(approvals.read_text, encoding="utf-8"))
    (entry,) = document["agents"]["main"]["allowlist"]
    assert entry["pattern"].endswith("/echo") and entry["argPattern"] == "^hi$"
    pending = op.run(["echo", "hi"])
    while not pending.done():
        assert exec_dialog() is None, "an allowed-always command asked again"
        await asyncio.sleep(0.02)
    res = await pending
    assert res["ok"] and res["payload"]["payload"]["stdout"].strip() == "hi", res
    # A different command is still asked about.
    pending = op.run(["echo", "other"])
    dialog = await _prompted("the prompt for another command")
    dialog.deny_button.click()
    _denied(await pending, "user denied")


def test_prompt_shows_the_command_safely_and_times_out_without_an_answer(
    qapp: QApplication,
) -> None:
    """Secrets are redacted and terminal escapes stripped; the argv is shell-quoted; the
    timeout is the reference's 30 minutes, and once it passes the dialog closes with no
    answer (the ask fallback decides); Always allow is returned only when offered."""
    assert PROMPT_TIMEOUT_S == 1800
    request = _request(("curl", "-H", "Authorization: Bearer abcdefghijklmnop1234", "a b\x1b[2J"))
    shown = exec_command_text(request)
    assert "abcdefghijklmnop1234" not in shown and "[redacted]" in shown
    assert "\x1b" not in shown and shown.endswith("'a b'")

    async def scenario() -> None:
        answer = await ask_exec(_request(("echo", "hi")), None, timeout_s=0.3)
        assert answer is None
        task = asyncio.ensure_future(ask_exec(_request(("echo", "hi")), None))
        dialog = await _prompted("the prompt")
        assert not dialog.allow_always_button.isVisible()
        dialog.allow_always_button.click()  # hidden, but clicked anyway
        assert await task == "allow-once"
        task = asyncio.ensure_future(ask_exec(_request(("echo", "hi"))))
        dialog = await _prompted("the prompt, to close")
        dialog.close()
        assert await task == "deny"
        task = asyncio.ensure_future(ask_exec(_request(("echo", "hi"))))
        dialog = await _prompted("the prompt, to cancel")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert exec_dialog() is None

    run_in_qt(qapp, scenario, timeout=30)
