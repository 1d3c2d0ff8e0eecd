"""kill -9 of the gateway in the middle of a run: after a restart the transcript is intact,
the cut reply is recorded as interrupted with its partial text, and the session takes new
messages."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gateway.chat.checkpoint import INTERRUPTED_ERROR
from gateway.chat.transcript_file import scan_file
from tests.helpers.bundled_gateway import BundledGateway, RawClient
from tests.helpers.fake_llm import FakeLLM

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX"),
]


async def operator(gw: BundledGateway) -> RawClient:
    """A raw operator with the gateway's token."""
    from openclaw_desktop.identity import DeviceIdentity

    client = await RawClient.open(gw.url)
    scopes = ("operator.read", "operator.write", "operator.admin")
    res = await client.connect(DeviceIdentity.generate(), scopes=scopes, auth={"token": gw.token})
    assert res["ok"] is True, res
    return client


def _gateway_with_fake_model(root: Path, llm: FakeLLM) -> BundledGateway:
    """Our gateway as a process whose providers.json points at ``llm``."""
    (root / "state").mkdir(parents=True)
    provider = {
        "api": "openai-completions",
        "baseUrl": llm.openai_base_url,
        "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 4096}],
    }
    document = {"defaultModel": "fake/fake-model", "providers": {"fake": provider}}
    (root / "state" / "providers.json").write_text(json.dumps(document), encoding="utf-8")
    return BundledGateway.start(root=root)


def _kill_9(gw: BundledGateway) -> None:
    assert gw.proc is not None
    os.killpg(gw.proc.pid, signal.SIGKILL)
    gw.proc.wait(10)


def _delta_of(run_id: str) -> Callable[[dict[str, Any]], bool]:
    """Matches a ``chat`` delta event of the run."""
    return lambda e: bool(e["payload"]["runId"] == run_id and e["payload"]["state"] == "delta")


def _text(message: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in message["content"] if b.get("type") == "text")


async def test_kill_9_mid_run_then_restart_keeps_the_transcript(tmp_path: Path) -> None:
    """Everything written before the kill is there; the torn run does not break the session."""
    with FakeLLM() as llm:
        root = tmp_path / "gw"
        gw = _gateway_with_fake_model(root, llm)
        try:
            op = await operator(gw)
            first = str(uuid.uuid4())
            await op.ok(
                "chat.send", {"sessionKey": "main", "message": "first", "idempotencyKey": first}
            )
            await op.wait_event(
                "chat",
                lambda e: e["payload"]["runId"] == first and e["payload"]["state"] == "final",
            )
            doomed = str(uuid.uuid4())
            params = {"sessionKey": "main", "message": "SLOW:200", "idempotencyKey": doomed}
            await op.ok("chat.send", params)
            await op.wait_event(
                "chat",
                lambda e: e["payload"]["runId"] == doomed and e["payload"]["state"] == "delta",
            )
            _kill_9(gw)
            await op.close()

            gw.restart()
            op = await operator(gw)
            history = await op.ok("chat.history", {"sessionKey": "main"})
            texts = [
                (m["role"], m["content"] if m["role"] == "user" else None)
                for m in history["messages"]
            ]
            assert texts[:3] == [("user", "first"), ("assistant", None), ("user", "SLOW:200")]
            rows = (await op.ok("sessions.list", {}))["sessions"]
            assert rows[0]["status"] == "interrupted", "a run cut by the crash is not 'running'"
            after = str(uuid.uuid4())
            await op.ok(
                "chat.send", {"sessionKey": "main", "message": "after", "idempotencyKey": after}
            )
            final = await op.wait_event(
                "chat",
                lambda e: (
                    e["payload"]["runId"] == after and e["payload"]["state"] in ("final", "error")
                ),
                timeout=20,
            )
            assert final["payload"]["state"] == "final"
            sent = llm.bodies("/chat/completions")[-1]["messages"]
            assert any(m.get("content") == "after" for m in sent)
            await op.close()
        finally:
            gw.stop()
            gw.cleanup()


#: The reply of ``SLOW:<ms>`` (the fake model's 20 chunks).
SLOW_REPLY = "".join(f"slow{i} " for i in range(20))
KILLS = 10


@pytest.mark.timeout(300)  # ten restarts: about 40 s alone, more on a loaded CI machine
async def test_kill_9_at_random_moments_records_the_cut_reply_as_interrupted(
    tmp_path: Path,
) -> None:
    """Ten kill -9s at random moments of a slowly streaming reply, each followed by a restart
    on the same state dir: chat.history then shows the run ended, either by its final
    message or by an assistant message with the partial text (a prefix of the reply, at
    least what the client saw a checkpoint interval before the kill), ``stopReason:
    "aborted"``, the error and the ``openclawAbort`` marker; the transcript never has a bad
    line and no checkpoint is left behind."""
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    with FakeLLM() as llm:
        root = tmp_path / "gw"
        gw = _gateway_with_fake_model(root, llm)
        interrupted_with_text = 0
        try:
            for kill in range(KILLS):
                op = await operator(gw)
                run_id = str(uuid.uuid4())
                params = {"sessionKey": "main", "message": "SLOW:60", "idempotencyKey": run_id}
                await op.ok("chat.send", params)
                await op.wait_event("chat", _delta_of(run_id))
                await asyncio.sleep(rng.uniform(0.0, 1.0))  # the reply streams for ~1.2 s
                seen = [
                    e["payload"]["message"]["content"][0]["text"]
                    for e in op.events_named("chat")
                    if e["payload"]["runId"] == run_id and e["payload"]["state"] == "delta"
                ]
                _kill_9(gw)
                await op.close()

                gw.restart()
                op = await operator(gw)
                history = await op.ok("chat.history", {"sessionKey": "main", "limit": 1000})
                await op.close()
                mine = [
                    m
                    for m in history["messages"]
                    if m["role"] == "assistant"
                    and (m.get("__openclaw") or {}).get("runId") == run_id
                ]
                note = f"kill {kill} (seed {seed})"
                assert len(mine) == 1, (note, mine)
                [reply] = mine
                text = _text(reply)
                if reply["stopReason"] == "stop":
                    assert text == SLOW_REPLY, note
                else:
                    assert reply["stopReason"] == "aborted", (note, reply)
                    assert reply["errorMessage"] == INTERRUPTED_ERROR
                    assert reply["openclawAbort"] == {
                        "aborted": True,
                        "origin": "interrupted",
                        "runId": run_id,
                    }
                    assert SLOW_REPLY.startswith(text), (note, text)
                    # Checkpoints trail the stream by at most their interval (0.25 s, about
                    # four 60 ms chunks); the last delta the client saw is older still.
                    if len(seen) > 10:
                        assert text.startswith(seen[-10]), (note, text, seen[-10])
                    interrupted_with_text += bool(text)
                for path in (gw.state_dir / "sessions").glob("*.jsonl"):
                    scanned = scan_file(path, repair=False)
                    assert (scanned.skipped, scanned.torn_bytes) == (0, 0), (note, path)
                inflight = gw.state_dir / "sessions" / "inflight"
                assert not list(inflight.glob("*")), (note, "checkpoints left behind")
            assert interrupted_with_text >= 1, f"no kill landed mid-reply (seed {seed})"
        finally:
            gw.stop()
            gw.cleanup()
