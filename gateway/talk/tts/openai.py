"""Any OpenAI-compatible ``POST {baseUrl}/audio/speech`` (``{model, input, voice,
response_format, speed}``; the answer is the clip's bytes)."""

from __future__ import annotations

import httpx

from gateway.chat.providers.sse import public_url, redact
from gateway.talk.tts.base import (
    OutputFormat,
    SpeakRequest,
    SpeechError,
    SpeechResult,
    encode_pcm16,
)

__all__ = ["OPENAI_VOICES", "OpenAISpeech"]

OPENAI_VOICES = ["alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage"]
#: OpenAI's ``pcm`` format: 24 kHz PCM16 mono.
_PCM_RATE = 24000
_MAX_AUDIO = 64 * 1024 * 1024
TIMEOUT = httpx.Timeout(connect=10.0, read=120.0, write=30.0, pool=10.0)
_CONTAINERS = {
    "mp3": ("mp3", "audio/mpeg", ".mp3", False),
    "opus": ("opus", "audio/ogg", ".ogg", True),
    "wav": ("wav", "audio/wav", ".wav", False),
}


class OpenAISpeech:
    """Speaks through an OpenAI-compatible speech endpoint."""

    id = "openai"

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        voice: str,
        api_key: str | None = None,
        timeout: httpx.Timeout = TIMEOUT,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model, self.voice = model, voice
        self.label = f"OpenAI-compatible speech ({public_url(self.base_url)}, {model})"
        self.voices = sorted({voice, *OPENAI_VOICES})
        self.models = [model]
        self._api_key = api_key
        self._timeout = timeout

    async def speak(self, request: SpeakRequest) -> SpeechResult:
        wanted = request.output or OutputFormat("mp3")
        raw = wanted.kind in ("pcm", "ulaw") or (wanted.kind == "wav" and wanted.rate)
        response_format = "pcm" if raw else wanted.kind
        body: dict[str, object] = {
            "model": request.model or self.model,
            "input": request.text,
            "voice": request.voice or self.voice,
            "response_format": response_format,
        }
        if request.speed is not None:
            body["speed"] = min(4.0, max(0.25, request.speed))
        audio = await self._post(body)
        if raw:
            if len(audio) % 2:
                audio = audio[:-1]
            return encode_pcm16(audio, _PCM_RATE, wanted, self.id)
        kind, mime, extension, voice_ok = _CONTAINERS[response_format]
        return SpeechResult(audio, self.id, kind, mime, extension, voice_compatible=voice_ok)

    async def _post(self, body: dict[str, object]) -> bytes:
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        url = f"{self.base_url}/audio/speech"
        try:
            async with (
                httpx.AsyncClient(timeout=self._timeout, trust_env=False) as client,
                client.stream("POST", url, json=body, headers=headers) as response,
            ):
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > _MAX_AUDIO:
                        raise SpeechError("the speech server sent more audio than allowed")
                    chunks.append(chunk)
        except httpx.HTTPError as exc:
            raise SpeechError(self._clean(f"{type(exc).__name__}: {exc}")) from None
        data = b"".join(chunks)
        if response.status_code != 200:
            text = data[:300].decode("utf-8", "replace")
            raise SpeechError(self._clean(f"HTTP {response.status_code}: {text}"))
        if not data:
            raise SpeechError(self._clean("empty answer"))
        return data

    def _clean(self, message: str) -> str:
        return f"{public_url(self.base_url)}: {redact(message, [self._api_key])}"
