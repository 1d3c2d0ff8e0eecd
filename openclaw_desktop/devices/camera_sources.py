"""Where camera frames come from: the local V4L2 capture devices (found through sysfs) and
the user's ``camera_source`` setting (a device index, a ``/dev`` path, a video file or a
stream URL such as an IP camera's ``rtsp://`` or MJPEG ``http://`` address).

No OpenCV here: this module only names the cameras, gives them ids and says how to open
each one. :mod:`openclaw_desktop.devices.camera` does the capturing.

Stream URLs may carry credentials (``rtsp://user:secret@host/...``), so every text meant for
the agent or the log goes through :meth:`CameraTarget.describe`, which drops the user info
and the query string.
"""

from __future__ import annotations

import os
import re
import struct
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from urllib.parse import unquote, urlsplit

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.protocol import NodeErrorCode

__all__ = [
    "CONFIGURED_ID",
    "STREAM_SCHEMES",
    "CameraInfo",
    "CameraTarget",
    "SourceKind",
    "camera_unavailable_reason",
    "list_cameras",
    "local_cameras",
    "parse_source",
]

#: The ``camera.list`` id of a configured file or stream source.
CONFIGURED_ID = "configured"
#: URL schemes OpenCV's FFmpeg backend reads as a live stream.
STREAM_SCHEMES = ("rtsp", "rtsps", "http", "https")

_LINUX = sys.platform.startswith("linux")
SYS_VIDEO4LINUX = Path("/sys/class/video4linux")
DEV = Path("/dev")

_VIDEO_NODE = re.compile(r"video(\d+)")
_BUILTIN_HINTS = re.compile(r"integrated|built-?in|internal|facetime", re.IGNORECASE)
# VIDIOC_QUERYCAP = _IOR('V', 0, struct v4l2_capability), a 104-byte struct whose
# ``capabilities`` and ``device_caps`` (u32) sit at offsets 84 and 88.
_VIDIOC_QUERYCAP = 0x80685600
_CAP_VIDEO_CAPTURE = 0x00000001
_CAP_VIDEO_CAPTURE_MPLANE = 0x00001000
_CAP_DEVICE_CAPS = 0x80000000


class SourceKind(StrEnum):
    """How a camera is opened."""

    DEVICE = "device"  # a V4L2 node (/dev/video0, /dev/v4l/by-id/...)
    INDEX = "index"  # an OpenCV camera index (macOS, Windows)
    FILE = "file"  # a video file, played in real time and looped
    STREAM = "stream"  # rtsp:// or http(s):// (MJPEG), through FFmpeg


@dataclass(frozen=True, slots=True)
class CameraTarget:
    """What to open: a kind and its location (path, URL or index digits)."""

    kind: SourceKind
    location: str

    @property
    def live(self) -> bool:
        """A real camera or stream (frames arrive at their own pace), not a file."""
        return self.kind is not SourceKind.FILE

    def describe(self) -> str:
        """A text safe for the agent and the log: no credentials, no query string."""
        if self.kind is SourceKind.STREAM:
            parts = urlsplit(self.location)
            host = parts.hostname or ""
            if ":" in host:
                host = f"[{host}]"
            try:
                port = f":{parts.port}" if parts.port is not None else ""
            except ValueError:
                port = ""
            return f"{parts.scheme}://{host}{port}{parts.path}"
        if self.kind is SourceKind.FILE:
            return Path(self.location).name
        return self.location


@dataclass(frozen=True, slots=True)
class CameraInfo:
    """One ``camera.list`` entry and how to open it."""

    id: str
    name: str
    position: str  # front | back | external | unspecified
    device_type: str  # builtIn | external
    target: CameraTarget

    def to_wire(self) -> dict[str, str]:
        """The ``camera.list`` shape."""
        return {
            "id": self.id,
            "name": self.name,
            "position": self.position,
            "deviceType": self.device_type,
        }


def parse_source(text: str, *, dev_root: Path = DEV) -> CameraTarget:
    """The camera a ``camera_source`` setting names.

    ``"0"`` is a camera index (``/dev/video0`` on Linux), a path under ``/dev`` a V4L2
    device, ``rtsp://``/``rtsps://``/``http://``/``https://`` a stream, ``file://`` or
    any other path a video file.

    Raises:
        DeviceError: ``UNAVAILABLE`` for a URL scheme OpenCV cannot read as a camera.
    """
    value = text.strip()
    if value.isdigit():
        if _LINUX:
            return CameraTarget(SourceKind.DEVICE, str(dev_root / f"video{int(value)}"))
        return CameraTarget(SourceKind.INDEX, str(int(value)))
    if "://" in value:
        scheme = value.split("://", 1)[0].lower()
        if scheme in STREAM_SCHEMES:
            return CameraTarget(SourceKind.STREAM, value)
        if scheme == "file":
            return CameraTarget(SourceKind.FILE, unquote(urlsplit(value).path))
        raise DeviceError(
            NodeErrorCode.UNAVAILABLE,
            f"camera_source scheme {scheme!r} is not supported; use a device index, a /dev "
            f"path, a video file or one of {', '.join(s + '://' for s in STREAM_SCHEMES)}",
        )
    if value.startswith(("/dev/", f"{dev_root}/")):
        return CameraTarget(SourceKind.DEVICE, value)
    return CameraTarget(SourceKind.FILE, os.path.expanduser(value))


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _query_capture(node: Path) -> bool | None:
    """Whether a V4L2 node captures video (VIDIOC_QUERYCAP), None when it cannot be asked.

    Opening a node to query it does not start the camera (no frames, no LED).
    """
    import fcntl

    try:
        fd = os.open(node, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        buf = bytearray(104)
        fcntl.ioctl(fd, _VIDIOC_QUERYCAP, buf)
    except OSError:
        return None
    finally:
        os.close(fd)
    caps, device_caps = struct.unpack_from("=II", buf, 84)
    effective = device_caps if caps & _CAP_DEVICE_CAPS else caps
    return bool(effective & (_CAP_VIDEO_CAPTURE | _CAP_VIDEO_CAPTURE_MPLANE))


def _sysfs_says_capture(entry: Path) -> bool:
    """Without opening the node: webcams expose their capture stream as index 0 and a
    metadata stream as index 1 on a second node."""
    index = _read(entry / "index")
    return index is None or index == "0"


def _removable(entry: Path) -> str | None:
    """``fixed``/``removable``/``unknown`` of the USB port the camera hangs off, if any."""
    try:
        here = (entry / "device").resolve(strict=True)
    except OSError:
        return None
    for folder in (here, *list(here.parents)[:6]):
        value = _read(folder / "removable")
        if value:
            return value
    return None


def _placement(entry: Path, name: str) -> tuple[str, str]:
    """(position, deviceType) of a local camera, from the port and the name."""
    removable = _removable(entry)
    if removable == "fixed" or (removable != "removable" and _BUILTIN_HINTS.search(name)):
        return "front", "builtIn"  # a laptop's built-in camera faces the user
    if removable == "removable":
        return "external", "external"
    return "unspecified", "external"


def _video_nodes(sys_root: Path) -> list[tuple[int, Path]]:
    found: list[tuple[int, Path]] = []
    try:
        entries = list(sys_root.iterdir())
    except OSError:
        return found
    for entry in entries:
        match = _VIDEO_NODE.fullmatch(entry.name)
        if match:
            found.append((int(match.group(1)), entry))
    return sorted(found)


def local_cameras(
    *, sys_root: Path = SYS_VIDEO4LINUX, dev_root: Path = DEV, query: bool = True
) -> list[CameraInfo]:
    """The local capture devices, in device-number order.

    On Linux: every ``/dev/videoN`` whose node captures video (asked with VIDIOC_QUERYCAP
    when ``query`` and the node can be opened, else judged from sysfs), named from
    ``/sys/class/video4linux/videoN/name``. Elsewhere: OpenCV's camera 0, unverified (there is
    no cheap way to enumerate cameras without opening them).
    """
    if not _LINUX:
        target = CameraTarget(SourceKind.INDEX, "0")
        return [CameraInfo("0", "Default camera", "unspecified", "builtIn", target)]
    cameras: list[CameraInfo] = []
    for number, entry in _video_nodes(sys_root):
        node = dev_root / f"video{number}"
        if not node.exists():
            continue
        capture = _query_capture(node) if query else None
        if capture is None:
            capture = _sysfs_says_capture(entry)
        if not capture:
            continue
        name = _read(entry / "name") or f"Video device {number}"
        position, device_type = _placement(entry, name)
        target = CameraTarget(SourceKind.DEVICE, str(node))
        cameras.append(CameraInfo(str(node), name, position, device_type, target))
    return cameras


def _same_node(a: str, b: str) -> bool:
    return a == b or os.path.realpath(a) == os.path.realpath(b)


def list_cameras(
    camera_source: str | None, *, sys_root: Path = SYS_VIDEO4LINUX, dev_root: Path = DEV
) -> list[CameraInfo]:
    """Every camera ``camera.list`` shows; the first is the default.

    A configured file or stream is listed first as ``configured`` (external); a configured
    local device moves that device to the front (and is listed even when it is not found,
    so the user's choice stays visible; opening it then fails with a clear error).

    Raises:
        DeviceError: ``UNAVAILABLE`` when ``camera_source`` cannot be understood.
    """
    local = local_cameras(sys_root=sys_root, dev_root=dev_root)
    if camera_source is None or not camera_source.strip():
        return local
    target = parse_source(camera_source, dev_root=dev_root)
    if target.kind in (SourceKind.DEVICE, SourceKind.INDEX):
        chosen = [c for c in local if _same_node(c.target.location, target.location)]
        if chosen:
            return [chosen[0], *(c for c in local if c is not chosen[0])]
        name = f"Configured camera ({target.describe()})"
        return [CameraInfo(target.location, name, "unspecified", "external", target), *local]
    name = f"Configured camera ({target.describe()})"
    return [CameraInfo(CONFIGURED_ID, name, "external", "external", target), *local]


def camera_unavailable_reason(
    camera_source: str | None, *, sys_root: Path = SYS_VIDEO4LINUX, dev_root: Path = DEV
) -> str | None:
    """Why no camera can be used here, or None when one can. Cheap: reads sysfs and
    stats paths, never opens a device or a stream."""
    if camera_source is not None and camera_source.strip():
        try:
            target = parse_source(camera_source, dev_root=dev_root)
        except DeviceError as exc:
            return exc.message
        if target.kind in (SourceKind.DEVICE, SourceKind.FILE) and not os.path.exists(
            target.location
        ):
            return f"camera_source {target.describe()} not found"
        return None
    if not _LINUX:
        return None
    for number, entry in _video_nodes(sys_root):
        if (dev_root / f"video{number}").exists() and _sysfs_says_capture(entry):
            return None
    return (
        "no camera found (no V4L2 capture device under /dev/video*); set camera_source to "
        "a device, a video file or a stream URL"
    )
