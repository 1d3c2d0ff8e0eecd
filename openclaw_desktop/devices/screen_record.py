"""Screen recordings (``screen.record``): frames of one screen from mss, encoded to mp4 with
PyAV (FFmpeg), optionally with the microphone as an AAC track.

The video is H.264 (libx264, in the PyPI wheel of PyAV) when the FFmpeg here has it, else
MPEG-4 Part 2. Frames are grabbed on a fixed clock (``fps``); a slot whose grab would come
more than one interval late is skipped rather than crowding the next ones, so a slow machine
gives fewer frames but a recording of the right length. The encoder's peak bit rate is set so
that the recording fits the size cap (a busy screen loses detail first); the mp4 is written
to memory and checked against the cap while it is encoded all the same: a recording that
passes it stops at once with ``PAYLOAD_TOO_LARGE`` naming the cap.

:func:`record_screen` blocks (a worker thread) and takes a :class:`threading.Event`; setting
it stops the recording at the next frame and frees the display and the encoder (the handler
sets it when the invoke is cancelled). Microphone audio comes in through an
:class:`AudioFeed`, which the asyncio side fills from a
:class:`~openclaw_desktop.devices.audio.MicrophoneStream` (PortAudio is only ever touched
through that module, preflight included).
"""

from __future__ import annotations

import base64
import io
import logging
import os
import queue
import sys
import threading
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from openclaw_desktop.devices.camera_jpeg import MIB, human_size
from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.protocol import NodeErrorCode

__all__ = [
    "AUDIO_RATE",
    "AudioFeed",
    "RecordConfig",
    "RecordRequest",
    "RecordingStopped",
    "ScreenRecording",
    "record_screen",
    "video_codec",
]

log = logging.getLogger("openclaw.devices.screen")

#: The microphone track's sample rate (PCM16 mono in, AAC out).
AUDIO_RATE = 48_000
#: How long the end of a recording waits for the microphone to catch up with the video.
AUDIO_TAIL_S = 0.5
_VIDEO_CODECS = ("libx264", "mpeg4")
_MIN_VIDEO_BPS = 100_000


@dataclass(frozen=True, slots=True)
class RecordRequest:
    """What ``screen.record`` asked for (validated by the handler).

    Attributes:
        duration_ms: length of the recording.
        fps: frames per second of the video (any positive rate the handler accepts).
        screen_index: 0-based monitor index.
    """

    duration_ms: int = 10_000
    fps: float = 10.0
    screen_index: int = 0


@dataclass(frozen=True, slots=True)
class RecordConfig:
    """Limits of the recorder (the defaults are the product values; tests shrink them).

    Attributes:
        max_bytes: the mp4 may be at most this big (18 MiB, the ``camera.clip`` cap: its
            base64 and the rest of the answer stay under the gateway's 25 MiB frame).
        max_width: frames wider than this are scaled down (aspect kept).
        audio_bit_rate: AAC bit rate of the microphone track.
    """

    max_bytes: int = 18 * MIB
    max_width: int = 1920
    audio_bit_rate: int = 64_000


@dataclass(frozen=True, slots=True)
class ScreenRecording:
    """An encoded recording."""

    base64: str
    size_bytes: int
    duration_ms: int
    width: int
    height: int
    frames: int
    skipped: int
    codec: str
    has_audio: bool


class RecordingStopped(DeviceError):
    """The recording was stopped from outside (the invoke was cancelled)."""

    def __init__(self) -> None:
        super().__init__(NodeErrorCode.CANCELLED, "screen recording stopped")


class AudioFeed:
    """Microphone frames (PCM16 mono at :data:`AUDIO_RATE`) handed from asyncio to the
    recording thread. Frames pushed before the video starts are dropped, so both tracks
    start together; :meth:`end` says no more will come."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self._frames: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.ended = threading.Event()

    def push(self, pcm: bytes) -> None:
        """One captured frame (dropped until the video has started)."""
        if self.started.is_set() and not self.ended.is_set():
            self._frames.put(pcm)

    def end(self) -> None:
        """No more frames (the microphone closed or failed)."""
        self.ended.set()
        self._frames.put(None)

    def take(self, timeout: float = 0.0) -> bytes | None:
        """The next frame, or None when there is none within ``timeout`` or the feed ended."""
        try:
            return self._frames.get(timeout=timeout) if timeout > 0 else self._frames.get_nowait()
        except queue.Empty:
            return None


def video_codec() -> str:
    """The mp4 video encoder this FFmpeg has: ``libx264``, else ``mpeg4``.

    Raises:
        DeviceError: ``UNAVAILABLE`` when it has neither.
    """
    import av

    for name in _VIDEO_CODECS:
        try:
            av.codec.Codec(name, "w")
        except Exception:
            continue
        return name
    raise DeviceError(NodeErrorCode.UNAVAILABLE, "this FFmpeg has no H.264 or MPEG-4 encoder")


def _open_display() -> Any:
    """mss for this platform, with the pointer drawn where mss can (X11)."""
    import mss

    if sys.platform in ("darwin", "win32", "cygwin"):
        return mss.MSS()
    display = os.environ.get("DISPLAY", "").strip()
    if not display:
        if os.environ.get("WAYLAND_DISPLAY", "").strip():
            why = "Wayland without XWayland is not supported yet (DISPLAY is not set)"
        else:
            why = "no display: DISPLAY is not set"
        raise DeviceError(NodeErrorCode.UNAVAILABLE, why)
    try:
        return mss.MSS(display=display, with_cursor=True)
    except Exception as exc:
        raise DeviceError(
            NodeErrorCode.UNAVAILABLE, f"cannot open the display {display}: {exc}"
        ) from None


def _output_size(width: int, height: int, max_width: int) -> tuple[int, int]:
    """The encoded size: at most ``max_width`` wide, aspect kept, both sides even
    (4:2:0 chroma needs that)."""
    if width > max_width:
        height = max(2, round(height * max_width / width))
        width = max_width
    return max(2, width - width % 2), max(2, height - height % 2)


def _yuv_frame(pixels: np.ndarray[Any, Any], width: int, height: int) -> Any:
    """A BGRA screen grab as a 4:2:0 frame of ``width`` x ``height``. Without scaling,
    OpenCV converts (about three times faster than swscale's generic path, and the same
    BT.601 limited-range values); a screen wider than the cap goes through swscale, which
    scales and converts in one pass."""
    import av
    import cv2

    if width <= pixels.shape[1] <= width + 1 and height <= pixels.shape[0] <= height + 1:
        cropped = np.ascontiguousarray(pixels[:height, :width])
        planes = np.asarray(cv2.cvtColor(cropped, cv2.COLOR_BGRA2YUV_I420), dtype=np.uint8)
        return av.VideoFrame.from_ndarray(planes, format="yuv420p")
    frame = av.VideoFrame.from_ndarray(pixels, format="bgra")
    return frame.reformat(width, height, "yuv420p")


class _Encoder:
    """The mp4 being written: video (and audio) streams over an in-memory file, with a
    running count of the bytes muxed so far."""

    def __init__(
        self,
        width: int,
        height: int,
        fps: Fraction,
        audio: bool,
        config: RecordConfig,
        duration_s: float,
    ) -> None:
        import av

        self.codec = video_codec()
        self.buffer = io.BytesIO()
        self.container = av.open(self.buffer, mode="w", format="mp4")
        self.muxed = 0
        try:
            video: Any = self.container.add_stream(self.codec, rate=fps)
            video.width, video.height, video.pix_fmt = width, height, "yuv420p"
            ceiling = str(_video_ceiling(config, duration_s, audio))
            rate_control = {"maxrate": ceiling, "bufsize": ceiling}
            if self.codec == "libx264":
                video.options = {"preset": "veryfast", "crf": "26", **rate_control}
            else:
                video.options = rate_control
                video.bit_rate = min(int(ceiling), max(200_000, width * height * 2))
            self.video = video
            self.audio: Any = None
            if audio:
                track: Any = self.container.add_stream("aac", rate=AUDIO_RATE)
                track.layout = "mono"
                track.bit_rate = config.audio_bit_rate
                self.audio = track
        except BaseException:
            self.container.close()
            raise
        self.audio_samples = 0

    def _mux(self, packets: Any) -> None:
        for packet in packets:
            self.muxed += packet.size
            self.container.mux(packet)

    def video_frame(self, frame: Any, pts: int) -> None:
        frame.pts = pts
        self._mux(self.video.encode(frame))

    def audio_frame(self, pcm: bytes, max_samples: int) -> None:
        """Encode one PCM16 frame, cut at ``max_samples`` in all (the video's length)."""
        import av

        samples = np.frombuffer(pcm, dtype="<i2")[: max(0, max_samples - self.audio_samples)]
        if not samples.size:
            return
        frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = AUDIO_RATE
        frame.pts = self.audio_samples
        self.audio_samples += samples.size
        self._mux(self.audio.encode(frame))

    def finish(self) -> bytes:
        self._mux(self.video.encode(None))
        if self.audio is not None:
            self._mux(self.audio.encode(None))
        self.container.close()
        return self.buffer.getvalue()

    def close(self) -> None:
        """Free the encoder (idempotent; after :meth:`finish` it does nothing)."""
        try:
            self.container.close()
        except Exception:
            log.debug("closing the screen recording's encoder failed", exc_info=True)


def _video_ceiling(config: RecordConfig, duration_s: float, audio: bool) -> int:
    """The video's peak bit rate: what lets the whole recording fit in 80 % of the size cap
    (the rate control may overshoot by its one-second buffer; the sound takes its share),
    never below 100 kbit/s. Busy screens then lose detail rather than fail the cap, which
    stays the hard limit."""
    budget = 0.8 * config.max_bytes * 8 / (duration_s + 1.0)
    if audio:
        budget -= config.audio_bit_rate
    return max(_MIN_VIDEO_BPS, int(budget))


def _too_large(size: int, config: RecordConfig, detail: str = "") -> DeviceError:
    return DeviceError(
        NodeErrorCode.PAYLOAD_TOO_LARGE,
        f"screen recording is {human_size(size)}{detail}, over the "
        f"{human_size(config.max_bytes)} cap. Reduce durationMs or fps",
    )


class _Session:
    """One recording's loop: the clock, the grabs, the size check, the audio drain."""

    def __init__(
        self,
        request: RecordRequest,
        config: RecordConfig,
        stop: threading.Event,
        audio: AudioFeed | None,
    ) -> None:
        self.request = request
        self.config = config
        self.stop = stop
        self.audio = audio
        self.rate = Fraction(request.fps).limit_denominator(1000)
        self.total = max(1, round(request.duration_ms / 1000 * float(self.rate)))
        self.max_samples = round(self.total / self.rate * AUDIO_RATE)
        self.frames = 0
        self.skipped = 0

    def run(self, sct: Any) -> ScreenRecording:
        monitors = sct.monitors[1:]
        index = self.request.screen_index
        if index >= len(monitors):
            verb = "is" if len(monitors) == 1 else "are"
            raise DeviceError(
                NodeErrorCode.INVALID_REQUEST,
                f"no screen {index}, there {verb} {len(monitors)}",
            )
        monitor = monitors[index]
        width, height = _output_size(monitor["width"], monitor["height"], self.config.max_width)
        duration_s = float(self.total / self.rate)
        encoder = _Encoder(
            width, height, self.rate, self.audio is not None, self.config, duration_s
        )
        try:
            interval = 1.0 / float(self.rate)
            start = time.monotonic()
            if self.audio is not None:
                self.audio.started.set()
            for slot in range(self.total):
                due = start + slot * interval
                if self.stop.wait(max(0.0, due - time.monotonic())):
                    raise RecordingStopped
                if time.monotonic() > due + interval:
                    self.skipped += 1  # too late for this slot: the next one is due
                    continue
                shot = sct.grab(monitor)
                pixels = np.frombuffer(shot.raw, dtype=np.uint8).reshape(shot.height, shot.width, 4)
                encoder.video_frame(_yuv_frame(pixels, width, height), slot)
                self.frames += 1
                self._drain_audio(encoder, 0.0)
                if encoder.muxed > self.config.max_bytes:
                    done = f" after {slot * interval:.1f} of {self.total * interval:.1f} s"
                    raise _too_large(encoder.muxed, self.config, done)
            self._drain_audio(encoder, AUDIO_TAIL_S)
            data = encoder.finish()
        finally:
            encoder.close()
        if len(data) > self.config.max_bytes:
            raise _too_large(len(data), self.config)
        return ScreenRecording(
            base64.b64encode(data).decode("ascii"),
            len(data),
            round(self.total / self.rate * 1000),
            width,
            height,
            self.frames,
            self.skipped,
            encoder.codec,
            encoder.audio_samples > 0,
        )

    def _drain_audio(self, encoder: _Encoder, tail_s: float) -> None:
        """Encode the microphone frames queued so far; with ``tail_s``, wait that long at
        most for the audio to reach the video's length."""
        feed = self.audio
        if feed is None:
            return
        deadline = time.monotonic() + tail_s
        while encoder.audio_samples < self.max_samples:
            wait = deadline - time.monotonic()
            pcm = feed.take(wait if wait > 0 and not feed.ended.is_set() else 0.0)
            if pcm is None:
                if wait <= 0 or feed.ended.is_set() or self.stop.is_set():
                    return
                continue
            encoder.audio_frame(pcm, self.max_samples)


def record_screen(
    request: RecordRequest,
    *,
    config: RecordConfig,
    stop: threading.Event,
    audio: AudioFeed | None = None,
) -> ScreenRecording:
    """Record ``request.duration_ms`` of one screen into an mp4 (blocking).

    Raises:
        DeviceError: ``INVALID_REQUEST`` for a screen that does not exist, ``UNAVAILABLE``
            when the display cannot be read or nothing can encode mp4, ``PAYLOAD_TOO_LARGE``
            (over ``config.max_bytes``; the recording stops as soon as it passes the cap),
            or :class:`RecordingStopped`.
    """
    session = _Session(request, config, stop, audio)
    with _open_display() as sct:
        try:
            return session.run(sct)
        except DeviceError:
            raise
        except Exception as exc:
            raise DeviceError(
                NodeErrorCode.UNAVAILABLE, f"the screen recording failed: {exc}"
            ) from None
