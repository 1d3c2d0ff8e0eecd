"""Where the bundled gateway's speech providers come from: ``<state dir>/talk.json``.

Without the file (or without a section), the offline defaults apply: pocketsphinx for
transcription when its wheel is installed, espeak-ng for speech when it is on ``PATH``::

    {
      "transcription": {
        "provider": "openai",                  // "pocketsphinx" (default) | "openai" | "none"
        "baseUrl": "http://127.0.0.1:8080/v1", // any OpenAI-compatible server (whisper.cpp...)
        "apiKey": "sk-..." | "keyring:<name>", // or "apiKeyEnv": "NAME"; none for local servers
        "model": "whisper-1",
        "language": "en"
      },
      "speech": {
        "provider": "espeak-ng",               // "espeak-ng" (default) | "openai" | "none"
        "voice": "en-us",                      // espeak-ng voice, or the OpenAI voice
        "model": "tts-1",                      // openai only
        "baseUrl": "...", "apiKey": "..."      // openai only
      },
      "silenceDurationMs": 700,                // end of an utterance (default for sessions)
      "maxSessionAudioBytes": 33554432         // audio one talk session may receive
    }

Keys are read as the chat providers read theirs (literal, ``keyring:<name>``, or an
environment variable); nothing here logs them.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gateway.chat.providers.config import KEYRING_SERVICE
from gateway.chat.providers.sse import ApiKey
from gateway.errors import BundledGatewayError

__all__ = [
    "DEFAULT_MAX_SESSION_AUDIO_BYTES",
    "DEFAULT_SILENCE_MS",
    "TALK_FILE",
    "SpeechSettings",
    "TalkConfigError",
    "TalkSettings",
    "TranscriptionSettings",
    "load_talk_settings",
]

TALK_FILE = "talk.json"
#: About eleven minutes of pcm16 at 24 kHz.
DEFAULT_MAX_SESSION_AUDIO_BYTES = 32 * 1024 * 1024
#: Silence that ends an utterance (the reference apps' silence window).
DEFAULT_SILENCE_MS = 700
_MAX_FILE_BYTES = 256 * 1024


class TalkConfigError(BundledGatewayError, ValueError):
    """``talk.json`` is unreadable or invalid (the message says where and why)."""


class _Endpoint(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    base_url: str | None = Field(default=None, alias="baseUrl")
    api_key: str | None = Field(default=None, alias="apiKey")
    api_key_env: str | None = Field(default=None, alias="apiKeyEnv")
    model: str | None = Field(default=None, min_length=1)


class _Transcription(_Endpoint):
    provider: Literal["pocketsphinx", "openai", "none"] = "pocketsphinx"
    language: str | None = Field(default=None, pattern=r"^[a-z]{2}$")


class _Speech(_Endpoint):
    provider: Literal["espeak-ng", "openai", "none"] = "espeak-ng"
    voice: str | None = Field(default=None, min_length=1, max_length=64)


class _TalkFile(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    transcription: _Transcription = Field(default_factory=_Transcription)
    speech: _Speech = Field(default_factory=_Speech)
    silence_duration_ms: int = Field(
        default=DEFAULT_SILENCE_MS, ge=100, le=10_000, alias="silenceDurationMs"
    )
    max_session_audio_bytes: int = Field(
        default=DEFAULT_MAX_SESSION_AUDIO_BYTES,
        ge=64 * 1024,
        le=512 * 1024 * 1024,
        alias="maxSessionAudioBytes",
    )


@dataclass(frozen=True)
class TranscriptionSettings:
    """The transcription provider chosen (``provider`` None: none available) and why."""

    provider: str | None
    base_url: str | None = None
    api_key: ApiKey | None = None
    model: str | None = None
    language: str | None = None
    note: str = ""


@dataclass(frozen=True)
class SpeechSettings:
    """The speech provider chosen (``provider`` None: none available) and why."""

    provider: str | None
    base_url: str | None = None
    api_key: ApiKey | None = None
    model: str | None = None
    voice: str | None = None
    espeak_path: str | None = None
    note: str = ""


@dataclass(frozen=True)
class TalkSettings:
    """Everything the talk service needs from the configuration."""

    transcription: TranscriptionSettings
    speech: SpeechSettings
    silence_duration_ms: int = DEFAULT_SILENCE_MS
    max_session_audio_bytes: int = DEFAULT_MAX_SESSION_AUDIO_BYTES


def _key(entry: _Endpoint, env: Mapping[str, str]) -> ApiKey:
    raw = entry.api_key
    if raw is not None and raw.startswith("keyring:"):
        name = raw.removeprefix("keyring:").strip()
        if not name:
            raise TalkConfigError(f"{TALK_FILE}: 'keyring:' needs a key name")

        def load() -> str | None:
            import keyring

            value: str | None = keyring.get_password(KEYRING_SERVICE, name)
            return value

        return ApiKey(loader=load, label=f"keyring:{name}")
    if raw:
        return ApiKey(raw)
    if entry.api_key_env:
        return ApiKey(env.get(entry.api_key_env) or None, label=f"${entry.api_key_env}")
    return ApiKey(None)


def _read(path: Path) -> _TalkFile:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return _TalkFile()
    except OSError as exc:
        raise TalkConfigError(f"{path}: cannot read: {exc.strerror}") from None
    if len(data) > _MAX_FILE_BYTES:
        raise TalkConfigError(f"{path}: larger than {_MAX_FILE_BYTES} bytes")
    try:
        return _TalkFile.model_validate(json.loads(data))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise TalkConfigError(f"{path}: {problems}") from None
    except ValueError as exc:
        raise TalkConfigError(f"{path}: not valid JSON: {exc}") from None


def _transcription(entry: _Transcription, env: Mapping[str, str]) -> TranscriptionSettings:
    if entry.provider == "none":
        return TranscriptionSettings(None, note="transcription turned off in talk.json")
    if entry.provider == "openai":
        if not entry.base_url:
            raise TalkConfigError(f"{TALK_FILE}: transcription.baseUrl is required for openai")
        return TranscriptionSettings(
            "openai",
            base_url=entry.base_url.rstrip("/"),
            api_key=_key(entry, env),
            model=entry.model or "whisper-1",
            language=entry.language,
        )
    if find_spec("pocketsphinx") is None:
        return TranscriptionSettings(None, note="pocketsphinx is not installed")
    return TranscriptionSettings("pocketsphinx", language=entry.language or "en")


def _speech(entry: _Speech, env: Mapping[str, str]) -> SpeechSettings:
    if entry.provider == "none":
        return SpeechSettings(None, note="speech turned off in talk.json")
    if entry.provider == "openai":
        if not entry.base_url:
            raise TalkConfigError(f"{TALK_FILE}: speech.baseUrl is required for openai")
        return SpeechSettings(
            "openai",
            base_url=entry.base_url.rstrip("/"),
            api_key=_key(entry, env),
            model=entry.model or "tts-1",
            voice=entry.voice or "alloy",
        )
    path = shutil.which("espeak-ng", path=env.get("PATH"))
    if path is None:
        return SpeechSettings(None, note="espeak-ng is not installed")
    return SpeechSettings("espeak-ng", voice=entry.voice, espeak_path=path)


def load_talk_settings(state_dir: Path, env: Mapping[str, str]) -> TalkSettings:
    """Read ``talk.json`` (if any) and resolve the providers (small file, read synchronously).

    Raises:
        TalkConfigError: the file is unreadable or invalid.
    """
    parsed = _read(state_dir / TALK_FILE)
    return TalkSettings(
        transcription=_transcription(parsed.transcription, env),
        speech=_speech(parsed.speech, env),
        silence_duration_ms=parsed.silence_duration_ms,
        max_session_audio_bytes=parsed.max_session_audio_bytes,
    )
