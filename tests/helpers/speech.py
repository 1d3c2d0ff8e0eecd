"""Real synthetic speech for the voice tests and benchmarks: espeak-ng renders a sentence,
which is resampled to the wanted rate and framed like a microphone would deliver it.

A microphone never delivers digital silence: the clip gets a leading and trailing pause and
a faint, seeded noise floor (about -56 dBFS, a quiet laptop microphone), which is also what
pocketsphinx's noise and cepstral-mean estimates need at the start of an utterance.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import numpy as np
import pytest

from gateway.talk.wav import wav_to_pcm16
from openclaw_desktop.protocol.audio import resample_pcm16

__all__ = ["ESPEAK", "espeak_pcm16", "frames", "need_espeak"]

ESPEAK = shutil.which("espeak-ng")


def need_espeak() -> str:
    """The espeak-ng path; fails the test (it is a declared system package) when missing."""
    if ESPEAK is None:
        pytest.fail("espeak-ng is not installed (./dev installs it: apt-get install espeak-ng)")
    return ESPEAK


def espeak_pcm16(
    text: str,
    rate: int = 24000,
    *,
    voice: str = "en-us",
    lead_ms: int = 300,
    tail_ms: int = 1200,
    noise: float = 50.0,
    seed: int = 0,
) -> bytes:
    """``text`` spoken by espeak-ng as PCM16 mono at ``rate``, with pauses and noise floor."""
    result = subprocess.run(
        [need_espeak(), "--stdout", "-v", voice, text],
        capture_output=True,
        timeout=30,
        check=True,
    )
    pcm, native = wav_to_pcm16(result.stdout)
    speech = np.frombuffer(resample_pcm16(pcm, native, rate), dtype="<i2").astype(np.float64)
    lead = np.zeros(rate * lead_ms // 1000)
    tail = np.zeros(rate * tail_ms // 1000)
    clip = np.concatenate([lead, speech, tail])
    clip += np.random.default_rng(seed).normal(0.0, noise, clip.size)
    samples: np.ndarray[Any, Any] = np.clip(np.rint(clip), -32768, 32767).astype("<i2")
    return samples.tobytes()


def frames(audio: bytes, bytes_per_frame: int) -> list[bytes]:
    """``audio`` cut into frames (20 ms each for the usual sizes; the last may be short)."""
    return [audio[i : i + bytes_per_frame] for i in range(0, len(audio), bytes_per_frame)]
