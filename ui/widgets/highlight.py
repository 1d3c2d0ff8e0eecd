"""Colours for fenced code blocks in chat messages: keywords, strings, comments and numbers,
with one small rule set per language family (Python, shell, C-like, JSON) and colours that
read on light and dark palettes alike."""

from __future__ import annotations

import re

from PySide6.QtGui import (
    QColor,
    QFont,
    QPalette,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
    QTextFormat,
)

__all__ = ["CodeHighlighter", "language_rules"]

_PY = (
    "and as assert async await break class continue def del elif else except finally for "
    "from global if import in is lambda None nonlocal not or pass raise return True False "
    "try while with yield match case self"
)
_SH = (
    "if then else elif fi for while until do done case esac function in return export "
    "local readonly set unset echo exit cd sudo"
)
_C = (
    "break case catch class const continue default delete do else enum export extends false "
    "finally for fn function if impl import in interface let match mut new null nil package "
    "private protected pub public return static struct super switch this throw true try "
    "type typeof use var void while yield async await func go defer int char float double "
    "bool string"
)
_FAMILIES = {
    "python": ("python", "py", "python3", "pycon"),
    "shell": ("bash", "sh", "shell", "zsh", "console", "shellsession", "fish"),
    "json": ("json", "jsonc", "json5"),
}

Rule = tuple[re.Pattern[str], str]


def language_rules(language: str) -> list[Rule]:
    """The (pattern, kind) rules for a fence's language; unknown languages get C-like ones."""
    lang = language.strip().lower()
    family = next((f for f, names in _FAMILIES.items() if lang in names), "c")
    number = (re.compile(r"\b-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b"), "number")
    string = (re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'"), "string")
    if family == "json":
        return [
            number,
            (re.compile(r"\b(?:true|false|null)\b"), "keyword"),
            string,
            (re.compile(r"\"(?:[^\"\\]|\\.)*\"(?=\s*:)"), "name"),
        ]
    words = {"python": _PY, "shell": _SH, "c": _C}[family]
    comment = r"#.*$" if family in ("python", "shell") else r"//.*$|/\*.*?\*/|#.*$"
    rules: list[Rule] = [
        number,
        (re.compile(r"\b(?:" + "|".join(words.split()) + r")\b"), "keyword"),
        string,
        (re.compile(comment), "comment"),
    ]
    if family == "shell":
        rules.insert(0, (re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?"), "name"))
    return rules


def _formats(palette: QPalette) -> dict[str, QTextCharFormat]:
    dark = palette.color(QPalette.ColorRole.Base).lightness() < 128
    colours = (
        {"keyword": "#c792ea", "string": "#c3e88d", "comment": "#8a93a6", "number": "#f78c6c"}
        if dark
        else {"keyword": "#7b30d0", "string": "#2b7a0b", "comment": "#6a737d", "number": "#b45309"}
    )
    colours["name"] = "#82aaff" if dark else "#1d4ed8"
    out: dict[str, QTextCharFormat] = {}
    for kind, colour in colours.items():
        fmt = QTextCharFormat()
        fmt.setForeground(QColor(colour))
        if kind == "keyword":
            fmt.setFontWeight(QFont.Weight.Bold)
        if kind == "comment":
            fmt.setFontItalic(True)
        out[kind] = fmt
    return out


class CodeHighlighter(QSyntaxHighlighter):
    """Highlights the fenced code blocks of a Markdown document (other blocks are left)."""

    def __init__(self, document: QTextDocument, palette: QPalette) -> None:
        self._formats = _formats(palette)
        self._rules: dict[str, list[Rule]] = {}
        super().__init__(document)

    def highlightBlock(self, text: str) -> None:  # noqa: N802
        """Qt: colour one block when it belongs to a fenced code block."""
        fmt = self.currentBlock().blockFormat()
        if not fmt.hasProperty(QTextFormat.Property.BlockCodeFence):
            return
        language = fmt.stringProperty(QTextFormat.Property.BlockCodeLanguage)
        rules = self._rules.get(language)
        if rules is None:
            rules = self._rules[language] = language_rules(language)
        for pattern, kind in rules:
            for match in pattern.finditer(text):
                self.setFormat(match.start(), match.end() - match.start(), self._formats[kind])
