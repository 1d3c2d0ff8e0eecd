"""Talk with no voice provider, side by side: the REAL gateway (which has none configured)
and OUR gateway (``talk.json`` turning both of its offline providers off) must answer the
same bad and unconfigured talk requests alike: ``error.code``, ``error.message`` and
``error.details`` (the ``talkIssue`` and the ``talk_unconfigured`` fallback flag), and the
same ``talk.config`` / ``talk.mode`` results.

Both are driven through our client (:class:`openclaw_desktop.transport.GatewayConnection`),
once per module (the real gateway takes 10-30 s to start).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.errors import GatewayError
from openclaw_desktop.sdk import OpenClaw
from openclaw_desktop.voice import TalkSession
from openclaw_desktop.voice.speech import speak_reply
from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.chat_trace import chat_operator
from tests.helpers.real_openclaw import GatewayFactory, OpenClawInstall

pytestmark = pytest.mark.timeout(300)

TRANSCRIPTION = {"mode": "transcription", "transport": "gateway-relay", "brain": "none"}
#: (label, method, params): every row must get the same answer from both gateways.
CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("create with an unknown property", "talk.session.create", {"bogus": 1}),
    ("create realtime (the default)", "talk.session.create", {}),
    ("create transcription, no provider", "talk.session.create", TRANSCRIPTION),
    (
        "create stt-tts over the relay",
        "talk.session.create",
        {"mode": "stt-tts", "transport": "gateway-relay", "brain": "agent-consult"},
    ),
    ("create with ttlMs 999", "talk.session.create", {**TRANSCRIPTION, "ttlMs": 999}),
    ("create with ttlMs 3600001", "talk.session.create", {**TRANSCRIPTION, "ttlMs": 3_600_001}),
    ("create with a bad mode", "talk.session.create", {"mode": "chatty"}),
    (
        "appendAudio to an unknown session",
        "talk.session.appendAudio",
        {"sessionId": "nope", "audioBase64": "AAAA"},
    ),
    ("close an unknown session", "talk.session.close", {"sessionId": "nope"}),
    ("close with an unknown property", "talk.session.close", {"sessionId": "x", "extra": 1}),
    ("speak, no provider", "talk.speak", {"text": "hello"}),
    ("speak with an unknown property", "talk.speak", {"text": "hello", "bogus": 1}),
    ("speak without text", "talk.speak", {}),
    ("mode without enabled", "talk.mode", {}),
    ("config with an unknown property", "talk.config", {"bogus": True}),
    ("create with language eng", "talk.session.create", {**TRANSCRIPTION, "language": "eng"}),
    ("appendAudio without audio", "talk.session.appendAudio", {"sessionId": "nope"}),
    ("cancelOutput of an unknown session", "talk.session.cancelOutput", {"sessionId": "nope"}),
    ("config with secrets", "talk.config", {"includeSecrets": True}),
]
#: The same questions from an operator with ``operator.read`` only: which scope each needs.
READ_ONLY_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("read-only: catalog", "talk.catalog", {}),
    ("read-only: config", "talk.config", {}),
    ("read-only: config with secrets", "talk.config", {"includeSecrets": True}),
    ("read-only: mode", "talk.mode", {"enabled": False}),
    ("read-only: speak", "talk.speak", {"text": "hello"}),
    ("read-only: create", "talk.session.create", TRANSCRIPTION),
    ("read-only: close", "talk.session.close", {"sessionId": "nope"}),
]


async def _answer(conn: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The error (code, message, details) or ``{"ok": result}``."""
    try:
        result = await conn.request(method, params, timeout_s=30)
    except GatewayError as exc:
        return {"code": exc.code, "message": exc.message, "details": exc.details}
    return {"ok": result}


def _outcome(answer: dict[str, Any]) -> dict[str, Any]:
    """A read-only answer reduced to what must match: the error, or that it succeeded."""
    return answer if "code" in answer else {"ok": True}


async def _scenario(url: str, token: str) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    async with chat_operator(url, token, scopes=("operator.read",)) as reader:
        for label, method, params in READ_ONLY_CASES:
            answers[label] = _outcome(await _answer(reader, method, params))
    async with chat_operator(url, token) as conn:
        for label, method, params in CASES:
            answers[label] = await _answer(conn, method, params)
        answers["config"] = await _answer(conn, "talk.config", {})
        answers["audio extension"] = await _answer(
            conn, "talk.session.create", {**TRANSCRIPTION, "audio": {"inputEncoding": "pcm16"}}
        )
        mode = await _answer(conn, "talk.mode", {"enabled": True, "phase": "probe"})
        answers["mode keys"] = sorted(mode.get("ok", {}))
        answers["mode values"] = {k: v for k, v in mode.get("ok", {}).items() if k != "ts"}
        catalog = (await _answer(conn, "talk.catalog", {})).get("ok", {})
        answers["catalog enums"] = {k: catalog.get(k) for k in ("modes", "transports", "brains")}
        answers["catalog groups"] = sorted(catalog)
        answers["catalog ready"] = {
            group: catalog.get(group, {}).get("ready") for group in ("transcription", "realtime")
        }
    answers.update(await _through_our_client(url, token))
    return answers


async def _through_our_client(url: str, token: str) -> dict[str, Any]:
    """What the app's voice code meets: dictation's session create (no ``audio`` extension
    for the default format), and a reply spoken with the talk_unconfigured fallback."""
    out: dict[str, Any] = {}
    scopes = ("operator.read", "operator.write", "operator.talk")
    async with OpenClaw.connect(url, token=token, identity="ephemeral", scopes=scopes) as client:
        try:
            session = await TalkSession.open(client)
        except GatewayError as exc:
            out["client dictation"] = {"code": exc.code, "message": exc.message}
        else:
            await session.aclose()
            out["client dictation"] = "opened"
        speech = await speak_reply(client, "hello from both gateways")
        out["client speech"] = (speech.provider, speech.pcm.seconds > 0.5)
    return out


async def _both(install: OpenClawInstall, root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    state = root / "state"
    state.mkdir(parents=True)
    (state / "talk.json").write_text(
        json.dumps({"transcription": {"provider": "none"}, "speech": {"provider": "none"}})
    )
    factory = GatewayFactory(install)
    ours = await asyncio.to_thread(BundledGateway.start, root=root)
    try:
        real_gw = await asyncio.to_thread(factory)
        return await asyncio.gather(
            _scenario(real_gw.url, real_gw.token), _scenario(ours.url, ours.token)
        )
    finally:
        await asyncio.to_thread(factory.close)
        await asyncio.to_thread(ours.cleanup)


@pytest.fixture(scope="module")
def answers(
    openclaw_install: OpenClawInstall, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(real, ours), each the answers of one run of the scenario."""
    root = tmp_path_factory.mktemp("talk-ours")
    return asyncio.run(asyncio.wait_for(_both(openclaw_install, root), 280))


@pytest.mark.parametrize(
    "label",
    [c[0] for c in [*CASES, *READ_ONLY_CASES]]
    + ["config", "mode keys", "mode values", "catalog enums", "catalog groups", "catalog ready"]
    + ["client dictation", "client speech"],
)
def test_same_answer(answers: tuple[dict[str, Any], dict[str, Any]], label: str) -> None:
    """Both gateways answer this talk request alike."""
    real, ours = answers
    assert ours[label] == real[label], f"{label}\n  real: {real[label]}\n  ours: {ours[label]}"


def test_the_audio_extension_is_ours_only(
    answers: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """``talk.session.create``'s ``audio`` (the input encoding and rate) is this gateway's
    extension: the real gateway's closed schema refuses it, so clients send it only when
    they need G.711 or another rate (ours then gets past the schema to its provider check)."""
    real, ours = answers
    assert real["audio extension"]["code"] == "INVALID_REQUEST"
    assert real["audio extension"]["message"] == (
        "invalid talk.session.create params: at root: unexpected property 'audio'"
    )
    assert ours["audio extension"]["message"] == (
        "Error: No realtime transcription provider registered"
    )
