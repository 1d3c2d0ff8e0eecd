"""The node's exec decisions in the Activity view, and Settings > *Command approvals*.

The editor first edits a real approvals file (load, edit, refused values, save, a
concurrent writer). Then the window runs with its own node on our bundled gateway (a
subprocess over loopback) with "Run commands" on, and an operator client drives the node
through the gateway as an agent and ``openclaw approvals --node`` do: ``node.invoke
system.run`` makes the Activity rows (allowed by policy and by an allowlist entry, denied
by policy and by the user, allowed once, a timed-out and a window-less ask fallback), and
``exec.approvals.node.set`` changes the document while the Settings page has it open, so
saving there meets the base-hash compare-and-swap.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QComboBox, QDialog, QTableWidgetItem

from openclaw_desktop.config import AppPaths, NodeSettings, Settings, SettingsStore
from openclaw_desktop.node.exec.access import LocalApprovals
from openclaw_desktop.node.exec.approvals import FILE_NAME, ApprovalsStore
from openclaw_desktop.node.exec.policy import DecisionKind
from tests.helpers.bundled_gateway import ALL_OPERATOR_SCOPES, BundledGateway, RawClient
from tests.helpers.chat_trace import write_fake_providers
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.qt import run_in_qt, screenshot_folder, shot, window_home  # noqa: F401 (autouse)
from tests.ui.test_accessibility import unnamed_controls
from tests.ui.test_chat_window import until
from tests.ui.test_chat_window_more import new_app
from tests.ui.test_exec_prompt import Operator, _approve_surface, _denied, _prompted
from ui.app import DesktopApp
from ui.dialogs.exec_approvals import CONFLICT, ExecApprovalsEditor
from ui.dialogs.exec_prompt import ask_exec
from ui.dialogs.settings import SettingsDialog
from ui.widgets.activity import DECISION_ROLE, ActivityView

pytestmark = pytest.mark.timeout(150)

SH = os.path.realpath(shutil.which("sh") or "/bin/sh")
ECHO = os.path.realpath(shutil.which("echo") or "/bin/echo")


def write(path: Path, document: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")


def cell(editor: ExecApprovalsEditor, row: int, column: int) -> QTableWidgetItem:
    item = editor.table.item(row, column)
    assert item is not None, (row, column)
    return item


def table(editor: ExecApprovalsEditor) -> list[list[str]]:
    t = editor.table
    return [
        [cell(editor, r, c).text() for c in range(t.columnCount())] for r in range(t.rowCount())
    ]


def dirty(editor: ExecApprovalsEditor) -> bool:
    """Whether the editor has unsaved edits (read afresh each time)."""
    return editor.dirty


def choose(box: Any, value: str) -> None:
    index = box.findData(value)
    assert index >= 0, value
    box.setCurrentIndex(index)


def test_the_editor_loads_edits_refuses_bad_values_and_saves(
    qapp: QApplication, tmp_path: Path
) -> None:
    """The document's modes and allowlist are shown; a program is added by its resolved path;
    bad values are named and change nothing; saving writes what was edited and keeps the
    rest; a document changed by another writer is not overwritten."""
    path = tmp_path / FILE_NAME
    write(
        path,
        {
            "version": 1,
            "defaults": {"security": "allowlist", "ask": "on-miss"},
            "agents": {
                "main": {
                    "security": "full",
                    "allowlist": [
                        {
                            "pattern": "/usr/bin/git",
                            "lastUsedAt": 1_700_000_000_000,
                            "lastUsedCommand": "git push https://me:hunter2@example.com",
                        }
                    ],
                }
            },
        },
    )
    store = ApprovalsStore(path)
    editor = ExecApprovalsEditor(LocalApprovals(store))
    editor.show()

    async def scenario() -> None:
        assert await editor.load()
        assert (editor.security.currentData(), editor.ask.currentData()) == (
            "allowlist",
            "on-miss",
        )
        assert editor.ask_fallback.currentData() == "deny"  # unset: the reference's default
        ((agent, program, arguments, used),) = table(editor)
        assert (agent, program, arguments) == ("main", "/usr/bin/git", "any")
        assert used.startswith("2023-11-1")
        assert "hunter2" not in cell(editor, 0, 3).toolTip()
        assert "main: security=full" in editor.overrides.text()
        assert not dirty(editor)
        loaded = path.read_bytes()
        # Bad values: named, nothing added, nothing written.
        bad = [
            ("*", "", "", "Type or pick the program"),
            ("*", "no-such-program-here", "", "No program 'no-such-program-here'"),
            ("*", "bin/*", "", "must be an absolute path glob"),
            ("*", "sh", "(unclosed", "not a regular expression"),
            ("no spaces", "sh", "", "is not an agent id"),
        ]
        for agent, program, arguments, message in bad:
            editor.agent.setEditText(agent)
            editor.program.setText(program)
            editor.arguments.setText(arguments)
            assert not editor.add_entry(), program
            assert message in editor.status.text(), editor.status.text()
        assert len(editor.entries) == 1 and not dirty(editor)
        picker = editor.browse()  # picking the file fills the program field
        picker.selectFile(ECHO)
        picker.accept()
        assert editor.program.text() == ECHO
        editor.agent.setEditText("*")
        editor.program.setText("sh")  # a name on PATH: stored as its absolute path
        editor.arguments.setText("^-c")
        assert editor.add_entry()
        assert table(editor)[1][:3] == ["every agent (*)", SH, "^-c"]
        editor.program.setText(SH)
        editor.arguments.setText("^-c")
        assert not editor.add_entry() and "already in the allowlist" in editor.status.text()
        choose(editor.security, "deny")
        editor.table.selectRow(0)
        editor.remove_selected()
        assert dirty(editor) and path.read_bytes() == loaded
        assert await editor.save()
        assert editor.status.text().startswith("Saved")
        saved = json.loads(path.read_text(encoding="utf-8"))
        assert saved["defaults"] == {"security": "deny", "ask": "on-miss"}  # fallback unset
        assert saved["agents"]["main"] == {"security": "full"}
        (entry,) = saved["agents"]["*"]["allowlist"]
        assert (entry["pattern"], entry["argPattern"]) == (SH, "^-c") and entry["id"]
        assert saved["socket"]["token"]  # the node's socket token is kept, never shown
        assert not dirty(editor)
        # Another writer changes the document: saving does not overwrite it.
        other = ApprovalsStore(path)
        current = other.read()
        changed = {**current.file, "defaults": {"security": "full"}}
        await other.replace(changed, current.hash)
        choose(editor.ask, "always")
        assert not await editor.save()
        assert editor.status.text() == CONFLICT
        assert editor.security.currentData() == "full" and editor.ask.currentData() == "off"
        assert json.loads(path.read_text(encoding="utf-8"))["defaults"] == {"security": "full"}
        assert not dirty(editor)

    run_in_qt(qapp, scenario, timeout=30)
    editor.close()


def test_a_missing_document_shows_the_defaults_and_is_written_only_when_saved(
    qapp: QApplication, tmp_path: Path
) -> None:
    """Without a document the reference's baseline shows (full, off, deny); looking does
    not create the file, saving does (with the node's socket defaults)."""
    path = tmp_path / "config" / FILE_NAME
    editor = ExecApprovalsEditor(LocalApprovals(ApprovalsStore(path)))

    async def scenario() -> None:
        assert await editor.load()
        modes = (editor.security, editor.ask, editor.ask_fallback)
        assert [box.currentData() for box in modes] == ["full", "off", "deny"]
        assert table(editor) == [] and not path.exists()
        assert await editor.save() and editor.status.text() == "Nothing to save."
        assert not path.exists()
        choose(editor.ask, "on-miss")
        assert await editor.save()
        saved = json.loads(path.read_text(encoding="utf-8"))
        assert saved["defaults"] == {"ask": "on-miss"}
        assert saved["socket"]["path"] and saved["socket"]["token"]
        assert (path.stat().st_mode & 0o777) == 0o600

    run_in_qt(qapp, scenario, timeout=30)
    editor.close()


def test_settings_has_a_named_command_approvals_page(
    qapp: QApplication, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every control of both Settings pages has an accessible name; the page loads by
    itself when the dialog opens on the loop."""
    screens = screenshot_folder(tmp_path_factory, "exec-approvals")
    path = tmp_path / FILE_NAME
    write(path, {"version": 1, "agents": {"*": {"allowlist": [{"pattern": ECHO}]}}})
    store = SettingsStore(tmp_path / "settings.json")
    access = LocalApprovals(ApprovalsStore(path))
    dialogs: list[SettingsDialog] = []

    async def scenario() -> None:
        dialog = SettingsDialog(store, [], None, access)  # opened on the loop: it loads
        dialogs.append(dialog)
        dialog.show()
        editor, tabs = dialog.approvals, dialog.tabs
        assert editor is not None and tabs is not None
        assert unnamed_controls(dialog) == []
        tabs.setCurrentWidget(editor)
        await until(lambda: editor.loaded is not None, "the approvals loaded")
        assert unnamed_controls(dialog) == []
        assert table(editor)[0][1] == ECHO
        for box in editor.findChildren(QComboBox):  # it says what it chooses
            assert box.accessibleDescription(), box.accessibleName()
        dialog.grab().save(str(screens / "01-settings-command-approvals.png"))

    run_in_qt(qapp, scenario, timeout=30)
    for dialog in dialogs:
        dialog.close()


# ---------------------------------------------------------------- with the gateway


def _write_settings(defaults: dict[str, str]) -> Path:
    """ "Run commands" on, and the approvals document the node will serve."""
    paths = AppPaths.default()
    SettingsStore(paths.settings_file).save(Settings(node=NodeSettings(exec=True)))
    approvals = paths.config_dir / FILE_NAME
    write(approvals, {"version": 1, "defaults": defaults})
    return approvals


async def _operator(app: DesktopApp, gw: BundledGateway) -> tuple[RawClient, Operator]:
    await app.start()
    node = app.runtime.node
    assert node is not None and node.options.signer is not None
    node_id = node.options.signer.device_id
    client = await RawClient.open(gw.url)
    hello = await client.connect(None, auth={"token": gw.token}, scopes=ALL_OPERATOR_SCOPES)
    assert hello["ok"], hello
    await _approve_surface(client, node_id)
    return client, Operator(client, node_id)


def _run_app(
    qapp: QApplication, tmp_path: Path, defaults: dict[str, str], body: Any, timeout: float
) -> None:
    approvals = _write_settings(defaults)
    with FakeLLM() as llm:
        write_fake_providers(tmp_path / "gw" / "state", llm.port)
        gw = BundledGateway.start(root=tmp_path / "gw")
        try:
            app = new_app(gw, node=True)
            app.window.show()

            async def scenario() -> None:
                client, op = await _operator(app, gw)
                try:
                    await body(app, op, approvals)
                finally:
                    await client.close()
                    await app.aclose()

            run_in_qt(qapp, scenario, timeout=timeout)
        finally:
            gw.cleanup()


def test_every_exec_decision_is_a_row_of_the_activity_view(
    qapp: QApplication, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Real ``system.run`` invokes through the gateway: each decision the node makes is a
    row (time, command as the prompt shows it, who asked, decision and why)."""
    screens = screenshot_folder(tmp_path_factory, "exec-activity")

    async def body(app: DesktopApp, op: Operator, approvals: Path) -> None:
        activity = app.activity
        node = app.runtime.node
        assert isinstance(activity, ActivityView) and node is not None
        res = await op.run(["echo", "password=hunter2"])
        assert res["ok"], res
        write(
            approvals,
            {
                "version": 1,
                "defaults": {"security": "allowlist", "ask": "off"},
                "agents": {"main": {"allowlist": [{"pattern": ECHO}]}},
            },
        )
        assert (await op.run(["echo", "listed"]))["ok"]
        _denied(await op.run(["true"]), "allowlist miss")
        write(approvals, {"version": 1, "defaults": {"security": "deny"}})
        res = await op.run(["echo", "never"])
        assert res["error"]["details"]["nodeError"]["message"].endswith("security=deny")
        write(approvals, {"version": 1, "defaults": {"security": "full", "ask": "always"}})
        pending = op.run(["echo", "ask me"])
        (await _prompted("the prompt to deny")).deny_button.click()
        _denied(await pending, "user denied")
        pending = op.run(["echo", "ask me"])
        (await _prompted("the prompt to allow")).allow_once_button.click()
        assert (await pending)["ok"]
        # The window's own prompt, with a short timeout: nobody answers.
        node.ctx.exec_prompt = functools.partial(ask_exec, parent=app.window, timeout_s=0.5)
        _denied(await op.run(["echo", "too late"]), "approval required")
        node.ctx.exec_prompt = None  # as headless: nobody to ask
        _denied(await op.run(["echo", "nobody"]), "approval required")
        await until(lambda: len(activity.decision_rows()) == 8, "eight decision rows")
        rows = list(reversed(activity.decision_rows()))
        assert [(d.kind, d.allowed) for d in rows] == [
            (DecisionKind.POLICY_FULL, True),
            (DecisionKind.ALLOWLIST, True),
            (DecisionKind.POLICY_DENIED, False),
            (DecisionKind.POLICY_DENIED, False),
            (DecisionKind.USER_DENIED, False),
            (DecisionKind.USER_ONCE, True),
            (DecisionKind.TIMEOUT_FALLBACK, False),
            (DecisionKind.HEADLESS_FALLBACK, False),
        ]
        items = [activity.list.item(i) for i in range(activity.list.count())]
        texts = [i.text() for i in items]
        decided = [i.text() for i in items if i.data(DECISION_ROLE) is not None]
        assert len(decided) == 8, texts
        oldest = decided[-1]
        assert oldest[:8].count(":") == 2  # HH:MM:SS
        assert "✓ allowed: echo password=[redacted]\n" in oldest, oldest
        assert "security is full · asked by agent main, session agent:main:main" in oldest
        assert "hunter2" not in "\n".join(texts)
        expected = [
            f"✓ allowed: echo listed\n      allowlist entry {ECHO} · asked by",
            "✗ denied: true\n      not in the allowlist (ask off) · ",
            "✗ denied: echo never\n      security is deny · ",
            "✗ denied: echo 'ask me'\n      you denied it · ",
            "✓ allowed once: echo 'ask me'\n      you allowed it once · ",
            "✗ denied: echo 'too late'\n      nobody answered in time; ask fallback deny · ",
            "✗ denied: echo nobody\n      no window to ask; ask fallback deny · ",
        ]
        for text, wanted in zip(reversed(decided[:-1]), expected, strict=True):
            assert wanted in text, (wanted, text)
        (tip, *_rest) = [i.toolTip() for i in items if i.data(DECISION_ROLE) is not None]
        assert "Working directory: the node's own folder" in tip and ECHO in tip
        dock = app.window.activity_dock
        dock.raise_()
        shot(app.window, screens / "01-window-with-activity.png")
        activity.grab().save(str(screens / "02-activity-decisions.png"))

    _run_app(qapp, tmp_path, {"security": "full", "ask": "off"}, body, timeout=140)


def test_saving_approvals_changed_through_the_gateway_meanwhile_reloads_them(
    qapp: QApplication, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The Settings page edits the document the node serves; an ``exec.approvals.node.set``
    through the gateway while it is open wins: saving says so, shows the new document and
    writes nothing; saving again (on the new hash) works, keeping the gateway's entry."""
    screens = screenshot_folder(tmp_path_factory, "exec-approvals-cas")

    async def body(app: DesktopApp, op: Operator, approvals: Path) -> None:
        dialog = app.open_settings()
        editor, tabs = dialog.approvals, dialog.tabs
        assert editor is not None and tabs is not None
        tabs.setCurrentWidget(editor)
        await until(lambda: editor.loaded is not None, "the approvals page loaded")
        assert editor.security.currentData() == "allowlist"
        first_hash = editor.base_hash
        choose(editor.security, "full")
        # Meanwhile, through the gateway (as `openclaw approvals allowlist add --node`).
        request = {"nodeId": op.node_id}
        got = await op.client.ok("exec.approvals.node.get", request)
        assert got["hash"] == first_hash  # the same document, the same hash
        file = got["file"]
        file["agents"] = {"*": {"allowlist": [{"pattern": "/usr/bin/git"}]}}
        await op.client.ok(
            "exec.approvals.node.set", {**request, "file": file, "baseHash": got["hash"]}
        )
        dialog.save()
        await until(lambda: editor.status.text() == CONFLICT, "the conflict is said", 20)
        assert dialog.isVisible() and tabs.currentWidget() is editor
        assert editor.security.currentData() == "allowlist"  # the stored document again
        assert [row[1] for row in table(editor)] == ["/usr/bin/git"]
        stored = json.loads(await asyncio.to_thread(approvals.read_text, encoding="utf-8"))
        assert stored["defaults"]["security"] == "allowlist"
        dialog.grab().save(str(screens / "01-settings-conflict.png"))
        choose(editor.security, "full")
        editor.program.setText("echo")
        assert editor.add_entry()
        dialog.save()
        await until(lambda: dialog.result() == QDialog.DialogCode.Accepted, "saved", 20)
        now = await op.client.ok("exec.approvals.node.get", request)
        assert now["file"]["defaults"]["security"] == "full"
        patterns = [e["pattern"] for e in now["file"]["agents"]["*"]["allowlist"]]
        assert patterns == ["/usr/bin/git", ECHO]
        assert "token" not in now["file"].get("socket", {})

    _run_app(qapp, tmp_path, {"security": "allowlist", "ask": "off"}, body, timeout=140)
