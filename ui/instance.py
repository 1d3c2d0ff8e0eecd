"""One window per user: a second ``openclaw-desktop`` hands its ``openclaw://`` link (or just
"come to the front") to the one already running, and exits.

The running app listens on a local socket (:class:`InstanceServer`, a user-only socket in
``$XDG_RUNTIME_DIR`` on Linux, a named pipe on Windows); the launcher calls :func:`forward`
before it opens a window. One message per connection: a line holding the link, or an empty
line; the answer is ``ok`` or ``bad``. The server parses the link again (it trusts no
client) and never logs it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from openclaw_desktop.config import AppPaths
from openclaw_desktop.errors import LinkError
from openclaw_desktop.links import MAX_LINK_CHARS, parse_link

__all__ = ["InstanceServer", "forward", "server_name"]

log = logging.getLogger("openclaw.ui")

MAX_MESSAGE = MAX_LINK_CHARS + 1
TIMEOUT_MS = 2000


def server_name(paths: AppPaths) -> str:
    """The socket of this installation (one per config folder, so instances with their own
    ``OPENCLAW_DESKTOP_HOME`` do not meet)."""
    digest = hashlib.sha256(str(paths.config_dir.absolute()).encode()).hexdigest()[:16]
    name = f"openclaw-desktop-{digest}"
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if sys.platform.startswith("linux") and runtime and Path(runtime).is_dir():
        return str(Path(runtime) / name)
    return name


def forward(paths: AppPaths, link: str | None, *, timeout_ms: int = TIMEOUT_MS) -> bool:
    """Hand ``link`` (None: only raise the window) to a running instance; whether one took it.

    Blocking, needs no QApplication (the launcher calls it before making one).
    """
    socket = QLocalSocket()
    socket.connectToServer(server_name(paths))
    if not socket.waitForConnected(timeout_ms):
        return False
    try:
        socket.write(((link or "") + "\n").encode("utf-8"))
        if not socket.waitForBytesWritten(timeout_ms):
            return False
        while not socket.canReadLine():
            if not socket.waitForReadyRead(timeout_ms):
                return False
        return bytes(socket.readLine().data()).strip() == b"ok"
    finally:
        socket.abort()


class InstanceServer(QObject):
    """Receives what later launches hand over (see :func:`forward`).

    Signals:
        link_received: a parsed :class:`~openclaw_desktop.links.PairLink` (already checked).
        show_requested: a launch without a link: bring the window to the front.
    """

    link_received = Signal(object)
    show_requested = Signal()

    def __init__(self, paths: AppPaths, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = server_name(paths)
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.setMaxPendingConnections(4)
        self.server.newConnection.connect(self._accept)
        self._buffers: dict[QLocalSocket, bytes] = {}

    def listen(self) -> bool:
        """Start listening; False when another instance already does (or it failed)."""
        probe = QLocalSocket()
        probe.connectToServer(self.name)
        if probe.waitForConnected(300):
            probe.abort()
            return False
        QLocalServer.removeServer(self.name)  # a socket left behind by a crash
        if not self.server.listen(self.name):
            log.warning("single-instance socket unavailable: %s", self.server.errorString())
            return False
        return True

    def close(self) -> None:
        """Stop listening (the socket file is removed)."""
        self.server.close()

    def _accept(self) -> None:
        while self.server.hasPendingConnections():
            socket = self.server.nextPendingConnection()
            self._buffers[socket] = b""
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(lambda s=socket: self._drop(s))

    def _drop(self, socket: QLocalSocket) -> None:
        self._buffers.pop(socket, None)
        socket.deleteLater()

    def _reply(self, socket: QLocalSocket, answer: bytes) -> None:
        socket.write(answer + b"\n")
        socket.flush()
        socket.disconnectFromServer()

    def _read(self, socket: QLocalSocket) -> None:
        if socket not in self._buffers:
            return
        data = self._buffers[socket] + bytes(socket.readAll().data())
        if b"\n" not in data:
            if len(data) > MAX_MESSAGE:
                log.warning("ignored an oversized message from another launch")
                self._buffers.pop(socket, None)
                socket.abort()
            else:
                self._buffers[socket] = data
            return
        self._buffers.pop(socket, None)
        message = data.split(b"\n", 1)[0].decode("utf-8", errors="replace").strip()
        if not message:
            self._reply(socket, b"ok")
            self.show_requested.emit()
            return
        try:
            link = parse_link(message)
        except LinkError as exc:  # its message never holds the code
            log.warning("ignored a link from another launch: %s", exc)
            self._reply(socket, b"bad")
            return
        self._reply(socket, b"ok")
        self.link_received.emit(link)
