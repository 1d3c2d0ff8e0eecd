"""A run that fails on the model (the fake model answers HTTP 500), side by side on the real
OpenClaw gateway and on ours, each with a fake model of its own: the same ``chat`` error
(the failure in the same words, the same class in ``errorDetail.failoverReason``), the same
record of it in ``chat.history`` (an assistant message of key ``<runId>:terminal-error``, the
failure in words as its text, ``stopReason: "error"``), and the next turn's model request
has the failed message but not the failure."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.chat_trace import ChatRecorder, chat_operator, message_keys, write_fake_providers
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.real_openclaw import GatewayFactory, OpenClawInstall

pytestmark = pytest.mark.timeout(330)

#: The real gateway runs with its provider retries off (``provider_retries=0``): otherwise it
#: tries a 500 eight times in up to 90 s of backoff before the same terminal error.
RUN_TIMEOUT_S = 200.0


@dataclass
class Failure:
    """What one gateway did: the failed run's error event, the history after the next
    message was answered, and the model requests of that next turn."""

    run_id: str = ""
    error: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    next_request: list[dict[str, Any]] = field(default_factory=list)


async def _scenario(url: str, token: str, llm: FakeLLM) -> Failure:
    out = Failure(run_id=str(uuid.uuid4()))
    recorder = ChatRecorder()
    async with chat_operator(url, token) as conn:
        conn.on_event(recorder)
        params = {"sessionKey": "main", "message": "FAIL:500 x", "idempotencyKey": out.run_id}
        await conn.request("chat.send", params, timeout_s=30)
        events = await recorder.wait_terminal(out.run_id, RUN_TIMEOUT_S)
        ends = [e for e in events if e.event == "chat" and e.state in ("final", "error")]
        assert ends, events
        out.error = ends[-1].payload
        asked = len(llm.requests)
        key = str(uuid.uuid4())
        params = {"sessionKey": "main", "message": "next one", "idempotencyKey": key}
        await conn.request("chat.send", params, timeout_s=30)
        await recorder.wait_terminal(key, RUN_TIMEOUT_S)
        history = await conn.request("chat.history", {"sessionKey": "main"}, timeout_s=30)
        out.history = history["messages"]
        bodies = [r.body for r in llm.requests[asked:] if r.path.endswith("/chat/completions")]
        out.next_request = bodies[-1]["messages"] if bodies else []
    return out


async def _both(install: OpenClawInstall, root: Path) -> tuple[Failure, Failure]:
    factory = GatewayFactory(install)
    with FakeLLM() as real_llm, FakeLLM() as our_llm:
        try:

            async def real_side() -> Failure:
                gw = await asyncio.to_thread(
                    factory, fake_llm_port=real_llm.port, provider_retries=0
                )
                return await _scenario(gw.url, gw.token, real_llm)

            async def our_side() -> Failure:
                write_fake_providers(root / "state", our_llm.port)
                gw = await asyncio.to_thread(BundledGateway.start, root=root)
                try:
                    return await _scenario(gw.url, gw.token, our_llm)
                finally:
                    await asyncio.to_thread(gw.cleanup)

            real, ours = await asyncio.gather(real_side(), our_side())
        finally:
            await asyncio.to_thread(factory.close)
    return real, ours


@pytest.fixture(scope="module")
def failures(
    openclaw_install: OpenClawInstall, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Failure, Failure]:
    """(real, ours): the scenario once on each gateway, concurrently."""
    root = tmp_path_factory.mktemp("model-error-ours")

    async def bounded() -> tuple[Failure, Failure]:
        async with asyncio.timeout(310):
            return await _both(openclaw_install, root)

    return asyncio.run(bounded())


def _record(failure: Failure) -> dict[str, Any]:
    key = f"{failure.run_id}:terminal-error"
    found = [m for m in failure.history if m.get("idempotencyKey") == key]
    assert len(found) == 1, failure.history
    record: dict[str, Any] = found[0]
    return record


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    blocks = content if isinstance(content, list) else []
    return "".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))


def test_the_error_event_says_the_same(failures: tuple[Failure, Failure]) -> None:
    """The same state, words and class; no raw provider codes."""
    real, ours = failures
    assert (ours.error["state"], real.error["state"]) == ("error", "error")
    assert ours.error["errorMessage"] == real.error["errorMessage"], (ours.error, real.error)
    assert "server_error" not in ours.error["errorMessage"]
    for name in ("provider", "model", "failoverReason"):
        assert ours.error["errorDetail"][name] == real.error["errorDetail"][name], name


def test_the_history_keeps_the_failure_the_same_way(failures: tuple[Failure, Failure]) -> None:
    """The same rows, and the failed run's record has the same fields and text."""
    real, ours = failures
    assert [m["role"] for m in ours.history] == [m["role"] for m in real.history]
    mine, theirs = _record(ours), _record(real)
    assert message_keys(mine) == message_keys(theirs)
    assert _text(mine) == _text(theirs)
    assert mine["stopReason"] == theirs["stopReason"] == "error"
    assert mine["__openclaw"]["idempotencyKey"] == f"{ours.run_id}:terminal-error"
    assert theirs["__openclaw"]["idempotencyKey"] == f"{real.run_id}:terminal-error"


def test_the_next_turn_does_not_show_the_model_the_failure(
    failures: tuple[Failure, Failure],
) -> None:
    """Both send the failed message again as context, neither the failure."""
    for side in failures:
        failure_text = _text(_record(side))
        texts = [(m["role"], _text(m)) for m in side.next_request]
        assert any(role == "user" and "FAIL:500 x" in t for role, t in texts), texts
        assert not any(failure_text in t for _role, t in texts), texts
        assert not any(role == "assistant" for role, _t in texts), texts
