"""pocketsphinx 5 as the offline recognizer (its wheel ships the US English model).

Accuracy is limited: on espeak-ng's synthetic speech it gets short phrases such as "hello
world" but most longer sentences wrong (``bench/stt_wer.py`` measures the word error rate).
An OpenAI-compatible server (whisper.cpp, faster-whisper) is the recommended setup.
"""

from __future__ import annotations

import logging
from typing import Any

from gateway.talk.stt.base import RecognizerStream, TranscriptionError

__all__ = ["LABEL", "PocketsphinxRecognizer"]

log = logging.getLogger("gateway.talk")

#: Measured by bench/stt_wer.py (20 espeak-ng sentences): word error rate 54 % at 24 kHz
#: pcm16, 94 % over 8 kHz G.711 (the model is wideband; telephone audio lacks its top half).
LABEL = (
    "pocketsphinx (offline, English only; limited accuracy: about half the words wrong on "
    'synthetic speech, nearly all over 8 kHz G.711; short phrases such as "hello world" '
    "work; use an OpenAI-compatible server such as whisper.cpp for real dictation)"
)


#: Audio goes to the live pass in blocks of this size (20 ms at 16 kHz).
BLOCK_BYTES = 640
#: Utterances up to this long (16 kHz PCM16, 60 s) are decoded a second time for the final.
MAX_SECOND_PASS_BYTES = 60 * 16000 * 2


def _text(decoder: Any) -> str:
    hypothesis = decoder.hyp()
    return hypothesis.hypstr.strip() if hypothesis is not None else ""


class _Stream:
    """Partials come from the live pass. The final decodes the utterance once more, now
    that the live cepstral-mean estimate has adapted to this voice and microphone: a fresh
    decoder starts from a generic estimate and mishears the first words otherwise (measured:
    "whew" for G.711 "hello world" live, "hello world" in the second pass)."""

    def __init__(self, decoder: Any) -> None:
        self._decoder = decoder
        self._started = False
        self._audio = bytearray()

    def feed(self, pcm16: bytes) -> str | None:
        if not self._started:
            self._decoder.start_utt()
            self._started = True
        if len(self._audio) + len(pcm16) <= MAX_SECOND_PASS_BYTES:
            self._audio += pcm16
        else:
            self._audio = bytearray()  # too long for a second pass: the live result stands
        # In 20 ms blocks whatever the client's frame size: the live estimates advance per
        # block, so the same audio gives the same text however it was framed.
        for start in range(0, len(pcm16), BLOCK_BYTES):
            self._decoder.process_raw(pcm16[start : start + BLOCK_BYTES], False, False)
        return _text(self._decoder) or None

    def end_utterance(self) -> str:
        if not self._started:
            return ""
        self._decoder.end_utt()
        self._started = False
        live = _text(self._decoder)
        audio, self._audio = bytes(self._audio), bytearray()
        if not audio:
            return live
        self._decoder.start_utt()
        self._decoder.process_raw(audio, False, True)
        self._decoder.end_utt()
        return _text(self._decoder) or live

    def close(self) -> None:
        if self._started:
            self._decoder.end_utt()
            self._started = False
        self._audio = bytearray()


class PocketsphinxRecognizer:
    """Streams decode with a fresh decoder each (about 0.4 s to load the model)."""

    id = "pocketsphinx"
    label = LABEL
    sample_rate = 16000
    partials = True

    def open_stream(self, language: str | None) -> RecognizerStream:
        if language not in (None, "en"):
            raise TranscriptionError(f"pocketsphinx has an English model only, not {language!r}")
        try:
            from pocketsphinx import Decoder

            decoder = Decoder(samprate=self.sample_rate, loglevel="FATAL")
        except Exception as exc:  # a broken install must fail the session, not the gateway
            raise TranscriptionError(f"pocketsphinx could not start: {exc}") from None
        return _Stream(decoder)
