"""Pointer and keyboard input on an X11 display through the XTest extension (libXtst via
ctypes: no extra Python dependency, no ``xdotool`` subprocess).

XTest events are indistinguishable from a real mouse and keyboard for every X client. On a
Wayland session they would reach only XWayland windows, so :func:`input_status` calls Wayland
unavailable here; there input goes through the desktop portal instead
(:mod:`.portal_input`).

A character without a key on the current layout is typed by binding its keysym to a spare
key code (one with no keysyms), so non-ASCII text types too. A binding stays until the
connection closes and spare codes are reused least recently used first: a client reads a
key's symbol when it handles the event, so rebinding a code right after the press could
make a lagging client see the next character instead.

Everything here is blocking and meant for one worker thread at a time; every press is
recorded, so :meth:`X11Input.release_all` can always let go of held keys and buttons.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from openclaw_desktop.devices.errors import DeviceError

__all__ = ["BUTTONS", "InputStatus", "X11Input", "input_status"]

log = logging.getLogger("openclaw.devices")

#: Pointer buttons by name -> X button number; wheel directions -> their buttons.
BUTTONS = {"left": 1, "middle": 2, "right": 3}
WHEEL = {"up": 4, "down": 5, "left": 6, "right": 7}
_SHIFT_KEYSYM = 0xFFE1


@dataclass(frozen=True, slots=True)
class InputStatus:
    """Whether input can be injected here, and why not."""

    available: bool
    reason: str = ""


_ERROR_HANDLER_TYPE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


def _log_x_error(_display: int | None, _event: int | None) -> int:
    # Xlib's default handler exits the process on any protocol error: log instead.
    log.warning("X protocol error during input injection (ignored)")
    return 0


_on_x_error: Any = _ERROR_HANDLER_TYPE(_log_x_error)


class _Libs:
    def __init__(self) -> None:
        x11 = ctypes.CDLL("libX11.so.6")
        xtst = ctypes.CDLL("libXtst.so.6")
        dpy = ctypes.c_void_p
        x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
        x11.XOpenDisplay.restype = dpy
        x11.XCloseDisplay.argtypes = [dpy]
        x11.XSync.argtypes = [dpy, ctypes.c_int]
        x11.XFlush.argtypes = [dpy]
        x11.XKeysymToKeycode.argtypes = [dpy, ctypes.c_ulong]
        x11.XKeysymToKeycode.restype = ctypes.c_ubyte
        x11.XDisplayKeycodes.argtypes = [
            dpy,
            ctypes.POINTER(ctypes.c_int),
            ctypes.POINTER(ctypes.c_int),
        ]
        x11.XGetKeyboardMapping.argtypes = [
            dpy,
            ctypes.c_ubyte,
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_int),
        ]
        x11.XGetKeyboardMapping.restype = ctypes.POINTER(ctypes.c_ulong)
        x11.XChangeKeyboardMapping.argtypes = [
            dpy,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_ulong),
            ctypes.c_int,
        ]
        x11.XFree.argtypes = [ctypes.c_void_p]
        x11.XDefaultScreen.argtypes = [dpy]
        x11.XSetErrorHandler.argtypes = [_ERROR_HANDLER_TYPE]
        x11.XSetErrorHandler.restype = ctypes.c_void_p
        xtst.XTestQueryExtension.argtypes = [dpy, *([ctypes.POINTER(ctypes.c_int)] * 4)]
        xtst.XTestFakeMotionEvent.argtypes = [
            dpy,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_ulong,
        ]
        xtst.XTestFakeButtonEvent.argtypes = [dpy, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
        xtst.XTestFakeKeyEvent.argtypes = [dpy, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
        x11.XSetErrorHandler(_on_x_error)
        self.x11 = x11
        self.xtst = xtst


_libs: _Libs | None = None


def _load() -> _Libs:
    global _libs
    if _libs is None:
        try:
            _libs = _Libs()
        except (OSError, AttributeError) as exc:
            raise DeviceError(
                "COMPUTER_DRIVER_UNAVAILABLE",
                f"libX11/libXtst cannot be loaded ({exc}); install libxtst6",
            ) from None
    return _libs


def _wayland_reason() -> str | None:
    if os.environ.get("WAYLAND_DISPLAY", "").strip() or (
        os.environ.get("XDG_SESSION_TYPE", "").strip().lower() == "wayland"
    ):
        return (
            "this is a Wayland session: XTest would reach only XWayland windows (input goes "
            "through the desktop portal's RemoteDesktop interface there)"
        )
    return None


class X11Input:
    """One connection to the X server for injecting input.

    Raises:
        DeviceError: ``COMPUTER_DRIVER_UNAVAILABLE`` when the display cannot be opened or has
            no XTest extension.
    """

    def __init__(self, display: str | None = None) -> None:
        if sys.platform in ("darwin", "win32", "cygwin"):
            raise DeviceError("COMPUTER_DRIVER_UNAVAILABLE", "X11 input needs Linux/BSD")
        self.display_name = display if display is not None else os.environ.get("DISPLAY", "")
        if not self.display_name.strip():
            raise DeviceError(
                "COMPUTER_DRIVER_UNAVAILABLE",
                _wayland_reason() or "no display: DISPLAY is not set",
            )
        libs = _load()
        self._x11 = libs.x11
        self._xtst = libs.xtst
        self._dpy = self._x11.XOpenDisplay(self.display_name.encode())
        if not self._dpy:
            raise DeviceError(
                "COMPUTER_DRIVER_UNAVAILABLE", f"cannot open the display {self.display_name}"
            )
        ints = [ctypes.c_int() for _ in range(4)]
        if not self._xtst.XTestQueryExtension(self._dpy, *(ctypes.byref(i) for i in ints)):
            self.close()
            raise DeviceError(
                "COMPUTER_DRIVER_UNAVAILABLE",
                f"the display {self.display_name} has no XTest extension",
            )
        low, high = ctypes.c_int(), ctypes.c_int()
        self._x11.XDisplayKeycodes(self._dpy, ctypes.byref(low), ctypes.byref(high))
        self._min_code, self._max_code = low.value, high.value
        self._screen = int(self._x11.XDefaultScreen(self._dpy))
        self.held_keys: list[int] = []
        self.held_buttons: list[int] = []
        self._spares: list[int] | None = None
        self._bound: OrderedDict[int, int] = OrderedDict()  # keysym -> spare code

    def close(self) -> None:
        """Release everything held, unbind the spare codes, close the connection
        (idempotent)."""
        if self._dpy:
            self.release_all()
            for code in self._bound.values():
                self._bind(code, 0)
            self._bound.clear()
            self._x11.XCloseDisplay(self._dpy)
            self._dpy = None

    # ------------------------------------------------------------------ pointer

    def move(self, x: int, y: int) -> None:
        """Move the pointer to root coordinates ``(x, y)``."""
        self._xtst.XTestFakeMotionEvent(self._dpy, self._screen, x, y, 0)
        self._sync()

    def button(self, button: int, press: bool) -> None:
        """Press or release one pointer button (recorded, see :meth:`release_all`)."""
        if press and button in self.held_buttons:
            return
        if not press and button not in self.held_buttons:
            return
        self._xtst.XTestFakeButtonEvent(self._dpy, button, 1 if press else 0, 0)
        if press:
            self.held_buttons.append(button)
        else:
            self.held_buttons.remove(button)
        self._sync()

    def click_at(self, x: int, y: int, button: int, count: int = 1) -> None:
        """Move to ``(x, y)``, then :meth:`click`."""
        self.move(x, y)
        self.click(button, count)

    def press_at(self, x: int, y: int, button: int) -> None:
        """Move to ``(x, y)``, then press ``button`` (held until released)."""
        self.move(x, y)
        self.button(button, True)

    def click(self, button: int, count: int = 1) -> None:
        """Press and release ``button`` ``count`` times (double and triple clicks)."""
        for _ in range(count):
            self.button(button, True)
            self.button(button, False)

    def wheel(self, direction: str, ticks: int) -> None:
        """Scroll ``ticks`` wheel notches (X wheel buttons 4-7)."""
        for _ in range(ticks):
            self.click(WHEEL[direction])

    # ----------------------------------------------------------------- keyboard

    def keycode(self, keysym: int) -> tuple[int, bool]:
        """The key code producing ``keysym`` and whether Shift is needed for it; ``(0,
        False)`` when no key of the current layout produces it."""
        code = int(self._x11.XKeysymToKeycode(self._dpy, keysym))
        if not code:
            return 0, False
        per = ctypes.c_int()
        syms = self._x11.XGetKeyboardMapping(self._dpy, code, 1, ctypes.byref(per))
        try:
            row = [int(syms[i]) for i in range(per.value)] if syms else []
        finally:
            if syms:
                self._x11.XFree(syms)
        if keysym in row[:1]:
            return code, False
        if keysym in row[1:2]:
            return code, True
        return 0, False  # only on a level Shift does not reach (AltGr): not usable as is

    def key(self, keysym: int, press: bool) -> None:
        """Press or release the key of ``keysym`` (recorded, see :meth:`release_all`).

        A keysym no key of the layout makes is bound to a spare key code.

        Raises:
            DeviceError: ``COMPUTER_UNSUPPORTED_KEY`` when no key makes it and no spare key
                code is left.
        """
        code = self._bound.get(keysym) or self.keycode(keysym)[0]
        if not code:
            code = self._spare_for(keysym)
        self._key_code(code, press)

    def _key_code(self, code: int, press: bool) -> None:
        if press and code in self.held_keys:
            return
        if not press and code not in self.held_keys:
            return
        self._xtst.XTestFakeKeyEvent(self._dpy, code, 1 if press else 0, 0)
        if press:
            self.held_keys.append(code)
        else:
            self.held_keys.remove(code)
        self._sync()

    def type_keysym(self, keysym: int) -> None:
        """Type one character's keysym: its own key (with Shift when the layout needs it),
        else a spare key code bound to it for the press.

        Raises:
            DeviceError: ``COMPUTER_UNSUPPORTED_KEY`` when the keyboard has no spare key code.
        """
        code, shift = (0, False) if keysym in self._bound else self.keycode(keysym)
        if code:
            shift_code = self.keycode(_SHIFT_KEYSYM)[0] if shift else 0
            if shift_code:
                self._key_code(shift_code, True)
            try:
                self._key_code(code, True)
                self._key_code(code, False)
            finally:
                if shift_code:
                    self._key_code(shift_code, False)
            return
        spare = self._spare_for(keysym)
        self._key_code(spare, True)
        self._key_code(spare, False)

    def _spare_for(self, keysym: int) -> int:
        """A spare key code bound to ``keysym`` (reusing the least recently used one)."""
        code = self._bound.get(keysym)
        if code is not None:
            self._bound.move_to_end(keysym)
            return code
        spares = self._find_spares()
        free = [c for c in spares if c not in self._bound.values()]
        if free:
            code = free[0]
        else:
            _old, code = self._bound.popitem(last=False)
        self._bind(code, keysym)
        self._bound[keysym] = code
        return code

    def _find_spares(self) -> list[int]:
        if self._spares is not None:
            return self._spares
        count = self._max_code - self._min_code + 1
        per = ctypes.c_int()
        syms = self._x11.XGetKeyboardMapping(self._dpy, self._min_code, count, ctypes.byref(per))
        spares: list[int] = []
        try:
            for index in range(count - 1, -1, -1):
                row = [int(syms[index * per.value + j]) for j in range(per.value)]
                if not any(row):
                    spares.append(self._min_code + index)
        finally:
            if syms:
                self._x11.XFree(syms)
        if not spares:
            raise DeviceError(
                "COMPUTER_UNSUPPORTED_KEY",
                "this keyboard has no spare key code to type characters outside its layout",
            )
        self._spares = spares
        return spares

    def _bind(self, code: int, keysym: int) -> None:
        row = (ctypes.c_ulong * 2)(keysym, keysym)
        self._x11.XChangeKeyboardMapping(self._dpy, code, 2, row, 1)
        self._sync()

    # ------------------------------------------------------------------ cleanup

    def release_all(self, keep_buttons: tuple[int, ...] = ()) -> None:
        """Release every key and button this connection holds, last pressed first (except
        the buttons in ``keep_buttons``)."""
        if not self._dpy:
            return
        for code in reversed(list(self.held_keys)):
            self._xtst.XTestFakeKeyEvent(self._dpy, code, 0, 0)
        for button in reversed(list(self.held_buttons)):
            if button not in keep_buttons:
                self._xtst.XTestFakeButtonEvent(self._dpy, button, 0, 0)
        self.held_keys.clear()
        self.held_buttons = [b for b in self.held_buttons if b in keep_buttons]
        self._sync()

    def _sync(self) -> None:
        self._x11.XSync(self._dpy, 0)


def input_status(display: str | None = None) -> InputStatus:
    """Whether XTest input works on this session's display (blocking). Never raises."""
    reason = _wayland_reason()
    if reason is not None:
        return InputStatus(False, reason)
    try:
        X11Input(display).close()
    except DeviceError as exc:
        return InputStatus(False, exc.message)
    return InputStatus(True)
