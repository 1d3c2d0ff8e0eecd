"""The microphone through sounddevice (PortAudio): availability, device choice, a stream.

PortAudio lists devices once, when it is initialized, so a microphone plugged in later is
only seen after a re-scan (``Pa_Terminate`` + ``Pa_Initialize``). Terminating PortAudio
closes every open stream, so :func:`rescan` runs only while no stream is open (counted
here; any other user of sounddevice in this process must hold :func:`portaudio_in_use`),
and :func:`microphone_problem` re-scans at most every :data:`RESCAN_INTERVAL_S` seconds.

Every PortAudio call that can block (initialize, open, abort, close) runs in a daemon
thread with a deadline: a wedged audio driver costs a clear error, never a hung event
loop, and a stream whose close never returns is abandoned (and logged). PortAudio's first
start is tried in a child process before this one loads it: a start that hangs (a sound
server that stopped answering, a stale JACK lock in ``/dev/shm``) would otherwise keep a
thread and PortAudio's lock here for ever, with this process's error output (which
sounddevice points at ``/dev/null`` while PortAudio starts) gone with them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from openclaw_desktop.devices.audio_frames import FrameQueue
from openclaw_desktop.devices.errors import DeviceError

__all__ = [
    "RESCAN_INTERVAL_S",
    "InputDevice",
    "MicrophoneStream",
    "check_microphone",
    "find_input",
    "load_portaudio",
    "microphone_problem",
    "portaudio_in_use",
    "rescan",
    "resolve_input",
    "streams_open",
]

log = logging.getLogger("openclaw.devices.audio")
T = TypeVar("T")

#: How old the device list may get before the availability check re-scans (when idle).
RESCAN_INTERVAL_S = 5.0
#: Deadline of one blocking PortAudio call (initialize, list, open + start).
CALL_TIMEOUT_S = 5.0
#: Deadline of stopping a stream (abort + close); a healthy device takes milliseconds.
CLOSE_TIMEOUT_S = 2.0
#: Deadline of the trial start of PortAudio in a child process (a healthy one takes 0.1 s).
PREFLIGHT_TIMEOUT_S = 5.0
#: The trial start: what importing sounddevice does (``Pa_Initialize``), in a child.
PREFLIGHT_ARGV = [sys.executable, "-c", "import sounddevice"]
_UNAVAILABLE = "UNAVAILABLE"

_lock = threading.Lock()  # guards PortAudio (re)initialization against open/close
_state: dict[str, Any] = {"sd": None, "error": None, "scanned": 0.0, "open": 0}
_preflight_lock = threading.Lock()
_preflight: dict[str, str | None] = {}


def _preflight_problem() -> str | None:
    """Why PortAudio must not be started in this process (its trial start in a child hung),
    or None; blocking, run once. A child that merely fails says nothing: loading it here
    then gives the precise error."""
    with _preflight_lock:
        if "result" not in _preflight:
            problem = None
            if not getattr(sys, "frozen", False):  # a frozen build has no ``python -c``
                try:
                    subprocess.run(
                        PREFLIGHT_ARGV,
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                        timeout=PREFLIGHT_TIMEOUT_S,
                        check=False,
                    )
                except subprocess.TimeoutExpired:
                    problem = (
                        f"the audio system hung while PortAudio started (no answer in "
                        f"{PREFLIGHT_TIMEOUT_S:g} s): a sound server that stopped answering, "
                        "or a stale JACK lock left in /dev/shm/jack_db-* by a killed audio "
                        "program, does this; fix it and restart"
                    )
                    log.warning("%s", problem)
                except OSError as exc:
                    log.debug("cannot try PortAudio in a child (%s): loading it here", exc)
            _preflight["result"] = problem
        return _preflight["result"]


_warned_fallback: set[str] = set()


def _load() -> Any:
    """The sounddevice module; raises DeviceError when PortAudio cannot be loaded.

    A failure is remembered: finding the library runs ``ldconfig``, too slow to repeat at
    every check, and the library cannot appear without a restart anyway.
    """
    problem = _preflight_problem() if _state["sd"] is None else None
    with _lock:
        if problem is not None and _state["error"] is None:
            _state["error"] = problem
        if _state["sd"] is None and _state["error"] is None:
            try:
                import sounddevice

                _state["sd"] = sounddevice
                _state["scanned"] = time.monotonic()
            except OSError as exc:
                _state["error"] = (
                    f"PortAudio is not available ({exc}); install it (libportaudio2) and restart"
                )
            except ImportError as exc:
                _state["error"] = f"the sounddevice package cannot be imported ({exc})"
        if _state["error"] is not None:
            raise DeviceError(_UNAVAILABLE, _state["error"])
        return _state["sd"]


def load_portaudio() -> Any:
    """The sounddevice module (for other audio adapters, e.g. playback).

    Raises:
        DeviceError: ``UNAVAILABLE`` when PortAudio cannot be loaded.
    """
    return _load()


def streams_open() -> int:
    """How many PortAudio streams (or :func:`portaudio_in_use` holders) are open now."""
    with _lock:
        return int(_state["open"])


@contextlib.contextmanager
def portaudio_in_use() -> Iterator[None]:
    """Hold PortAudio: no re-scan (which would kill open streams) runs meanwhile."""
    with _lock:
        _state["open"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["open"] -= 1


def rescan() -> bool:
    """Re-initialize PortAudio so it lists the devices present now; blocking.

    Returns False (and changes nothing) while a stream is open. Raises DeviceError when
    PortAudio cannot be loaded or initialized.
    """
    sd = _load()
    with _lock:
        if _state["open"]:
            return False
        if sd._initialized:
            sd._terminate()
        try:
            sd._initialize()
        except sd.PortAudioError as exc:
            raise DeviceError(_UNAVAILABLE, f"PortAudio failed to start: {exc}") from exc
        finally:
            _state["scanned"] = time.monotonic()
    return True


@dataclass(frozen=True, slots=True)
class InputDevice:
    """One capture device as PortAudio lists it."""

    index: int
    name: str
    default_samplerate: float


def _inputs(sd: Any) -> list[InputDevice]:
    if not sd._initialized:
        raise DeviceError(_UNAVAILABLE, "PortAudio is not initialized (a re-scan failed)")
    return [
        InputDevice(int(d["index"]), str(d["name"]), float(d["default_samplerate"]))
        for d in sd.query_devices()
        if int(d["max_input_channels"]) > 0
    ]


def _match(inputs: list[InputDevice], wanted: str) -> InputDevice | None:
    text = wanted.strip()
    if text.isdigit():
        return next((d for d in inputs if d.index == int(text)), None)
    lowered = text.lower()
    exact = next((d for d in inputs if d.name.lower() == lowered), None)
    return exact or next((d for d in inputs if lowered in d.name.lower()), None)


def resolve_input(wanted: str | None) -> InputDevice:
    """The capture device for the ``microphone_device`` setting; blocking.

    ``wanted`` is an index (``"2"``) or a name or part of one (case-insensitive, an exact
    name wins). Empty means the default input. A device that is not there falls back to
    the default input, logged once per setting value.

    Raises:
        DeviceError: PortAudio is missing or lists no input device at all.
    """
    sd = _load()
    with _lock:
        inputs = _inputs(sd)
        default_index = int(sd.default.device[0])
    if not inputs:
        raise DeviceError(_UNAVAILABLE, "no microphone found (PortAudio lists no input device)")
    if wanted and wanted.strip():
        chosen = _match(inputs, wanted)
        if chosen is not None:
            return chosen
        if wanted not in _warned_fallback:
            _warned_fallback.add(wanted)
            log.warning("microphone %r not found; using the default input instead", wanted)
    return next((d for d in inputs if d.index == default_index), inputs[0])


def microphone_problem(
    wanted: str | None = None, *, rescan_after_s: float = RESCAN_INTERVAL_S
) -> str | None:
    """Why the microphone cannot be used here, or None when it can; blocking, cheap.

    Re-scans the device list (hot-plug) when it is older than ``rescan_after_s`` and no
    stream is open; while a capture runs the answer is yes (its device is in use).
    Opens no stream.
    """
    try:
        sd = _load()
        with _lock:
            busy, age = _state["open"] > 0, time.monotonic() - _state["scanned"]
        if busy:
            return None
        if age >= rescan_after_s or not sd._initialized:
            rescan()
        resolve_input(wanted)
    except DeviceError as exc:
        return exc.message
    return None


def _dup_stderr() -> int | None:
    try:
        return os.dup(2)
    except OSError:
        return None


def _restore_stderr(saved: int | None) -> None:
    """Point fd 2 back at ``saved`` (then closed) when a hung call left it elsewhere:
    sounddevice sends it to /dev/null while PortAudio starts, and a start that never
    returns would keep it there, silencing every later log line of this process."""
    if saved is None:
        return
    try:
        now, before = os.fstat(2), os.fstat(saved)
        if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            os.dup2(saved, 2)
            log.warning("a hung PortAudio call had redirected the error output; restored it")
    except OSError:
        pass
    finally:
        os.close(saved)


async def _bounded(
    call: Callable[[], T], what: str, timeout: float, late: Callable[[T], None] | None = None
) -> T:
    """Run a blocking call in a daemon thread and wait at most ``timeout`` seconds.

    A daemon thread, not the loop's executor: a call that never returns must not hold up
    interpreter or loop shutdown. When the caller stops waiting (deadline, cancellation)
    and the call later succeeds, ``late(result)`` cleans up after it.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def deliver(ok: bool, value: Any) -> None:
        if future.cancelled():
            if ok and late is not None:
                threading.Thread(target=late, args=(value,), daemon=True).start()
        elif ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def work() -> None:
        try:
            result: tuple[bool, Any] = (True, call())
        except Exception as exc:
            result = (False, exc)
        try:
            loop.call_soon_threadsafe(deliver, *result)
        except RuntimeError:  # the loop is gone: nobody waits any more
            if result[0] and late is not None:
                late(result[1])

    stderr = _dup_stderr()
    threading.Thread(target=work, name=f"audio-{what}", daemon=True).start()
    try:
        async with asyncio.timeout(timeout):
            return await future
    except TimeoutError:
        _restore_stderr(stderr)
        stderr = None
        raise DeviceError(
            _UNAVAILABLE, f"the audio system did not answer within {timeout:g} s ({what})"
        ) from None
    finally:
        if stderr is not None:
            os.close(stderr)


async def find_input(wanted: str | None) -> InputDevice:
    """:func:`resolve_input` off the event loop, with a deadline."""
    return await _bounded(lambda: resolve_input(wanted), "list", CALL_TIMEOUT_S)


async def check_microphone(wanted: str | None = None) -> str | None:
    """:func:`microphone_problem` off the event loop, with a deadline."""
    try:
        return await _bounded(lambda: microphone_problem(wanted), "probe", CALL_TIMEOUT_S)
    except DeviceError as exc:
        return exc.message


class MicrophoneStream:
    """An open PCM16 mono input stream delivering fixed frames (default 20 ms) to asyncio.

    The PortAudio callback thread only copies each block and hands it to the loop with
    ``call_soon_threadsafe`` into a :class:`FrameQueue` (drop-oldest, bounded), so neither
    side ever blocks the other. The sample rate is a parameter: 16 kHz for speech to text,
    24 kHz or 8 kHz for the voice relays.
    """

    def __init__(
        self,
        device: InputDevice,
        *,
        sample_rate: int = 16_000,
        frame_ms: int = 20,
        queue_frames: int = 250,
    ) -> None:
        if sample_rate * frame_ms % 1000:
            raise ValueError("frame_ms must be a whole number of samples at sample_rate")
        self.device = device
        self.sample_rate = sample_rate
        self.frame_ms = frame_ms
        self.frame_samples = sample_rate * frame_ms // 1000
        self.overflows = 0
        self._queue: FrameQueue[bytes] = FrameQueue(queue_frames)
        self._stream: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing = False

    @property
    def dropped(self) -> int:
        """Frames dropped because asyncio did not keep up."""
        return self._queue.dropped

    async def open(self, timeout: float = CALL_TIMEOUT_S) -> None:
        """Open and start the stream.

        Raises:
            DeviceError: UNAVAILABLE when the device cannot be opened in time or at all.
        """
        self._loop = asyncio.get_running_loop()
        self._stream = await _bounded(self._open_blocking, "open", timeout, _close_blocking)

    def _open_blocking(self) -> Any:
        sd = _load()
        if not _lock.acquire(timeout=CALL_TIMEOUT_S):
            raise DeviceError(_UNAVAILABLE, "the audio system is busy re-scanning devices")
        try:
            stream = sd.RawInputStream(
                samplerate=self.sample_rate,
                blocksize=self.frame_samples,
                device=self.device.index,
                channels=1,
                dtype="int16",
                callback=self._callback,
                finished_callback=self._finished,
            )
            try:
                stream.start()
            except BaseException:
                stream.close()
                raise
            _state["open"] += 1
            return stream
        except sd.PortAudioError as exc:
            raise DeviceError(
                _UNAVAILABLE, f"cannot open the microphone {self.device.name!r}: {exc}"
            ) from exc
        finally:
            _lock.release()

    def _callback(self, indata: Any, frames: int, time_info: Any, status: Any) -> None:
        # PortAudio's thread: copy and hand over, nothing else.
        if status.input_overflow:
            self.overflows += 1
        loop = self._loop
        if loop is None:
            return
        with contextlib.suppress(RuntimeError):  # loop closed: the close is on its way
            loop.call_soon_threadsafe(self._queue.put_nowait, bytes(indata))

    def _finished(self) -> None:
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._on_finished)

    def _on_finished(self) -> None:
        if not self._closing:
            self._queue.close(
                DeviceError(
                    _UNAVAILABLE,
                    f"the microphone stopped: the audio stream of {self.device.name!r} "
                    "ended (was the device unplugged?)",
                )
            )

    async def read(self, timeout: float) -> bytes | None:
        """The next frame (``frame_samples`` PCM16 samples); None once closed and drained.

        Raises:
            DeviceError: UNAVAILABLE when no audio arrived for ``timeout`` seconds or the
                stream ended by itself.
        """
        try:
            return await self._queue.get(timeout)
        except TimeoutError:
            error = DeviceError(
                _UNAVAILABLE,
                f"the microphone stopped: no audio from {self.device.name!r} for {timeout:g} s",
            )
            self._queue.close(error)
            raise error from None

    async def close(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        """Stop the device (queued frames stay readable); idempotent, bounded."""
        if self._closing:
            return
        self._closing = True
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                await asyncio.shield(_bounded(lambda: _close_blocking(stream), "close", timeout))
            except DeviceError:
                log.warning(
                    "the microphone %r did not close within %g s; abandoned",
                    self.device.name,
                    timeout,
                )
        self._queue.close()
        if self._queue.dropped or self.overflows:
            log.warning(
                "microphone capture lost audio: %d frames dropped, %d overflows",
                self._queue.dropped,
                self.overflows,
            )


def _close_blocking(stream: Any) -> None:
    try:
        stream.abort()
    except Exception:
        log.warning("aborting the microphone stream failed", exc_info=True)
    try:
        stream.close()
    except Exception:
        log.warning("closing the microphone stream failed", exc_info=True)
    finally:
        with _lock:
            _state["open"] -= 1
