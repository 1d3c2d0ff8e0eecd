"""The chat pane: the message list, the composer with its attachments, Send / Stop / Steer.

Keyboard: Enter sends, Shift+Enter inserts a newline, Esc stops the reply. Files are attached
with the Attach button, by pasting, or by dropping them anywhere on the pane.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPoint, Qt, QTimer
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListView,
    QMenu,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from openclaw_desktop.chat import ChatItem
from openclaw_desktop.chat.attachments import DEFAULT_LIMITS, AttachmentLimits
from ui.presenters.chat import ChatPresenter
from ui.tasks import TaskSet
from ui.widgets.chat_delegate import ChatDelegate
from ui.widgets.chat_model import ITEM_ROLE, ChatListModel
from ui.widgets.composer import AttachmentTray, ComposerEdit, ask_send_images, local_files
from ui.widgets.dictation import DictationBar

__all__ = ["THINKING_LEVELS", "ChatView"]

#: The view catches up with a streaming reply at most this often (ms): about 30 frames/s.
FRAME_MS = 33
#: ... and at least this often, however long catching up takes.
MAX_FRAME_MS = 250

#: Thinking levels offered (the gateway maps them to the provider's reasoning budget).
THINKING_LEVELS = ["off", "low", "medium", "high"]


class ChatView(QWidget):
    """Messages, composer and the actions of one session."""

    def __init__(self, presenter: ChatPresenter, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.presenter = presenter
        self.model = ChatListModel(presenter.timeline)
        self.messages = QListView(self)
        self.messages.setObjectName("messages")
        self.messages.setModel(self.model)
        self.messages.setItemDelegate(ChatDelegate(self.messages))
        self.messages.setWordWrap(True)
        self.messages.setUniformItemSizes(False)
        self.messages.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.messages.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        # Always there: a bar appearing would narrow the rows and lay them all out again.
        self.messages.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.messages.verticalScrollBar().valueChanged.connect(self._scrolled)
        self.attachments = AttachmentTray(self._limits, self)
        self.attach_error = QLabel(self)
        self.attach_error.setObjectName("attachment-error")
        self.attach_error.setTextFormat(Qt.TextFormat.PlainText)  # it names the user's files
        self.attach_error.setWordWrap(True)
        self.attach_error.setVisible(False)
        self.attachments.refused.connect(self._refused)
        self.attachments.changed.connect(lambda: self.attach_error.setVisible(False))
        self.composer = ComposerEdit(self.attachments, self)
        self.composer.setObjectName("composer")
        self.composer.setPlaceholderText("Message OpenClaw (Enter sends, Shift+Enter: new line)")
        self.composer.setMaximumHeight(96)
        self.composer.installEventFilter(self)
        self.send_button = QPushButton("Send", self)
        self.stop_button = QPushButton("Stop", self)
        self.steer_button = QPushButton("Steer", self)
        self.attach_button = QPushButton("Attach…", self)
        self.attach_button.setToolTip("Attach images or files (or paste / drop them here)")
        self.attach_button.clicked.connect(self._pick_files)
        self.steer_button.setToolTip(
            "Send the oldest queued message into the running reply now "
            "(double-click a queued message to steer that one)"
        )
        self.stop_button.setEnabled(False)
        self.steer_button.setEnabled(False)
        self.send_button.clicked.connect(self._send)
        self.stop_button.clicked.connect(self._stop)
        self.steer_button.clicked.connect(self._steer)
        buttons = QHBoxLayout()
        buttons.addWidget(self.composer, 1)
        column = QVBoxLayout()
        for button in (self.send_button, self.steer_button, self.stop_button, self.attach_button):
            column.addWidget(button)
        buttons.addLayout(column)
        self.model_picker = QComboBox(self)
        self.model_picker.setObjectName("model")
        self.model_picker.setToolTip("The model of this session")
        self.thinking_picker = QComboBox(self)
        self.thinking_picker.setObjectName("thinking")
        self.thinking_picker.addItems(THINKING_LEVELS)
        self.thinking_picker.setToolTip("How much the model thinks before answering")
        self.model_picker.activated.connect(
            lambda _i: self._spawn(self.presenter.choose(model=self.model_picker.currentText()))
        )
        self.thinking_picker.activated.connect(
            lambda _i: self._spawn(
                self.presenter.choose(thinking=self.thinking_picker.currentText())
            )
        )
        pickers = QHBoxLayout()
        pickers.addWidget(self.model_picker, 1)
        pickers.addWidget(self.thinking_picker)
        layout = QVBoxLayout(self)
        layout.addLayout(pickers)
        layout.addWidget(self.messages, 1)
        self.dictation: DictationBar | None = None
        #: The warning shown before images go to a text-only model (while it is open).
        self.image_warning: QMessageBox | None = None
        if presenter.voice is not None:
            self.dictation = DictationBar(presenter.voice, self)
            layout.addWidget(self.dictation)
        layout.addWidget(self.attachments)
        layout.addWidget(self.attach_error)
        layout.addLayout(buttons)
        self.setAcceptDrops(True)
        self._frame = QTimer(self)
        self._frame.setSingleShot(True)
        self._frame.setInterval(FRAME_MS)
        self._frame.timeout.connect(self.flush)
        self.messages.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.messages.customContextMenuRequested.connect(self._row_menu)
        self.messages.doubleClicked.connect(self._row_activated)
        presenter.changed.connect(self._changed)
        presenter.busy.connect(self._busy)
        presenter.models_changed.connect(self._models)
        presenter.thinking_changed.connect(self._thinking)
        presenter.thinking_options.connect(self._thinking_options)
        self._tasks = TaskSet()
        self._ptt = False
        #: The user just sent: the next catch-up scrolls to the newest message even when
        #: they had scrolled up to read.
        self._to_newest = False

    # ------------------------------------------------------------------ events
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        """Enter sends, Shift+Enter is a newline, Esc stops."""
        if (
            watched is self.composer
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
        ):
            key, mods = event.key(), event.modifiers()
            if (
                key in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
                and not mods & Qt.KeyboardModifier.ShiftModifier
            ):
                self._send()
                return True
            if key == Qt.Key.Key_Escape:
                self._stop()
                return True
            if self._push_to_talk(event, pressed=True):
                return True
        if (
            watched is self.composer
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyRelease
            and self._push_to_talk(event, pressed=False)
        ):
            return True
        return super().eventFilter(watched, event)

    def _push_to_talk(self, event: QKeyEvent, *, pressed: bool) -> bool:
        """Ctrl+Space held: dictate while held, send on release (key repeats ignored)."""
        voice = self.presenter.voice
        if voice is None or event.key() != Qt.Key.Key_Space:
            return False
        if pressed and not event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            return False
        if pressed and not voice.listening and not self._ptt:
            if not event.isAutoRepeat():
                self._ptt = True
                voice.start()
            return True
        if not pressed and self._ptt:
            if not event.isAutoRepeat():
                self._ptt = False
                voice.stop()
            return True
        return pressed and self._ptt

    def _spawn(self, coro: Any) -> None:
        self._tasks.spawn(coro)

    def _send(self) -> None:
        text = self.composer.toPlainText()
        if not text.strip() and not self.attachments.items:
            return
        images = sum(1 for a in self.attachments.items if a.is_image)
        model = self.presenter.text_only_model() if images else None
        if model is not None:
            self.image_warning = ask_send_images(self, model, images, self._send_now)
            return
        self._send_now()

    def _send_now(self) -> None:
        text = self.composer.toPlainText()
        self.composer.clear()
        self._to_newest = True
        self._spawn(self.presenter.send(text, self.attachments.take()))

    # ------------------------------------------------------------------ attachments
    def _limits(self) -> AttachmentLimits:
        """The connected gateway's ``policy.attachments`` (defaults before hello)."""
        try:
            return AttachmentLimits.from_policy(self.presenter.client.hello.policy)
        except RuntimeError:
            return DEFAULT_LIMITS

    def _pick_files(self) -> None:
        names, _ = QFileDialog.getOpenFileNames(self, "Attach files")
        self.attachments.add_paths([Path(n) for n in names])

    def _refused(self, reason: str) -> None:
        self.attach_error.setText(f"Not attached: {reason}")
        self.attach_error.setVisible(True)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802
        """Qt: files and images may be dropped on the pane."""
        mime = event.mimeData()
        if local_files(mime) or mime.hasImage():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802
        """Qt: dropped files become attachments."""
        self.composer.insertFromMimeData(event.mimeData())
        event.acceptProposedAction()

    def _stop(self) -> None:
        self._spawn(self.presenter.stop())

    def _steer(self) -> None:
        queued = self.presenter.timeline.queued
        if queued and queued[0].run_id is not None:
            self._spawn(self.presenter.steer(queued[0].run_id))

    def _changed(self) -> None:
        """The timeline changed: repaint at most every :data:`FRAME_MS` (a reply streaming
        200 deltas a second costs a few layouts a second, not 200)."""
        self.steer_button.setEnabled(bool(self.presenter.timeline.queued))
        if not self._frame.isActive():
            self._frame.start()

    def flush(self) -> None:
        """Bring the view up to date with the timeline now. A slow catch-up (a very long
        reply re-rendered) spaces the next ones out, so the loop stays mostly free."""
        self._frame.stop()
        began = time.perf_counter()
        try:
            self._catch_up()
        finally:
            spent_ms = (time.perf_counter() - began) * 1000
            self._frame.setInterval(max(FRAME_MS, min(MAX_FRAME_MS, round(spent_ms * 4))))

    def _catch_up(self) -> None:
        bar = self.messages.verticalScrollBar()
        following = bar.value() >= bar.maximum() - 4  # the user has not scrolled up to read
        if self.model.refresh():
            self.messages.doItemsLayout()  # heights change as replies stream
        if following or self._to_newest:
            self._to_newest = False
            self.messages.scrollToBottom()
        self.steer_button.setEnabled(bool(self.presenter.timeline.queued))

    def _scrolled(self, value: int) -> None:
        """At the top with earlier messages hidden: show them, keeping the reader's place."""
        bar = self.messages.verticalScrollBar()
        if value != bar.minimum() or not self.model.hidden_before:
            return
        from_bottom = bar.maximum() - value
        if self.model.show_earlier():
            self.messages.doItemsLayout()
            bar.setValue(bar.maximum() - from_bottom)

    # ------------------------------------------------------------------ queued messages
    def _queued_at(self, index: QModelIndex) -> ChatItem | None:
        item = index.data(ITEM_ROLE) if index.isValid() else None
        return item if isinstance(item, ChatItem) and item.status == "queued" else None

    def _row_menu(self, point: QPoint) -> None:
        item = self._queued_at(self.messages.indexAt(point))
        if item is None or item.run_id is None:
            return
        menu = QMenu(self)
        menu.setAccessibleName("Queued message actions")
        steer = menu.addAction("Steer into the running reply now")
        chosen = menu.exec(self.messages.viewport().mapToGlobal(point))
        if chosen is steer:
            self._spawn(self.presenter.steer(item.run_id))

    def _row_activated(self, index: QModelIndex) -> None:
        item = self._queued_at(index)
        if item is not None and item.run_id is not None:
            self._spawn(self.presenter.steer(item.run_id))

    def _models(self, refs: list[str], current: str) -> None:
        self.model_picker.clear()
        self.model_picker.addItems(refs or ["(no model: offline)"])
        self.model_picker.setEnabled(bool(refs))
        if current in refs:
            self.model_picker.setCurrentText(current)

    def _thinking_options(self, levels: list[str]) -> None:
        """The levels this session's model offers (instead of the usual four)."""
        current = self.thinking_picker.currentText()
        self.thinking_picker.clear()
        self.thinking_picker.addItems(levels)
        if current in levels:
            self.thinking_picker.setCurrentText(current)

    def _thinking(self, level: str) -> None:
        """The session's thinking level as kept by the gateway (across restarts)."""
        if level and self.thinking_picker.findText(level) < 0:
            self.thinking_picker.addItem(level)
        if level:
            self.thinking_picker.setCurrentText(level)

    def _busy(self, busy: bool) -> None:
        self.stop_button.setEnabled(busy)
