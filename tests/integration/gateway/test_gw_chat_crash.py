"""kill -9 of the gateway in the middle of a run: after a restart the transcript is intact
and the session takes new messages."""

from __future__ import annotations

import json
import os
import signal
import uuid
from pathlib import Path

import pytest

from tests.helpers.bundled_gateway import BundledGateway, RawClient
from tests.helpers.fake_llm import FakeLLM

pytestmark = [
    pytest.mark.integration,
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


async def test_kill_9_mid_run_then_restart_keeps_the_transcript(tmp_path: Path) -> None:
    """Everything written before the kill is there; the torn run does not break the session."""
    with FakeLLM() as llm:
        root = tmp_path / "gw"
        (root / "state").mkdir(parents=True)
        provider = {
            "api": "openai-completions",
            "baseUrl": llm.openai_base_url,
            "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 4096}],
        }
        document = {"defaultModel": "fake/fake-model", "providers": {"fake": provider}}
        (root / "state" / "providers.json").write_text(json.dumps(document), encoding="utf-8")
        gw = BundledGateway.start(root=root)
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
            assert gw.proc is not None
            os.killpg(gw.proc.pid, signal.SIGKILL)
            gw.proc.wait(10)
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
