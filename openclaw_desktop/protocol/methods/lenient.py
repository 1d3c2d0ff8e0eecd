"""The params of the methods the reference reads by hand instead of checking them against a
schema (``diagnostics.stability``, ``usage.cost``, ``plugin.surface.refresh``,
``controlUi.sessionPullRequests.subscribe``, the approval lists, and the node role's
``node.pluginSurface.refresh`` and ``node.runnerInventory.update``).

Such a method serves any params: params that are not an object read as an empty one, a
property of the wrong type is read the way the reference's JavaScript reads it (a digit
string counts as a number, a blank string as absent), and what it cannot read is refused
with the reference's own sentence (``limit must be between 1 and 1000``), not a schema
problem. A :class:`LenientParams` model lists the properties such a method reads, each
taken as it came (``Any``), and its own methods read them in the reference's terms,
raising :class:`ParamsRefused` with the text to answer. The helpers below are the
JavaScript semantics those readings rest on (``String.prototype.trim``, ``Number(...)``,
``Number.isSafeInteger``).
"""

from __future__ import annotations

import math
import re
from typing import Any, Self

from pydantic import ConfigDict

from openclaw_desktop.protocol.base import OpenModel

__all__ = [
    "MAX_SAFE_INTEGER",
    "LenientParams",
    "ParamsRefused",
    "js_number",
    "js_trim",
    "optional_string",
    "safe_integer",
]

#: JavaScript's ``Number.MAX_SAFE_INTEGER``.
MAX_SAFE_INTEGER = 2**53 - 1
#: What ``String.prototype.trim`` removes (WhiteSpace and LineTerminator): unlike
#: ``str.strip()`` it takes U+FEFF and leaves U+001C..U+001F and U+0085.
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_RADIX = {"0x": 16, "0o": 8, "0b": 2}
_DIGITS = {16: "0123456789abcdefABCDEF", 8: "01234567", 2: "01"}


class ParamsRefused(ValueError):
    """Params a :class:`LenientParams` reading refuses; ``message`` is the reference's
    text, answered as ``INVALID_REQUEST``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class LenientParams(OpenModel):
    """The properties a hand-reading method reads, each ``Any``, by their wire names only
    (``since_seq`` is not ``sinceSeq``, as the reference knows only the latter). The
    derived schema admits any value of each and any other property."""

    model_config = ConfigDict(populate_by_name=False)

    @classmethod
    def lenient(cls, params: Any) -> Self:
        """The model of whatever params came: not an object (absent, a list, a string)
        reads as an empty one, as the reference reads a property of those."""
        return cls.model_validate(params if isinstance(params, dict) else {})

    def given(self, field: str) -> bool:
        """Whether the property was in the params (``null`` included)."""
        return field in self.model_fields_set


def js_trim(text: str) -> str:
    """``text.trim()`` as JavaScript trims."""
    return text.strip(_JS_WHITESPACE)


def optional_string(value: Any) -> str | None:
    """A string trimmed, or None for a non-string or a blank one (the reference's
    ``normalizeOptionalString``)."""
    if not isinstance(value, str):
        return None
    return js_trim(value) or None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def safe_integer(value: Any) -> int | None:
    """A number that is a safe integer, or a string holding one (``" -12 "``, as
    ``Number`` reads it), else None (the reference's ``parseStrictInteger``)."""
    if _is_number(value):
        if isinstance(value, float) and not value.is_integer():
            return None
        number = int(value)
    elif isinstance(value, str):
        text = js_trim(value)
        if not re.fullmatch(r"[+-]?[0-9]+", text):
            return None
        number = int(text)
    else:
        return None
    return number if abs(number) <= MAX_SAFE_INTEGER else None


def js_number(text: str) -> float:
    """``Number(text)`` of a string: decimal (``" 1e1 "``, ``".5"``), ``0x``/``0o``/``0b``
    integers, ``Infinity``; ``nan`` for anything else."""
    body = js_trim(text)
    if not body:
        return 0.0
    unsigned = body.lstrip("+-")
    if unsigned == "Infinity" and len(body) - len(unsigned) <= 1:
        return -math.inf if body[0] == "-" else math.inf
    radix = _RADIX.get(body[:2].lower())
    if radix is not None:
        digits = body[2:]
        if not digits or any(ch not in _DIGITS[radix] for ch in digits):
            return math.nan
        try:
            return float(int(digits, radix))
        except OverflowError:
            return math.inf
    if _DECIMAL.fullmatch(body):
        return float(body)
    return math.nan
