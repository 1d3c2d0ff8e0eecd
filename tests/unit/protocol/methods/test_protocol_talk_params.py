"""The ``talk.*`` family's params models (:mod:`openclaw_desktop.protocol.methods.talk`):
each derived schema against the real gateway's (its TypeBox ``Talk*ParamsSchema`` of the
openclaw 2026.9.6 package's ``dist/channels-*.mjs``, below as data, key for key), where
this gateway deliberately differs listed with why; bad params get the reference's exact
text through a real dispatch (``gateway.rpc.answer_request``, the method table, a real
app); and the client's params, built through the models, pass the gateway's check."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from gateway.app import GatewayApp
from gateway.methods import TABLE
from gateway.methods.closed import derived_schema, schema_problems
from openclaw_desktop.protocol.methods import PARAMS, unchecked_fields
from openclaw_desktop.protocol.methods.talk import PARAMS as TALK_PARAMS
from openclaw_desktop.protocol.methods.talk import (
    TalkSessionCreateParams,
    TalkSpeakParams,
)
from openclaw_desktop.voice.talk_session import AudioContract
from tests.helpers.method_dispatch import answer

_STR = {"type": "string"}
_NON_EMPTY = {"type": "string", "minLength": 1}
_ID = {"type": "string", "minLength": 1}


def _closed(required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "additionalProperties": False}
    if required:
        schema["required"] = required
    schema["properties"] = properties
    return schema


def _consts(*values: str) -> dict[str, Any]:
    return {"anyOf": [{"type": "string", "const": v} for v in values]}


#: The reference's schemas, ``description`` keys dropped.
REAL: dict[str, dict[str, Any]] = {
    "talk.catalog": _closed([], {"provider": _NON_EMPTY, "model": _NON_EMPTY}),
    "talk.config": _closed([], {"includeSecrets": {"type": "boolean"}}),
    "talk.mode": _closed(["enabled"], {"enabled": {"type": "boolean"}, "phase": _STR}),
    "talk.speak": _closed(
        ["text"],
        {
            "text": _NON_EMPTY,
            "voiceId": _STR,
            "modelId": _STR,
            "outputFormat": _STR,
            "speed": {"type": "number"},
            "rateWpm": {"type": "integer", "minimum": 1},
            "stability": {"type": "number"},
            "similarity": {"type": "number"},
            "style": {"type": "number"},
            "speakerBoost": {"type": "boolean"},
            "seed": {"type": "integer", "minimum": 0},
            "normalize": _STR,
            "language": _STR,
            "latencyTier": {"type": "integer", "minimum": 0},
        },
    ),
    "talk.session.create": _closed(
        [],
        {
            "sessionKey": _STR,
            "voiceChangeId": _NON_EMPTY,
            "capabilities": {
                "type": "array",
                "items": {"type": "string", "const": "voice-selection"},
                "uniqueItems": True,
            },
            "spawnedBy": _NON_EMPTY,
            "provider": _STR,
            "model": _STR,
            "voice": _STR,
            "language": {"type": "string", "pattern": "^[a-z]{2}$"},
            "vadThreshold": {"type": "number"},
            "silenceDurationMs": {"type": "integer", "minimum": 1},
            "prefixPaddingMs": {"type": "integer", "minimum": 0},
            "reasoningEffort": _STR,
            "mode": _consts("realtime", "stt-tts", "transcription"),
            "transport": _consts("webrtc", "provider-websocket", "gateway-relay", "managed-room"),
            "brain": _consts("agent-consult", "direct-tools", "none"),
            "ttlMs": {"type": "integer", "minimum": 1000, "maximum": 3600000},
        },
    ),
    "talk.session.appendAudio": _closed(
        ["sessionId", "audioBase64"],
        {"sessionId": _ID, "audioBase64": _NON_EMPTY, "timestamp": {"type": "number"}},
    ),
    "talk.session.cancelOutput": _closed(
        ["sessionId"], {"sessionId": _ID, "turnId": _STR, "reason": _STR}
    ),
    "talk.session.close": _closed(["sessionId"], {"sessionId": _ID}),
}

#: (method, property): why ours is not the reference's (kept as the gateway had it).
DEVIATIONS: dict[tuple[str, str], str] = {
    ("talk.speak", "voiceId"): "may not be empty here",
    ("talk.speak", "modelId"): "may not be empty here",
    ("talk.speak", "outputFormat"): "may not be empty here",
    ("talk.speak", "speed"): "bounded 0.25..4 here (the providers' range)",
    ("talk.speak", "language"): "at least two characters here",
    ("talk.session.create", "sessionKey"): "may not be empty here",
    ("talk.session.create", "provider"): "may not be empty here",
    ("talk.session.create", "model"): "may not be empty here",
    ("talk.session.create", "vadThreshold"): "bounded 0..1 here",
    ("talk.session.appendAudio", "audioBase64"): "may be empty here",
    ("talk.session.appendAudio", "timestamp"): "at least 0 here",
}
#: Properties ours has that the reference does not, or the reverse, with why.
EXTRA: dict[str, set[str]] = {"talk.session.create": {"audio"}}  # this gateway's extension
MISSING: dict[str, set[str]] = {"talk.catalog": {"provider", "model"}}  # refused, as before


def test_the_family_registers_and_declares_its_models() -> None:
    assert set(TALK_PARAMS) == set(REAL)
    for name, model in TALK_PARAMS.items():
        assert PARAMS[name] is model
        assert TABLE[name].params is model, name


@pytest.mark.parametrize("method", sorted(REAL))
def test_each_schema_is_the_reference_schema(method: str) -> None:
    """Same closed object and required list, the reference's property order, each checked
    property key for key (except the deviations listed, checked to still be ones)."""
    ours, real = derived_schema(PARAMS[method]), REAL[method]
    assert ours["additionalProperties"] is False
    assert ours.get("required") == real.get("required")
    names = [n for n in ours["properties"] if n not in EXTRA.get(method, set())]
    assert names == [n for n in real["properties"] if n not in MISSING.get(method, set())]
    skip = unchecked_fields(PARAMS[method])
    for name in names:
        if name in skip:
            continue
        if (method, name) in DEVIATIONS:
            assert ours["properties"][name] != real["properties"][name], (method, name)
        else:
            assert ours["properties"][name] == real["properties"][name], (method, name)


_CREATE = {"mode": "transcription", "transport": "gateway-relay", "brain": "none"}
#: (method, params, the reference's text after ``invalid <method> params: ``).
REFUSED: list[tuple[str, Any, str]] = [
    ("talk.catalog", {"provider": "openai"}, "at root: unexpected property 'provider'"),
    ("talk.config", {"bogus": True}, "at root: unexpected property 'bogus'"),
    ("talk.config", {"includeSecrets": "yes"}, "at /includeSecrets: must be boolean"),
    ("talk.mode", {}, "must have required property 'enabled'"),
    ("talk.speak", {}, "must have required property 'text'"),
    ("talk.speak", {"text": "hi", "bogus": 1}, "at root: unexpected property 'bogus'"),
    ("talk.speak", {"text": "hi", "rateWpm": 0}, "at /rateWpm: must be >= 1"),
    ("talk.session.create", {**_CREATE, "ttlMs": 999}, "at /ttlMs: must be >= 1000"),
    (
        "talk.session.create",
        {**_CREATE, "language": "eng"},
        'at /language: must match pattern "^[a-z]{2}$"',
    ),
    (
        "talk.session.create",
        {"mode": "chatty"},
        "at /mode: must be equal to constant; at /mode: must match a schema in anyOf",
    ),
    ("talk.session.appendAudio", {"sessionId": "x"}, "must have required property 'audioBase64'"),
    ("talk.session.cancelOutput", {}, "must have required property 'sessionId'"),
    (
        "talk.session.close",
        {"sessionId": "x", "extra": True},
        "at root: unexpected property 'extra'",
    ),
    ("talk.session.close", "x", "must be object"),
]


@pytest.mark.parametrize(
    ("method", "params", "text"), REFUSED, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(REFUSED)]
)
async def test_bad_params_get_the_reference_text(
    app: GatewayApp, method: str, params: Any, text: str
) -> None:
    frame = await answer(app, method, params)
    assert frame["ok"] is False
    assert frame["error"]["code"] == "INVALID_REQUEST"
    assert frame["error"]["message"] == f"invalid {method} params: {text}"


async def test_properties_taken_unchecked_are_served(app: GatewayApp) -> None:
    """A real client's tuning knobs are admitted (and dropped), not refused."""
    frame = await answer(app, "talk.mode", {"enabled": False, "phase": "probe"})
    assert frame["ok"] is True
    frame = await answer(app, "talk.speak", {"text": "hi", "stability": "any", "seed": -1})
    # Spoken or not (that depends on the speech provider), the params are not refused.
    assert not frame.get("error", {}).get("message", "").startswith("invalid talk.speak")


def test_the_client_builds_its_params_through_the_models() -> None:
    """What the voice client sends passes the gateway's check; a wrong value fails on
    the client, before anything is sent."""
    create = TalkSessionCreateParams(
        mode="transcription",
        transport="gateway-relay",
        brain="none",
        audio=AudioContract("g711_ulaw", 8000).to_params(),
        language="en",
    ).to_wire()
    assert create["audio"] == {"inputEncoding": "g711_ulaw", "inputSampleRateHz": 8000}
    assert schema_problems(derived_schema(TalkSessionCreateParams), create) is None
    with pytest.raises(ValidationError):
        TalkSessionCreateParams(language="eng")
    with pytest.raises(ValidationError):
        TalkSpeakParams(text="")
    with pytest.raises(ValidationError):
        AudioContract("opus", 48000).to_params()


@pytest.mark.parametrize(
    ("audio", "text"),
    [
        (5, "at /audio: must be object"),
        ({"x": 1}, "at /audio: unexpected property 'x'"),
        (
            {"inputEncoding": "mp3"},
            "at /audio/inputEncoding: must be equal to one of the allowed values",
        ),
        ({"inputSampleRateHz": "16000"}, "at /audio/inputSampleRateHz: must be integer"),
        (
            {"inputSampleRateHz": 44100},
            "at /audio/inputSampleRateHz: pcm16 is accepted at 8000, 16000, 24000, 48000 Hz",
        ),
    ],
)
async def test_the_audio_extension_is_checked_through_its_model(
    app: GatewayApp, audio: Any, text: str
) -> None:
    """``audio`` is a :class:`TalkAudioParams` in the schema (its properties and types);
    which rates an encoding takes, the handler says."""
    params = {"mode": "transcription", "transport": "gateway-relay", "brain": "none"}
    frame = await answer(app, "talk.session.create", {**params, "audio": audio})
    assert frame["ok"] is False
    assert frame["error"]["message"] == f"invalid talk.session.create params: {text}"
