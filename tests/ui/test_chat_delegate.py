"""Chat rows render Markdown (code in monospace) and grow with their text."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from openclaw_desktop.chat import ChatItem, ToolCard
from ui.widgets.chat_delegate import render_document

pytestmark = pytest.mark.ui


def test_markdown_and_code_blocks(qapp: QApplication) -> None:
    """Bold becomes bold, fenced code keeps its text, longer text is taller."""
    palette = QPalette()
    item = ChatItem("r:assistant", "assistant", "**Done.**\n\n```python\nprint('hi')\n```\n")
    doc = render_document(item, 400, palette)
    assert "Done." in doc.toPlainText() and "print('hi')" in doc.toPlainText()
    assert "**" not in doc.toPlainText(), "Markdown is rendered, not shown"
    short = render_document(ChatItem("a", "assistant", "one line"), 400, palette)
    long = render_document(ChatItem("b", "assistant", "line\n\n" * 20), 400, palette)
    assert long.size().height() > short.size().height()


def test_tool_cards_are_plain_text(qapp: QApplication) -> None:
    """A tool card never interprets its (redacted) output as Markdown or HTML."""
    card = ToolCard("c1", "node_invoke", "completed", 2, "<b>not bold</b> **nor this**")
    doc = render_document(ChatItem("t", "tool", tool=card), 400, QPalette())
    text = doc.toPlainText()
    assert "<b>not bold</b>" in text and "**nor this**" in text
    assert "node_invoke (2 arguments)" in text
