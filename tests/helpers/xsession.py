"""A desktop for journeys: Xvfb, a private session bus, the AT-SPI bus, and a person's hands.

:func:`journey_desktop` starts, each from the system binaries and each with a bounded wait:

* an X server (``Xvfb -displayfd``: it picks a free display number itself),
* a private D-Bus session bus (``dbus-daemon``, see :mod:`tests.helpers.desktop_session`),
* the accessibility bus (``at-spi-bus-launcher --launch-immediately``, Debian
  ``at-spi2-core``), which announces itself on the session bus as ``org.a11y.Bus`` and starts
  the registry on demand,
* optionally a status-notifier host (:class:`TrayHost`), so the app under test sees a system
  tray exactly as on a KDE or GNOME-with-AppIndicator desktop,

and stops them all (the whole process group of each) when the block ends, even on failure.
:class:`Desktop` is what the test does with them: keys and clicks through ``xdotool`` (real X
input events), closing a window the way a window manager's close button does
(``WM_DELETE_WINDOW``), screenshots of the whole screen (an X-level capture with mss), and
reading what a part of the screen shows (OCR with tesseract: what is painted, not what the
model holds).

Missing binaries (also ``tesseract``) raise :class:`MissingBinary` naming the Debian package
(``./dev test`` installs them); the journey fixtures skip on it only outside CI.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from dbus_fast import BusType
from dbus_fast.aio import MessageBus

from tests.helpers.desktop_session import MissingBinary, _load, session_bus, xvfb
from tests.helpers.tray_host import TrayHost

__all__ = ["AT_SPI_LAUNCHER", "Desktop", "MissingBinary", "journey_desktop"]

AT_SPI_LAUNCHER = "/usr/libexec/at-spi-bus-launcher"
_PACKAGES = {"xdotool": "xdotool", AT_SPI_LAUNCHER: "at-spi2-core", "tesseract": "tesseract-ocr"}
STOP_TIMEOUT = 5.0


def _require(path_or_name: str) -> str:
    found = shutil.which(path_or_name)
    if found is None:
        package = _PACKAGES.get(path_or_name, path_or_name)
        raise MissingBinary(f"{path_or_name} is not installed (Debian/Ubuntu package: {package})")
    return found


def stop_process_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the group of ``proc`` (started with ``start_new_session``), SIGKILL after
    :data:`STOP_TIMEOUT`; also when ``proc`` itself already exited (its children may not)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=STOP_TIMEOUT)
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=STOP_TIMEOUT)


@dataclass
class Desktop:
    """A running journey desktop and the person in front of it."""

    display: str
    width: int
    height: int
    bus_address: str
    screens: Path
    tray: TrayHost | None = None
    _shots: int = field(default=0, repr=False)

    def env(self) -> dict[str, str]:
        """What a program started on this desktop needs to find it."""
        return {"DISPLAY": self.display, "DBUS_SESSION_BUS_ADDRESS": self.bus_address}

    # ------------------------------------------------------------------ input
    async def xdotool(self, *args: str, timeout: float = 20.0) -> str:
        """Run ``xdotool ARGS`` on this display; its output."""
        binary = _require("xdotool")
        proc = await asyncio.create_subprocess_exec(
            binary,
            *args,
            env={**os.environ, **self.env()},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise
        if proc.returncode not in (0, 1) or (proc.returncode == 1 and args[0] != "search"):
            raise RuntimeError(f"xdotool {' '.join(args)}: {err.decode(errors='replace')}")
        return out.decode()

    async def click(self, x: int, y: int) -> None:
        """Move the pointer to ``(x, y)`` and click the left button there."""
        # ``mousemove --sync`` waits for the pointer to move: when it is already there (a
        # second click on the same control) that wait only ends after about 15 s.
        here = dict(
            line.split("=", 1)
            for line in (await self.xdotool("getmouselocation", "--shell")).split()
            if "=" in line
        )
        if (here.get("X"), here.get("Y")) != (str(x), str(y)):
            await self.xdotool("mousemove", "--sync", str(x), str(y))
        await self.xdotool("click", "1")

    async def type(self, text: str) -> None:
        """Type ``text`` on the keyboard (into the focused widget)."""
        await self.xdotool("type", "--delay", "15", "--", text)

    async def key(self, *keys: str) -> None:
        """Press keys by X name (``Return``, ``ctrl+q``, ``Escape``)."""
        await self.xdotool("key", "--delay", "40", *keys)

    async def windows(self, title: str) -> list[int]:
        """The mapped X windows whose title matches the regex ``title``."""
        out = await self.xdotool("search", "--onlyvisible", "--name", title)
        return [int(w) for w in out.split()]

    async def close_window(self, window: int) -> None:
        """Ask ``window`` to close, as a window manager's close button does (a
        ``WM_PROTOCOLS`` client message with ``WM_DELETE_WINDOW``)."""
        await asyncio.to_thread(_send_delete_window, self.display, window)

    # ------------------------------------------------------------------ screenshots
    async def screenshot(self, name: str) -> Path:
        """Capture the whole screen (X ``GetImage`` through mss) as ``NN-name.png``."""
        self._shots += 1
        path = self.screens / f"{self._shots:02d}-{name}.png"
        await asyncio.to_thread(_capture, self.display, path)
        return path

    async def read(self, name: str, x: int, y: int, width: int, height: int) -> str:
        """What a person reads in this part of the screen: a screenshot cut to the
        rectangle, enlarged, read by tesseract (OCR). The cut-out is kept as ``name``."""
        shot = await self.screenshot(name)
        part = shot.with_name(f"{shot.stem}-read.png")
        # On this thread: the first thread to touch Qt becomes Qt's main thread for the whole
        # process, and a QApplication made later on another one gets no event dispatcher.
        _cut_out(shot, part, (x, y, width, height))
        binary = _require("tesseract")
        proc = await asyncio.create_subprocess_exec(
            binary,
            str(part),
            "-",
            "--psm",
            "6",
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        if proc.returncode != 0:
            raise RuntimeError(f"tesseract: {err.decode(errors='replace')}")
        return out.decode(errors="replace")


def _capture(display: str, path: Path) -> None:
    import mss
    import mss.tools

    with mss.MSS(display=display) as grabber:
        image = grabber.grab(grabber.monitors[0])
        mss.tools.to_png(image.rgb, image.size, output=str(path))


def _cut_out(source: Path, target: Path, rect: tuple[int, int, int, int]) -> None:
    from PySide6.QtCore import QRect, Qt
    from PySide6.QtGui import QImage

    image = QImage(str(source))
    if image.isNull():
        raise RuntimeError(f"cannot read the screenshot {source}")
    x, y, width, height = rect
    part = image.copy(QRect(x, y, width, height)).convertToFormat(QImage.Format.Format_Grayscale8)
    part = part.scaled(
        width * 3,
        height * 3,
        Qt.AspectRatioMode.KeepAspectRatio,
        Qt.TransformationMode.SmoothTransformation,
    )
    if not part.save(str(target)):
        raise RuntimeError(f"cannot write {target}")


class _ClientMessage(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("serial", ctypes.c_ulong),
        ("send_event", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("window", ctypes.c_ulong),
        ("message_type", ctypes.c_ulong),
        ("format", ctypes.c_int),
        ("data", ctypes.c_long * 5),
    ]


class _XEvent(ctypes.Union):
    _fields_ = [("xclient", _ClientMessage), ("pad", ctypes.c_long * 24)]


def _send_delete_window(display: str, window: int) -> None:
    x11 = _load("X11")
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XInternAtom.restype = ctypes.c_ulong
    x11.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    x11.XSendEvent.argtypes = [
        ctypes.c_void_p,
        ctypes.c_ulong,
        ctypes.c_int,
        ctypes.c_long,
        ctypes.POINTER(_XEvent),
    ]
    x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    dpy = x11.XOpenDisplay(display.encode())
    if not dpy:
        raise RuntimeError(f"cannot open X display {display}")
    try:
        event = _XEvent()
        message = event.xclient
        message.type = 33  # ClientMessage
        message.window = window
        message.message_type = x11.XInternAtom(dpy, b"WM_PROTOCOLS", 0)
        message.format = 32
        message.data[0] = x11.XInternAtom(dpy, b"WM_DELETE_WINDOW", 0)
        message.data[1] = 0  # CurrentTime
        event.xclient = message
        x11.XSendEvent(dpy, window, 0, 0, ctypes.byref(event))
        x11.XSync(dpy, 0)
    finally:
        x11.XCloseDisplay(dpy)


@contextlib.asynccontextmanager
async def _accessibility_bus(env: dict[str, str]) -> AsyncIterator[None]:
    launcher = _require(AT_SPI_LAUNCHER)
    proc = await asyncio.create_subprocess_exec(
        launcher,
        "--launch-immediately",
        "--a11y=1",
        env={**os.environ, **env, "NO_AT_BRIDGE": "1"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        bus = await MessageBus(
            bus_address=env["DBUS_SESSION_BUS_ADDRESS"], bus_type=BusType.SESSION
        ).connect()
        try:
            deadline = time.monotonic() + 15
            while not await _has_owner(bus, "org.a11y.Bus"):
                if proc.returncode is not None:
                    raise RuntimeError(f"at-spi-bus-launcher exited (code {proc.returncode})")
                if time.monotonic() > deadline:
                    raise RuntimeError("at-spi-bus-launcher did not appear on the bus in 15 s")
                await asyncio.sleep(0.05)
        finally:
            bus.disconnect()
        yield
    finally:
        await _stop_group(proc)


async def _stop_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the process group (the launcher, its bus daemon and the registry it
    started), SIGKILL what is left after :data:`STOP_TIMEOUT`."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        deadline = time.monotonic() + STOP_TIMEOUT
        while time.monotonic() < deadline:
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                break
            await asyncio.sleep(0.05)
        else:
            continue
        break
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), STOP_TIMEOUT)


async def _has_owner(bus: MessageBus, name: str) -> bool:
    from dbus_fast import Message, MessageType

    reply = await bus.call(
        Message(
            destination="org.freedesktop.DBus",
            path="/org/freedesktop/DBus",
            interface="org.freedesktop.DBus",
            member="NameHasOwner",
            signature="s",
            body=[name],
        )
    )
    return reply.message_type is MessageType.METHOD_RETURN and bool(reply.body[0])


@contextlib.asynccontextmanager
async def journey_desktop(
    screens: Path, *, tray: bool = False, width: int = 1280, height: int = 800
) -> AsyncIterator[Desktop]:
    """Xvfb, a session bus, the accessibility bus and (``tray``) a status-notifier host.

    Raises:
        MissingBinary: Xvfb, dbus-daemon, at-spi-bus-launcher or xdotool is not installed.
    """
    for binary in ("xdotool", AT_SPI_LAUNCHER, "tesseract"):
        _require(binary)
    with xvfb(width, height) as server, session_bus() as address:
        desktop = Desktop(server.display, width, height, address, screens)
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(_accessibility_bus(desktop.env()))
            if tray:
                desktop.tray = await stack.enter_async_context(TrayHost.running(address))
            yield desktop
