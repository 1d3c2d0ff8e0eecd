"""The microphone adapter on a real ALSA capture device (file plugin fed at real time)
through real PortAudio: frames, rates, device choice, availability, hot-plug, stalls."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from openclaw_desktop.devices import audio
from openclaw_desktop.devices.audio import MicrophoneStream, microphone_problem, resolve_input
from openclaw_desktop.devices.audio_frames import rms_dbfs
from openclaw_desktop.devices.errors import DeviceError
from tests.helpers.alsa_mic import NO_INPUT_CONFIG, PCM_NAME, AlsaTestMic, no_input_config

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def mic(tmp_path: Path) -> Iterator[AlsaTestMic]:
    with AlsaTestMic(tmp_path, idle="tone") as test_mic:
        yield test_mic


def _dominant_hz(pcm: bytes, rate: int) -> float:
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    spectrum = np.abs(np.fft.rfft(samples))
    return float(np.argmax(spectrum)) * rate / samples.size


async def _read_for(stream: MicrophoneStream, seconds: float) -> list[bytes]:
    frames: list[bytes] = []
    count = round(seconds * 1000 / stream.frame_ms)
    for _ in range(count):
        frame = await stream.read(2.0)
        assert frame is not None
        frames.append(frame)
    return frames


async def _drain(stream: MicrophoneStream, timeout: float) -> None:
    """Read until the stream ends (or fails)."""
    while await stream.read(timeout) is not None:
        pass


@pytest.mark.parametrize("rate", [16_000, 24_000, 8_000])
async def test_stream_delivers_20ms_pcm16_frames_of_the_real_signal(
    tmp_path: Path, rate: int
) -> None:
    """Frames are rate*20ms samples of PCM16 mono: the 440 Hz tone the device plays, at
    its level, arriving at real-time pace; the device is released on close."""
    with AlsaTestMic(tmp_path, sample_rate=rate, idle="tone"):
        stream = MicrophoneStream(resolve_input(PCM_NAME), sample_rate=rate)
        await stream.open()
        assert audio.streams_open() == 1
        started = time.monotonic()
        frames = await _read_for(stream, 1.0)
        elapsed = time.monotonic() - started
        await stream.close()
        assert audio.streams_open() == 0
    assert {len(frame) for frame in frames} == {2 * rate // 50}
    pcm = b"".join(frames)
    assert _dominant_hz(pcm, rate) == pytest.approx(440, abs=5)
    assert rms_dbfs(pcm) == pytest.approx(-9.03, abs=0.2)
    assert 0.7 < elapsed < 2.0  # live pace (a few frames may have been buffered)
    assert stream.dropped == 0


async def test_close_keeps_queued_frames_then_ends(mic: AlsaTestMic) -> None:
    """After close(), read() returns what was already captured, then None."""
    stream = MicrophoneStream(resolve_input(PCM_NAME))
    await stream.open()
    await _read_for(stream, 0.2)
    await stream.close()
    await stream.close()  # idempotent
    await asyncio.wait_for(_drain(stream, 1.0), 5)


def test_device_choice_by_name_part_index_and_default(mic: AlsaTestMic) -> None:
    """A name part or an index picks that device; empty picks the default input."""
    by_name = resolve_input("TESTMIC")
    assert by_name.name == PCM_NAME
    assert resolve_input(str(by_name.index)) == by_name
    default = resolve_input(None)
    assert default.name == "default"
    assert resolve_input("  ") == default


def test_missing_device_falls_back_to_the_default_and_logs_once(
    mic: AlsaTestMic, caplog: pytest.LogCaptureFixture
) -> None:
    """An unknown name or index uses the default input and warns once per setting."""
    missing = f"no-such-mic-{uuid.uuid4().hex}"
    with caplog.at_level(logging.WARNING, "openclaw.devices.audio"):
        assert resolve_input(missing).name == "default"
        assert resolve_input(missing).name == "default"
        assert resolve_input("999").name == "default"
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == [
        f"microphone {missing!r} not found; using the default input instead",
        "microphone '999' not found; using the default input instead",
    ]


def test_no_input_device_means_unavailable_with_the_reason(tmp_path: Path) -> None:
    """An ALSA setup without capture devices: the probe says no and why."""
    with no_input_config(tmp_path):
        reason = "no microphone found (PortAudio lists no input device)"
        assert microphone_problem(None, rescan_after_s=0) == reason
        assert microphone_problem("anything") == reason
        with pytest.raises(DeviceError, match="no microphone found"):
            resolve_input(None)


def test_hot_plug_is_seen_after_a_rescan_and_not_before(mic: AlsaTestMic, tmp_path: Path) -> None:
    """Unplugging (a config without devices) shows only once the list is re-scanned; the
    re-scan is throttled by rescan_after_s; plugging back in is seen the same way."""
    mic_config = os.environ["ALSA_CONFIG_PATH"]
    empty = tmp_path / "empty.conf"
    empty.write_text(NO_INPUT_CONFIG, encoding="utf-8")
    assert microphone_problem(None, rescan_after_s=0) is None
    os.environ["ALSA_CONFIG_PATH"] = str(empty)
    try:
        assert microphone_problem(None, rescan_after_s=3600) is None  # stale list: no re-scan
        assert microphone_problem(None, rescan_after_s=0) == (
            "no microphone found (PortAudio lists no input device)"
        )
    finally:
        os.environ["ALSA_CONFIG_PATH"] = mic_config
    assert microphone_problem(PCM_NAME, rescan_after_s=0) is None
    assert resolve_input(PCM_NAME).name == PCM_NAME


async def test_no_rescan_while_a_stream_is_open(mic: AlsaTestMic) -> None:
    """Re-initializing PortAudio would kill the open stream: it is refused, and the
    availability answer is yes without touching the device list."""
    stream = MicrophoneStream(resolve_input(PCM_NAME))
    await stream.open()
    try:
        assert audio.rescan() is False
        assert microphone_problem(None, rescan_after_s=0) is None
        frames = await _read_for(stream, 0.2)  # the stream is still alive
        assert len(frames) == 10
    finally:
        await stream.close()
    assert audio.rescan() is True


async def test_a_stalled_device_fails_the_read_and_close_is_bounded(
    mic: AlsaTestMic, caplog: pytest.LogCaptureFixture
) -> None:
    """A device that stops delivering audio: read() fails with a clear error instead of
    hanging; close() gives up after its deadline and the stream is abandoned, then
    released once the driver returns."""
    stream = MicrophoneStream(resolve_input(PCM_NAME))
    await stream.open()
    await _read_for(stream, 0.1)
    mic.stall()
    with pytest.raises(DeviceError) as failure:
        await _drain(stream, 0.3)
    assert failure.value.code == "UNAVAILABLE"
    assert failure.value.message == (
        f"the microphone stopped: no audio from {PCM_NAME!r} for 0.3 s"
    )
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, "openclaw.devices.audio"):
        await stream.close(timeout=0.5)
    assert time.monotonic() - started < 2.0
    assert "did not close within 0.5 s; abandoned" in caplog.text
    mic.resume()
    deadline = time.monotonic() + 5
    while audio.streams_open() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert audio.streams_open() == 0


def test_portaudio_missing_makes_the_probe_say_why(tmp_path: Path) -> None:
    """In a process where the PortAudio library cannot be found, importing sounddevice
    fails with OSError and the probe explains it (no exception escapes)."""
    script = (
        "import ctypes.util, asyncio\n"
        "real = ctypes.util.find_library\n"
        "ctypes.util.find_library = lambda n: None if 'portaudio' in n else real(n)\n"
        "from openclaw_desktop.devices import audio\n"
        "from openclaw_desktop.node.context import NodeContext\n"
        "from openclaw_desktop.node.handlers.talk import talk_area\n"
        "print(audio.microphone_problem())\n"
        "print(asyncio.run(talk_area(NodeContext()).specs[0].availability()))\n"
    )
    done = _run_script(script, tmp_path)
    reason = (
        "PortAudio is not available (PortAudio library not found); install it "
        "(libportaudio2) and restart"
    )
    assert done.stdout.splitlines() == [
        reason,
        f"Availability(available=False, reason={reason!r})",
    ]


def _run_script(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )


def test_a_portaudio_start_that_hangs_is_not_tried_in_the_app(tmp_path: Path) -> None:
    """PortAudio's first start is tried in a child first: when that child hangs (what a
    stale JACK lock in /dev/shm does to ``Pa_Initialize``), the probe says so within the
    deadline and this process never loads PortAudio (whose hang would hold its lock and
    silence its error output for ever)."""
    script = (
        "import sys, time\n"
        "from openclaw_desktop.devices import audio\n"
        "audio.PREFLIGHT_ARGV[:] = [sys.executable, '-c', 'import time; time.sleep(60)']\n"
        "audio.PREFLIGHT_TIMEOUT_S = 0.5\n"
        "started = time.monotonic()\n"
        "print(audio.microphone_problem())\n"
        "print(audio.microphone_problem())\n"  # remembered: not tried again
        "print(time.monotonic() - started < 5, 'sounddevice' in sys.modules)\n"
    )
    done = _run_script(script, tmp_path)
    first, second, verdict = done.stdout.splitlines()
    assert first.startswith("the audio system hung while PortAudio started (no answer in 0.5 s)")
    assert second == first
    assert verdict == "True False"
    assert "/dev/shm/jack_db-" in first  # the likely cause, named


def test_a_hung_call_that_hid_the_error_output_gives_it_back(tmp_path: Path) -> None:
    """sounddevice points fd 2 at /dev/null while PortAudio starts; a start that never
    returns would leave every later log line of the app unwritten. The deadline of the
    call restores it."""
    script = (
        "import asyncio, os, sys, threading\n"
        "from openclaw_desktop.devices import audio\n"
        "from openclaw_desktop.devices.errors import DeviceError\n"
        "def hang():\n"
        "    null = os.open(os.devnull, os.O_WRONLY)\n"
        "    os.dup2(null, 2)\n"
        "    threading.Event().wait()\n"
        "async def main():\n"
        "    try:\n"
        "        await audio._bounded(hang, 'probe', 0.3)\n"
        "    except DeviceError as exc:\n"
        "        print(exc.message)\n"
        "asyncio.run(main())\n"
        "os.write(2, b'still heard\\n')\n"
    )
    done = _run_script(script, tmp_path)
    assert done.stdout.strip() == "the audio system did not answer within 0.3 s (probe)"
    assert "still heard" in done.stderr
