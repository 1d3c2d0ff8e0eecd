"""Talk audio as it travels on the wire: its encodings and rates, the G.711 µ-law codec and a
resampler, shared by the client (capture, playback) and the bundled gateway (recognition).

Pure numpy, no I/O. Not imported by :mod:`openclaw_desktop.protocol` itself, and numpy itself
loads only when a codec or the resampler is first used (a gateway that serves no audio never
pays for it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openclaw_desktop.lazy import lazy_getattr
from openclaw_desktop.protocol.audio.formats import (
    AUDIO_FORMATS,
    AudioEncoding,
    AudioFormat,
    decode_to_pcm16,
    encode_from_pcm16,
)

if TYPE_CHECKING:
    from openclaw_desktop.protocol.audio.g711 import ulaw_decode, ulaw_encode
    from openclaw_desktop.protocol.audio.resample import Resampler, resample_pcm16

#: The numpy-backed names, and the module each comes from.
_LAZY = {
    "ulaw_decode": "g711",
    "ulaw_encode": "g711",
    "Resampler": "resample",
    "resample_pcm16": "resample",
}


__getattr__ = lazy_getattr(__name__, _LAZY)


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
