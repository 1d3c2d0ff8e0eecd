"""Model text as a laid-out document, safely.

Model text is never HTML: Markdown is parsed with raw HTML off, so ``<node>``, ``<b>x</b>``
and ``<img src=…>`` are shown as the characters they are. Images the text names
(``![alt](url)``) become the words ``[image: alt]``: they are never loaded, and
:class:`SafeDocument` loads no resource at all, from the network or the filesystem; the only
pictures a row shows are the ones the renderer put in itself (attachments, tool results).

Hostile input renders in bounded time. Qt lays out deep nesting, huge tables and long
unbroken runs in time that grows faster than their size, so the input is bounded before Qt
sees it: a row shows at most :data:`SHOWN_CHARS` characters and :data:`SHOWN_LINES` lines
(and says how much more there is), text with more table cells than :data:`MAX_TABLE_CELLS`
is parsed without tables, text with more list items than :data:`MAX_LIST_ITEMS` or whose
document would have more than :data:`MAX_BLOCKS` paragraphs or :data:`MAX_FRAGMENTS`
formatting runs is shown as plain text, nesting is drawn at most :data:`MAX_DEPTH` levels
deep, and a run of :data:`LONG_RUN` characters without a space makes the row wrap anywhere
(word wrapping such a run is quadratic, and so is importing a long list).

The row never grows wider than its bubble: code blocks wrap (a chat row cannot scroll
sideways), and table header cells are aligned with their columns.
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import (
    QFont,
    QPalette,
    QTextBlock,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextFrame,
    QTextLength,
    QTextList,
    QTextOption,
    QTextTable,
)

__all__ = [
    "LONG_RUN",
    "MAX_BLOCKS",
    "MAX_DEPTH",
    "MAX_FRAGMENTS",
    "MAX_LIST_ITEMS",
    "MAX_TABLE_CELLS",
    "SHOWN_CHARS",
    "SHOWN_LINES",
    "SafeDocument",
    "fits",
    "line_breaks",
    "render_markdown",
    "render_plain",
    "shown_text",
]

#: A row shows at most this many characters and lines of a message (the transcript keeps
#: them all).
SHOWN_CHARS = 100_000
SHOWN_LINES = 5_000
#: Beyond this many list items the message is shown as plain text (Qt's Markdown import
#: takes time in the square of a list's length: 10,000 items take seconds).
MAX_LIST_ITEMS = 1_000
#: Beyond this many table cells (estimated from the text), tables are shown as their text.
MAX_TABLE_CELLS = 2_000
#: Beyond this many paragraphs or formatting runs, the message is shown as plain text.
MAX_BLOCKS = 5_000
MAX_FRAGMENTS = 10_000
#: Lists and quotes are indented at most this many levels.
MAX_DEPTH = 6
#: Pixels per level of lists and quotes.
INDENT_PX = 24
#: A run of this many characters without a space: the row wraps anywhere, not at words.
LONG_RUN = 200

_F = QTextDocument.MarkdownFeature
#: GitHub's dialect (tables, strikethrough, task lists, autolinks) without raw HTML.
_FEATURES = _F(_F.MarkdownDialectGitHub.value | _F.MarkdownNoHTML.value)
_MD_FLAG_TABLES = 0x0100  # md4c's MD_FLAG_TABLES, part of the GitHub dialect
_NO_TABLES = _F(_FEATURES.value & ~_MD_FLAG_TABLES)
_LONG_RUN = re.compile(rf"\S{{{LONG_RUN}}}")
#: A table's delimiter row (``|---|:--:|``): the text has a table only when it has one.
_DELIMITER_ROW = re.compile(r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-*:?[ \t]*)*\|?[ \t]*$", re.M)
_QUOTE_LEVEL = QTextFormat.Property.BlockQuoteLevel
_KEEP = QTextCursor.MoveMode.KeepAnchor
#: A line that starts a list item (in a quote too).
_LIST_ITEM = re.compile(r"^[ \t>]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)", re.M)
#: The start (or end) of a fenced code block.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
#: Ends a line the message broke (see :func:`line_breaks`) until the document is built:
#: Qt makes each such line a block of its own, with a paragraph's margins, and this tells
#: them from paragraphs (it is removed again).
_BROKEN = "\u2063"


class SafeDocument(QTextDocument):
    """A text document that loads nothing by itself: every resource it shows was added with
    :meth:`addResource` by the renderer. Qt's default would read any local file a URL names
    (or block on a device such as ``/dev/zero``)."""

    def loadResource(self, kind: int, name: QUrl | str) -> Any:  # noqa: N802
        """Qt: a resource that was not added. There is none."""
        return None


def shown_text(text: str) -> str:
    """``text`` cut to :data:`SHOWN_CHARS` characters and :data:`SHOWN_LINES` lines, saying
    how much more there is."""
    head = text[:SHOWN_CHARS]
    if head.count("\n") >= SHOWN_LINES:
        head = "\n".join(head.split("\n", SHOWN_LINES)[:SHOWN_LINES])
    if len(head) == len(text):
        return text
    return f"{head}\n\n[… {len(text) - len(head):,} more characters not shown]"


def _wrap(doc: QTextDocument, text: str) -> None:
    option = QTextOption(doc.defaultTextOption())
    anywhere = _LONG_RUN.search(text) is not None
    option.setWrapMode(
        QTextOption.WrapMode.WrapAnywhere
        if anywhere
        else QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere
    )
    doc.setDefaultTextOption(option)


def render_plain(doc: QTextDocument, text: str, font: QFont | None = None) -> None:
    """``text`` as it is (bounded, wrapped inside the row)."""
    text = shown_text(text)
    _wrap(doc, text)
    if font is not None:
        doc.setDefaultFont(font)
    doc.setPlainText(text)


def _many_cells(text: str) -> bool:
    """Whether the text could hold more table cells than :data:`MAX_TABLE_CELLS` (a table
    row needs no pipe after the delimiter row, so lines count too)."""
    if text.count("|") + text.count("\n") <= MAX_TABLE_CELLS:
        return False
    return _DELIMITER_ROW.search(text) is not None


def line_breaks(text: str) -> str:
    """``text`` with each line break outside code blocks kept (a chat message is written
    line by line: ``/help``'s list of commands is one command a line, not a paragraph).
    Markdown joins lines unless a line ends with two spaces: they are added."""
    lines = text.split("\n")
    fence = ""
    for index, line in enumerate(lines[:-1]):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1).startswith(fence) and not line.strip(fence[0] + " "):
                fence = ""
            continue
        if opened:
            fence = opened.group(1)
            continue
        if line.strip() and lines[index + 1].strip() and not line.endswith("  "):
            # Not on a table row (a character after its last pipe would be one more cell)
            # nor on a heading (its own block, margins and all).
            plain = "|" not in line and not line.lstrip().startswith("#")
            lines[index] = line + (_BROKEN if plain else "") + "  "
    return "\n".join(lines)


def _join_broken_lines(doc: QTextDocument) -> None:
    """The lines of one paragraph that the message broke are shown as lines, not as
    paragraphs: no margin between them (the paragraph keeps its own above and below), and
    the marks that told them apart are removed."""
    chains: list[tuple[int, int]] = []  # the first and the last block's positions
    marks: list[int] = []
    head: int | None = None
    block = doc.begin()
    while block.isValid():
        text = block.text()
        if text.endswith(_BROKEN):
            marks.append(block.position() + len(text) - 1)
            if head is None:
                head = block.position()
        elif head is not None:
            chains.append((head, block.position()))
            head = None
        block = block.next()
    cursor = QTextCursor(doc)
    for first, last in chains:
        top = doc.findBlock(first).blockFormat().topMargin()
        bottom = doc.findBlock(last).blockFormat().bottomMargin()
        _merge_margins(cursor, first, last, 0.0, 0.0)
        _merge_margins(cursor, first, first, top, None)
        _merge_margins(cursor, last, last, None, bottom)
    for position in reversed(marks):
        cursor.setPosition(position)
        cursor.setPosition(position + 1, _KEEP)
        cursor.removeSelectedText()


def _merge_margins(
    cursor: QTextCursor, first: int, last: int, top: float | None, bottom: float | None
) -> None:
    fix = QTextBlockFormat()
    if top is not None:
        fix.setTopMargin(top)
    if bottom is not None:
        fix.setBottomMargin(bottom)
    cursor.setPosition(first)
    cursor.setPosition(last, _KEEP)
    cursor.mergeBlockFormat(fix)


def _many_list_items(text: str) -> bool:
    """Whether ``text`` has more list items than :data:`MAX_LIST_ITEMS`."""
    if text.count("\n") < MAX_LIST_ITEMS:
        return False
    return any(n > MAX_LIST_ITEMS for n, _ in enumerate(_LIST_ITEM.finditer(text), 1))


def _plain_instead(doc: QTextDocument, text: str) -> bool:
    doc.clear()
    doc.setPlainText(text)
    return False


def render_markdown(doc: QTextDocument, text: str, palette: QPalette) -> bool:
    """``text`` as Markdown without HTML into ``doc`` (its line breaks kept); returns False
    when it was too complex and was shown as plain text instead."""
    text = shown_text(text)
    _wrap(doc, text)
    if _many_list_items(text):
        return _plain_instead(doc, text)
    doc.setIndentWidth(INDENT_PX)
    broken = line_breaks(text)
    doc.setMarkdown(broken, _NO_TABLES if _many_cells(text) else _FEATURES)
    if doc.blockCount() > MAX_BLOCKS:
        return _plain_instead(doc, text)
    if _BROKEN in broken:
        _join_broken_lines(doc)
    scan = "![" in text or _markup(text) > MAX_FRAGMENTS
    # Code blocks and quotes are tidied; so is nesting deeper than MAX_DEPTH, which needs
    # indentation (the rest, such as "- - - - - - - x", does not fit and is shown plain).
    tidy = scan or any(mark in text for mark in ("```", "~~~", ">", "\t", "    "))
    if tidy and not _tidy_blocks(doc, palette, scan=scan):
        return _plain_instead(doc, text)
    if "|" in text:
        _tidy_tables(doc)
    return True


def fits(doc: QTextDocument, width: float) -> bool:
    """After laying ``doc`` out at ``width``: whether it fits, once tables too wide for it
    are made compact (thinner padding and borders, the full width). When it still does not
    fit, the caller shows the text plain."""
    if doc.size().width() <= width + 0.5:
        return True
    for table in _tables(doc.rootFrame()):
        fmt = table.format()
        fmt.setCellPadding(1)
        fmt.setBorder(0.5)
        fmt.setWidth(QTextLength(QTextLength.Type.PercentageLength, 100))
        table.setFormat(fmt)
    return doc.size().width() <= width + 0.5


def _tables(frame: QTextFrame) -> list[QTextTable]:
    out: list[QTextTable] = []
    for child in frame.childFrames():
        if isinstance(child, QTextTable):
            out.append(child)
        else:
            out.extend(_tables(child))
    return out


def _markup(text: str) -> int:
    """How many characters of ``text`` could start or end a formatting run."""
    return sum(text.count(c) for c in "*_`~[")


def _tidy_blocks(doc: QTextDocument, palette: QPalette, *, scan: bool) -> bool:
    """One pass over the paragraphs: code blocks wrap and get a background, nesting is
    capped; with ``scan``, the formatting runs are counted too and images named by the text
    become words. False when there are more runs than :data:`MAX_FRAGMENTS` (nothing is
    changed then). Consecutive paragraphs that need the same change get it at once (one
    format change per paragraph is what costs)."""
    images: list[tuple[int, int, str]] = []
    runs: list[tuple[tuple[bool, int, bool], int, int]] = []  # (change, first, last position)
    fragments = 0
    block = doc.begin()
    while block.isValid():
        fmt = block.blockFormat()
        code = fmt.nonBreakableLines() or fmt.hasProperty(QTextFormat.Property.BlockCodeFence)
        change = (code, min(fmt.intProperty(_QUOTE_LEVEL), MAX_DEPTH), fmt.indent() > MAX_DEPTH)
        if change != (False, 0, False):
            if runs and runs[-1][0] == change and runs[-1][2] == block.position() - 1:
                runs[-1] = (change, runs[-1][1], block.position() + block.length() - 1)
            else:
                runs.append((change, block.position(), block.position() + block.length() - 1))
        listed: QTextList | None = block.textList()  # None outside lists (the stub says not)
        if listed is not None and listed.format().indent() > MAX_DEPTH:
            list_format = listed.format()
            list_format.setIndent(MAX_DEPTH)
            listed.setFormat(list_format)
        it = block.begin() if scan else None
        while it is not None and not it.atEnd():
            fragments += 1
            if fragments > MAX_FRAGMENTS:
                return False
            fragment = it.fragment()
            char_format = fragment.charFormat()
            if char_format.isImageFormat():
                image = char_format.toImageFormat()
                alt = image.stringProperty(QTextFormat.Property.ImageAltText) or image.name()
                images.append((fragment.position(), fragment.length(), alt))
            it += 1
        block = block.next()
    cursor = QTextCursor(doc)
    code_background = palette.color(QPalette.ColorRole.AlternateBase)
    for (code, level, deep), first, last in runs:
        fix = QTextBlockFormat()
        if code:
            fix.setNonBreakableLines(False)
            fix.setBackground(code_background)
        if level:
            fix.setLeftMargin(INDENT_PX * level)
        if deep:
            fix.setIndent(MAX_DEPTH)
        cursor.setPosition(first)
        cursor.setPosition(last, _KEEP)
        cursor.mergeBlockFormat(fix)
    for position, length, alt in reversed(images):
        cursor.setPosition(position)
        cursor.setPosition(position + length, _KEEP)
        words = QTextCharFormat()
        words.setFontItalic(True)
        cursor.insertText(f"[image: {alt[:80]}]", words)
    return True


def _cell_blocks(doc: QTextDocument, table: QTextTable, row: int, column: int) -> list[QTextBlock]:
    cell = table.cellAt(row, column)
    blocks = []
    block = doc.findBlock(cell.firstPosition())
    while block.isValid() and block.position() <= cell.lastPosition():
        blocks.append(block)
        block = block.next()
    return blocks


def _tidy_tables(doc: QTextDocument) -> None:
    """Header cells aligned like their columns, bold, on the same line as each other (Qt
    starts the first header cell with an empty paragraph). A row's cells are consecutive in
    the document: the whole header row is changed at once."""
    for table in _tables(doc.rootFrame()):
        first = _cell_blocks(doc, table, 0, 0)
        if len(first) > 1 and not first[0].text():
            QTextCursor(first[0]).deleteChar()  # the empty paragraph's end: the text moves up
        cursor = table.cellAt(0, 0).firstCursorPosition()
        cursor.setPosition(table.cellAt(0, table.columns() - 1).lastPosition(), _KEEP)
        header = QTextBlockFormat()
        header.setTopMargin(0)
        header.setBottomMargin(0)
        cursor.mergeBlockFormat(header)
        bold = QTextCharFormat()
        bold.setFontWeight(QFont.Weight.Bold)
        cursor.mergeCharFormat(bold)
        if table.rows() < 2:
            continue
        for column in range(table.columns()):
            body = doc.findBlock(table.cellAt(1, column).firstPosition()).blockFormat()
            head = doc.findBlock(table.cellAt(0, column).firstPosition()).blockFormat()
            if body.alignment() != head.alignment():
                cell = table.cellAt(0, column)
                cursor = cell.firstCursorPosition()
                cursor.setPosition(cell.lastPosition(), _KEEP)
                aligned = QTextBlockFormat()
                aligned.setAlignment(body.alignment())
                cursor.mergeBlockFormat(aligned)
