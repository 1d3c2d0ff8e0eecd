"""``talk.*`` methods: catalog, config, mode, speak and transcription sessions.

Sessions (``talk.session.*``) belong to the connection that created them: another
connection's session id is as unknown as a made-up one. This gateway runs transcription
sessions (``mode: "transcription"``, ``transport: "gateway-relay"``, ``brain: "none"``);
realtime and managed-room sessions get the reference's "not configured" answers.

Extension: ``talk.session.create`` takes ``audio: {inputEncoding, inputSampleRateHz?}``
(``pcm16`` at 8, 16, 24 or 48 kHz, default 24 kHz; ``g711_ulaw`` at 8 kHz), echoed back as
the result's ``audio`` contract.
"""

from __future__ import annotations

import base64
import binascii
from typing import TYPE_CHECKING, Any, Protocol

from gateway.errors import MethodError, invalid_params, invalid_request
from gateway.methods.table import MethodTable
from gateway.peer import Peer
from gateway.scopes import READ, TALK, missing_scope_error, scope_satisfied
from gateway.talk.errors import audio_limit, talk_issue, talk_unconfigured
from gateway.talk.params import MAX_SESSIONS_PER_CONNECTION
from gateway.talk.session import SessionSpec
from gateway.talk.stt.base import TranscriptionError
from gateway.talk.tts.base import SpeakRequest, parse_output_format
from gateway.talk.vad import threshold_dbfs
from openclaw_desktop.protocol import ErrorCode, Method, error_shape
from openclaw_desktop.protocol.audio import AUDIO_FORMATS, AudioEncoding, AudioFormat
from openclaw_desktop.protocol.methods.talk import (
    TalkCatalogParams,
    TalkConfigParams,
    TalkModeParams,
    TalkSessionAppendAudioParams,
    TalkSessionCancelOutputParams,
    TalkSessionCloseParams,
    TalkSessionCreateParams,
    TalkSpeakParams,
)

if TYPE_CHECKING:
    from gateway.talk.service import TalkService

__all__ = ["MAX_SPEAK_CHARS", "TalkServices", "table"]

table = MethodTable()
"""The methods this module declares."""

#: Longest ``talk.speak`` text (OpenAI's limit for one speech request).
MAX_SPEAK_CHARS = 4096
_PCM16_RATES = frozenset({8000, 16000, 24000, 48000})


class TalkServices(Protocol):
    """What the ``talk.*`` methods use of the gateway: the talk service (started on
    first use)."""

    async def talk_service(self) -> TalkService: ...


@table.method(Method.TALK_CATALOG, scope=READ, params=TalkCatalogParams)
async def talk_catalog(gw: TalkServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``talk.catalog {}``."""
    return (await gw.talk_service()).catalog()


@table.method(Method.TALK_CONFIG, scope=READ, params=TalkConfigParams)
async def talk_config(gw: TalkServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``talk.config {includeSecrets?}``: ``{config: {}}`` without a speech provider."""
    secrets = bool(p.get("includeSecrets"))
    if secrets and not scope_satisfied("operator.talk.secrets", peer.scopes):
        needed = ["operator.read", "operator.talk.secrets"]  # as the reference lists them
        raise MethodError(missing_scope_error("operator.talk.secrets", needed))
    service = await gw.talk_service()
    speech = service.speech
    if speech is None:
        return {"config": {}}
    tts = service.settings.speech
    provider_config: dict[str, Any] = {}
    if tts.voice:
        provider_config["voiceId"] = tts.voice
    if tts.model:
        provider_config["modelId"] = tts.model
    resolved: dict[str, Any] = {"provider": speech.id, "config": dict(provider_config)}
    if secrets and tts.api_key is not None and tts.api_key.known:
        resolved["config"]["apiKey"] = tts.api_key.known
    return {
        "config": {
            "talk": {
                "provider": speech.id,
                "providers": {speech.id: provider_config},
                "resolved": resolved,
                "silenceTimeoutMs": service.settings.silence_duration_ms,
            },
            "session": {"mainKey": "main"},
        }
    }


@table.method(Method.TALK_MODE, scope=TALK, params=TalkModeParams)
async def talk_mode(gw: TalkServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``talk.mode {enabled, phase?}``: stored and broadcast as the ``talk.mode`` event."""
    return (await gw.talk_service()).set_mode(p["enabled"], p.get("phase"))


@table.method(Method.TALK_SPEAK, scope=TALK, params=TalkSpeakParams)
async def talk_speak(gw: TalkServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``talk.speak {text, ...}``: ``{audioBase64, provider, outputFormat, ...}``."""
    service = await gw.talk_service()
    if service.speech is None:
        raise talk_unconfigured("talk.speak")
    if not p["text"].strip():
        raise invalid_params("talk.speak", "text is empty")
    if len(p["text"]) > MAX_SPEAK_CHARS:
        raise invalid_params("talk.speak", f"text is longer than {MAX_SPEAK_CHARS} characters")
    try:
        output = parse_output_format(p.get("outputFormat"))
    except ValueError as exc:
        raise invalid_params("talk.speak", str(exc)) from None
    request = SpeakRequest(
        text=p["text"],
        voice=p.get("voiceId"),
        model=p.get("modelId"),
        output=output,
        speed=p.get("speed"),
        rate_wpm=p.get("rateWpm"),
        language=p.get("language"),
    )
    return await service.speak(request)


def _input_format(audio: dict[str, Any] | None) -> AudioFormat:
    """The ``audio`` extension of ``talk.session.create`` (checked against
    :class:`~openclaw_desktop.protocol.methods.talk.TalkAudioParams`) as a wire format, or
    ``INVALID_REQUEST`` when its encoding does not take its sample rate."""
    if audio is None:
        return AUDIO_FORMATS[AudioEncoding.PCM16]
    encoding = AudioEncoding(audio.get("inputEncoding", "pcm16"))
    declared = AUDIO_FORMATS[encoding]
    rate = int(audio.get("inputSampleRateHz", declared.sample_rate_hz))  # 16000.0 is 16000
    allowed = _PCM16_RATES if encoding is AudioEncoding.PCM16 else {declared.sample_rate_hz}
    if rate not in allowed:
        raise invalid_params(
            "talk.session.create",
            f"at /audio/inputSampleRateHz: {encoding.value} is accepted at "
            f"{', '.join(str(r) for r in sorted(allowed))} Hz",
        )
    return AudioFormat(encoding, rate)


@table.method(Method.TALK_SESSION_CREATE, scope=TALK, params=TalkSessionCreateParams)
async def talk_session_create(gw: TalkServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``talk.session.create``: transcription sessions over the gateway relay."""
    language = p.get("language")
    service = await gw.talk_service()
    mode = p.get("mode", "realtime")
    if mode == "stt-tts":
        if p.get("transport") != "managed-room":
            raise invalid_request('stt-tts talk.session.create requires transport="managed-room"')
        raise talk_issue("Managed-room Talk sessions are not available on this gateway")
    if mode == "realtime":
        raise talk_issue(
            f'Realtime voice provider "{p.get("provider", "openai")}" is not configured'
        )
    transport, brain = p.get("transport", "gateway-relay"), p.get("brain", "none")
    if transport != "gateway-relay":
        raise invalid_request(
            'transcription talk.session.create requires transport="gateway-relay"'
        )
    if brain != "none":
        raise invalid_request('transcription talk.session.create requires brain="none"')
    recognizer = service.recognizer
    if recognizer is None:
        raise talk_issue("No realtime transcription provider registered")
    if p.get("provider") not in (None, recognizer.id):
        raise talk_issue(f'Realtime transcription provider "{p["provider"]}" is not configured')
    input_format = _input_format(p.get("audio"))
    if service.count_for(peer.conn_id) >= MAX_SESSIONS_PER_CONNECTION:
        raise MethodError(
            error_shape(
                ErrorCode.UNAVAILABLE,
                f"at most {MAX_SESSIONS_PER_CONNECTION} talk sessions per connection; "
                "close one first",
                {"reason": "too_many_sessions"},
            )
        )
    spec = SessionSpec(
        mode=mode,
        transport=transport,
        brain=brain,
        input_format=input_format,
        language=language or service.settings.transcription.language,
        silence_ms=p.get("silenceDurationMs") or service.settings.silence_duration_ms,
        vad_level_dbfs=threshold_dbfs(p.get("vadThreshold")),
        max_audio_bytes=service.settings.max_session_audio_bytes,
        session_key=p.get("sessionKey"),
        prefix_padding_ms=p.get("prefixPaddingMs", 300),
    )
    try:
        return await service.create(peer.conn_id, spec, p.get("ttlMs"))
    except TranscriptionError as exc:
        raise talk_issue(str(exc)) from None


@table.method(Method.TALK_SESSION_APPEND_AUDIO, scope=TALK, params=TalkSessionAppendAudioParams)
async def talk_session_append_audio(gw: TalkServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``talk.session.appendAudio {sessionId, audioBase64, timestamp?}``.

    Nothing here awaits before the audio is queued: request tasks start in the order their
    frames arrived, so pipelined appends (a client keeps several in flight) stay in order.
    """
    session = (await gw.talk_service()).owned(peer.conn_id, p["sessionId"])
    try:
        audio = base64.b64decode(p["audioBase64"], validate=True)
    except (binascii.Error, ValueError):
        raise invalid_params("talk.session.appendAudio", "audioBase64 is not base64") from None
    encoding = session.spec.input_format.encoding
    if encoding is AudioEncoding.PCM16 and len(audio) % 2:
        raise invalid_params(
            "talk.session.appendAudio", "pcm16 audio must be whole 16-bit samples (even length)"
        )
    if session.would_exceed(len(audio)):
        raise audio_limit(session.received_bytes, session.spec.max_audio_bytes, len(audio))
    session.append(audio)
    return {"ok": True, "receivedBytes": session.received_bytes}


@table.method(Method.TALK_SESSION_CANCEL_OUTPUT, scope=TALK, params=TalkSessionCancelOutputParams)
async def talk_session_cancel_output(gw: TalkServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``talk.session.cancelOutput``: transcription sessions speak nothing: ``idle``."""
    (await gw.talk_service()).owned(peer.conn_id, p["sessionId"])
    result: dict[str, Any] = {"ok": True, "status": "idle"}
    if p.get("turnId"):
        result["turnId"] = p["turnId"]
    return result


@table.method(Method.TALK_SESSION_CLOSE, scope=TALK, params=TalkSessionCloseParams)
async def talk_session_close(gw: TalkServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``talk.session.close {sessionId}``: the last transcript, then ``session.closed``."""
    service = await gw.talk_service()
    service.owned(peer.conn_id, p["sessionId"])
    await service.close(p["sessionId"], "client")
    return {"ok": True}
