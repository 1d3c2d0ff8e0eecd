"""screen.record params and caps, the encoded size, the microphone feed (no display)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from openclaw_desktop.devices.screen_record import (
    AudioFeed,
    RecordConfig,
    RecordRequest,
    _output_size,
    _video_ceiling,
    _yuv_frame,
    video_codec,
)
from openclaw_desktop.node.context import NodeContext
from openclaw_desktop.node.dispatcher import InvokeDispatcher
from openclaw_desktop.node.handlers.params import BadParams
from openclaw_desktop.node.handlers.screen_record import parse_record_request, screen_record_area
from openclaw_desktop.node.registry import CommandRegistry


def test_defaults_are_the_reference_clis() -> None:
    """Nothing (or null, or {}, or nulls) is 10 s at 10 fps of screen 0, sound asked for."""
    expected = (RecordRequest(10_000, 10.0, 0), True)
    assert parse_record_request(None) == expected
    assert parse_record_request({}) == expected
    assert parse_record_request({"durationMs": None, "fps": None, "format": None}) == expected


def test_what_the_reference_cli_sends_is_accepted() -> None:
    """The CLI's and the agent tool's params: durationMs, screenIndex, fps, format, includeAudio."""
    params = {"durationMs": 3000, "screenIndex": 1, "fps": 15, "format": "mp4"}
    assert parse_record_request({**params, "includeAudio": False}) == (
        RecordRequest(3000, 15.0, 1),
        False,
    )
    assert parse_record_request({"fps": 7.5, "durationMs": 100.0, "format": "MP4"}) == (
        RecordRequest(100, 7.5, 0),
        True,
    )
    edges = {"durationMs": 60_000, "fps": 60, "screenIndex": 32}
    assert parse_record_request(edges)[0] == RecordRequest(60_000, 60.0, 32)
    assert parse_record_request({"fps": 1})[0].fps == 1.0


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ([1], "params must be an object"),
        ("x", "params must be an object"),
        ({"format": "webm"}, "format must be mp4"),
        ({"format": 4}, "format must be mp4"),
        ({"includeAudio": "yes"}, "includeAudio must be true or false"),
        ({"includeAudio": 1}, "includeAudio must be true or false"),
        ({"durationMs": 99}, "durationMs must be an integer from 100 to 60000"),
        ({"durationMs": 60_001}, "durationMs must be an integer from 100 to 60000"),
        ({"durationMs": 300_000}, "durationMs must be an integer from 100 to 60000"),
        ({"durationMs": 1500.5}, "durationMs must be an integer from 100 to 60000"),
        ({"durationMs": "10s"}, "durationMs must be an integer from 100 to 60000"),
        ({"durationMs": True}, "durationMs must be an integer from 100 to 60000"),
        ({"fps": 0}, "fps must be a number from 1 to 60"),
        ({"fps": 0.5}, "fps must be a number from 1 to 60"),
        ({"fps": 61}, "fps must be a number from 1 to 60"),
        ({"fps": float("nan")}, "fps must be a number from 1 to 60"),
        ({"fps": float("inf")}, "fps must be a number from 1 to 60"),
        ({"fps": "10"}, "fps must be a number from 1 to 60"),
        ({"fps": False}, "fps must be a number from 1 to 60"),
        ({"screenIndex": -1}, "screenIndex must be an integer from 0 to 32"),
        ({"screenIndex": 33}, "screenIndex must be an integer from 0 to 32"),
        ({"screenIndex": 0.5}, "screenIndex must be an integer from 0 to 32"),
    ],
)
def test_bad_params_name_the_field_and_its_limit(params: Any, message: str) -> None:
    """Out of range is refused, not clamped: the agent hears the limit."""
    with pytest.raises(BadParams) as caught:
        parse_record_request(params)
    assert (caught.value.code, caught.value.message) == ("INVALID_REQUEST", message)


@pytest.mark.parametrize(
    ("size", "cap", "expected"),
    [
        ((640, 480), 1920, (640, 480)),
        ((1921, 1081), 1920, (1920, 1080)),
        ((3840, 2160), 1920, (1920, 1080)),
        ((641, 479), 1920, (640, 478)),
        ((5120, 1440), 1920, (1920, 540)),
        ((1, 1), 1920, (2, 2)),
    ],
)
def test_output_size_is_even_and_capped(
    size: tuple[int, int], cap: int, expected: tuple[int, int]
) -> None:
    """4:2:0 needs even sides; wider screens shrink to the cap with their aspect."""
    assert _output_size(*size, cap) == expected


def test_the_video_rate_ceiling_fits_the_cap() -> None:
    """Peak video bit rate: 80 % of the cap over the length plus the encoder's one-second
    buffer, less the sound's share; at least 100 kbit/s."""
    cap = RecordConfig()  # 18 MiB, 64 kbit/s sound
    assert _video_ceiling(cap, 9.0, False) == int(0.8 * 18 * 2**20 * 8 / 10)
    assert _video_ceiling(cap, 9.0, True) == int(0.8 * 18 * 2**20 * 8 / 10) - 64_000
    longest = _video_ceiling(cap, 60.0, True)
    assert (longest * 61 + cap.audio_bit_rate * 60) / 8 < cap.max_bytes
    assert _video_ceiling(RecordConfig(max_bytes=1024), 20.0, True) == 100_000


@pytest.mark.parametrize(
    ("grab", "out"),
    [((480, 640), (640, 480)), ((479, 641), (640, 478)), ((1440, 2560), (1920, 1080))],
)
def test_grabs_become_420_frames_with_swscale_values(
    grab: tuple[int, int], out: tuple[int, int]
) -> None:
    """The fast path (OpenCV, odd sides cropped) gives swscale's BT.601 values; a screen
    over the width cap is scaled."""
    pixels = np.zeros((*grab, 4), np.uint8)
    pixels[..., :3] = (40, 30, 200)  # BGR
    pixels[: grab[0] // 2, :, :3] = (255, 255, 255)
    frame = _yuv_frame(pixels, *out)
    assert (frame.format.name, frame.width, frame.height) == ("yuv420p", *out)
    plane = frame.to_ndarray()  # Y rows, then U and V quarter planes
    assert plane[0, 0] == 235 and plane[out[1] - 1, 0] == 86
    assert plane[-1, -1] == 202  # V of the red-ish half


def test_the_pypi_wheel_encodes_h264() -> None:
    """PyAV's wheel carries libx264, so recordings are H.264 (MPEG-4 is the fallback)."""
    assert video_codec() == "libx264"


def test_audio_feed_starts_with_the_video_and_ends() -> None:
    """Frames before the video starts are dropped; after end() nothing more is taken."""
    feed = AudioFeed()
    feed.push(b"early")
    assert feed.take() is None
    feed.started.set()
    feed.push(b"a")
    feed.push(b"b")
    assert [feed.take(), feed.take(0.01), feed.take()] == [b"a", b"b", None]
    feed.end()
    feed.push(b"late")
    assert feed.take(0.01) is None
    assert feed.ended.is_set()


async def test_screen_off_is_refused_before_anything_is_opened() -> None:
    """The Screen setting (shared with screen.snapshot) gates it: NOT_AUTHORIZED with the
    hint; malformed params of an enabled command are INVALID_REQUEST before any capture."""
    ctx = NodeContext()
    events: list[tuple[str, str, bool]] = []
    ctx.activity.listeners.append(lambda *event: events.append(event))
    area = screen_record_area(ctx)
    (spec,) = area.specs
    assert (spec.name, spec.capability, spec.setting) == ("screen.record", "screen", "screen")
    assert spec.needs_presence and spec.permission == "screenRecording"
    off = InvokeDispatcher(CommandRegistry(area.specs), area.handlers, lambda: {"screen": False})
    result = await off.dispatch("screen.record", {})
    assert result.error_message == "NOT_AUTHORIZED: enable Screen in Settings"
    assert events == []
