"""Any OpenAI-compatible ``POST {baseUrl}/audio/transcriptions`` (OpenAI, whisper.cpp's
server, faster-whisper servers): each utterance is uploaded as a WAV file (multipart form,
fields ``file``, ``model``, ``response_format=json`` and ``language`` when known).

No partial text: the server sees an utterance only once it has ended.
"""

from __future__ import annotations

import httpx

from gateway.chat.providers.sse import public_url, redact
from gateway.talk.stt.base import RecognizerStream, TranscriptionError
from gateway.talk.wav import pcm16_to_wav

__all__ = ["OpenAITranscriber"]

#: Bound on one upload (connect, write, read).
TIMEOUT = httpx.Timeout(connect=10.0, read=120.0, write=60.0, pool=10.0)
_ERROR_TEXT_MAX = 300


class _Stream:
    def __init__(self, owner: OpenAITranscriber, language: str | None) -> None:
        self._owner = owner
        self._language = language
        self._audio = bytearray()

    def feed(self, pcm16: bytes) -> str | None:
        self._audio += pcm16
        return None

    def end_utterance(self) -> str:
        audio, self._audio = bytes(self._audio), bytearray()
        if not audio:
            return ""
        return self._owner.transcribe(audio, self._language)

    def close(self) -> None:
        self._audio = bytearray()


class OpenAITranscriber:
    """Uploads utterances to an OpenAI-compatible transcription endpoint."""

    id = "openai"
    sample_rate = 16000
    partials = False

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        api_key: str | None = None,
        language: str | None = None,
        timeout: httpx.Timeout = TIMEOUT,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.language = language
        self.label = f"OpenAI-compatible transcription ({public_url(self.base_url)}, {model})"
        self._api_key = api_key
        self._timeout = timeout

    def open_stream(self, language: str | None) -> RecognizerStream:
        return _Stream(self, language or self.language)

    def transcribe(self, pcm16: bytes, language: str | None) -> str:
        """Upload one utterance (blocking); its text."""
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        data = {"model": self.model, "response_format": "json"}
        if language:
            data["language"] = language
        files = {"file": ("audio.wav", pcm16_to_wav(pcm16, self.sample_rate), "audio/wav")}
        url = f"{self.base_url}/audio/transcriptions"
        try:
            with httpx.Client(timeout=self._timeout, trust_env=False) as client:
                response = client.post(url, headers=headers, data=data, files=files)
        except httpx.HTTPError as exc:
            raise TranscriptionError(self._clean(f"{type(exc).__name__}: {exc}")) from None
        if response.status_code != 200:
            raise TranscriptionError(
                self._clean(f"HTTP {response.status_code}: {response.text[:_ERROR_TEXT_MAX]}")
            )
        try:
            text = response.json().get("text")
        except (ValueError, AttributeError):
            raise TranscriptionError("the server's answer is not a JSON object") from None
        if not isinstance(text, str):
            raise TranscriptionError("the server's answer has no text")
        return text.strip()

    def _clean(self, message: str) -> str:
        return f"{public_url(self.base_url)}: {redact(message, [self._api_key])}"
