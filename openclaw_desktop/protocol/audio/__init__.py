"""Talk audio as it travels on the wire: its encodings and rates, the G.711 µ-law codec and a
resampler, shared by the client (capture, playback) and the bundled gateway (recognition).

Pure numpy, no I/O. Not imported by :mod:`openclaw_desktop.protocol` itself, so clients that
never touch audio do not load numpy through the wire models.
"""

from __future__ import annotations

from openclaw_desktop.protocol.audio.formats import (
    AUDIO_FORMATS,
    AudioEncoding,
    AudioFormat,
    decode_to_pcm16,
    encode_from_pcm16,
)
from openclaw_desktop.protocol.audio.g711 import ulaw_decode, ulaw_encode
from openclaw_desktop.protocol.audio.resample import Resampler, resample_pcm16

__all__ = [
    "AUDIO_FORMATS",
    "AudioEncoding",
    "AudioFormat",
    "Resampler",
    "decode_to_pcm16",
    "encode_from_pcm16",
    "resample_pcm16",
    "ulaw_decode",
    "ulaw_encode",
]
