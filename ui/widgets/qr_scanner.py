"""Scanning a setup-code QR with the camera from the connect screen: the scan runs in a
worker thread, reports back on the GUI thread, and the user can stop it at any time."""

from __future__ import annotations

import asyncio
import threading

from PySide6.QtCore import QObject, Signal

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.discovery import SetupCodeError, decode_setup_code

__all__ = ["QrScanner", "is_setup_code"]

#: How long a scan looks before giving up (the user can also stop it).
SCAN_TIMEOUT_S = 60.0


def is_setup_code(text: str) -> bool:
    """Whether a QR's text decodes as a setup code (other QR codes are ignored)."""
    try:
        decode_setup_code(text)
    except (SetupCodeError, ValueError):
        return False
    return True


class QrScanner(QObject):
    """One scan at a time; ``found`` carries the setup code, ``failed`` says why not."""

    found = Signal(str)
    failed = Signal(str)
    running = Signal(bool)

    def __init__(self, timeout_s: float = SCAN_TIMEOUT_S) -> None:
        super().__init__()
        self.timeout_s = timeout_s
        self._stop: threading.Event | None = None
        self.task: asyncio.Task[None] | None = None

    @property
    def active(self) -> bool:
        """Whether a scan is running."""
        return self.task is not None and not self.task.done()

    def start(self, camera_source: str) -> None:
        """Scan with ``camera_source`` (a ``node.camera_source`` value; empty: camera 0)."""
        if self.active:
            return
        self._stop = threading.Event()
        self.running.emit(True)
        self.task = asyncio.get_running_loop().create_task(
            self._scan(camera_source or "0", self._stop), name="qr-scan"
        )

    def stop(self) -> None:
        """Stop the running scan (it ends at the next frame)."""
        if self._stop is not None:
            self._stop.set()

    async def _scan(self, source: str, stop: threading.Event) -> None:
        # OpenCV is loaded when the user scans, not when the window starts.
        from openclaw_desktop.devices.camera import CaptureStopped
        from openclaw_desktop.devices.camera_sources import parse_source
        from openclaw_desktop.devices.qr_scan import scan_qr

        try:
            target = parse_source(source)
            result = await asyncio.to_thread(
                scan_qr, target, stop, accept=is_setup_code, timeout_s=self.timeout_s
            )
        except CaptureStopped:
            self.failed.emit("scanning stopped")
        except (DeviceError, ValueError) as exc:
            self.failed.emit(str(exc))
        else:
            self.found.emit(result.text)
        finally:
            self.running.emit(False)
