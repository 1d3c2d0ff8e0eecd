"""A JSON parser without recursion, for first frames nested deeper than Python's own parser
goes (its recursion limit is near 1,000 levels; ``JSON.parse`` in the real gateway has no
such limit, so a deep first frame gets its ordinary answer there).

It reads what :func:`json.loads` reads (strict: no control characters in strings, no
``NaN``/``Infinity``, no BOM, the last of duplicate keys wins) and gives the same values;
only used for frames ``json.loads`` gave up on, which are at most 64 KiB before ``hello-ok``.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["loads_iterative"]

_TOKEN = re.compile(
    r"""[ \t\n\r]*(?:
        (?P<str>"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*")
       |(?P<num>-?(?:0|[1-9][0-9]*)(?P<frac>\.[0-9]+)?(?P<exp>[eE][+-]?[0-9]+)?)
       |(?P<lit>true|false|null)
       |(?P<punct>[\[\]{}:,])
    )""",
    re.VERBOSE,
)
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}

# What the parser expects next.
_VALUE, _VALUE_OR_CLOSE, _KEY, _KEY_OR_CLOSE, _COLON, _COMMA_OR_CLOSE, _DONE = range(7)


def loads_iterative(text: str) -> Any:
    """Parse ``text`` as one JSON value, at any depth.

    Raises:
        ValueError: ``text`` is not exactly one JSON value.
    """
    stack: list[Any] = []
    keys: list[str] = []
    root: Any = None
    state = _VALUE
    pos = 0

    def attach(value: Any) -> None:
        nonlocal root
        if not stack:
            root = value
        elif isinstance(stack[-1], list):
            stack[-1].append(value)
        else:
            stack[-1][keys[-1]] = value

    while True:
        match = _TOKEN.match(text, pos)
        if match is None:
            break
        pos = match.end()
        kind = match.lastgroup if match.lastgroup in ("str", "lit", "punct") else "num"
        token = match.group(kind)
        if state == _DONE:
            raise ValueError("extra data after the JSON value")
        if kind == "str" and state in (_KEY, _KEY_OR_CLOSE):
            keys[-1] = json.loads(token)
            state = _COLON
        elif kind in ("str", "num", "lit"):
            if state not in (_VALUE, _VALUE_OR_CLOSE):
                raise ValueError(f"unexpected value at {match.start(kind)}")
            if kind == "str":
                attach(json.loads(token))
            elif kind == "lit":
                attach(_LITERALS[token])
            else:
                exact = match.group("frac") is None and match.group("exp") is None
                attach(int(token) if exact else float(token))
            state = _COMMA_OR_CLOSE if stack else _DONE
        elif token in "[{":
            if state not in (_VALUE, _VALUE_OR_CLOSE):
                raise ValueError(f"unexpected {token!r} at {match.start(kind)}")
            container: Any = [] if token == "[" else {}
            attach(container)
            stack.append(container)
            keys.append("")
            state = _VALUE_OR_CLOSE if token == "[" else _KEY_OR_CLOSE
        elif token in "]}":
            closes = list if token == "]" else dict
            allowed = (_VALUE_OR_CLOSE if token == "]" else _KEY_OR_CLOSE, _COMMA_OR_CLOSE)
            if not stack or not isinstance(stack[-1], closes) or state not in allowed:
                raise ValueError(f"unexpected {token!r} at {match.start(kind)}")
            stack.pop()
            keys.pop()
            state = _COMMA_OR_CLOSE if stack else _DONE
        elif token == ":":
            if state != _COLON:
                raise ValueError(f"unexpected ':' at {match.start(kind)}")
            state = _VALUE
        else:  # ","
            if state != _COMMA_OR_CLOSE:
                raise ValueError(f"unexpected ',' at {match.start(kind)}")
            state = _KEY if isinstance(stack[-1], dict) else _VALUE
    if state != _DONE or text[pos:].strip(" \t\n\r"):
        raise ValueError(f"not a JSON value (stopped at {pos})")
    return root
