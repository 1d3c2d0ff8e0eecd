"""Playing PCM16 mono through the default output with sounddevice, stoppable at any block
(the user interrupts talk mode) and bounded (a wedged device cannot hang the caller)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from openclaw_desktop.devices import audio
from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.protocol import NodeErrorCode

__all__ = ["play_pcm16"]

#: Samples written per call (about 50 ms at 24 kHz): the stop latency.
BLOCK_SAMPLES = 1200
#: How far ahead of real time audio may be queued.
LEAD_S = 0.2


def _play_blocking(samples: bytes, rate: int, stop: threading.Event) -> bool:
    sd: Any = audio.load_portaudio()
    with audio.portaudio_in_use():  # no device re-scan while the stream is open
        try:
            stream = sd.RawOutputStream(samplerate=rate, channels=1, dtype="int16")
        except Exception as exc:  # PortAudio reports every failure as a generic error
            raise DeviceError(
                NodeErrorCode.UNAVAILABLE, f"cannot open the speaker: {exc}"
            ) from None
        step = 2 * BLOCK_SAMPLES
        began = time.monotonic()
        with stream:
            for start in range(0, len(samples), step):
                if stop.is_set():
                    stream.abort()
                    return False
                stream.write(samples[start : start + step])
                # Never queue more than LEAD_S ahead of the clock: a device with a deep
                # buffer (or none, like a null sink) still stops within a block or two.
                ahead = (start + step) / 2 / rate - (time.monotonic() - began)
                if ahead > LEAD_S:
                    stop.wait(ahead - LEAD_S)
    return True


async def play_pcm16(samples: bytes, rate: int, stop: threading.Event) -> bool:
    """Play to the end (True) or until ``stop`` is set (False).

    Raises:
        DeviceError: ``UNAVAILABLE`` when there is no usable output device.
    """
    if not samples:
        return True
    seconds = len(samples) / 2 / rate
    task = asyncio.to_thread(_play_blocking, samples, rate, stop)
    try:
        async with asyncio.timeout(seconds + 10):
            return await task
    except TimeoutError:
        stop.set()
        raise DeviceError(NodeErrorCode.UNAVAILABLE, "the speaker stopped playing") from None
