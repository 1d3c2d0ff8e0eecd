"""The fake model server as a process (as the real OpenClaw gateway's tests will run it)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.chat.providers import (
    CompletionRequest,
    ModelRef,
    OpenAIProvider,
    TextDelta,
    Timeouts,
    ToolCall,
    ToolSpec,
)
from tests.helpers.ports import free_port

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX")

REPO = Path(__file__).resolve().parents[4]


@pytest.fixture
def fake_process(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """``python -m tests.helpers.fake_llm`` on a free port; (port, JSONL log)."""
    port, log = free_port(), tmp_path / "requests.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.fake_llm", "--port", str(port), "--log", str(log)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 15)
        assert ready, "the fake did not start within 15 s"
        assert proc.stdout.readline().strip() == f"FAKE-LLM READY {port}"
        yield port, log
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            assert proc.wait(timeout=10) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=5)
            if proc.stdout is not None:
                proc.stdout.close()


async def test_process_serves_a_tool_round_like_the_real_gateway(
    fake_process: tuple[int, Path],
) -> None:
    """Twelve tools, a tool call, then the result followed by a synthetic user message: the
    fake still answers the tool result; every request is in the JSONL log."""
    port, log = fake_process
    provider = OpenAIProvider(
        "p", base_url=f"http://127.0.0.1:{port}/v1", timeouts=Timeouts(read=5)
    )
    tools = [ToolSpec(f"tool{i}", "t", {"type": "object"}) for i in range(11)] + [
        ToolSpec("exec", "run", {"type": "object"})
    ]
    model = ModelRef("p", "fake-model", "openai-completions")
    prompt = {"role": "user", "content": 'CALLTOOL:exec:{"command": "date"}'}
    try:
        first = [e async for e in provider.stream(CompletionRequest(model, "s", [prompt], tools))]
        call = next(e for e in first if isinstance(e, ToolCall))
        assert call.arguments == {"command": "date"}
        history: list[dict[str, Any]] = [
            prompt,
            {
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "id": call.id, "name": "exec", "arguments": call.arguments}
                ],
            },
            {
                "role": "toolResult",
                "toolCallId": call.id,
                "content": [{"type": "text", "text": "Tue"}],
            },
            {"role": "user", "content": "(synthetic) continue"},
        ]
        second = [e async for e in provider.stream(CompletionRequest(model, "s", history, tools))]
    finally:
        await provider.aclose()
    assert (
        "".join(e.text for e in second if isinstance(e, TextDelta)) == "FAKE-LLM tool result: Tue"
    )
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [r["path"] for r in records] == ["/v1/chat/completions"] * 2
    assert len(records[0]["body"]["tools"]) == 12
