"""Results of the talk methods (``talk.*``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from openclaw_desktop.protocol.base import OpenModel

__all__ = [
    "RESULTS",
    "TalkAppendAudioResult",
    "TalkCancelOutputResult",
    "TalkCatalogResult",
    "TalkCloseResult",
    "TalkConfigResult",
    "TalkModeResult",
    "TalkProviderGroup",
    "TalkSessionCreateResult",
    "TalkSpeakResult",
]


class TalkProviderGroup(OpenModel):
    """One kind of provider in ``talk.catalog`` (speech, transcription, realtime)."""

    providers: list[dict[str, Any]]
    ready: bool | None = None
    active_provider: str | None = None


class TalkCatalogResult(OpenModel):
    """``talk.catalog``: the modes, transports, brains and providers on offer."""

    modes: list[str]
    transports: list[str]
    brains: list[str]
    speech: TalkProviderGroup
    transcription: TalkProviderGroup
    realtime: TalkProviderGroup


class TalkConfigResult(OpenModel):
    """``talk.config``: ``{config}`` (``config.talk`` once a provider is set)."""

    config: dict[str, Any]


class TalkModeResult(OpenModel):
    """``talk.mode``: ``{enabled, phase, ts}``."""

    enabled: bool
    ts: int
    phase: str | None = None


class TalkSpeakResult(OpenModel):
    """``talk.speak``: the whole clip, base64."""

    audio_base64: str
    provider: str
    output_format: str | None = None
    voice_compatible: bool | None = None
    mime_type: str | None = None
    file_extension: str | None = None


class TalkSessionCreateResult(OpenModel):
    """``talk.session.create``: the session and the audio it takes."""

    session_id: str
    mode: str
    transport: str
    brain: str
    provider: str | None = None
    transcription_session_id: str | None = None
    audio: dict[str, Any] | None = None
    expires_at: int | None = None
    model: str | None = None


class TalkAppendAudioResult(OpenModel):
    """``talk.session.appendAudio``: ``{ok, receivedBytes}``."""

    ok: bool
    received_bytes: int | None = None


class TalkCancelOutputResult(OpenModel):
    """``talk.session.cancelOutput``: ``{ok, status, turnId?}``."""

    ok: bool
    status: str | None = None
    turn_id: str | None = None


class TalkCloseResult(OpenModel):
    """``talk.session.close``: ``{ok}``."""

    ok: bool


RESULTS: dict[str, type[BaseModel]] = {
    "talk.catalog": TalkCatalogResult,
    "talk.config": TalkConfigResult,
    "talk.mode": TalkModeResult,
    "talk.speak": TalkSpeakResult,
    "talk.session.create": TalkSessionCreateResult,
    "talk.session.appendAudio": TalkAppendAudioResult,
    "talk.session.cancelOutput": TalkCancelOutputResult,
    "talk.session.close": TalkCloseResult,
}
"""Method name -> result model, for the talk family's methods."""
