"""Chat rows render Markdown (code in monospace, coloured by language), inline images, and
grow with their text."""

from __future__ import annotations

import base64

import pytest
from PySide6.QtCore import QBuffer, QIODevice
from PySide6.QtGui import QColor, QImage, QPalette, QTextDocument
from PySide6.QtWidgets import QApplication

from openclaw_desktop.chat import ChatItem, ToolCard
from ui.widgets.chat_delegate import THUMBNAIL, bubble_colour, decode_image, render_document
from ui.widgets.highlight import language_rules

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


def _code_colours(doc: QTextDocument) -> dict[str, str]:
    """The foreground colour of each word in the document's code blocks (by layout format)."""
    out: dict[str, str] = {}
    block = doc.begin()
    while block.isValid():
        layout = block.layout()
        for fmt_range in layout.formats():
            word = block.text()[fmt_range.start : fmt_range.start + fmt_range.length]
            out[word] = fmt_range.format.foreground().color().name()
        block = block.next()
    return out


def test_code_blocks_are_coloured_by_language(qapp: QApplication) -> None:
    """Keywords, strings and comments of a fenced block get their own colours; prose not."""
    text = "def is prose here\n\n```python\ndef f():\n    return 'hi'  # done\n```\n"
    doc = render_document(ChatItem("c", "assistant", text), 500, QPalette())
    colours = _code_colours(doc)
    assert {"def", "return", "'hi'", "# done"} <= set(colours), colours
    assert len({colours["def"], colours["'hi'"], colours["# done"]}) == 3
    assert colours["def"] == colours["return"]
    prose = doc.begin()
    assert not prose.layout().formats(), "text outside code blocks keeps the default colour"


def test_language_rules_cover_shell_and_json() -> None:
    """Each family has its own rules; unknown languages fall back to C-like ones."""
    shell = [kind for pattern, kind in language_rules("bash") if pattern.search("echo $HOME")]
    assert "name" in shell and "keyword" in shell
    json_kinds = {kind for pattern, kind in language_rules("json") if pattern.search('{"a": 1}')}
    assert {"name", "number"} <= json_kinds
    assert any(p.search("// note") for p, k in language_rules("rust") if k == "comment")


def _png(width: int, height: int) -> str:
    picture = QImage(width, height, QImage.Format.Format_RGB32)
    picture.fill(QColor("#3366cc"))
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    picture.save(buffer, "PNG")  # type: ignore[call-overload]  # the stub wants bytes
    return base64.b64encode(bytes(buffer.data().data())).decode()


def test_images_are_shown_inline_as_thumbnails(qapp: QApplication) -> None:
    """An image block becomes a scaled inline picture; a broken one is named, not fatal."""
    images = [{"mimeType": "image/png", "data": _png(1200, 900)}]
    with_image = render_document(ChatItem("i", "user", "look", images=images), 600, QPalette())
    plain = render_document(ChatItem("p", "user", "look"), 600, QPalette())
    assert with_image.size().height() >= plain.size().height() + THUMBNAIL.height() - 10
    thumb = decode_image(images[0])
    assert thumb is not None and thumb.width() == THUMBNAIL.width()
    broken = [{"mimeType": "image/png", "data": "not base64!"}]
    assert decode_image(broken[0]) is None
    doc = render_document(ChatItem("b", "assistant", "x", images=broken), 600, QPalette())
    assert doc.toPlainText().startswith("x")


def test_dark_palette_keeps_rows_readable(qapp: QApplication) -> None:
    """On a dark palette the bubbles are dark too (light text stays readable)."""
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Highlight, QColor("#2a82da"))
    for role in ("user", "assistant", "error"):
        assert bubble_colour(role, dark).lightness() < 128, role
    assert bubble_colour("error", QPalette()).lightness() > 128
