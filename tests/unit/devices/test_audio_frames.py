"""Unit tests for the microphone's pure parts: drop-oldest queue, level, energy VAD."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from openclaw_desktop.devices.audio_frames import SILENCE_DBFS, EnergyVad, FrameQueue, rms_dbfs
from openclaw_desktop.devices.errors import DeviceError


def _sine(amplitude: float, n: int = 320) -> bytes:
    t = np.arange(n) / 16_000
    return (amplitude * 32767 * np.sin(2 * np.pi * 500 * t)).astype("<i2").tobytes()


# ---------------------------------------------------------------- FrameQueue


async def test_queue_drops_the_oldest_frames_under_backpressure_and_counts_them() -> None:
    """A full queue keeps the newest frames: the consumer sees the latest audio."""
    queue: FrameQueue[int] = FrameQueue(3)
    for i in range(10):
        queue.put_nowait(i)
    assert queue.dropped == 7
    assert len(queue) == 3
    assert [await queue.get(0.1) for _ in range(3)] == [7, 8, 9]


async def test_queue_hands_frames_from_another_thread_without_blocking_it() -> None:
    """Frames posted with call_soon_threadsafe from a producer thread arrive in order;
    a consumer that lags far behind loses only the oldest ones."""
    loop = asyncio.get_running_loop()
    queue: FrameQueue[int] = FrameQueue(50)

    def produce() -> None:
        for i in range(1000):
            loop.call_soon_threadsafe(queue.put_nowait, i)
        loop.call_soon_threadsafe(queue.close)

    await asyncio.to_thread(produce)  # the loop is busy awaiting: nothing is consumed yet
    await asyncio.sleep(0)
    received = []
    while (item := await queue.get(1.0)) is not None:
        received.append(item)
    assert received == list(range(950, 1000))
    assert queue.dropped == 950


async def test_queue_get_waits_for_a_frame_and_times_out_when_none_comes() -> None:
    """get() wakes on put; without one it raises TimeoutError after its timeout."""
    queue: FrameQueue[bytes] = FrameQueue(4)
    asyncio.get_running_loop().call_later(0.05, queue.put_nowait, b"x")
    assert await queue.get(1.0) == b"x"
    with pytest.raises(TimeoutError):
        await queue.get(0.05)


async def test_queue_close_drains_then_ends_or_raises_its_error() -> None:
    """Queued frames survive close(); then get() returns None, or raises the close error."""
    queue: FrameQueue[int] = FrameQueue(4)
    queue.put_nowait(1)
    queue.close()
    queue.put_nowait(2)  # ignored once closed
    assert await queue.get(0.1) == 1
    assert await queue.get(0.1) is None

    failing: FrameQueue[int] = FrameQueue(4)
    failing.put_nowait(1)
    failing.close(DeviceError("UNAVAILABLE", "gone"))
    failing.close()  # the first close wins
    assert await failing.get(0.1) == 1
    with pytest.raises(DeviceError, match="gone"):
        await failing.get(0.1)


async def test_queue_close_wakes_a_waiting_reader() -> None:
    """A reader blocked in get() returns None as soon as the stream closes."""
    queue: FrameQueue[int] = FrameQueue(4)
    asyncio.get_running_loop().call_later(0.05, queue.close)
    assert await asyncio.wait_for(queue.get(5.0), 1.0) is None


def test_queue_rejects_a_zero_size() -> None:
    """A queue must hold at least one frame."""
    with pytest.raises(ValueError, match="at least 1"):
        FrameQueue(0)


# ---------------------------------------------------------------- level


@pytest.mark.parametrize(
    ("amplitude", "expected"),
    [(1.0, -3.01), (0.5, -9.03), (0.1, -23.01), (0.01, -43.01)],
)
def test_rms_dbfs_of_sines(amplitude: float, expected: float) -> None:
    """A sine's RMS level is its amplitude in dB minus 3.01 dB."""
    assert rms_dbfs(_sine(amplitude)) == pytest.approx(expected, abs=0.05)


def test_rms_dbfs_of_silence_and_of_nothing_is_the_floor() -> None:
    """Digital silence and an empty frame give SILENCE_DBFS, not -inf."""
    assert rms_dbfs(bytes(640)) == SILENCE_DBFS
    assert rms_dbfs(b"") == SILENCE_DBFS


def test_rms_dbfs_of_full_scale_square_is_zero() -> None:
    """Full-scale square wave: 0 dBFS (within the int16 asymmetry)."""
    square = np.array([-32768, 32767] * 160, dtype="<i2").tobytes()
    assert rms_dbfs(square) == pytest.approx(0.0, abs=0.001)


# ---------------------------------------------------------------- VAD


def _feed(vad: EnergyVad, level: float, ms: int) -> None:
    for _ in range(ms // vad.frame_ms):
        vad.push(level)


def test_vad_ends_after_speech_then_the_silence_window() -> None:
    """Silence, speech, then exactly silence_ms of silence ends the utterance."""
    vad = EnergyVad(silence_ms=400)
    _feed(vad, SILENCE_DBFS, 500)
    assert (vad.heard_speech, vad.ended) == (False, False)
    _feed(vad, -12.0, 300)
    assert (vad.heard_speech, vad.ended) == (True, False)
    _feed(vad, SILENCE_DBFS, 380)
    assert (vad.heard_speech, vad.ended) == (True, False)
    _feed(vad, SILENCE_DBFS, 20)
    assert (vad.heard_speech, vad.ended) == (True, True)


def test_vad_pause_shorter_than_the_window_does_not_end() -> None:
    """A pause between words shorter than silence_ms restarts the silence count."""
    vad = EnergyVad(silence_ms=400)
    _feed(vad, -12.0, 200)
    _feed(vad, SILENCE_DBFS, 300)
    _feed(vad, -12.0, 100)
    _feed(vad, SILENCE_DBFS, 300)
    assert vad.heard_speech
    assert not vad.ended


def test_vad_silence_alone_never_ends_and_clicks_are_not_speech() -> None:
    """Without speech nothing ends; a 40 ms click is shorter than min_speech_ms."""
    vad = EnergyVad(silence_ms=200)
    _feed(vad, SILENCE_DBFS, 1000)
    _feed(vad, -6.0, 40)
    _feed(vad, SILENCE_DBFS, 1000)
    assert not vad.heard_speech
    assert not vad.ended


def test_vad_quiet_sound_below_the_threshold_is_not_speech() -> None:
    """-55 dBFS is below the -45 dBFS absolute threshold."""
    vad = EnergyVad()
    assert vad.push(-55.0) is False
    assert vad.push(-30.0) is True


def test_vad_steady_noise_becomes_silence_as_the_floor_rises() -> None:
    """A constant hum is 'speech' at first, then the floor catches up and the utterance
    ends; speech well above the hum is still detected."""
    vad = EnergyVad(silence_ms=500)
    assert vad.push(-40.0) is True
    _feed(vad, -40.0, 6000)
    assert vad.ended
    assert vad.push(-10.0) is True
