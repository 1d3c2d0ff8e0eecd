"""Unit tests for camera sources: parsing camera_source, V4L2 enumeration over a sysfs tree
built on disk, the cheap availability check and the credential-free descriptions."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from openclaw_desktop.devices import DeviceError
from openclaw_desktop.devices.camera_sources import (
    CONFIGURED_ID,
    CameraTarget,
    SourceKind,
    camera_unavailable_reason,
    list_cameras,
    local_cameras,
    parse_source,
)

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="V4L2 enumeration is Linux"
)


def add_node(
    sys_root: Path,
    dev_root: Path,
    number: int,
    name: str,
    *,
    index: str | None = "0",
    removable: str | None = None,
    dev_node: bool = True,
) -> None:
    """A /sys/class/video4linux/videoN entry (with its USB port) and its /dev node.

    The /dev node is a regular file, so VIDIOC_QUERYCAP fails and the sysfs ``index``
    decides, as it does for a node this user may not open."""
    entry = sys_root / f"video{number}"
    entry.mkdir(parents=True)
    (entry / "name").write_text(name + "\n")
    if index is not None:
        (entry / "index").write_text(index + "\n")
    port = sys_root.parent / "devices" / f"usb-{number}"
    interface = port / "1-1:1.0"
    interface.mkdir(parents=True)
    if removable is not None:
        (port / "removable").write_text(removable + "\n")
    (entry / "device").symlink_to(interface)
    dev_root.mkdir(exist_ok=True)
    if dev_node:
        (dev_root / f"video{number}").write_bytes(b"")


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    """A sysfs and /dev with a built-in camera, its metadata node, a USB webcam, a sysfs
    entry without a node, and video10 (numeric order, not text order)."""
    sys_root, dev_root = tmp_path / "sys" / "video4linux", tmp_path / "dev"
    add_node(sys_root, dev_root, 0, "Integrated Camera: Integrated C", removable="fixed")
    add_node(sys_root, dev_root, 1, "Integrated Camera: Integrated C", index="1")
    add_node(sys_root, dev_root, 2, "HD Pro Webcam C920", removable="removable")
    add_node(sys_root, dev_root, 3, "Gone", dev_node=False)
    add_node(sys_root, dev_root, 10, "Virtual Cam", index=None, removable="unknown")
    return sys_root, dev_root


def test_local_cameras_lists_capture_nodes_with_names_and_placement(
    roots: tuple[Path, Path],
) -> None:
    """Capture nodes only, in device-number order; fixed port -> built-in front camera."""
    sys_root, dev_root = roots
    cameras = local_cameras(sys_root=sys_root, dev_root=dev_root)
    assert [c.to_wire() for c in cameras] == [
        {
            "id": str(dev_root / "video0"),
            "name": "Integrated Camera: Integrated C",
            "position": "front",
            "deviceType": "builtIn",
        },
        {
            "id": str(dev_root / "video2"),
            "name": "HD Pro Webcam C920",
            "position": "external",
            "deviceType": "external",
        },
        {
            "id": str(dev_root / "video10"),
            "name": "Virtual Cam",
            "position": "unspecified",
            "deviceType": "external",
        },
    ]
    assert cameras[1].target == CameraTarget(SourceKind.DEVICE, str(dev_root / "video2"))


def test_name_hint_marks_a_camera_builtin_when_the_port_does_not_say(tmp_path: Path) -> None:
    """No removable attribute: an 'Integrated' name is enough for builtIn."""
    sys_root, dev_root = tmp_path / "sys" / "video4linux", tmp_path / "dev"
    add_node(sys_root, dev_root, 0, "Integrated_Webcam_HD")
    cameras = local_cameras(sys_root=sys_root, dev_root=dev_root)
    assert [(c.position, c.device_type) for c in cameras] == [("front", "builtIn")]


def test_no_sysfs_means_no_local_cameras(tmp_path: Path) -> None:
    """A machine without video4linux has no local camera."""
    assert local_cameras(sys_root=tmp_path / "missing", dev_root=tmp_path) == []


def test_configured_stream_is_listed_first_without_credentials(roots: tuple[Path, Path]) -> None:
    """A stream source is the default entry; its name never shows user, password or query."""
    sys_root, dev_root = roots
    url = "rtsp://admin:hunter2@cam.local:8554/live?token=abc"
    cameras = list_cameras(url, sys_root=sys_root, dev_root=dev_root)
    assert cameras[0].to_wire() == {
        "id": CONFIGURED_ID,
        "name": "Configured camera (rtsp://cam.local:8554/live)",
        "position": "external",
        "deviceType": "external",
    }
    assert cameras[0].target == CameraTarget(SourceKind.STREAM, url)
    assert len(cameras) == 4
    assert "hunter2" not in repr([c.to_wire() for c in cameras])


@pytest.mark.parametrize("source", ["2", "video2", "v4l/by-id/usb-C920-video-index0"])
def test_configured_local_device_moves_to_the_front(roots: tuple[Path, Path], source: str) -> None:
    """An index, a /dev path or a stable /dev/v4l symlink to it makes that device the
    default, without listing it twice."""
    sys_root, dev_root = roots
    link = dev_root / "v4l" / "by-id" / "usb-C920-video-index0"
    link.parent.mkdir(parents=True)
    link.symlink_to(dev_root / "video2")
    if not source.isdigit():
        source = str(dev_root / source)
    ids = [c.id for c in list_cameras(source, sys_root=sys_root, dev_root=dev_root)]
    assert ids == [str(dev_root / n) for n in ("video2", "video0", "video10")]


def test_configured_device_that_is_absent_stays_visible(roots: tuple[Path, Path]) -> None:
    """The user's choice is listed even when the device is not plugged in."""
    sys_root, dev_root = roots
    cameras = list_cameras("/dev/video7", sys_root=sys_root, dev_root=dev_root)
    assert cameras[0].to_wire() == {
        "id": "/dev/video7",
        "name": "Configured camera (/dev/video7)",
        "position": "unspecified",
        "deviceType": "external",
    }


@pytest.mark.parametrize(
    ("text", "kind", "location", "shown"),
    [
        ("0", SourceKind.DEVICE, "/dev/video0", "/dev/video0"),
        (" 3 ", SourceKind.DEVICE, "/dev/video3", "/dev/video3"),
        ("/dev/v4l/by-id/usb-cam-index0", SourceKind.DEVICE, None, None),
        ("http://cam:8080/video.mjpg", SourceKind.STREAM, None, "http://cam:8080/video.mjpg"),
        ("HTTPS://u:p@[::1]:9/x?y=1#z", SourceKind.STREAM, None, "https://[::1]:9/x"),
        ("rtsps://u@cam/stream", SourceKind.STREAM, None, "rtsps://cam/stream"),
        ("file:///tmp/my%20clip.mp4", SourceKind.FILE, "/tmp/my clip.mp4", "my clip.mp4"),
        ("/srv/videos/door.mkv", SourceKind.FILE, None, "door.mkv"),
    ],
)
def test_parse_source(text: str, kind: SourceKind, location: str | None, shown: str | None) -> None:
    """Indexes, /dev paths, stream URLs and files are told apart."""
    target = parse_source(text)
    assert target.kind is kind
    assert target.location == (location or text)
    assert target.describe() == (shown or text)
    assert target.live is (kind is not SourceKind.FILE)


def test_parse_source_expands_home() -> None:
    """~ in a file path means the home folder."""
    target = parse_source("~/cam.mp4")
    assert target == CameraTarget(SourceKind.FILE, str(Path.home() / "cam.mp4"))


def test_parse_source_rejects_unknown_schemes() -> None:
    """A scheme OpenCV cannot treat as a camera is refused with the supported ones."""
    with pytest.raises(DeviceError) as info:
        parse_source("ftp://cam/x")
    assert info.value.code == "UNAVAILABLE"
    assert info.value.message == (
        "camera_source scheme 'ftp' is not supported; use a device index, a /dev path, a "
        "video file or one of rtsp://, rtsps://, http://, https://"
    )


def test_unavailable_reason(roots: tuple[Path, Path], tmp_path: Path) -> None:
    """Local capture nodes, a configured file or stream make a camera available; nothing
    found, a missing file or a bad scheme say why not."""
    sys_root, dev_root = roots
    empty = tmp_path / "empty"
    empty.mkdir()
    video = tmp_path / "cam.mp4"
    video.write_bytes(b"x")

    def reason(source: str | None, sys_dir: Path = sys_root) -> str | None:
        return camera_unavailable_reason(source, sys_root=sys_dir, dev_root=dev_root)

    assert reason(None) is None
    assert reason("  ") is None
    assert reason(None, empty) == (
        "no camera found (no V4L2 capture device under /dev/video*); set camera_source to a "
        "device, a video file or a stream URL"
    )
    assert reason(str(video), empty) is None
    assert reason("http://127.0.0.1:1/x", empty) is None
    assert reason(str(tmp_path / "nope.mp4")) == "camera_source nope.mp4 not found"
    assert reason("5") == f"camera_source {dev_root / 'video5'} not found"
    assert reason("2") is None
    assert reason("gopher://x") is not None


def test_only_metadata_nodes_is_no_camera(tmp_path: Path) -> None:
    """A node whose sysfs index is not 0 (a metadata stream) is not a camera."""
    sys_root, dev_root = tmp_path / "sys" / "video4linux", tmp_path / "dev"
    add_node(sys_root, dev_root, 1, "Cam", index="1")
    assert camera_unavailable_reason(None, sys_root=sys_root, dev_root=dev_root) is not None
    assert local_cameras(sys_root=sys_root, dev_root=dev_root) == []
