"""The SDK examples (``examples/sdk_*.py``) run as a user would run them: as processes, against
our gateway in a subprocess with the fake model, configured only by
``OPENCLAW_GATEWAY_URL`` / ``OPENCLAW_GATEWAY_TOKEN``.

The nodes example runs twice: with no node (it says so) and with our headless node connected
and its surface approved (it prints the node's ``device.info``).
"""

from __future__ import annotations

import json
import platform
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.bundled_gateway import REPO, BundledGateway, DesktopNode, clean_env
from tests.helpers.chat_trace import write_fake_providers
from tests.helpers.fake_llm import FakeLLM

pytestmark = pytest.mark.timeout(180)

EXAMPLES = REPO / "examples"
EXAMPLE_TIMEOUT_S = 90.0
#: What the fake answers to ``SLOW:<ms>``: 20 chunks.
SLOW_REPLY = "".join(f"slow{i} " for i in range(20))
NODE_COMMANDS = ("device.info", "device.status")


@dataclass(frozen=True)
class Setup:
    """Our gateway with the fake model, and a home for the examples' identity."""

    gateway: BundledGateway
    home: Path


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    root = tmp_path_factory.mktemp("sdk-examples")
    with FakeLLM(chunk_delay_s=0.03) as llm:
        write_fake_providers(root / "gw" / "state", llm.port)
        # device.* must be on the gateway's allowlist for the node to offer them.
        gateway = BundledGateway.start(root=root / "gw", args=["--allow", ",".join(NODE_COMMANDS)])
        try:
            yield Setup(gateway, root / "home")
        finally:
            gateway.cleanup()


def run_example(setup: Setup, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``examples/<name>`` with the gateway's URL and token in its environment."""
    env = clean_env(
        {
            "OPENCLAW_GATEWAY_URL": setup.gateway.url,
            "OPENCLAW_GATEWAY_TOKEN": setup.gateway.token,
            # The installation identity and its stored device token stay in the test's home,
            # in a file (never the desktop keyring).
            "OPENCLAW_DESKTOP_HOME": str(setup.home),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        }
    )
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=EXAMPLE_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


def test_chat_example(setup: Setup) -> None:
    result = run_example(setup, "sdk_chat.py", "hello", "from", "the", "example")
    assert result.returncode == 0, result
    lines = result.stdout.splitlines()
    assert re.fullmatch(r"FAKE-LLM reply #\d+: .*hello from the example.*", lines[0]), lines
    assert "status: completed" in lines
    assert "messages: 2" in lines  # this run's user message and reply
    (tokens,) = [line for line in lines if line.startswith("tokens: ")]
    match = re.fullmatch(r"tokens: (\d+) in, (\d+) out", tokens)
    assert match and int(match[1]) > 0 and int(match[2]) > 0, tokens


def test_stream_and_cancel_example(setup: Setup) -> None:
    result = run_example(
        setup, "sdk_stream_and_cancel.py", "--after", "12", "SLOW:200", "take", "your", "time"
    )
    assert result.returncode == 0, result
    out = result.stdout
    streamed, _, rest = out.partition("\n[cancel requested after ")
    assert rest, out
    assert len(streamed) >= 12
    assert SLOW_REPLY.startswith(streamed), streamed
    assert len(streamed) < len(SLOW_REPLY) // 2  # stopped early, not at the end
    assert rest.split(" ", 1)[0] == str(len(streamed))
    assert "status: cancelled" in out.splitlines()
    assert "ended before" not in out


def test_stream_and_cancel_example_when_the_reply_is_short(setup: Setup) -> None:
    result = run_example(setup, "sdk_stream_and_cancel.py", "--after", "5000", "short one")
    assert result.returncode == 0, result
    assert "[the run ended before 5000 characters]" in result.stdout
    assert "status: completed" in result.stdout.splitlines()


def test_nodes_example_without_a_node(setup: Setup) -> None:
    result = run_example(setup, "sdk_nodes.py")
    assert result.returncode == 0, result
    assert result.stdout.splitlines()[-1] == "No connected node offers device.info."


def _wait_for(probe: Any, what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.3)


def test_nodes_example_with_our_node(setup: Setup, tmp_path: Path) -> None:
    gw = setup.gateway
    node = DesktopNode.start(tmp_path / "node", url=gw.url, token=gw.token, display_name="ex-node")
    try:
        node.wait_for_log(r"connected to .* as node", 60)
        node_id = node.device_id

        def pending() -> dict[str, Any] | None:
            rows = gw.cli_json("nodes", "pending")["pending"]
            return next((r for r in rows if r["nodeId"] == node_id), None)

        request = _wait_for(pending, "the node's surface request")
        gw.cli("nodes", "approve", request["requestId"])

        def active() -> bool:
            nodes = gw.cli_json("nodes", "list")["nodes"]
            entry = next((n for n in nodes if n["nodeId"] == node_id), None)
            return bool(entry and entry["connected"] and "device.info" in entry["commands"])

        _wait_for(active, "device.info to be active")
        result = run_example(setup, "sdk_nodes.py")
    finally:
        node.stop()
    assert result.returncode == 0, (result, node.log_tail())
    out = result.stdout
    assert "- ex-node (connected, " in out, out
    _, _, payload = out.partition("device.info from ex-node:\n")
    assert payload, out
    info = json.loads(payload)
    assert info["systemName"] == platform.system()
    assert info["appVersion"]
