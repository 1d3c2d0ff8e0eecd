"""The photo payload guard: JPEG-encode a frame so its base64 fits a limit, stepping the
quality down first and then the size (as the mobile nodes do)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.protocol import NodeErrorCode

__all__ = [
    "MIB",
    "EncodedJpeg",
    "base64_length",
    "encode_jpeg_within",
    "human_size",
    "resize_to_width",
]

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class EncodedJpeg:
    """A JPEG that fits the payload limit, and how it was reached."""

    data: bytes
    width: int
    height: int
    quality: int
    attempts: int


def human_size(size: float) -> str:
    """``18 MiB``, ``18.3 MiB``, or ``48.8 KiB`` below one MiB."""
    unit, scale = ("KiB", 1024) if size < MIB else ("MiB", MIB)
    return f"{f'{size / scale:.1f}'.removesuffix('.0')} {unit}"


def base64_length(size: int) -> int:
    """Characters of the (padded) base64 of ``size`` bytes."""
    return 4 * ((size + 2) // 3)


def resize_to_width(frame: np.ndarray[Any, Any], width: int) -> np.ndarray[Any, Any]:
    """``frame`` scaled down to ``width`` (aspect kept); never enlarged."""
    height, current = frame.shape[:2]
    if current <= width:
        return frame
    new_height = max(1, round(height * width / current))
    resized: np.ndarray[Any, Any] = cv2.resize(
        frame, (width, new_height), interpolation=cv2.INTER_AREA
    )
    return resized


def _imencode(frame: np.ndarray[Any, Any], quality: int) -> bytes:
    ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise DeviceError(NodeErrorCode.UNAVAILABLE, "failed to encode the photo as JPEG")
    return bytes(buf.tobytes())


def encode_jpeg_within(
    frame: np.ndarray[Any, Any],
    *,
    quality: int,
    max_base64: int,
    min_quality: int = 20,
    quality_step: int = 10,
    scale_step: float = 0.85,
    min_side: int = 256,
) -> EncodedJpeg:
    """JPEG-encode ``frame`` so its base64 is at most ``max_base64`` characters.

    Quality steps down by ``quality_step`` to ``min_quality`` first; then the size shrinks by
    ``scale_step`` per attempt (at ``min_quality``) while the shorter side stays at least
    ``min_side`` pixels.

    Raises:
        DeviceError: ``PAYLOAD_TOO_LARGE`` when even the smallest attempt does not fit.
    """
    quality = max(1, min(100, quality))
    height, width = frame.shape[:2]
    attempts = 0
    current = frame
    while True:
        attempts += 1
        data = _imencode(current, quality)
        if base64_length(len(data)) <= max_base64:
            return EncodedJpeg(data, current.shape[1], current.shape[0], quality, attempts)
        if quality > min_quality:
            quality = max(min_quality, quality - quality_step)
            continue
        new_width = math.floor(width * scale_step)
        new_height = max(1, round(height * new_width / width))
        if min(new_width, new_height) < min_side:
            raise DeviceError(
                NodeErrorCode.PAYLOAD_TOO_LARGE,
                f"photo is {human_size(base64_length(len(data)))} as base64 even at "
                f"{current.shape[1]}x{current.shape[0]} quality {quality}, over the "
                f"{human_size(max_base64)} limit",
            )
        width, height = new_width, new_height
        current = cv2.resize(frame, (width, height), interpolation=cv2.INTER_AREA)
