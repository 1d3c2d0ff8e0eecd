"""``screen.record``: a short mp4 of one screen, optionally with the microphone; off by
default, under the same Screen setting as ``screen.snapshot`` (as the Windows node's one
screen toggle), and only while the user is at the computer.

Params (all optional; ``null`` counts as absent): ``durationMs`` 100-60000 (10000, the
reference CLI's default), ``fps`` 1-60 (10; fractions allowed), ``screenIndex`` 0-32 (0),
``format`` ``mp4`` only, ``includeAudio`` (true, as the reference CLI and agent tool send
unless told ``--no-audio``). Values out of range are refused (``INVALID_REQUEST`` naming
the limit), not clamped, like ``screen.snapshot``'s, so the agent learns the limits.

Result ``{format: "mp4", base64, durationMs, fps, screenIndex, hasAudio}``, the reference's
fields. The mp4 is capped at 18 MiB (``PAYLOAD_TOO_LARGE: … Reduce durationMs or fps``,
checked while it is encoded).

Sound is recorded only when ``includeAudio`` is true AND the Microphone setting is on: the
microphone is its own privacy toggle, and the reference clients ask for sound by default.
When it is off, or the microphone cannot be opened, the recording goes on without sound and
says ``hasAudio: false`` (logged), rather than failing a request that only defaulted to
sound. The capture indicator shows the screen (and the microphone, while it is open) for
exactly as long as they are in use. Turning Screen off in Settings ends a running recording
within a quarter of a second (``NOT_AUTHORIZED``, nothing returned). A cancelled invoke
(``node.invoke.cancel``, the invoke timeout) stops the recording at the next frame and frees
the display, the encoder and the microphone before the cancellation goes on. Recordings run
one after the other.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import threading
from typing import Any

from openclaw_desktop.devices.audio import MicrophoneStream, find_input
from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.screen import ScreenGrabber
from openclaw_desktop.devices.screen_record import (
    AUDIO_RATE,
    AudioFeed,
    RecordConfig,
    RecordRequest,
    ScreenRecording,
    record_screen,
    video_codec,
)
from openclaw_desktop.node.context import Area, NodeContext
from openclaw_desktop.node.handlers.params import BadParams, int_param, params_object
from openclaw_desktop.node.registry import Availability, CommandSpec
from openclaw_desktop.node.results import InvokeResult
from openclaw_desktop.protocol import NodeErrorCode

__all__ = ["parse_record_request", "screen_record_area"]

log = logging.getLogger("openclaw.node")

DURATION_MS = (100, 60_000)
DEFAULT_DURATION_MS = 10_000
FPS = (1, 60)
DEFAULT_FPS = 10
MAX_SCREEN_INDEX = 32
_FINISH_S = 20.0  # encoding / muxing allowance on top of the recording time
_GRACE_S = 3.0  # a stopped recording frees everything within one frame; this bounds it
_MIC_STALL_S = 2.0
_SETTINGS_POLL_S = 0.25  # how soon turning Screen off ends a running recording


def _fps(params: dict[str, Any]) -> float:
    value = params.get("fps")
    if value is None:
        return float(DEFAULT_FPS)
    low, high = FPS
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not low <= value <= high
    ):
        raise BadParams(f"fps must be a number from {low} to {high}")
    return float(value)


def parse_record_request(params: Any) -> tuple[RecordRequest, bool]:
    """Validate ``screen.record`` params: the request and whether sound was asked for.

    Raises:
        BadParams: ``INVALID_REQUEST`` naming the first bad field and its limits.
    """
    p = params_object(params)
    fmt = p.get("format")
    if fmt is not None and (not isinstance(fmt, str) or fmt.lower() != "mp4"):
        raise BadParams("format must be mp4")
    audio = p.get("includeAudio")
    if audio is not None and not isinstance(audio, bool):
        raise BadParams("includeAudio must be true or false")
    request = RecordRequest(
        duration_ms=int_param(p, "durationMs", DEFAULT_DURATION_MS, *DURATION_MS),
        fps=_fps(p),
        screen_index=int_param(p, "screenIndex", 0, 0, MAX_SCREEN_INDEX),
    )
    return request, True if audio is None else audio


def _wire_fps(fps: float) -> int | float:
    return int(fps) if fps.is_integer() else fps


async def _pump(mic: MicrophoneStream, feed: AudioFeed) -> None:
    """Microphone frames into the recording until the stream closes or fails."""
    try:
        while (frame := await mic.read(_MIC_STALL_S)) is not None:
            feed.push(frame)
    except DeviceError as exc:
        log.warning("screen.record: the microphone track ends early: %s", exc.message)
    finally:
        feed.end()


async def _settle(worker: asyncio.Future[Any]) -> None:
    """Give a stopped recording its grace time to free the display; never lose its error."""
    worker.add_done_callback(lambda f: f.cancelled() or f.exception())
    await asyncio.wait({worker}, timeout=_GRACE_S)


class _ScreenRecorder:
    """The handler and its state (recordings are serialised, like camera captures)."""

    def __init__(self, ctx: NodeContext, grabber: ScreenGrabber, config: RecordConfig) -> None:
        self.ctx = ctx
        self.grabber = grabber
        self.config = config
        self._lock = asyncio.Lock()
        self._codec: str | None = None

    async def probe(self) -> Availability:
        """A display that can be read, and an mp4 encoder."""
        status = await self.grabber.probe()
        if not status.available:
            return Availability.no(status.reason)
        if self._codec is None:
            try:
                self._codec = await asyncio.to_thread(video_codec)
            except DeviceError as exc:
                return Availability.no(exc.message)
        return Availability.yes()

    async def record(self, params: Any) -> InvokeResult:
        """``screen.record`` -> ``{format, base64, durationMs, fps, screenIndex, hasAudio}``."""
        try:
            request, want_audio = parse_record_request(params)
            async with self._lock:
                with self.ctx.activity.capture("screen", "screen.record"):
                    recording = await self._record(request, want_audio)
        except DeviceError as exc:
            return InvokeResult.error(exc.code, exc.message)
        log.info(
            "screen.record: %dx%d %s, %d frames (%d skipped) at %g fps, sound %s, %.1f MiB",
            recording.width,
            recording.height,
            recording.codec,
            recording.frames,
            recording.skipped,
            request.fps,
            "yes" if recording.has_audio else "no",
            recording.size_bytes / 2**20,
        )
        return InvokeResult.success(
            {
                "format": "mp4",
                "base64": recording.base64,
                "durationMs": recording.duration_ms,
                "fps": _wire_fps(request.fps),
                "screenIndex": request.screen_index,
                "hasAudio": recording.has_audio,
            }
        )

    async def _microphone(
        self, want_audio: bool, held: contextlib.ExitStack
    ) -> MicrophoneStream | None:
        """The opened microphone when sound is asked for and allowed, else None."""
        settings = self.ctx.settings()
        if not want_audio:
            return None
        if not settings.microphone:
            log.info("screen.record without sound: the Microphone setting is off")
            return None
        activity = contextlib.ExitStack()
        activity.enter_context(self.ctx.activity.capture("microphone", "screen.record"))
        try:
            device = await find_input(settings.microphone_device)
            mic = MicrophoneStream(device, sample_rate=AUDIO_RATE)
            await mic.open()
        except DeviceError as exc:
            activity.close()
            log.warning("screen.record without sound: %s", exc.message)
            return None
        except BaseException:  # cancelled while opening: the indicator goes off too
            activity.close()
            raise
        held.push(activity)
        return mic

    async def _record(self, request: RecordRequest, want_audio: bool) -> ScreenRecording:
        stop = threading.Event()
        with contextlib.ExitStack() as held:
            mic = await self._microphone(want_audio, held)
            feed = AudioFeed() if mic is not None else None
            pump = None
            if mic is not None and feed is not None:
                pump = asyncio.create_task(_pump(mic, feed), name="screen-record-microphone")
            worker = asyncio.ensure_future(
                asyncio.to_thread(record_screen, request, config=self.config, stop=stop, audio=feed)
            )
            deadline = request.duration_ms / 1000 + _FINISH_S
            try:
                problem = await self._watch(worker, deadline)
            except asyncio.CancelledError:
                stop.set()
                await _settle(worker)
                raise
            finally:
                if mic is not None:
                    await asyncio.shield(mic.close())
                if pump is not None:
                    await asyncio.wait({pump}, timeout=_GRACE_S)
            if problem is not None:
                stop.set()
                await _settle(worker)
                raise problem
            return worker.result()

    async def _watch(self, worker: asyncio.Future[Any], deadline: float) -> DeviceError | None:
        """Wait for the recording; why it must stop early (Screen turned off in Settings,
        no end by ``deadline`` seconds), or None once it has finished."""
        loop = asyncio.get_running_loop()
        end = loop.time() + deadline
        while not worker.done():
            if not self.ctx.settings().screen:
                return DeviceError(
                    NodeErrorCode.NOT_AUTHORIZED,
                    "the screen recording stopped: Screen was turned off in Settings",
                )
            left = end - loop.time()
            if left <= 0:
                return DeviceError(
                    NodeErrorCode.UNAVAILABLE,
                    f"the screen recording did not finish within {deadline:g} s",
                )
            await asyncio.wait({worker}, timeout=min(_SETTINGS_POLL_S, left))
        return None


def screen_record_area(
    ctx: NodeContext,
    grabber: ScreenGrabber | None = None,
    config: RecordConfig | None = None,
) -> Area:
    """``screen.record``: off until the user enables Screen (the setting it shares with
    ``screen.snapshot``), only while the user is at the computer, and only where a display
    can be read and mp4 encoded. ``config`` overrides the limits (tests)."""
    recorder = _ScreenRecorder(ctx, grabber or ScreenGrabber(), config or RecordConfig())
    spec = CommandSpec(
        "screen.record",
        "screen",
        availability=recorder.probe,
        setting="screen",
        permission="screenRecording",
        needs_presence=True,
        disabled_message="enable Screen in Settings",
    )
    return Area((spec,), {"screen.record": recorder.record})
