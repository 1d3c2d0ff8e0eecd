"""A private desktop session for tests: a D-Bus session bus and an X server (Xvfb).

Both are real processes started from the system binaries (``/usr/bin/dbus-daemon``,
``/usr/bin/Xvfb``), each with a bounded start-up wait and a clean stop (SIGTERM, then
SIGKILL). When a binary is missing they raise :class:`MissingBinary`; the pytest fixtures
turn that, and only that, into a skip naming the Debian package to install.

* :func:`session_bus` runs ``dbus-daemon`` with a session configuration of its own
  (``<type>session</type>``, a unix socket in a temporary folder, no standard service folders)
  so nothing on this machine can be activated on it by accident; ``services`` adds
  activatable ``.service`` files on purpose.
* :func:`xvfb` lets Xvfb choose a free display number itself (``-displayfd``), so parallel
  runs never collide. :class:`XPainter` paints the root window and adds coloured windows
  through libX11 (ctypes), and can split the screen into RandR monitors (libXrandr).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

__all__ = [
    "MissingBinary",
    "XPainter",
    "XServer",
    "dbus_session_fixture",
    "require_binary",
    "session_bus",
    "xvfb",
    "xvfb_fixture",
]

START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0
_PACKAGES = {"dbus-daemon": "dbus-daemon (or dbus)", "Xvfb": "xvfb"}


class MissingBinary(RuntimeError):
    """A system binary the helper needs is not installed."""


def require_binary(name: str) -> str:
    """The path of ``name``, or :class:`MissingBinary` naming the Debian package."""
    path = shutil.which(name)
    if path is None:
        package = _PACKAGES.get(name, name)
        raise MissingBinary(f"{name} is not installed (Debian/Ubuntu package: {package})")
    return path


def _read_line(proc: subprocess.Popen[bytes], fd: int, what: str) -> str:
    """One line from ``fd`` within :data:`START_TIMEOUT`, or RuntimeError with stderr."""
    deadline = time.monotonic() + START_TIMEOUT
    data = b""
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise RuntimeError(f"{what} did not start in {START_TIMEOUT:g} s")
        ready, _, _ = select.select([fd], [], [], min(remaining, 0.2))
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                proc.wait(timeout=STOP_TIMEOUT)
                raise RuntimeError(f"{what} exited early (code {proc.returncode})")
            data += chunk
        elif proc.poll() is not None:
            raise RuntimeError(f"{what} exited early (code {proc.returncode})")
    return data.decode().strip()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=STOP_TIMEOUT)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


_BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  {servicedir}
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


@contextlib.contextmanager
def session_bus(services: Mapping[str, str] | None = None) -> Iterator[str]:
    """Run a private session ``dbus-daemon``; yields its address (``unix:path=...``).

    Args:
        services: activatable services, bus name -> ``Exec`` command line; the daemon
            starts them on demand like a desktop session would.

    Raises:
        MissingBinary: dbus-daemon is not installed.
    """
    binary = require_binary("dbus-daemon")
    with tempfile.TemporaryDirectory(prefix="ocd-bus-") as tmp:
        folder = Path(tmp)
        servicedir = ""
        if services:
            (folder / "services").mkdir()
            for name, command in services.items():
                (folder / "services" / f"{name}.service").write_text(
                    f"[D-BUS Service]\nName={name}\nExec={command}\n", encoding="utf-8"
                )
            servicedir = f"<servicedir>{escape(str(folder / 'services'))}</servicedir>"
        config = folder / "session.conf"
        config.write_text(
            _BUS_CONFIG.format(socket=escape(str(folder / "bus")), servicedir=servicedir),
            encoding="utf-8",
        )
        proc = subprocess.Popen(
            [binary, f"--config-file={config}", "--nofork", "--nopidfile", "--print-address=1"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert proc.stdout is not None
            address = _read_line(proc, proc.stdout.fileno(), "dbus-daemon")
            yield address
        finally:
            _stop(proc)


@dataclass(frozen=True)
class XServer:
    """A running Xvfb."""

    display: str
    width: int
    height: int


@contextlib.contextmanager
def xvfb(width: int = 640, height: int = 480, depth: int = 24) -> Iterator[XServer]:
    """Run ``Xvfb`` on a display number it picks itself; yields the :class:`XServer`.

    Raises:
        MissingBinary: Xvfb is not installed.
    """
    binary = require_binary("Xvfb")
    read_fd, write_fd = os.pipe()
    try:
        proc = subprocess.Popen(
            [
                binary,
                "-displayfd",
                str(write_fd),
                "-screen",
                "0",
                f"{width}x{height}x{depth}",
                "-nolisten",
                "tcp",
                "-noreset",
            ],
            pass_fds=(write_fd,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    finally:
        os.close(write_fd)
    try:
        number = _read_line(proc, read_fd, "Xvfb")
        yield XServer(f":{number}", width, height)
    finally:
        os.close(read_fd)
        _stop(proc)


@pytest.fixture(name="dbus_session")
def dbus_session_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A private session bus, exported as ``DBUS_SESSION_BUS_ADDRESS`` for the test.

    Import it into a test module (``from tests.helpers.desktop_session import
    dbus_session_fixture``) and request ``dbus_session``. Skips only when dbus-daemon is
    not installed.
    """
    with contextlib.ExitStack() as stack:
        try:
            address = stack.enter_context(session_bus())
        except MissingBinary as exc:
            pytest.skip(str(exc))
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        yield address


@pytest.fixture(name="x_server")
def xvfb_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[XServer]:
    """A private 640x480 X server, exported as ``DISPLAY`` (and no ``WAYLAND_DISPLAY``).

    Import ``xvfb_fixture`` into a test module and request ``x_server``. Skips only when
    Xvfb is not installed.
    """
    with contextlib.ExitStack() as stack:
        try:
            server = stack.enter_context(xvfb())
        except MissingBinary as exc:
            pytest.skip(str(exc))
        monkeypatch.setenv("DISPLAY", server.display)
        monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
        yield server


# ---------------------------------------------------------------- painting (libX11)


class _XRRMonitorInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_ulong),
        ("primary", ctypes.c_int),
        ("automatic", ctypes.c_int),
        ("noutput", ctypes.c_int),
        ("x", ctypes.c_int),
        ("y", ctypes.c_int),
        ("width", ctypes.c_int),
        ("height", ctypes.c_int),
        ("mwidth", ctypes.c_int),
        ("mheight", ctypes.c_int),
        ("outputs", ctypes.POINTER(ctypes.c_ulong)),
    ]


def _load(name: str) -> ctypes.CDLL:
    path = ctypes.util.find_library(name)
    if path is None:
        raise MissingBinary(
            f"lib{name} is not installed (Debian/Ubuntu package: lib{name.lower()})"
        )
    return ctypes.CDLL(path)


class XPainter:
    """Draws on an X display: the root background and plain coloured windows.

    The windows live as long as this connection: use it as a context manager around the
    capture. Colours are ``(r, g, b)`` and assume a 24-bit TrueColor visual (Xvfb's).
    """

    def __init__(self, display: str) -> None:
        x11 = _load("X11")
        x11.XOpenDisplay.restype = ctypes.c_void_p
        x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
        x11.XDefaultRootWindow.restype = ctypes.c_ulong
        x11.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
        x11.XSetWindowBackground.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
        x11.XClearWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
        x11.XCreateSimpleWindow.restype = ctypes.c_ulong
        x11.XCreateSimpleWindow.argtypes = [
            ctypes.c_void_p,
            ctypes.c_ulong,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_uint,
            ctypes.c_ulong,
            ctypes.c_ulong,
        ]
        x11.XMapWindow.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
        x11.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
        x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
        x11.XInternAtom.restype = ctypes.c_ulong
        x11.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        self._x11 = x11
        self._dpy = x11.XOpenDisplay(display.encode())
        if not self._dpy:
            raise RuntimeError(f"cannot open X display {display}")
        self._root = x11.XDefaultRootWindow(self._dpy)

    @staticmethod
    def pixel(rgb: tuple[int, int, int]) -> int:
        """The TrueColor pixel value of an RGB colour."""
        r, g, b = rgb
        return (r << 16) | (g << 8) | b

    def fill_root(self, rgb: tuple[int, int, int]) -> None:
        """Paint the whole root window one colour."""
        self._x11.XSetWindowBackground(self._dpy, self._root, self.pixel(rgb))
        self._x11.XClearWindow(self._dpy, self._root)
        self._x11.XSync(self._dpy, 0)

    def add_window(
        self, x: int, y: int, width: int, height: int, rgb: tuple[int, int, int]
    ) -> None:
        """Map a borderless window filled with one colour."""
        window = self._x11.XCreateSimpleWindow(
            self._dpy, self._root, x, y, width, height, 0, 0, self.pixel(rgb)
        )
        self._x11.XMapWindow(self._dpy, window)
        self._x11.XSync(self._dpy, 0)

    def set_monitors(self, rects: Sequence[tuple[int, int, int, int]]) -> None:
        """Replace the screen's RandR monitor list with ``rects`` (x, y, width, height).

        The first monitor takes over Xvfb's only output, which hides the automatic monitor of
        that output; the others are output-less client monitors (RandR 1.5).
        """
        xrandr = _load("Xrandr")
        xrandr.XRRAllocateMonitor.restype = ctypes.POINTER(_XRRMonitorInfo)
        xrandr.XRRAllocateMonitor.argtypes = [ctypes.c_void_p, ctypes.c_int]
        xrandr.XRRSetMonitor.argtypes = [
            ctypes.c_void_p,
            ctypes.c_ulong,
            ctypes.POINTER(_XRRMonitorInfo),
        ]
        xrandr.XRRGetScreenResourcesCurrent.restype = ctypes.c_void_p
        xrandr.XRRGetScreenResourcesCurrent.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
        xrandr.XRRFreeScreenResources.argtypes = [ctypes.c_void_p]
        self._x11.XFree.argtypes = [ctypes.c_void_p]
        resources = xrandr.XRRGetScreenResourcesCurrent(self._dpy, self._root)
        # XRRScreenResources: timestamp, configTimestamp, ncrtc, crtcs*, noutput, outputs*, ...
        header = ctypes.cast(resources, ctypes.POINTER(_ScreenResourcesHead)).contents
        first_output = header.outputs[0] if header.noutput else 0
        for index, (x, y, width, height) in enumerate(rects):
            with_output = index == 0 and first_output != 0
            info = xrandr.XRRAllocateMonitor(self._dpy, 1 if with_output else 0)
            mon = info.contents
            mon.name = self._x11.XInternAtom(self._dpy, f"TEST-{index}".encode(), 0)
            mon.primary = int(index == 0)
            mon.x, mon.y, mon.width, mon.height = x, y, width, height
            mon.mwidth, mon.mheight = max(1, width // 4), max(1, height // 4)
            if with_output:
                mon.outputs[0] = first_output
            xrandr.XRRSetMonitor(self._dpy, self._root, info)
            self._x11.XFree(info)
        xrandr.XRRFreeScreenResources(resources)
        self._x11.XSync(self._dpy, 0)

    def close(self) -> None:
        """Close the connection (its windows disappear)."""
        if self._dpy:
            self._x11.XCloseDisplay(self._dpy)
            self._dpy = None

    def __enter__(self) -> XPainter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _ScreenResourcesHead(ctypes.Structure):
    _fields_ = [
        ("timestamp", ctypes.c_ulong),
        ("configTimestamp", ctypes.c_ulong),
        ("ncrtc", ctypes.c_int),
        ("crtcs", ctypes.POINTER(ctypes.c_ulong)),
        ("noutput", ctypes.c_int),
        ("outputs", ctypes.POINTER(ctypes.c_ulong)),
    ]
