"""The params of the talk methods as the reference's closed schemas declare them.

Properties the reference accepts but this gateway does not act on are listed as
``ignored`` (allowed and dropped), so real clients are not refused for sending them.
"""

from __future__ import annotations

from gateway.chat.params import Field

__all__ = [
    "APPEND_AUDIO",
    "BRAINS",
    "CANCEL_OUTPUT",
    "CLOSE",
    "CONFIG",
    "CREATE",
    "CREATE_IGNORED",
    "MAX_SESSIONS_PER_CONNECTION",
    "MODE",
    "MODES",
    "SPEAK",
    "SPEAK_IGNORED",
    "TRANSPORTS",
]

#: Open talk sessions one connection may hold.
MAX_SESSIONS_PER_CONNECTION = 4
MODES = ("realtime", "stt-tts", "transcription")
TRANSPORTS = ("webrtc", "provider-websocket", "gateway-relay", "managed-room")
BRAINS = ("agent-consult", "direct-tools", "none")
_ID = Field("string", required=True, min_length=1)

CREATE = {
    "sessionKey": Field("string", min_length=1),
    "provider": Field("string", min_length=1),
    "model": Field("string", min_length=1),
    "language": Field("string", pattern=r"^[a-z]{2}$"),
    "vadThreshold": Field("number", minimum=0, maximum=1),
    "silenceDurationMs": Field("integer", minimum=1),
    "prefixPaddingMs": Field("integer", minimum=0),
    "mode": Field("string", enum=MODES, literal_union=True),
    "transport": Field("string", enum=TRANSPORTS, literal_union=True),
    "brain": Field("string", enum=BRAINS, literal_union=True),
    "ttlMs": Field("integer", minimum=1000, maximum=3_600_000),
    #: This gateway's extension: ``{inputEncoding, inputSampleRateHz?}`` (see the methods).
    "audio": Field("object"),
}
CREATE_IGNORED = (
    "voiceChangeId",
    "capabilities",
    "spawnedBy",
    "voice",
    "reasoningEffort",
)
APPEND_AUDIO = {
    "sessionId": _ID,
    "audioBase64": Field("string", required=True),
    "timestamp": Field("number", minimum=0),
}
CANCEL_OUTPUT = {
    "sessionId": _ID,
    "turnId": Field("string"),
    "reason": Field("string"),
}
CLOSE = {"sessionId": _ID}
MODE = {"enabled": Field("boolean", required=True), "phase": Field("string")}
CONFIG = {"includeSecrets": Field("boolean")}
SPEAK = {
    "text": Field("string", required=True, min_length=1),
    "voiceId": Field("string", min_length=1),
    "modelId": Field("string", min_length=1),
    "outputFormat": Field("string", min_length=1),
    "speed": Field("number", minimum=0.25, maximum=4),
    "rateWpm": Field("integer", minimum=1),
    "language": Field("string", min_length=2),
}
SPEAK_IGNORED = (
    "stability",
    "similarity",
    "style",
    "speakerBoost",
    "seed",
    "normalize",
    "latencyTier",
)
