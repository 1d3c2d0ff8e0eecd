"""``camera.list``, ``camera.snap`` and ``camera.clip``: off by default (``CAMERA_DISABLED:
enable Camera in Settings``).

The capture itself (:mod:`openclaw_desktop.devices.camera`) blocks, so it runs in a worker
thread with a stop event. When the invoke is cancelled (``node.invoke.cancel`` or the invoke
timeout) the handler sets the event, waits a bounded time for the worker to release the
camera and delete its temporary file, and re-raises the cancellation. Captures are
serialised: a camera device can only stream to one reader at a time.

Decisions where the reference apps differ or say nothing:

* ``camera.snap``/``camera.clip`` need the user at the computer (``needs_presence``), like
  Android's foreground-only rule; ``camera.list`` does not.
* ``maxWidth`` must be a positive number and is clamped to 16..7680; ``quality`` must be
  within 0..1 and is raised to at least 0.1; ``delayMs`` and ``durationMs`` must not be
  negative and are clamped (0..10000, 200..60000).
* ``facing`` only chooses among local cameras when no ``camera_source`` is configured (a
  configured source is what the user wants used); with no camera at that position the default
  camera is used, as desktop cameras rarely say where they face.
* Clips have no audio (OpenCV cannot mux it): ``includeAudio`` is accepted and the result
  says ``hasAudio: false``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from openclaw_desktop.devices.camera import CameraConfig, record_clip, snap
from openclaw_desktop.devices.camera_sources import (
    CameraInfo,
    camera_unavailable_reason,
    list_cameras,
)
from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.node.context import Area, NodeContext
from openclaw_desktop.node.handlers.params import BadParams, params_object
from openclaw_desktop.node.registry import Availability, CommandSpec
from openclaw_desktop.node.results import InvokeResult
from openclaw_desktop.protocol import NodeErrorCode

__all__ = ["CAMERA_COMMANDS", "camera_area"]

log = logging.getLogger("openclaw.node")
T = TypeVar("T")

CAMERA_COMMANDS = ("camera.list", "camera.snap", "camera.clip")
DEFAULT_MAX_WIDTH = 1600
MAX_WIDTH_RANGE = (16, 7680)
DEFAULT_QUALITY = 0.95
MIN_QUALITY = 0.1
MAX_DELAY_MS = 10_000
DEFAULT_CLIP_MS = 3000
CLIP_MS_RANGE = (200, 60_000)
PROBE_TTL_S = 2.0
_FINISH_S = 15.0  # encode / finalize allowance on top of the capture time


def _number(params: dict[str, Any], key: str, default: float, what: str) -> float:
    value = params.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadParams(f"{key} must be {what}")
    return float(value)


def _whole(params: dict[str, Any], key: str, default: int, low: int, high: int) -> int:
    """A non-negative integer param, clamped to low..high."""
    value = _number(params, key, default, "a number of milliseconds")
    if value < 0:
        raise BadParams(f"{key} must not be negative")
    return min(high, max(low, round(value)))


def _text(params: dict[str, Any], key: str, choices: tuple[str, ...]) -> str | None:
    value = params.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or value.lower() not in choices:
        raise BadParams(f"{key} must be one of {', '.join(choices)}")
    return value.lower()


def _device_id(params: dict[str, Any]) -> str | None:
    value = params.get("deviceId")
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise BadParams("deviceId must be a non-empty string from camera.list")
    return value


def _snap_params(params: Any) -> tuple[int, float, int]:
    """(maxWidth, quality, delayMs) of ``camera.snap``."""
    p = params_object(params)
    _text(p, "format", ("jpg", "jpeg"))
    width = _number(p, "maxWidth", DEFAULT_MAX_WIDTH, "a number of pixels")
    if width < 1:
        raise BadParams("maxWidth must be a positive number of pixels")
    max_width = min(MAX_WIDTH_RANGE[1], max(MAX_WIDTH_RANGE[0], round(width)))
    quality = _number(p, "quality", DEFAULT_QUALITY, "a number from 0 to 1")
    if not 0 <= quality <= 1:
        raise BadParams("quality must be a number from 0 to 1")
    delay_ms = _whole(p, "delayMs", 0, 0, MAX_DELAY_MS)
    return max_width, max(MIN_QUALITY, quality), delay_ms


def _clip_params(params: Any) -> int:
    """durationMs of ``camera.clip`` (the other params are only validated)."""
    p = params_object(params)
    if p.get("format") is not None and p.get("format") != "mp4":
        raise BadParams("format must be mp4")
    include_audio = p.get("includeAudio")
    if include_audio is not None and not isinstance(include_audio, bool):
        raise BadParams("includeAudio must be true or false")
    return _whole(p, "durationMs", DEFAULT_CLIP_MS, *CLIP_MS_RANGE)


def _choose(
    cameras: list[CameraInfo], device_id: str | None, facing: str | None, configured: bool
) -> CameraInfo:
    if device_id is not None:
        for camera in cameras:
            if camera.id == device_id:
                return camera
        raise BadParams("unknown camera deviceId")
    if not cameras:
        raise DeviceError(NodeErrorCode.UNAVAILABLE, "no camera found")
    if facing is not None and not configured:
        for camera in cameras:
            if camera.position == facing:
                return camera
    return cameras[0]


async def _settle(worker: asyncio.Future[Any], grace_s: float) -> None:
    """Give a stopped worker ``grace_s`` to release the camera; never lose its error."""
    worker.add_done_callback(lambda f: f.cancelled() or f.exception())
    await asyncio.wait({worker}, timeout=grace_s)


async def run_stoppable(
    work: Callable[[threading.Event], T], *, deadline_s: float, grace_s: float
) -> T:
    """Run ``work(stop)`` in a worker thread.

    On cancellation: set ``stop``, wait up to ``grace_s`` for the worker to finish (so the
    device and temporary files are released before the caller hears of it), re-raise. After
    ``deadline_s`` without an answer: the same, then ``UNAVAILABLE``.
    """
    stop = threading.Event()
    worker = asyncio.ensure_future(asyncio.to_thread(work, stop))
    try:
        done, _ = await asyncio.wait({worker}, timeout=deadline_s)
    except asyncio.CancelledError:
        stop.set()
        await _settle(worker, grace_s)
        raise
    if not done:
        stop.set()
        await _settle(worker, grace_s)
        raise DeviceError(
            NodeErrorCode.UNAVAILABLE, f"camera did not answer within {deadline_s:g} s"
        )
    return worker.result()


class _CameraHandlers:
    """The three handlers and their shared state (probe cache, capture lock)."""

    def __init__(self, ctx: NodeContext, config: CameraConfig) -> None:
        self.ctx = ctx
        self.config = config
        self._lock = asyncio.Lock()
        self._probe_cache: tuple[str | None, float, Availability] | None = None

    def _source(self) -> str | None:
        source = self.ctx.settings().camera_source
        return source if source and source.strip() else None

    async def probe(self) -> Availability:
        """A camera exists: a configured source, or a V4L2 capture node. Cached briefly."""
        source = self._source()
        cached = self._probe_cache
        now = time.monotonic()
        if cached is not None and cached[0] == source and now < cached[1]:
            return cached[2]
        reason = await asyncio.to_thread(camera_unavailable_reason, source)
        result = Availability.yes() if reason is None else Availability.no(reason)
        self._probe_cache = (source, now + PROBE_TTL_S, result)
        return result

    async def list(self, params: Any) -> InvokeResult:
        """``camera.list`` -> ``{devices: [{id, name, position, deviceType}]}``."""
        if params is not None and not isinstance(params, dict):
            return InvokeResult.error(NodeErrorCode.INVALID_REQUEST, "params must be an object")
        cameras = await asyncio.to_thread(list_cameras, self._source())
        return InvokeResult.success({"devices": [c.to_wire() for c in cameras]})

    async def _camera(self, params: dict[str, Any]) -> CameraInfo:
        device_id = _device_id(params)
        facing = _text(params, "facing", ("front", "back"))
        source = self._source()
        cameras = await asyncio.to_thread(list_cameras, source)
        return _choose(cameras, device_id, facing, source is not None)

    async def snap(self, params: Any) -> InvokeResult:
        """``camera.snap`` -> ``{format: "jpg", base64, width, height}``."""
        try:
            max_width, quality, delay_ms = _snap_params(params)
            camera = await self._camera(params_object(params))
        except BadParams as exc:
            return InvokeResult.error(NodeErrorCode.INVALID_REQUEST, exc.message)
        config = self.config
        deadline = config.open_timeout_s + delay_ms / 1000 + 2 * config.read_timeout_s
        async with self._lock:
            with self.ctx.activity.capture("camera", "camera.snap"):
                photo = await run_stoppable(
                    lambda stop: snap(
                        camera.target,
                        max_width=max_width,
                        quality=quality,
                        delay_ms=delay_ms,
                        config=config,
                        stop=stop,
                    ),
                    deadline_s=deadline + _FINISH_S,
                    grace_s=config.read_timeout_s + 2,
                )
        log.info(
            "camera.snap %s: %dx%d q%d (%d attempt(s)), %d base64 chars",
            camera.target.describe(),
            photo.width,
            photo.height,
            photo.quality,
            photo.attempts,
            len(photo.base64),
        )
        return InvokeResult.success(
            {"format": "jpg", "base64": photo.base64, "width": photo.width, "height": photo.height}
        )

    async def clip(self, params: Any) -> InvokeResult:
        """``camera.clip`` -> ``{format: "mp4", base64, durationMs, hasAudio: false}``."""
        try:
            duration_ms = _clip_params(params)
            camera = await self._camera(params_object(params))
        except BadParams as exc:
            return InvokeResult.error(NodeErrorCode.INVALID_REQUEST, exc.message)
        config = self.config
        deadline = config.open_timeout_s + duration_ms / 1000 + 2 * config.read_timeout_s
        async with self._lock:
            with self.ctx.activity.capture("camera", "camera.clip"):
                clip = await run_stoppable(
                    lambda stop: record_clip(
                        camera.target, duration_ms=duration_ms, config=config, stop=stop
                    ),
                    deadline_s=deadline + _FINISH_S,
                    grace_s=config.read_timeout_s + 2,
                )
        log.info(
            "camera.clip %s: %dx%d, %d frames at %g fps, %.1f MiB",
            camera.target.describe(),
            clip.width,
            clip.height,
            clip.frames,
            clip.fps,
            clip.size_bytes / 2**20,
        )
        return InvokeResult.success(
            {
                "format": "mp4",
                "base64": clip.base64,
                "durationMs": clip.duration_ms,
                "hasAudio": False,
            }
        )


def camera_area(ctx: NodeContext, config: CameraConfig | None = None) -> Area:
    """``camera.*``: gated by the ``camera`` setting (off by default); snap and clip also
    need the user present. ``config`` overrides limits and timeouts (tests)."""
    handlers = _CameraHandlers(ctx, config or CameraConfig())
    common: dict[str, Any] = {
        "capability": "camera",
        "availability": handlers.probe,
        "setting": "camera",
        "permission": "camera",
        "disabled_code": NodeErrorCode.CAMERA_DISABLED,
        "disabled_message": "enable Camera in Settings",
    }
    specs = (
        CommandSpec("camera.list", **common),
        CommandSpec("camera.snap", needs_presence=True, **common),
        CommandSpec("camera.clip", needs_presence=True, **common),
    )
    return Area(
        specs,
        {"camera.list": handlers.list, "camera.snap": handlers.snap, "camera.clip": handlers.clip},
    )
