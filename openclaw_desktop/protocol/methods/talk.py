"""``talk.*`` params, in the reference's property order (its error order follows it).

Properties the bundled gateway takes without acting on them are :data:`UNCHECKED`. Where
this gateway bounds a property the reference leaves open (``talk.speak`` ``speed``,
``talk.session.create`` ``vadThreshold``), the bound is this gateway's, kept as it was.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from openclaw_desktop.protocol.base import ClosedModel, WireModel
from openclaw_desktop.protocol.methods.schema import AS_ENUM, UNCHECKED

__all__ = [
    "LANGUAGE_PATTERN",
    "PARAMS",
    "TalkAudioParams",
    "TalkBrain",
    "TalkCatalogParams",
    "TalkConfigParams",
    "TalkMode",
    "TalkModeParams",
    "TalkSessionAppendAudioParams",
    "TalkSessionCancelOutputParams",
    "TalkSessionCloseParams",
    "TalkSessionCreateParams",
    "TalkSpeakParams",
    "TalkTransport",
]

NonEmpty = Annotated[str, Field(min_length=1)]
Taken = Annotated[Any, UNCHECKED]
#: The session kinds, transports and brains of ``talk.session.create`` (the reference's).
TalkMode = Literal["realtime", "stt-tts", "transcription"]
TalkTransport = Literal["webrtc", "provider-websocket", "gateway-relay", "managed-room"]
TalkBrain = Literal["agent-consult", "direct-tools", "none"]
#: ``talk.session.create`` ``language``: a two-letter code (the reference's pattern).
LANGUAGE_PATTERN = "^[a-z]{2}$"


class TalkCatalogParams(ClosedModel):
    """``talk.catalog``: this gateway's catalog takes no params (the reference's
    ``provider``/``model`` filters are refused, as before)."""


class TalkConfigParams(ClosedModel):
    """``talk.config``: ``includeSecrets`` also needs ``operator.talk.secrets``."""

    include_secrets: bool | None = None


class TalkModeParams(ClosedModel):
    """``talk.mode``: stored and broadcast as the ``talk.mode`` event."""

    enabled: bool
    phase: str | None = None


class TalkSpeakParams(ClosedModel):
    """``talk.speak``: one text to speech. The handler adds the rules a schema does not
    say: the text must not be blank, at most ``MAX_SPEAK_CHARS`` long, and
    ``outputFormat`` one the provider knows."""

    text: NonEmpty
    voice_id: NonEmpty | None = None
    model_id: NonEmpty | None = None
    output_format: NonEmpty | None = None
    speed: Annotated[float | None, Field(ge=0.25, le=4)] = None
    rate_wpm: Annotated[int | None, Field(ge=1)] = None
    stability: Taken = None
    similarity: Taken = None
    style: Taken = None
    speaker_boost: Taken = None
    seed: Taken = None
    normalize: Taken = None
    language: Annotated[str | None, Field(min_length=2)] = None
    latency_tier: Taken = None


class TalkAudioParams(ClosedModel):
    """``talk.session.create`` ``audio`` (this gateway's extension): the input audio
    (``pcm16`` at 8, 16, 24 or 48 kHz, default 24 kHz; ``g711_ulaw`` at 8 kHz). Its schema
    says the properties and their types; which rates go with an encoding the gateway checks
    in its own words (``at /audio/inputSampleRateHz: ...``)."""

    input_encoding: Annotated[Literal["pcm16", "g711_ulaw"] | None, AS_ENUM] = None
    input_sample_rate_hz: int | None = None


class TalkSessionCreateParams(ClosedModel):
    """``talk.session.create``. The handler checks what this schema cannot say: which
    mode, transport and brain go together, and which input sample rates the ``audio``
    extension's encoding takes (:class:`TalkAudioParams`)."""

    session_key: NonEmpty | None = None
    voice_change_id: Taken = None
    capabilities: Taken = None
    spawned_by: Taken = None
    provider: NonEmpty | None = None
    model: NonEmpty | None = None
    voice: Taken = None
    language: Annotated[str | None, Field(pattern=LANGUAGE_PATTERN)] = None
    vad_threshold: Annotated[float | None, Field(ge=0, le=1)] = None
    silence_duration_ms: Annotated[int | None, Field(ge=1)] = None
    prefix_padding_ms: Annotated[int | None, Field(ge=0)] = None
    reasoning_effort: Taken = None
    mode: TalkMode | None = None
    transport: TalkTransport | None = None
    brain: TalkBrain | None = None
    ttl_ms: Annotated[int | None, Field(ge=1000, le=3_600_000)] = None
    audio: TalkAudioParams | None = None


class TalkSessionAppendAudioParams(ClosedModel):
    """``talk.session.appendAudio``: base64 audio (the handler checks it decodes, and
    that pcm16 comes in whole samples)."""

    session_id: NonEmpty
    audio_base64: str
    timestamp: Annotated[float | None, Field(ge=0)] = None


class TalkSessionCancelOutputParams(ClosedModel):
    """``talk.session.cancelOutput``: stop what a session is speaking."""

    session_id: NonEmpty
    turn_id: str | None = None
    reason: str | None = None


class TalkSessionCloseParams(ClosedModel):
    """``talk.session.close``: the last transcript, then ``session.closed``."""

    session_id: NonEmpty


#: The params model of each of these methods, by method name.
PARAMS: dict[str, type[WireModel]] = {
    "talk.catalog": TalkCatalogParams,
    "talk.config": TalkConfigParams,
    "talk.mode": TalkModeParams,
    "talk.speak": TalkSpeakParams,
    "talk.session.create": TalkSessionCreateParams,
    "talk.session.appendAudio": TalkSessionAppendAudioParams,
    "talk.session.cancelOutput": TalkSessionCancelOutputParams,
    "talk.session.close": TalkSessionCloseParams,
}
