"""Owner-only files and directories for the gateway's state (POSIX modes; no-ops elsewhere)."""

from __future__ import annotations

import logging
import os
import stat
import uuid
from pathlib import Path

__all__ = ["DIR_MODE", "FILE_MODE", "ensure_private_dir", "ensure_private_file", "write_new_file"]

log = logging.getLogger("gateway.state")

POSIX = os.name == "posix"
DIR_MODE = 0o700
FILE_MODE = 0o600


def _tighten(path: Path, mode: int, what: str) -> None:
    """chmod ``path`` to ``mode`` when group or others have any access to it."""
    if not POSIX:
        return
    current = stat.S_IMODE(os.stat(path).st_mode)
    if current & 0o077:
        log.warning("%s %s had mode %04o; tightening it to %04o", what, path, current, mode)
        os.chmod(path, mode)


def ensure_private_dir(directory: Path) -> None:
    """Create ``directory`` (and missing parents) with mode 0700; tighten it if it is open.

    Only the state directory itself is tightened, and only if the current user owns it and it
    is not a shared sticky directory such as ``/tmp`` (a misconfigured state dir must not
    lock other users out); otherwise a warning is logged.
    """
    missing: list[Path] = []
    current = directory
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        if POSIX:
            os.chmod(folder, DIR_MODE)
    if POSIX:
        info = os.stat(directory)
        if info.st_uid != os.getuid() or info.st_mode & stat.S_ISVTX:
            if stat.S_IMODE(info.st_mode) & 0o077:
                log.warning("state directory %s is accessible to other users", directory)
            return
    _tighten(directory, DIR_MODE, "state directory")


def ensure_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 if it is missing; tighten its mode if it exists."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, FILE_MODE)
    os.close(fd)
    _tighten(path, FILE_MODE, "state file")


def write_new_file(path: Path, data: bytes) -> bool:
    """Atomically create ``path`` (mode 0600, fsynced) unless something is already there.

    The bytes go to a temporary sibling first and are then hard-linked into place, which never
    replaces an existing file, so two starting processes cannot both win.

    Returns:
        True if this call created the file, False if it already existed.

    Raises:
        OSError: If writing fails; no partial file is left at ``path``.
    """
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), FILE_MODE)
    try:
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError:  # no hard links here: fall back to a check-then-rename
            if os.path.lexists(path):
                return False
            os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            tmp.unlink()
    _fsync_dir(path.parent)
    return True


def _fsync_dir(directory: Path) -> None:
    """Flush the directory entry so a new file survives power loss (POSIX only)."""
    if not POSIX:
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
