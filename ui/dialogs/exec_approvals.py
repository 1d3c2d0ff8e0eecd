"""Settings > *Command approvals*: the exec approvals document of this computer's node.

It shows and edits the defaults (security ``deny`` / ``allowlist`` / ``full``, ask ``off`` /
``on-miss`` / ``always``, the ask fallback) and the allowlists of the document's agents
(each entry's executable pattern, argument pattern and last use). Adding an entry takes a
binary path or a name on ``PATH`` (typed, or picked with *Browse…*) and stores the absolute
path it resolves to; a path glob (``/usr/bin/*``, ``~/bin/**``) is kept as typed.

It edits the SAME document the node serves, through an
:class:`~openclaw_desktop.node.exec.access.ApprovalsAccess` (the node's own handlers, or the
document's file when they are off). Saving sends the hash the document had when it was
loaded: if it changed in between (an ``openclaw approvals allowlist add --node`` through a
gateway, an *Always allow* answer), nothing is overwritten; the editor says so and shows the
current document. A value the node refuses is named and nothing is written.
"""

from __future__ import annotations

import asyncio
import copy
import datetime
import re
from collections.abc import Awaitable
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from openclaw_desktop.chat.redact import redact, strip_control
from openclaw_desktop.node.exec.access import (
    ApprovalsAccess,
    ApprovalsConflict,
    ApprovalsError,
    resolve_entry_pattern,
)

__all__ = [
    "ASK_CHOICES",
    "CONFLICT",
    "FALLBACK_CHOICES",
    "SECURITY_CHOICES",
    "ExecApprovalsEditor",
]

#: (value, label) in the order shown; the first is the reference's unconfigured baseline.
SECURITY_CHOICES = (
    ("full", "Full: run any command"),
    ("allowlist", "Allowlist: only the commands listed below"),
    ("deny", "Deny: run no command"),
)
ASK_CHOICES = (
    ("off", "Off: never ask"),
    ("on-miss", "On miss: ask when a command is not in the allowlist"),
    ("always", "Always: ask before every command"),
)
FALLBACK_CHOICES = (
    ("deny", "Deny"),
    ("allowlist", "Allowlist: run it only if it is listed"),
    ("full", "Full: run it"),
)
_BASELINE = {"security": "full", "ask": "off", "askFallback": "deny"}
_AGENT = re.compile(r"^(\*|[A-Za-z0-9][A-Za-z0-9_.-]{0,63})$")
CONFLICT = (
    "The command approvals changed on this computer while you were editing them (for "
    "example an allowlist entry added through the gateway). Nothing was saved: the current "
    "document is shown; make your changes again."
)


def _combo(
    parent: QWidget, name: str, choices: tuple[tuple[str, str], ...], description: str
) -> QComboBox:
    """A choice named ``name``; the description says what it chooses (a screen reader on
    Linux names a combo box by its current value)."""
    box = QComboBox(parent)
    for value, label in choices:
        box.addItem(label, value)
    box.setAccessibleName(name)
    box.setAccessibleDescription(description)
    box.setToolTip(description)
    return box


def _button(text: str, parent: QWidget, description: str) -> QPushButton:
    button = QPushButton(text, parent)
    button.setAccessibleName(text.replace("&", "").rstrip("…").strip())
    button.setToolTip(description)
    button.setAutoDefault(False)
    return button


def _when(ms: Any) -> str:
    if not isinstance(ms, int | float) or isinstance(ms, bool) or ms <= 0:
        return "never"
    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


def _shown(value: Any, limit: int = 120) -> str:
    text = " ".join(redact(strip_control(str(value))).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ExecApprovalsEditor(QWidget):
    """The editor; :meth:`load` before use, :meth:`save` to compare-and-swap."""

    def __init__(self, access: ApprovalsAccess, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.access = access
        #: The document as loaded (``file``) and its hash: what a save is based on.
        self.loaded: dict[str, Any] | None = None
        self.base_hash = ""
        #: (agent, entry) rows of the allowlist table, in order.
        self.entries: list[tuple[str, dict[str, Any]]] = []
        self._busy = False
        intro = QLabel(
            "What the agent may run on this computer when “Run commands” is on. "
            "Changes apply to the next command.",
            self,
        )
        intro.setWordWrap(True)
        self.security = _combo(
            self, "Security", SECURITY_CHOICES, "Which commands may run on this computer"
        )
        self.ask = _combo(self, "Ask", ASK_CHOICES, "When to ask you before a command runs")
        self.ask_fallback = _combo(
            self,
            "Ask fallback",
            FALLBACK_CHOICES,
            "What happens when nobody answers the Allow command? prompt in time, or when "
            "there is no window to ask",
        )
        modes = QFormLayout()
        modes.addRow(self._label("&Security", self.security), self.security)
        modes.addRow(self._label("As&k", self.ask), self.ask)
        modes.addRow(self._label("Ask &fallback", self.ask_fallback), self.ask_fallback)
        self.overrides = QLabel(self)
        self.overrides.setWordWrap(True)
        self.table = QTableWidget(0, 4, self)
        self.table.setHorizontalHeaderLabels(["Agent", "Program", "Arguments", "Last used"])
        self.table.setAccessibleName("Allowlist")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setMinimumHeight(140)
        self.remove_button = _button("&Remove", self, "Remove the selected allowlist entries")
        self.remove_button.clicked.connect(self.remove_selected)
        self.agent = QComboBox(self)
        self.agent.setEditable(True)
        self.agent.setAccessibleName("Agent")
        self.agent.setToolTip("Whose allowlist the program is added to (* means every agent)")
        self.agent.setAccessibleDescription(self.agent.toolTip())
        typed = self.agent.lineEdit()
        if typed is not None:  # an editable combo box: its text field is a control too
            typed.setAccessibleName("Agent")
            typed.setAccessibleDescription(self.agent.toolTip())
        self.agent.setMinimumContentsLength(12)
        self.program = QLineEdit(self)
        self.program.setAccessibleName("Program")
        self.program.setPlaceholderText("a path or a name on PATH: /usr/bin/git, git, /usr/bin/*")
        self.browse_button = _button("&Browse…", self, "Pick the program's file")
        self.browse_button.clicked.connect(self.browse)
        self.arguments = QLineEdit(self)
        self.arguments.setAccessibleName("Argument pattern")
        self.arguments.setPlaceholderText("any (or a regular expression, like ^status\\b)")
        self.add_button = _button("A&dd", self, "Add the program to the allowlist")
        self.add_button.clicked.connect(self.add_entry)
        allowlist = QGroupBox("Allowlist", self)
        box = QVBoxLayout(allowlist)
        box.addWidget(self.table)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.remove_button)
        box.addLayout(row)
        adding = QFormLayout()
        program_row = QHBoxLayout()
        program_row.addWidget(self.program, 1)
        program_row.addWidget(self.browse_button)
        agent_row = QHBoxLayout()
        agent_row.addWidget(self.agent, 1)
        agent_row.addWidget(self.add_button)
        adding.addRow(self._label("Add &program", self.program), program_row)
        adding.addRow(self._label("Arg&uments", self.arguments), self.arguments)
        adding.addRow(self._label("For agen&t", self.agent), agent_row)
        box.addLayout(adding)
        self.status = QLabel(self)
        self.status.setAccessibleName("Command approvals status")
        self.status.setWordWrap(True)
        self.reload_button = _button("Re&load", self, "Show the document as stored now")
        self.reload_button.clicked.connect(lambda: self._spawn(self.load()))
        self.save_button = _button("Save &approvals", self, "Save the command approvals")
        self.save_button.clicked.connect(lambda: self._spawn(self.save()))
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.reload_button)
        buttons.addWidget(self.save_button)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(modes)
        layout.addWidget(self.overrides)
        layout.addWidget(allowlist, 1)
        layout.addLayout(buttons)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._enable(False)
        self._say("Loading the command approvals…")

    # ------------------------------------------------------------------ helpers

    def _label(self, text: str, field: QWidget) -> QLabel:
        label = QLabel(text, self)
        label.setBuddy(field)
        return label

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _say(self, text: str, *, error: bool = False) -> None:
        self.status.setText(text)
        self.status.setStyleSheet("color: #c92a2a" if error else "")

    def _enable(self, enabled: bool) -> None:
        for widget in (
            self.security,
            self.ask,
            self.ask_fallback,
            self.table,
            self.remove_button,
            self.agent,
            self.program,
            self.browse_button,
            self.arguments,
            self.add_button,
            self.save_button,
        ):
            widget.setEnabled(enabled)
        self.reload_button.setEnabled(not self._busy)

    # ------------------------------------------------------------------ loading

    async def load(self, note: str | None = None, *, error: bool = False) -> bool:
        """Show the document as stored now (``note`` said instead of "Loaded").

        Returns:
            False when it could not be read (the editor stays disabled, saying why).
        """
        self._busy = True
        self._enable(False)
        try:
            payload = await self.access.get()
        except ApprovalsError as exc:
            self._busy = False
            self.loaded = None
            self._enable(False)
            self._say(f"Could not read the command approvals: {exc}", error=True)
            return False
        self._busy = False
        self._show(payload)
        self._say(note or f"Stored in {payload.get('path', 'the config folder')}.", error=error)
        return True

    def _show(self, payload: dict[str, Any]) -> None:
        file = payload.get("file")
        self.loaded = copy.deepcopy(file) if isinstance(file, dict) else {"version": 1}
        self.base_hash = str(payload.get("hash") or "")
        defaults = self.loaded.get("defaults") or {}
        for box, key in (
            (self.security, "security"),
            (self.ask, "ask"),
            (self.ask_fallback, "askFallback"),
        ):
            index = box.findData(defaults.get(key, _BASELINE[key]))
            box.setCurrentIndex(max(index, 0))
        agents = self.loaded.get("agents") or {}
        self.entries = [
            (str(name), dict(entry))
            for name, agent in agents.items()
            if isinstance(agent, dict)
            for entry in agent.get("allowlist") or []
            if isinstance(entry, dict)
        ]
        self._fill_table()
        self.agent.clear()
        self.agent.addItems(["*", *sorted(str(n) for n in agents if n != "*")])
        own = [
            f"{name}: " + ", ".join(f"{k}={agent[k]}" for k in _BASELINE if k in agent)
            for name, agent in agents.items()
            if isinstance(agent, dict) and any(k in agent for k in _BASELINE)
        ]
        self.overrides.setText(
            "These agents set their own modes (kept as they are): " + "; ".join(own)
            if own
            else "Every agent uses these modes."
        )
        self._enable(True)

    def _fill_table(self) -> None:
        self.table.setRowCount(len(self.entries))
        for row, (agent, entry) in enumerate(self.entries):
            used = _when(entry.get("lastUsedAt"))
            cells = [
                "every agent (*)" if agent == "*" else agent,
                _shown(entry.get("pattern", "")),
                _shown(entry.get("argPattern") or "any"),
                used,
            ]
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column == 3 and entry.get("lastUsedCommand"):
                    item.setToolTip(f"Last ran: {_shown(entry['lastUsedCommand'], 400)}")
                self.table.setItem(row, column, item)

    # ------------------------------------------------------------------ editing

    def browse(self) -> QFileDialog:
        """Pick the program's file (a window-modal picker opened without a nested loop; the
        file chosen goes into the program field, resolved when added)."""
        picker = QFileDialog(self, "Program to allow", "/usr/bin")
        picker.setFileMode(QFileDialog.FileMode.ExistingFile)
        picker.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        picker.fileSelected.connect(self.program.setText)
        picker.open()
        return picker

    def add_entry(self) -> bool:
        """Add the typed program (resolved to its absolute path) to the chosen agent's
        allowlist; a bad value is named and nothing is added."""
        agent = self.agent.currentText().strip() or "*"
        try:
            if not _AGENT.match(agent):
                raise ValueError(f"{agent!r} is not an agent id (letters, digits, . _ -, or *).")
            pattern = resolve_entry_pattern(self.program.text())
            arguments = self.arguments.text().strip()
            if arguments:
                try:
                    re.compile(arguments)
                except re.error as exc:
                    raise ValueError(
                        f"The argument pattern is not a regular expression: {exc}."
                    ) from exc
            entry = {"pattern": pattern, **({"argPattern": arguments} if arguments else {})}
            key = (agent, pattern, arguments)
            if any(
                (a, e.get("pattern"), e.get("argPattern") or "") == key for a, e in self.entries
            ):
                raise ValueError(f"{pattern} is already in the allowlist of {agent}.")
        except ValueError as exc:
            self._say(str(exc), error=True)
            return False
        self.entries.append((agent, entry))
        self._fill_table()
        self.program.clear()
        self.arguments.clear()
        self._say(f"Added {pattern}; not saved yet.")
        return True

    def remove_selected(self) -> None:
        """Remove the selected rows."""
        rows = {index.row() for index in self.table.selectionModel().selectedRows()}
        if not rows:
            self._say("Select the entries to remove first.", error=True)
            return
        self.entries = [pair for row, pair in enumerate(self.entries) if row not in rows]
        self._fill_table()
        self._say(f"Removed {len(rows)} entr{'y' if len(rows) == 1 else 'ies'}; not saved yet.")

    def document(self) -> dict[str, Any]:
        """The loaded document with the edits: unknown fields and the agents' own modes
        are kept; a default left at the baseline stays unset when it was unset."""
        file = copy.deepcopy(self.loaded or {"version": 1})
        before = file.get("defaults") if isinstance(file.get("defaults"), dict) else {}
        defaults = dict(before or {})
        for box, key in (
            (self.security, "security"),
            (self.ask, "ask"),
            (self.ask_fallback, "askFallback"),
        ):
            value = box.currentData()
            if key in defaults or value != _BASELINE[key]:
                defaults[key] = value
        file["defaults"] = defaults
        agents = {
            name: {k: v for k, v in agent.items() if k != "allowlist"}
            for name, agent in (file.get("agents") or {}).items()
            if isinstance(agent, dict)
        }
        for name, entry in self.entries:
            agents.setdefault(name, {}).setdefault("allowlist", []).append(entry)
        file["agents"] = agents
        return file

    @property
    def dirty(self) -> bool:
        """Whether there are edits not saved."""
        if self.loaded is None:
            return False
        return _comparable(self.document()) != _comparable(self.loaded)

    async def save(self) -> bool:
        """Compare-and-swap the edited document.

        Returns:
            True when saved (or nothing to save); False when it changed meanwhile (the
            current document is then shown) or the node refused it (said in the status).
        """
        if self.loaded is None:
            return False
        if not self.dirty:
            self._say("Nothing to save.")
            return True
        self._busy = True
        self._enable(False)
        try:
            payload = await self.access.set(self.document(), self.base_hash)
        except ApprovalsConflict:
            self._busy = False
            await self.load(CONFLICT, error=True)
            return False
        except ApprovalsError as exc:
            self._busy = False
            self._enable(True)
            self._say(f"Not saved: {exc}", error=True)
            return False
        self._busy = False
        self._show(payload)
        self._say("Saved. The next command follows these approvals.")
        return True


def _comparable(file: dict[str, Any]) -> dict[str, Any]:
    """The document without what normalization adds (ids) or drops (empty lists)."""
    agents: dict[str, Any] = {}
    for name, agent in (file.get("agents") or {}).items():
        if not isinstance(agent, dict):
            continue
        kept = {k: v for k, v in agent.items() if k != "allowlist"}
        entries = [
            {k: v for k, v in e.items() if k != "id"}
            for e in agent.get("allowlist") or []
            if isinstance(e, dict)
        ]
        if entries:
            kept["allowlist"] = entries
        if kept:
            agents[name] = kept
    return {"defaults": file.get("defaults") or {}, "agents": agents}
