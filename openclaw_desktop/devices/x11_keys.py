"""Key names for ``computer.act``: chords such as ``ctrl+shift+t`` or ``Return`` to X keysyms,
and text to the keysyms that type it.

Pure data and parsing, no X connection: :mod:`openclaw_desktop.devices.x11_input` turns the
keysyms into key codes of the running X server.

A chord is ``+``-separated: modifiers first (``ctrl``/``control``, ``shift``, ``alt``/``option``/
``mod1``, ``cmd``/``command``/``meta``/``super``/``win``/``windows``/``mod4``), the key last. The
key is a name the reference's fulfillers know (``return``/``enter``, ``tab``, ``escape``/``esc``,
``space``, ``backspace``, ``delete``/``del``, ``insert``/``ins``, ``home``, ``end``,
``pageup``/``pgup``, ``pagedown``/``pgdn``, the arrows, ``capslock``, ``numlock``, ``f1``-``f24``),
a single character (``a``, ``7``, ``/``: X key presses are layout-independent keysyms, so a
digit or punctuation key is reproduced exactly, unlike the reference's CUA driver), or any X
keysym name (``KP_Enter``, ``XF86AudioMute``). Matching ignores case except for X keysym
names, which are tried as written.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from openclaw_desktop.errors import OpenClawError

__all__ = ["Chord", "KeyError_", "char_keysym", "parse_chord"]

#: Modifier aliases -> the X keysym pressed for them.
MODIFIERS: dict[str, str] = {
    "ctrl": "Control_L",
    "control": "Control_L",
    "shift": "Shift_L",
    "alt": "Alt_L",
    "option": "Alt_L",
    "opt": "Alt_L",
    "mod1": "Alt_L",
    "cmd": "Super_L",
    "command": "Super_L",
    "meta": "Super_L",
    "super": "Super_L",
    "win": "Super_L",
    "windows": "Super_L",
    "mod4": "Super_L",
}

#: Named keys -> X keysym names.
NAMED: dict[str, str] = {
    "return": "Return",
    "enter": "Return",
    "tab": "Tab",
    "escape": "Escape",
    "esc": "Escape",
    "space": "space",
    "backspace": "BackSpace",
    "delete": "Delete",
    "del": "Delete",
    "insert": "Insert",
    "ins": "Insert",
    "home": "Home",
    "end": "End",
    "pageup": "Prior",
    "pgup": "Prior",
    "pagedown": "Next",
    "pgdn": "Next",
    "up": "Up",
    "down": "Down",
    "left": "Left",
    "right": "Right",
    "capslock": "Caps_Lock",
    "numlock": "Num_Lock",
    "menu": "Menu",
    "print": "Print",
    **{f"f{n}": f"F{n}" for n in range(1, 25)},
}

#: Characters typed as a key rather than a character keysym.
_TYPED_AS_KEY = {"\n": 0xFF0D, "\r": 0xFF0D, "\t": 0xFF09}


class KeyError_(OpenClawError, ValueError):  # noqa: N801 - not the builtin KeyError
    """A chord or character that cannot be pressed; ``str()`` is the reason."""


@dataclass(frozen=True, slots=True)
class Chord:
    """Modifier keysyms (pressed in order) and the key's keysym."""

    modifiers: tuple[int, ...]
    key: int


def _libx11() -> ctypes.CDLL | None:
    try:
        lib = ctypes.CDLL("libX11.so.6")
    except OSError:
        return None
    lib.XStringToKeysym.argtypes = [ctypes.c_char_p]
    lib.XStringToKeysym.restype = ctypes.c_ulong
    return lib


_LIB = _libx11()


def keysym_named(name: str) -> int:
    """The keysym of an X keysym name, 0 when there is none (or no libX11)."""
    if _LIB is None or not name.isascii():
        return 0
    return int(_LIB.XStringToKeysym(name.encode("ascii")))


def char_keysym(char: str) -> int:
    """The keysym that types one character: Latin-1 directly, other code points as the X11
    Unicode keysym range (``0x01000000 + code point``); newline and tab as Return and Tab.

    Raises:
        KeyError_: a control character (other than newline, return, tab).
    """
    if char in _TYPED_AS_KEY:
        return _TYPED_AS_KEY[char]
    code = ord(char)
    if code < 0x20 or 0x7F <= code < 0xA0:
        raise KeyError_(f"cannot type the control character U+{code:04X}")
    if code <= 0xFF:
        return code
    return 0x01000000 + code


def _key(raw: str) -> int:
    lowered = raw.lower()
    if lowered in MODIFIERS:
        return keysym_named(MODIFIERS[lowered])
    if lowered in NAMED:
        return keysym_named(NAMED[lowered])
    if len(raw) == 1:
        return char_keysym(raw.lower() if raw.isascii() and raw.isalpha() else raw)
    keysym = keysym_named(raw)
    if not keysym:
        raise KeyError_(f"unknown key {raw!r}")
    return keysym


def parse_chord(text: str) -> Chord:
    """``ctrl+shift+t`` -> the keysyms of Control_L, Shift_L and ``t``; ``+`` alone is the
    plus key and ``ctrl++`` is Control with plus.

    Raises:
        KeyError_: an empty chord, an unknown modifier or key.
    """
    stripped = text.strip()
    if not stripped:
        raise KeyError_("key chord is empty")
    if stripped == "+":
        return Chord((), char_keysym("+"))
    trailing_plus = stripped.endswith("++")
    parts = [*stripped[:-2].split("+"), "+"] if trailing_plus else stripped.split("+")
    *mods, raw_key = (part.strip() for part in parts)
    if not raw_key:
        raise KeyError_("key chord contains an empty key")
    modifiers: list[int] = []
    for mod in mods:
        name = MODIFIERS.get(mod.lower())
        if name is None:
            raise KeyError_(f"unknown modifier {mod!r}")
        modifiers.append(keysym_named(name))
    return Chord(tuple(modifiers), _key(raw_key))


def parse_modifiers(text: str | None) -> tuple[int, ...]:
    """The ``modifiers`` field of a click or scroll (``shift``, ``ctrl+alt``) as keysyms.

    Raises:
        KeyError_: an unknown modifier.
    """
    if text is None or not text.strip():
        return ()
    result: list[int] = []
    for mod in text.split("+"):
        name = MODIFIERS.get(mod.strip().lower())
        if name is None:
            raise KeyError_(f"unknown modifier {mod.strip()!r}")
        result.append(keysym_named(name))
    return tuple(result)
