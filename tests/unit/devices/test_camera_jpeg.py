"""Unit tests for the photo payload guard: JPEG re-encoded stepping quality down, then size,
until its base64 fits (real OpenCV encoding of real pixels)."""

from __future__ import annotations

import base64
import time

import cv2
import numpy as np
import pytest

from openclaw_desktop.devices import DeviceError
from openclaw_desktop.devices.camera_jpeg import MIB, base64_length, encode_jpeg_within, human_size
from tests.helpers.video_sources import noise_frame, pattern_frame


def decode(data: bytes) -> np.ndarray:
    """A JPEG back to pixels (fails the test when it is not a JPEG)."""
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None
    return image


@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 5, 6, 1000, 3 * MIB + 1])
def test_base64_length_matches_the_encoder(size: int) -> None:
    """The predicted length is exactly what base64 produces (padding included)."""
    assert base64_length(size) == len(base64.b64encode(b"\0" * size))


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (18 * MIB, "18 MiB"),
        (int(18.3 * MIB), "18.3 MiB"),
        (50_000, "48.8 KiB"),
        (200_000, "195.3 KiB"),
        (20 * 1024, "20 KiB"),
    ],
)
def test_human_size(size: int, text: str) -> None:
    """Sizes in error messages read naturally."""
    assert human_size(size) == text


def test_small_photo_is_encoded_once_at_the_asked_quality() -> None:
    """A photo that fits is left alone: one attempt, quality and size unchanged."""
    result = encode_jpeg_within(pattern_frame(0, 640, 480), quality=95, max_base64=5 * MIB)
    assert (result.width, result.height, result.quality, result.attempts) == (640, 480, 95, 1)
    assert decode(result.data).shape == (480, 640, 3)


def test_quality_steps_down_before_the_size() -> None:
    """When a lower quality is enough, the size is kept."""
    frame = noise_frame(800, 600)
    at_95 = len(cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 95])[1])
    at_55 = len(cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 55])[1])
    limit = base64_length(at_55)
    assert base64_length(at_95) > limit
    result = encode_jpeg_within(frame, quality=95, max_base64=limit)
    assert (result.width, result.height) == (800, 600)
    assert result.quality == 55
    assert result.attempts == 5  # 95, 85, 75, 65, 55
    assert base64_length(len(result.data)) <= limit
    assert decode(result.data).shape == (600, 800, 3)


def test_size_steps_down_once_quality_is_at_its_floor() -> None:
    """Past the minimum quality the picture shrinks by 15 % per attempt, aspect kept."""
    frame = noise_frame(1600, 1200)
    limit = 400_000
    result = encode_jpeg_within(frame, quality=95, max_base64=limit)
    assert result.quality == 20
    assert result.width < 1600
    assert abs(result.width / result.height - 4 / 3) < 0.01
    assert result.attempts > 9  # 95..25 and 20 at full size, then shrinking
    assert base64_length(len(result.data)) <= limit
    assert decode(result.data).shape == (result.height, result.width, 3)


def test_payload_too_large_when_even_the_smallest_attempt_does_not_fit() -> None:
    """The loop is bounded: at the minimum side it gives up with PAYLOAD_TOO_LARGE."""
    with pytest.raises(DeviceError) as info:
        encode_jpeg_within(noise_frame(640, 480), quality=95, max_base64=1000)
    assert info.value.code == "PAYLOAD_TOO_LARGE"
    assert info.value.message.startswith("photo is ")
    # 640 -> 544 -> 462 -> 392 px wide; 333x250 would go under the 256 px minimum side
    assert info.value.message.endswith(
        "KiB as base64 even at 392x294 quality 20, over the 1 KiB limit"
    )


def test_real_5_mib_limit_with_an_8k_noise_frame() -> None:
    """At the product limit (5 MiB of base64) an incompressible 7680x4320 frame ends under
    it after stepping both quality and size, in a few seconds."""
    frame = noise_frame(7680, 4320)
    started = time.monotonic()
    result = encode_jpeg_within(frame, quality=95, max_base64=5 * MIB)
    elapsed = time.monotonic() - started
    encoded = base64.b64encode(result.data)
    assert len(encoded) <= 5 * MIB
    assert len(encoded) > 0.7 * 5 * MIB  # one 15 % step shrinks the area by 28 %
    assert result.quality == 20
    assert result.width < 7680
    assert decode(result.data).shape == (result.height, result.width, 3)
    assert elapsed < 20
