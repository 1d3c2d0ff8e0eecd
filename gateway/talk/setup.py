"""Builds the talk service of a running gateway from ``talk.json`` and what is installed."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gateway.chat.providers.base import ProviderError
from gateway.talk.config import TalkConfigError, TalkSettings, load_talk_settings
from gateway.talk.service import TalkService
from gateway.talk.stt import SpeechRecognizer
from gateway.talk.tts import SpeechProvider
from openclaw_desktop.protocol import EventName

if TYPE_CHECKING:
    from gateway.hub import Hub

__all__ = ["build_providers", "start_talk"]

log = logging.getLogger("gateway.talk")


async def build_providers(
    settings: TalkSettings,
) -> tuple[SpeechRecognizer | None, SpeechProvider | None, list[str]]:
    """The recognizer and the speech provider of ``settings`` (None when unavailable), and
    notes saying what was chosen and why (no secrets)."""
    notes: list[str] = []
    recognizer: SpeechRecognizer | None = None
    stt = settings.transcription
    if stt.provider == "pocketsphinx":
        from gateway.talk.stt.pocketsphinx import PocketsphinxRecognizer

        recognizer = PocketsphinxRecognizer()
    elif stt.provider == "openai" and stt.base_url:
        try:
            key = await stt.api_key.get(provider="talk transcription") if stt.api_key else None
        except ProviderError as exc:
            notes.append(f"transcription: {exc}")
        else:
            from gateway.talk.stt.openai import OpenAITranscriber

            recognizer = OpenAITranscriber(
                stt.base_url, model=stt.model or "whisper-1", api_key=key, language=stt.language
            )
    if recognizer is not None:
        notes.append(f"transcription: {recognizer.label}")
    else:
        notes.append(f"transcription: none ({stt.note or 'not available'})")
    speech: SpeechProvider | None = None
    tts = settings.speech
    if tts.provider == "espeak-ng" and tts.espeak_path:
        from gateway.talk.tts.espeak import EspeakSpeech

        speech = EspeakSpeech(tts.espeak_path, voice=tts.voice)
    elif tts.provider == "openai" and tts.base_url:
        try:
            key = await tts.api_key.get(provider="talk speech") if tts.api_key else None
        except ProviderError as exc:
            notes.append(f"speech: {exc}")
        else:
            from gateway.talk.tts.openai import OpenAISpeech

            speech = OpenAISpeech(
                tts.base_url, model=tts.model or "tts-1", voice=tts.voice or "alloy", api_key=key
            )
    if speech is not None:
        notes.append(f"speech: {speech.label}")
    else:
        notes.append(f"speech: none ({tts.note or 'not available'})")
    return recognizer, speech, notes


async def start_talk(state_dir: Path, hub: Hub) -> TalkService:
    """The talk service of the gateway whose state is ``state_dir``, speaking through
    ``hub`` (offline defaults when ``talk.json`` is absent; nothing
    at all, with the reason logged, when it is invalid)."""
    from gateway.talk.config import SpeechSettings, TranscriptionSettings

    try:
        settings = load_talk_settings(state_dir, dict(os.environ))
    except TalkConfigError as exc:
        log.error("talk providers not loaded: %s", exc)
        settings = TalkSettings(
            TranscriptionSettings(None, note="talk.json is invalid"),
            SpeechSettings(None, note="talk.json is invalid"),
        )
    recognizer, speech, notes = await build_providers(settings)
    for note in notes:
        log.info("talk %s", note)

    def send_to(conn_id: str, event: EventName, payload: dict[str, Any]) -> None:
        # Through the hub, which sends talk.event only to a reader (as the real gateway).
        hub.send_to(conn_id, event, payload)

    def broadcast(event: EventName, payload: dict[str, Any]) -> None:
        hub.broadcast(event, payload)

    return TalkService(settings, recognizer, speech, send_to, broadcast)
