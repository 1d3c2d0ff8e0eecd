"""Private-file helpers: owner-only directories and atomic, mode-0600 writes."""

from __future__ import annotations

import logging
import os
import stat
import uuid
from pathlib import Path

__all__ = ["ensure_private_dir", "path_exists", "read_private_file", "write_private_file"]

log = logging.getLogger("openclaw.identity")

_POSIX = os.name == "posix"
_FILE_MODE = 0o600
_DIR_MODE = 0o700


def path_exists(path: Path) -> bool:
    """True if anything is at ``path``, including a dangling symlink."""
    return os.path.lexists(path)


def ensure_private_dir(directory: Path) -> None:
    """Create ``directory`` and any missing parents, each owner-only (0700).

    Directories that already exist are left as they are.
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
            folder.mkdir(mode=_DIR_MODE)
        except FileExistsError:
            continue
        if _POSIX:
            os.chmod(folder, _DIR_MODE)


def read_private_file(path: Path, *, limit: int, what: str) -> bytes | None:
    """Read a secret file, tightening its mode to 0600 if group or others can access it.

    Args:
        path: The file.
        limit: Largest accepted size in bytes.
        what: Name of the file's role for the log message.

    Returns:
        The contents, or None if the file is larger than ``limit``.

    Raises:
        OSError: If the file cannot be opened or read.
    """
    with open(path, "rb") as handle:
        if _POSIX:
            mode = stat.S_IMODE(os.fstat(handle.fileno()).st_mode)
            if mode & 0o077:
                log.warning(
                    "%s %s had mode %04o, readable by other users; tightening it to 0600",
                    what,
                    path,
                    mode,
                )
                try:
                    os.fchmod(handle.fileno(), _FILE_MODE)
                except OSError as exc:
                    log.warning("could not change the mode of %s: %s", path, exc.strerror)
        data = handle.read(limit + 1)
    return None if len(data) > limit else data


def write_private_file(path: Path, data: bytes, *, overwrite: bool = True) -> bool:
    """Write a file atomically with mode 0600.

    The data goes to a temporary file in the same directory (created 0600), is flushed
    to disk, and then moved into place; the directory entry is flushed too.

    Args:
        path: Destination.
        data: Contents.
        overwrite: When False, never replace an existing file.

    Returns:
        True if written; False only when ``overwrite`` is False and ``path`` exists.

    Raises:
        OSError: If writing fails. No partial file is left at ``path``.
    """
    ensure_private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(tmp, flags, _FILE_MODE)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        if overwrite:
            os.replace(tmp, path)
        elif not _place_new(tmp, path):
            return False
    finally:
        if path_exists(tmp):
            tmp.unlink()
    _fsync_dir(path.parent)
    return True


def _place_new(tmp: Path, path: Path) -> bool:
    """Move ``tmp`` to ``path`` unless something is already there."""
    try:
        os.link(tmp, path)  # atomic and never clobbers
    except FileExistsError:
        return False
    except OSError:  # no hard links on this filesystem
        if path_exists(path):
            return False
        os.replace(tmp, path)
    return True


def _fsync_dir(directory: Path) -> None:
    if not _POSIX:
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
