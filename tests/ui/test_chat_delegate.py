"""Chat rows render Markdown (code in monospace, coloured by language), inline images, and
grow with their text; model text is never HTML, loads nothing, and hostile Markdown is
bounded and stays inside its bubble."""

from __future__ import annotations

import base64
import contextlib
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QUrl
from PySide6.QtGui import QColor, QFont, QImage, QPalette, QTextDocument, QTextTable
from PySide6.QtWidgets import QApplication, QListView

from openclaw_desktop.chat import ChatItem, ChatTimeline, ToolCard
from tests.helpers.fake_llm import FakeLLM
from ui.widgets.chat_delegate import (
    THUMBNAIL,
    ChatDelegate,
    bubble_colour,
    decode_image,
    render_document,
)
from ui.widgets.chat_model import ChatListModel
from ui.widgets.highlight import language_rules
from ui.widgets.markdown import SHOWN_CHARS, SHOWN_LINES, SafeDocument


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


def test_tool_cards_say_the_call_and_show_the_returned_screenshot(qapp: QApplication) -> None:
    """Which command on which node with its key arguments, and the image the tool returned,
    scaled into the bubble."""
    card = ToolCard(
        "c1", "node_invoke", "completed", 3, "{}", "screen.snapshot on laptop · format=png"
    )
    shot = [{"mimeType": "image/png", "data": _png(1280, 800)}]
    item = ChatItem("r:tool:c1", "tool", "", "done", tool=card, images=shot)
    doc = render_document(item, 300, QPalette())
    assert doc.toPlainText().startswith("✓ node_invoke · screen.snapshot on laptop · format=png")
    assert _image_names(doc) == ["chat-image:0"]
    assert doc.size().width() <= 301, "the screenshot is scaled to the bubble"
    assert doc.size().height() > 150, "and shown"


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


# ---------------------------------------------------------------- model text is never HTML
def _image_names(doc: QTextDocument) -> list[str]:
    """The names of the images a document would draw."""
    names = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isImageFormat():
                names.append(fmt.toImageFormat().name())
            it += 1
        block = block.next()
    return names


def _paint_in_a_view(qapp: QApplication, items: list[ChatItem]) -> QImage:
    """The rows laid out and painted by the chat's own list view and delegate."""
    timeline = ChatTimeline("agent:main:main")
    timeline.items.extend(items)
    model = ChatListModel(timeline)
    model.refresh()
    view = QListView()
    view.setModel(model)
    view.setItemDelegate(ChatDelegate(view))
    view.setWordWrap(True)
    view.resize(520, 900)
    view.show()
    qapp.processEvents()
    picture = view.grab().toImage()
    qapp.processEvents()
    view.close()
    return picture


def test_markup_in_model_text_is_shown_literally_and_fetches_nothing(
    qapp: QApplication, tmp_path: Path
) -> None:
    """``<node>``, ``<b>x</b>`` and ``<img src=http://…>`` are text, the rest of the reply
    after them is shown, and neither raw HTML nor a Markdown image reaches the network (a
    real HTTP server on loopback records every request) or the filesystem."""
    on_disk = tmp_path / "secret.png"
    QImage.fromData(QByteArray(base64.b64decode(_png(8, 8)))).save(str(on_disk))
    with FakeLLM() as server:
        pixel = f"http://127.0.0.1:{server.port}/pixel.png"
        text = (
            "Commands that work without a model: /nodes <node> list, <b>x</b> and "
            f"<img src={pixel}> then the rest.\n\n"
            f"<div>a block</div>\n\n![tracker]({pixel}?md=1) and ![local]({on_disk.as_uri()})"
            f" and ![relative]({on_disk})\n\nLast line."
        )
        item = ChatItem("r:assistant", "assistant", text)
        doc = render_document(item, 480, QPalette())
        shown = doc.toPlainText()
        for literal in ("<node>", "<b>x</b>", f"<img src={pixel}>", "<div>a block</div>"):
            assert literal in shown, (literal, shown)
        assert "then the rest." in shown and "Last line." in shown
        assert "[image: tracker]" in shown and "[image: local]" in shown
        assert _image_names(doc) == [], "no image named by the model is left to load"
        _paint_in_a_view(qapp, [item, ChatItem("u:user", "user", text)])
        assert server.requests == [], [r.path for r in server.requests]
        # The recorder works: a real fetch of the same address is seen.
        with contextlib.suppress(urllib.error.HTTPError):
            urllib.request.urlopen(pixel, timeout=5).close()
        assert [r.path for r in server.requests] == ["/pixel.png"]


def test_row_documents_load_no_resource(qapp: QApplication, tmp_path: Path) -> None:
    """A plain QTextDocument reads any local file an image URL names; a row's document
    loads nothing it was not given (only the item's own images are shown)."""
    on_disk = tmp_path / "file.png"
    QImage.fromData(QByteArray(base64.b64decode(_png(4, 4)))).save(str(on_disk))
    url = QUrl.fromLocalFile(str(on_disk))
    kind = QTextDocument.ResourceType.ImageResource
    assert QTextDocument().resource(kind, url) is not None, "Qt's default reads the file"
    assert SafeDocument().resource(kind, url) is None
    images = [{"mimeType": "image/png", "data": _png(40, 30)}]
    doc = render_document(
        ChatItem("i", "assistant", "![x](file.png)", images=images), 400, QPalette()
    )
    assert _image_names(doc) == ["chat-image:0"]


def test_line_breaks_are_kept_and_code_is_left_as_it_is(qapp: QApplication) -> None:
    """A message written line by line (``/help`` on a gateway without a model) keeps its
    lines; code blocks and tables are unchanged."""
    text = (
        "Commands that work without a model:\n/nodes — list connected devices\n"
        "/invoke <node> <command> [json params] — run a node command\n/help — this list\n\n"
        "```\nfirst\nsecond\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    )
    shown = render_document(ChatItem("h", "assistant", text), 600, QPalette()).toPlainText()
    assert (
        "model:\n/nodes — list connected devices\n/invoke <node> <command> [json params] — run"
        " a node command\n/help — this list\n" in shown
    ), shown
    assert "\nfirst\nsecond\n" in shown
    assert "\na\nb\n1\n2\n" in shown, "the table is still a table (one cell a line)"


def test_broken_lines_are_lines_not_paragraphs(qapp: QApplication) -> None:
    """A paragraph written over several lines has no paragraph gap between its lines (Qt
    makes each a block of its own); paragraphs keep theirs, and no marker is left in it."""
    text = 'Before\n\nx: {\n  "a": [\n    1\n  ]\n}\n\nAfter'
    doc = render_document(ChatItem("j", "assistant", text), 600, QPalette())
    blocks = []
    block = doc.begin()
    while block.isValid():
        fmt = block.blockFormat()
        blocks.append((block.text(), fmt.topMargin(), fmt.bottomMargin()))
        block = block.next()
    lines = [b for b in blocks if b[0] in ("x: {", '"a": [', "1", "]", "}")]
    assert [b[0] for b in lines] == ["x: {", '"a": [', "1", "]", "}"]
    assert [b[2] for b in lines[:-1]] == [0.0] * 4, "no gap below a broken line"
    assert [b[1] for b in lines[1:]] == [0.0] * 4, "no gap above the next line"
    assert lines[0][1] > 0 and lines[-1][2] > 0, "the paragraph keeps its own margins"
    assert "\u2063" not in doc.toPlainText()
    assert doc.toPlainText().startswith('Before\nx: {\n"a": [\n1\n]\n}\nAfter')


# ---------------------------------------------------------------- bounded, and inside the bubble
HOSTILE = {
    "10,000 nested lists": "- " * 10_000 + "x\n",
    "10,000 nested quotes": ">" * 10_000 + " x\n",
    "indented nesting": "".join("  " * i + "- x\n" for i in range(300)),
    "a huge table": "|" + "h|" * 60 + "\n|" + "-|" * 60 + "\n" + ("|" + "c|" * 60 + "\n") * 3_000,
    "a one-column table without pipes": "a|\n-|\n" + "row\n" * 20_000,
    "a 1 MB line": "x" * 1_000_000,
    "a 1 MB line of words": "word " * 200_000,
    "a 1 MB code line": "```\n" + "y" * 1_000_000 + "\n```\n",
    "an emphasis bomb": "*a" * 50_000,
    "a bracket bomb": "[" * 100_000,
    "a link bomb": "[a](b)" * 20_000,
    "25,000 list items": "- a\n" * 25_000,
    "50,000 short lines": "a\n" * 50_000,
    "100,000 line breaks": "\n" * 100_000,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_markdown_renders_bounded_and_inside_the_row(qapp: QApplication, name: str) -> None:
    """Each renders (within the test's timeout: the figures are in bench/ui_markdown.py),
    its document is bounded, and nothing is wider than the bubble."""
    text = HOSTILE[name]
    doc = render_document(ChatItem("h", "assistant", text), 400, QPalette())
    assert doc.characterCount() <= min(len(text), SHOWN_CHARS) + 100
    assert doc.blockCount() <= SHOWN_LINES + 10
    assert doc.size().width() <= 400 + 1, f"{name}: {doc.size().width()} px wide"
    if len(text) > SHOWN_CHARS or text.count("\n") > SHOWN_LINES:
        assert "more characters not shown" in doc.toPlainText()


def test_long_code_lines_and_wide_tables_stay_inside_the_bubble(qapp: QApplication) -> None:
    """Code blocks wrap instead of running out of the bubble; a table's header cells are
    bold, start on their first line, and are aligned like their columns."""
    text = (
        '```bash\nfor f in *.log; do grep -c ERROR "$f"; done | sort -n | tail -n 5 && '
        'echo "done with every log of this folder and the next one"\n```\n\n'
        "| species | max weight | region |\n|---|---:|:---:|\n"
        "| American lobster | 20 kg | North Atlantic, Labrador to North Carolina |\n"
        "| European lobster | 6 kg | Eastern Atlantic |\n\n"
        "| " + " | ".join(f"column{i}withalongname" for i in range(12)) + " |\n"
        "|" + "---|" * 12 + "\n| " + " | ".join("v" for _ in range(12)) + " |\n"
    )
    doc = render_document(ChatItem("c", "assistant", text), 360, QPalette())
    assert doc.size().width() <= 361, doc.size().width()
    code = doc.begin()
    assert code.text().startswith("for f in") and code.layout().lineCount() > 1, "wrapped"
    tables = [f for f in doc.rootFrame().childFrames() if isinstance(f, QTextTable)]
    assert len(tables) == 2
    table = tables[0]
    for column in range(3):
        header = doc.findBlock(table.cellAt(0, column).firstPosition())
        body = doc.findBlock(table.cellAt(1, column).firstPosition())
        assert header.text() == ("species", "max weight", "region")[column]
        assert header.blockFormat().alignment() == body.blockFormat().alignment()
        assert header.charFormat().fontWeight() == QFont.Weight.Bold or all(
            r.format.fontWeight() == QFont.Weight.Bold for r in header.textFormats()
        )
