"""Push-to-talk: ``talk.ptt.start``, ``talk.ptt.stop``, ``talk.ptt.cancel``, ``talk.ptt.once``.

One capture at a time. ``start`` opens the microphone and returns a ``captureId``;
``stop`` closes it and returns the transcript (through ``ctx.transcriber``); ``cancel``
throws the audio away; ``once`` records one utterance (speech, then ``silenceMs`` of
silence, or ``maxDurationMs``) and transcribes it. A capture left running stops itself
after :attr:`PttLimits.max_capture_s`; turning the microphone off in Settings stops it
too. The capture indicator (``ctx.activity``) is on exactly while the device is open.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import uuid
from dataclasses import dataclass
from typing import Any

from openclaw_desktop.devices.audio import MicrophoneStream, check_microphone, find_input
from openclaw_desktop.devices.audio_frames import EnergyVad
from openclaw_desktop.devices.audio_recording import Recording, RecordingResult
from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.node.context import Area, NodeContext
from openclaw_desktop.node.handlers.params import BadParams, params_object
from openclaw_desktop.node.registry import Availability, CommandSpec
from openclaw_desktop.node.results import Handler, InvokeResult
from openclaw_desktop.protocol import NodeErrorCode

__all__ = ["PttLimits", "talk_area"]

log = logging.getLogger("openclaw.node")

_INVALID = NodeErrorCode.INVALID_REQUEST
_UNAVAILABLE = NodeErrorCode.UNAVAILABLE
_CAPTURE_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_NO_STT = (
    "no speech-to-text on this node: run it from the desktop app, which transcribes through "
    "its gateway session"
)


@dataclass(frozen=True, slots=True)
class PttLimits:
    """Tunables of push-to-talk (tests shorten them)."""

    sample_rate: int = 16_000
    max_capture_s: float = 120.0
    stall_timeout_s: float = 2.0
    transcribe_timeout_s: float = 60.0
    once_default_ms: int = 10_000
    once_min_ms: int = 500
    once_max_ms: int = 60_000
    silence_default_ms: int = 1_200
    silence_max_ms: int = 10_000


@dataclass(slots=True)
class _Capture:
    capture_id: str
    recording: Recording
    command: str


def _capture_id(params: dict[str, Any], required: bool) -> str | None:
    value = params.get("captureId")
    if value is None and not required:
        return None
    if not isinstance(value, str) or not _CAPTURE_ID.fullmatch(value):
        raise BadParams("captureId must be 1-128 letters, digits, '.', '_', ':' or '-'")
    return value


def _millis(params: dict[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = params.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadParams(f"{key} must be a number of milliseconds")
    if value <= 0:
        raise BadParams(f"{key} must be positive")
    return min(high, max(low, round(value)))


class _PushToTalk:
    def __init__(self, ctx: NodeContext, limits: PttLimits) -> None:
        self.ctx = ctx
        self.limits = limits
        self.current: _Capture | None = None
        self._lock = asyncio.Lock()

    async def probe(self) -> Availability:
        reason = await check_microphone(self.ctx.settings().microphone_device)
        return Availability.yes() if reason is None else Availability.no(reason)

    def _still_allowed(self) -> str | None:
        if not self.ctx.settings().microphone:
            return "the microphone stopped: it was turned off in Settings"
        return None

    async def _begin(
        self, capture_id: str, command: str, vad: EnergyVad | None, max_s: float
    ) -> _Capture:
        """Open the microphone for a new capture (call with the lock held)."""
        current = self.current
        if current is not None and current.recording.running:
            if current.command == "talk.ptt.once":
                raise DeviceError(_UNAVAILABLE, "the microphone is busy with talk.ptt.once")
            raise DeviceError(
                _INVALID,
                f"a push-to-talk capture is already running (captureId {current.capture_id}); "
                "stop or cancel it first",
            )
        if current is not None:  # ended by itself (limit, error) and never collected
            log.info("discarding the uncollected push-to-talk capture %s", current.capture_id)
            self.current = None
            await asyncio.shield(current.recording.discard())
        settings = self.ctx.settings()
        device = await find_input(settings.microphone_device)
        recording = Recording(
            MicrophoneStream(device, sample_rate=self.limits.sample_rate),
            max_s=max_s,
            stall_s=self.limits.stall_timeout_s,
            vad=vad,
            end_on_silence=vad is not None,
            activity=self.ctx.activity.capture("microphone", command),
            keep_going=self._still_allowed,
        )
        await recording.start()
        capture = _Capture(capture_id, recording, command)
        self.current = capture
        return capture

    async def _take(self, params: Any) -> _Capture:
        capture_id = _capture_id(params_object(params), required=True)
        async with self._lock:
            current = self.current
            if current is None or current.capture_id != capture_id:
                raise BadParams(f"unknown captureId {capture_id} (not running or already ended)")
            if current.command != "talk.ptt.start":
                raise BadParams(f"captureId {capture_id} belongs to a running talk.ptt.once")
            self.current = None
            return current

    async def start(self, params: Any) -> InvokeResult:
        p = params_object(params)
        capture_id = _capture_id(p, required=False) or uuid.uuid4().hex
        async with self._lock:
            await self._begin(capture_id, "talk.ptt.start", None, self.limits.max_capture_s)
        return InvokeResult.success({"captureId": capture_id, "status": "recording"})

    async def stop(self, params: Any) -> InvokeResult:
        capture = await self._take(params)
        result = await asyncio.shield(capture.recording.finish())
        return await self._transcribe(capture.capture_id, result)

    async def cancel(self, params: Any) -> InvokeResult:
        capture = await self._take(params)
        await asyncio.shield(capture.recording.discard())
        return InvokeResult.success({"captureId": capture.capture_id, "status": "cancelled"})

    async def once(self, params: Any) -> InvokeResult:
        p, limits = params_object(params), self.limits
        max_ms = _millis(
            p, "maxDurationMs", limits.once_default_ms, limits.once_min_ms, limits.once_max_ms
        )
        silence_ms = _millis(p, "silenceMs", limits.silence_default_ms, 100, limits.silence_max_ms)
        if self.ctx.transcriber is None:
            return InvokeResult.error(_UNAVAILABLE, f"{_NO_STT}; nothing was recorded")
        capture_id = uuid.uuid4().hex
        vad = EnergyVad(silence_ms=silence_ms)
        async with self._lock:
            max_s = min(limits.max_capture_s, max_ms / 1000)
            capture = await self._begin(capture_id, "talk.ptt.once", vad, max_s)
        recording = capture.recording
        try:
            await recording.wait()
            result = await asyncio.shield(recording.finish())
        except asyncio.CancelledError:
            await asyncio.shield(recording.discard())
            raise
        finally:
            if self.current is capture:
                self.current = None
        return await self._transcribe(capture_id, result)

    async def _transcribe(self, capture_id: str, result: RecordingResult) -> InvokeResult:
        transcriber = self.ctx.transcriber
        if transcriber is None:
            return InvokeResult.error(_UNAVAILABLE, f"{_NO_STT}; the recording was discarded")
        payload: dict[str, Any] = {"captureId": capture_id, "durationMs": result.duration_ms}
        if result.limit_reached:
            payload["limitReached"] = True
        if not result.heard_speech:
            return InvokeResult.success({**payload, "status": "empty"})
        timeout = self.limits.transcribe_timeout_s
        try:
            async with asyncio.timeout(timeout):
                text: object = await transcriber(result.pcm, result.sample_rate)
        except TimeoutError:
            return InvokeResult.error(
                NodeErrorCode.TIMEOUT, f"speech-to-text did not answer within {timeout:g} s"
            )
        except Exception as exc:
            log.warning("speech-to-text failed", exc_info=True)
            return InvokeResult.error(_UNAVAILABLE, f"speech-to-text failed ({type(exc).__name__})")
        if not isinstance(text, str) or not text.strip():
            return InvokeResult.success({**payload, "status": "empty"})
        return InvokeResult.success(
            {**payload, "transcript": text.strip(), "status": "transcribed"}
        )


def _guard(handler: Handler) -> Handler:
    async def run(params: Any) -> InvokeResult:
        try:
            return await handler(params)
        except BadParams as exc:
            return InvokeResult.error(_INVALID, exc.message)

    return run


def talk_area(ctx: NodeContext, *, limits: PttLimits | None = None) -> Area:
    """The ``talk.ptt.*`` commands (cap ``talk``), gated by the microphone setting (off by
    default) and by a cheap probe: PortAudio present and an input device listed."""
    ptt = _PushToTalk(ctx, limits or PttLimits())
    handlers = {
        "talk.ptt.start": _guard(ptt.start),
        "talk.ptt.stop": _guard(ptt.stop),
        "talk.ptt.cancel": _guard(ptt.cancel),
        "talk.ptt.once": _guard(ptt.once),
    }
    specs = tuple(
        CommandSpec(
            name,
            "talk",
            availability=ptt.probe,
            setting="microphone",
            permission="microphone",
            disabled_message="enable Microphone in Settings",
        )
        for name in handlers
    )
    return Area(specs, handlers)
