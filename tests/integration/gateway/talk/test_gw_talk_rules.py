"""The rules of talk sessions on the bundled gateway, over real loopback WebSockets: closed
param schemas, the reference's error shapes, ownership by connection, TTL, the audio bound,
and the catalog, config, mode and scope answers."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gateway.server import GatewayServer
from tests.helpers.bundled_gateway import RawClient, bundled_gateway, raw_operator, wait_for

pytestmark = pytest.mark.timeout(60)

TRANSCRIPTION = {"mode": "transcription", "transport": "gateway-relay", "brain": "none"}
UNKNOWN_SESSION = {
    "code": "UNAVAILABLE",
    "message": "Error: Unknown Talk session",
    "details": {
        "talkIssue": {
            "code": "realtime_unavailable",
            "message": "Error: Unknown Talk session",
            "phase": "request",
        }
    },
}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def shape(error: dict[str, Any]) -> dict[str, Any]:
    return {k: error[k] for k in ("code", "message", "details") if k in error}


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        (
            "talk.session.create",
            {"bogus": 1},
            "invalid talk.session.create params: at root: unexpected property 'bogus'",
        ),
        (
            "talk.session.create",
            {**TRANSCRIPTION, "ttlMs": 999},
            "invalid talk.session.create params: at /ttlMs: must be >= 1000",
        ),
        (
            "talk.session.create",
            {**TRANSCRIPTION, "ttlMs": 3_600_001},
            "invalid talk.session.create params: at /ttlMs: must be <= 3600000",
        ),
        (
            "talk.session.create",
            {**TRANSCRIPTION, "language": "eng"},
            'invalid talk.session.create params: at /language: must match pattern "^[a-z]{2}$"',
        ),
        (
            "talk.session.create",
            {"mode": "chatty"},
            "invalid talk.session.create params: at /mode: must be equal to constant; at /mode: "
            "must match a schema in anyOf",
        ),
        (
            "talk.session.create",
            {"mode": "stt-tts", "transport": "gateway-relay", "brain": "agent-consult"},
            'stt-tts talk.session.create requires transport="managed-room"',
        ),
        (
            "talk.session.create",
            {**TRANSCRIPTION, "audio": {"inputEncoding": "g711_ulaw", "inputSampleRateHz": 16000}},
            "invalid talk.session.create params: at /audio/inputSampleRateHz: g711_ulaw is "
            "accepted at 8000 Hz",
        ),
        (
            "talk.session.appendAudio",
            {"sessionId": "x"},
            "invalid talk.session.appendAudio params: must have required property 'audioBase64'",
        ),
        (
            "talk.session.close",
            {"sessionId": "x", "extra": True},
            "invalid talk.session.close params: at root: unexpected property 'extra'",
        ),
        (
            "talk.mode",
            {},
            "invalid talk.mode params: must have required property 'enabled'",
        ),
        (
            "talk.speak",
            {"text": "hi", "bogus": 1},
            "invalid talk.speak params: at root: unexpected property 'bogus'",
        ),
    ],
)
async def test_bad_params_are_invalid_request(
    gw: GatewayServer, method: str, params: dict[str, Any], message: str
) -> None:
    """Closed schemas and bounds answer INVALID_REQUEST with the reference's wording."""
    async with raw_operator(gw.url) as op:
        error = await op.error(method, params)
    assert (error["code"], error["message"]) == ("INVALID_REQUEST", message)
    assert gw.app.talk is None or not gw.app.talk.sessions  # started on first valid use


async def test_realtime_sessions_are_not_configured(gw: GatewayServer) -> None:
    """``{}`` asks for realtime voice, which this gateway does not have: the talkIssue."""
    async with raw_operator(gw.url) as op:
        error = await op.error("talk.session.create", {})
    assert shape(error) == {
        "code": "UNAVAILABLE",
        "message": 'Error: Realtime voice provider "openai" is not configured',
        "details": {
            "talkIssue": {
                "code": "realtime_unavailable",
                "message": 'Error: Realtime voice provider "openai" is not configured',
                "phase": "request",
            }
        },
    }


async def test_unknown_and_foreign_sessions_look_the_same(gw: GatewayServer) -> None:
    """A made-up id and another connection's id both answer "Unknown Talk session"."""
    async with raw_operator(gw.url) as owner, raw_operator(gw.url) as other:
        session_id = (await owner.ok("talk.session.create", TRANSCRIPTION))["sessionId"]
        calls = [
            ("talk.session.appendAudio", {"sessionId": "nope", "audioBase64": b64(b"\0\0")}),
            ("talk.session.close", {"sessionId": "nope"}),
            ("talk.session.cancelOutput", {"sessionId": "nope"}),
            ("talk.session.appendAudio", {"sessionId": session_id, "audioBase64": b64(b"\0\0")}),
            ("talk.session.close", {"sessionId": session_id}),
        ]
        for method, params in calls:
            assert shape(await other.error(method, params)) == UNKNOWN_SESSION, method
        # The owner's session is untouched by all that.
        assert await owner.ok("talk.session.cancelOutput", {"sessionId": session_id}) == {
            "ok": True,
            "status": "idle",
        }
        assert await owner.ok("talk.session.close", {"sessionId": session_id}) == {"ok": True}
        assert shape(await owner.error("talk.session.close", {"sessionId": session_id})) == (
            UNKNOWN_SESSION
        )
    assert not other.events_named("talk.event")


async def test_sessions_close_when_their_connection_goes(gw: GatewayServer) -> None:
    """No session outlives the connection that created it."""
    talk = await gw.app.talk_service()
    async with raw_operator(gw.url) as op:
        await op.ok("talk.session.create", TRANSCRIPTION)
        await op.ok("talk.session.create", TRANSCRIPTION)
        assert len(talk.sessions) == 2
    await wait_for(lambda: not talk.sessions, timeout=10)


async def test_a_session_expires_after_its_ttl(gw: GatewayServer) -> None:
    """ttlMs 1000: session.closed with reason "expired" after a second; then it is unknown."""
    async with raw_operator(gw.url) as op:
        created = await op.ok("talk.session.create", {**TRANSCRIPTION, "ttlMs": 1000})
        closed = await op.wait_event(
            "talk.event", lambda e: e["payload"]["type"] == "session.closed", timeout=5
        )
        assert closed["payload"]["payload"]["reason"] == "expired"
        assert closed["payload"]["sessionId"] == created["sessionId"]
        error = await op.error("talk.session.close", {"sessionId": created["sessionId"]})
        assert shape(error) == UNKNOWN_SESSION


async def test_audio_beyond_the_bound_is_refused_and_the_session_stays(tmp_path: Path) -> None:
    """With maxSessionAudioBytes 65536: the chunk that would pass it is refused with the
    numbers; the session still takes a close."""
    state = tmp_path / "state"
    state.mkdir()
    (state / "talk.json").write_text(json.dumps({"maxSessionAudioBytes": 65536}))
    async with bundled_gateway(state) as gw, raw_operator(gw.url) as op:
        session_id = (await op.ok("talk.session.create", TRANSCRIPTION))["sessionId"]
        chunk = b"\0\0" * 16000
        first = await op.ok(
            "talk.session.appendAudio", {"sessionId": session_id, "audioBase64": b64(chunk)}
        )
        assert first == {"ok": True, "receivedBytes": 32000}
        await op.ok(
            "talk.session.appendAudio", {"sessionId": session_id, "audioBase64": b64(chunk)}
        )
        error = await op.error(
            "talk.session.appendAudio", {"sessionId": session_id, "audioBase64": b64(chunk)}
        )
        assert error["code"] == "INVALID_REQUEST"
        assert error["details"] == {
            "reason": "audio_limit",
            "limitBytes": 65536,
            "receivedBytes": 64000,
            "chunkBytes": 32000,
        }
        assert "64000 of at most 65536" in error["message"]
        assert await op.ok("talk.session.close", {"sessionId": session_id}) == {"ok": True}


async def test_bad_audio_is_refused(gw: GatewayServer) -> None:
    """Not base64, or half a PCM16 sample: INVALID_REQUEST, nothing counted."""
    async with raw_operator(gw.url) as op:
        session_id = (await op.ok("talk.session.create", TRANSCRIPTION))["sessionId"]
        bad = await op.error(
            "talk.session.appendAudio", {"sessionId": session_id, "audioBase64": "@@"}
        )
        assert (
            bad["message"] == "invalid talk.session.appendAudio params: audioBase64 is not base64"
        )
        odd = await op.error(
            "talk.session.appendAudio", {"sessionId": session_id, "audioBase64": b64(b"\0\0\0")}
        )
        assert "even length" in odd["message"]
        assert gw.app.talk is not None
        assert gw.app.talk.sessions[session_id].received_bytes == 0


async def test_too_many_sessions_on_one_connection(gw: GatewayServer) -> None:
    """Each session holds a recognizer: four per connection, the fifth is refused."""
    async with raw_operator(gw.url) as op:
        for _ in range(4):
            await op.ok("talk.session.create", TRANSCRIPTION)
        error = await op.error("talk.session.create", TRANSCRIPTION)
    assert error["code"] == "UNAVAILABLE"
    assert error["details"] == {"reason": "too_many_sessions"}


async def test_no_recognizer_is_the_reference_answer(tmp_path: Path) -> None:
    """Transcription turned off: "No realtime transcription provider registered"."""
    state = tmp_path / "state"
    state.mkdir()
    (state / "talk.json").write_text(json.dumps({"transcription": {"provider": "none"}}))
    async with bundled_gateway(state) as gw, raw_operator(gw.url) as op:
        error = await op.error("talk.session.create", TRANSCRIPTION)
        catalog = await op.ok("talk.catalog", {})
    assert error["message"] == "Error: No realtime transcription provider registered"
    assert error["details"]["talkIssue"]["code"] == "realtime_unavailable"
    assert catalog["transcription"]["ready"] is False


async def test_catalog_lists_what_works_and_says_how_well(gw: GatewayServer) -> None:
    """Transcription over the relay with pocketsphinx, honest about its accuracy."""
    async with raw_operator(gw.url) as op:
        catalog = await op.ok("talk.catalog", {})
    assert catalog["modes"] == ["realtime", "stt-tts", "transcription"]
    assert catalog["transports"] == [
        "webrtc",
        "provider-websocket",
        "gateway-relay",
        "managed-room",
    ]
    assert catalog["brains"] == ["agent-consult", "direct-tools", "none"]
    group = catalog["transcription"]
    assert group["ready"] is True and group["activeProvider"] == "pocketsphinx"
    active = next(p for p in group["providers"] if p["id"] == "pocketsphinx")
    assert active["configured"] is True
    assert "limited accuracy" in active["label"]
    assert {"encoding": "g711_ulaw", "sampleRateHz": 8000, "channels": 1} in active[
        "inputAudioFormats"
    ]
    assert catalog["realtime"] == {"ready": False, "providers": []}


async def test_talk_mode_is_broadcast(gw: GatewayServer) -> None:
    """talk.mode answers {enabled, phase, ts} and every operator gets the event."""
    async with raw_operator(gw.url) as op, raw_operator(gw.url) as watcher:
        result = await op.ok("talk.mode", {"enabled": True, "phase": "listening"})
        event = await watcher.wait_event("talk.mode")
    assert result["enabled"] is True and result["phase"] == "listening"
    assert event["payload"] == result


async def test_scopes(gw: GatewayServer) -> None:
    """Read may look (catalog, config); talking needs operator.talk (write satisfies it);
    secrets need operator.talk.secrets."""
    async with raw_operator(gw.url, scopes=["operator.read"]) as reader:
        assert (await reader.ok("talk.catalog", {}))["transcription"]["ready"] is True
        await reader.ok("talk.config", {})
        for method, params in (
            ("talk.session.create", TRANSCRIPTION),
            ("talk.speak", {"text": "hi"}),
            ("talk.mode", {"enabled": False}),
        ):
            error = await reader.error(method, params)
            assert error["details"]["missingScope"] == "operator.talk", method
        error = await reader.error("talk.config", {"includeSecrets": True})
        assert error["details"]["missingScope"] == "operator.talk.secrets"
    async with raw_operator(gw.url, scopes=["operator.talk"]) as talker:
        session_id = (await talker.ok("talk.session.create", TRANSCRIPTION))["sessionId"]
        await talker.ok("talk.session.close", {"sessionId": session_id})


async def test_gateway_stops_promptly_with_sessions_busy(tmp_path: Path) -> None:
    """Sessions with audio still being recognized do not hold the shutdown up."""
    async with bundled_gateway(tmp_path / "state") as gw:
        op = await RawClient.open(gw.url)
        try:
            assert (await op.connect(None, scopes=["operator.write"]))["ok"]
            for _ in range(2):
                session_id = (await op.ok("talk.session.create", TRANSCRIPTION))["sessionId"]
                noise = np.random.default_rng(0).normal(0, 3000, 24000 * 5).astype("<i2")
                await op.ok(
                    "talk.session.appendAudio",
                    {"sessionId": session_id, "audioBase64": b64(noise.tobytes())},
                )
            started = time.monotonic()
            await gw.close()
            assert time.monotonic() - started < 2.5
            assert gw.app.talk is not None and not gw.app.talk.sessions
        finally:
            await op.close()


async def test_talk_starts_on_first_use(gw: GatewayServer) -> None:
    """The gateway serves handshakes before reading talk.json: talk starts with its first
    call, once, however many callers race for it."""
    assert gw.app.talk is None
    async with raw_operator(gw.url) as op:
        catalogs = await asyncio.gather(*(op.ok("talk.catalog", {}) for _ in range(3)))
    assert gw.app.talk is not None
    assert all(c == catalogs[0] for c in catalogs)
    assert await gw.app.talk_service() is gw.app.talk


async def test_talk_events_reach_readers_only(gw: GatewayServer) -> None:
    """As the real gateway: a session's ``talk.event`` needs operator.read, ``talk.mode``
    operator.talk, whoever the session's owner is."""
    async with (
        raw_operator(gw.url, scopes=["operator.talk"]) as talker,
        raw_operator(gw.url, scopes=["operator.talk", "operator.read"]) as both,
        raw_operator(gw.url, scopes=["operator.read"]) as reader,
    ):
        for op in (talker, both):
            session_id = (await op.ok("talk.session.create", TRANSCRIPTION))["sessionId"]
            await op.ok("talk.session.close", {"sessionId": session_id})
        await both.wait_event("talk.event", lambda e: e["payload"]["type"] == "session.closed")
        await talker.ok("talk.mode", {"enabled": True, "phase": "listening"})
        await both.wait_event("talk.mode")
        for op in (talker, reader):
            await op.ok("health", {})  # what was sent before this answer has arrived
        received = {
            name: [len(op.events_named(event)) for op in (talker, reader)]
            for name, event in (("events", "talk.event"), ("modes", "talk.mode"))
        }
        assert received == {"events": [0, 0], "modes": [1, 0]}
