"""What a speech recognizer offers the talk sessions.

Every method of a :class:`RecognizerStream` blocks (model work, HTTP) and is called from a
worker thread, one call at a time per stream, never on the event loop.
"""

from __future__ import annotations

from typing import Protocol

from gateway.errors import BundledGatewayError

__all__ = ["RecognizerStream", "SpeechRecognizer", "TranscriptionError"]


class TranscriptionError(BundledGatewayError):
    """Recognition failed (the provider's message, without secrets)."""


class RecognizerStream(Protocol):
    """One session's recognition: audio in, partial and final text out."""

    def feed(self, pcm16: bytes) -> str | None:
        """Take PCM16 at the recognizer's rate; the current partial text (None: none)."""
        ...

    def end_utterance(self) -> str:
        """Finish the current utterance; its final text ("" when nothing was said)."""
        ...

    def close(self) -> None:
        """Free the stream's resources."""
        ...


class SpeechRecognizer(Protocol):
    """A transcription provider."""

    #: ``talk.catalog`` id and label.
    id: str
    label: str
    #: The rate (Hz) the streams want their PCM16 at.
    sample_rate: int
    #: Whether streams return partial text while audio arrives.
    partials: bool

    def open_stream(self, language: str | None) -> RecognizerStream:
        """A new stream (may load a model: call from a worker thread)."""
        ...
