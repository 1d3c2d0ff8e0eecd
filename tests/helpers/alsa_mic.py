"""A real ALSA capture device without a sound card, for microphone tests.

ALSA's ``file`` plugin reads capture samples from ``infile``. A regular file is read as
fast as PortAudio asks (thousands of times real time) and, once exhausted, leaves stale
buffer contents, so the infile here is a FIFO fed by a thread at real-time pace, one
capture block (20 ms) per write: the stream then behaves like a live microphone, and
:meth:`AlsaTestMic.stall` makes it go quiet like a wedged or unplugged device.

The test process itself holds the FIFO open read-write (non-blocking), so PortAudio's
device enumeration, which opens the infile, never blocks, and nothing is written while no
one reads beyond the small (4 KiB) pipe buffer. ALSA is pointed at the config through
``ALSA_CONFIG_PATH`` (only ALSA reads it) and PortAudio is re-initialized on entry and,
with the previous value restored, on exit, so other tests are unaffected.

Blocks must line up: the plugin copies whatever one ``read`` returns into one capture
period, so the writer's block (``frame_ms``) must equal the stream's block size (our
:class:`~openclaw_desktop.devices.audio.MicrophoneStream` uses 20 ms by default).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from openclaw_desktop.devices import audio

__all__ = [
    "NO_INPUT_CONFIG",
    "PCM_NAME",
    "AlsaTestMic",
    "alsa_config",
    "no_input_config",
    "silence",
    "tone",
]

#: The ALSA PCM name of the test microphone (also reachable as the default input).
PCM_NAME = "openclaw_testmic"


def tone(freq: float, seconds: float, rate: int = 16_000, amplitude: float = 0.5) -> np.ndarray:
    """A sine burst as int16 samples (amplitude 0.5 is about -9 dBFS)."""
    t = np.arange(round(seconds * rate)) / rate
    return (amplitude * 32767 * np.sin(2 * np.pi * freq * t)).astype("<i2")


def silence(seconds: float, rate: int = 16_000) -> np.ndarray:
    """Digital silence as int16 samples."""
    return np.zeros(round(seconds * rate), dtype="<i2")


def _wait_streams_closed(timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while audio.streams_open() and time.monotonic() < deadline:
        time.sleep(0.02)
    if audio.streams_open():
        raise AssertionError("a PortAudio stream is still open after the test")


@contextlib.contextmanager
def alsa_config(path: Path, text: str) -> Iterator[Path]:
    """Use ``text`` as the whole ALSA configuration (written to ``path``) for the block."""
    path.write_text(text, encoding="utf-8")
    old = os.environ.get("ALSA_CONFIG_PATH")
    os.environ["ALSA_CONFIG_PATH"] = str(path)
    try:
        assert audio.rescan(), "PortAudio is in use by another test"
        yield path
    finally:
        if old is None:
            os.environ.pop("ALSA_CONFIG_PATH", None)
        else:
            os.environ["ALSA_CONFIG_PATH"] = old
        _wait_streams_closed()
        audio.rescan()


#: An ALSA configuration whose only device cannot be opened: PortAudio lists nothing.
#: (A configuration without any PCM definition makes PortAudio 19.6 abort the process:
#: ``BuildDeviceList: Assertion `devIdx < numDeviceNames' failed``.)
NO_INPUT_CONFIG = 'pcm.!default { type hw card "openclaw_no_such_card" }\n'


def no_input_config(root: Path) -> contextlib.AbstractContextManager[Path]:
    """An ALSA configuration without any usable device: PortAudio lists no input."""
    return alsa_config(root / "asound-empty.conf", NO_INPUT_CONFIG)


class AlsaTestMic:
    """The test microphone: ``with AlsaTestMic(tmp_path) as mic:``; ``mic.play(...)``.

    Until something is played (and after it), the microphone delivers ``idle``:
    digital silence, a continuous 440 Hz tone with ``idle="tone"``, or a faint noise floor
    like a real microphone's with ``idle="noise"``.
    """

    def __init__(
        self,
        root: Path,
        *,
        sample_rate: int = 16_000,
        frame_ms: int = 20,
        idle: str = "silence",
        speaker_file: Path | None = None,
    ) -> None:
        self.root = root
        self.sample_rate = sample_rate
        self.frame_samples = sample_rate * frame_ms // 1000
        self.idle = idle
        self._noise = np.random.default_rng(7)
        #: Where playback through the default device is written (raw PCM), if anywhere.
        self.speaker_file = speaker_file
        self.frames_written = 0
        self._fifo = root / "mic.fifo"
        self._fd = -1
        self._script = bytearray()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._stalled = threading.Event()
        self._idle_pos = 0
        self._thread = threading.Thread(target=self._run, name="alsa-test-mic", daemon=True)
        self._config: contextlib.ExitStack | None = None

    def config_text(self) -> str:
        """The ALSA configuration: the FIFO-fed capture PCM as the default input; playback
        through the default device goes to :attr:`speaker_file` (raw PCM16, rewritten by
        each playback)."""
        mic = (
            f"pcm.{PCM_NAME} {{ type file  slave.pcm {{ type null }}  "
            f'infile "{self._fifo}"  file "/dev/null"  format "raw" }}\n'
        )
        if self.speaker_file is None:
            return mic + f'pcm.!default {{ type plug  slave.pcm "{PCM_NAME}" }}\n'
        speaker = (
            "pcm.openclaw_test_speaker { type file  slave.pcm { type null }  "
            f'file "{self.speaker_file}"  format "raw" }}\n'
        )
        return (
            mic
            + speaker
            + "pcm.!default { type asym  "
            + f'capture.pcm {{ type plug  slave.pcm "{PCM_NAME}" }}  '
            + 'playback.pcm { type plug  slave.pcm "openclaw_test_speaker" } }\n'
        )

    def __enter__(self) -> AlsaTestMic:
        os.mkfifo(self._fifo)
        self._fd = os.open(self._fifo, os.O_RDWR | os.O_NONBLOCK)
        fcntl.fcntl(self._fd, fcntl.F_SETPIPE_SZ, 4096)
        self._thread.start()
        self._config = contextlib.ExitStack()
        try:
            self._config.enter_context(alsa_config(self.root / "asound.conf", self.config_text()))
        except BaseException:
            self._shutdown()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.resume()  # a stream stuck in a blocking read returns once fed again
        try:
            if self._config is not None:
                self._config.close()
        finally:
            self._shutdown()

    def _shutdown(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def play(self, *segments: np.ndarray) -> None:
        """Queue samples to be captured next (then back to ``idle``)."""
        with self._lock:
            for segment in segments:
                self._script += segment.astype("<i2").tobytes()

    def stall(self) -> None:
        """Stop delivering audio, like a device that froze or went away."""
        self._stalled.set()

    def resume(self) -> None:
        """Deliver audio again."""
        self._stalled.clear()

    def _idle_block(self) -> bytes:
        n = self.frame_samples
        if self.idle == "noise":  # a quiet room through a laptop microphone (about -56 dBFS)
            noise = self._noise.normal(0.0, 50.0, n)
            return np.clip(np.rint(noise), -32768, 32767).astype("<i2").tobytes()
        if self.idle != "tone":
            return bytes(2 * n)
        t = (self._idle_pos + np.arange(n)) / self.sample_rate
        self._idle_pos += n
        return (0.5 * 32767 * np.sin(2 * np.pi * 440 * t)).astype("<i2").tobytes()

    def _next_block(self) -> tuple[bytes, bool]:
        size = 2 * self.frame_samples
        with self._lock:
            if self._script:
                block = bytes(self._script[:size])
                del self._script[:size]
                return block + bytes(size - len(block)), True
        return self._idle_block(), False

    def _run(self) -> None:
        period = self.frame_samples / self.sample_rate
        pending: bytes | None = None
        deadline = time.monotonic()
        while not self._stop.is_set():
            if not self._stalled.is_set():
                block, scripted = (pending, True) if pending is not None else self._next_block()
                try:
                    os.write(self._fd, block)
                    pending = None
                    self.frames_written += 1
                except BlockingIOError:  # nobody reads: keep scripted audio for the reader
                    pending = block if scripted else None
            deadline += period
            delay = deadline - time.monotonic()
            if delay < -1.0:
                deadline = time.monotonic()
            elif delay > 0:
                self._stop.wait(delay)
