"""Journey: the agent runs a command on this computer, through the REAL OpenClaw gateway, and
the person at the window decides.

The real gateway (npm ``openclaw``) runs ``exec`` on a node (``tools.exec.host=node``,
``tools.exec.node=<this computer's node>``); the window has *Run commands* on (the
``node.exec`` setting) and its owner approves its node in the window, as the real gateway
asks. The node's own approvals document is replaced with the real CLI
(``openclaw approvals set --node <id> --stdin``) by one that asks every time, so the gateway
broadcasts ``exec.approval.requested`` and the window shows *Allow command?*.

The person types a message (xdotool) that makes the fake model call ``exec`` with
``host=node``. Allowed with a mouse click: the command runs on our node, its output is in the
tool result the gateway hands the model's next turn (the fake model's request log), and the
window shows the model's answer quoting it. Denied with a mouse click: nothing runs, the
model is told it was denied (the real gateway's own words, read from the request log), and
the window shows that too. Last, ``openclaw approvals allowlist add --node <ours>`` through
the real gateway changes the window's node's own approvals document.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.config import AppPaths, NodeSettings, Settings, SettingsStore
from tests.helpers.atspi import Seen
from tests.helpers.fake_llm import FakeLLM, find_prompt
from tests.helpers.journey_app import Journey, approve_own_node, idle, read_row
from tests.helpers.real_openclaw import GatewayFactory, RealGateway
from tests.journeys.conftest import OpenJourney

pytestmark = [pytest.mark.interop, pytest.mark.timeout(600)]

#: Ask for every command; nobody answering means no (the document's ``askFallback``).
ASK_ALWAYS = {
    "version": 1,
    "defaults": {"security": "allowlist", "ask": "always", "askFallback": "deny"},
}
#: The command's output is not in its text: only running it prints ``node-ran-42``.
ALLOWED = 'CALLTOOL:exec:{"command":"echo node-ran-$((6*7))","host":"node"}'
EXEC = {"system.run", "system.run.prepare", "system.execApprovals.get"}


def _exec_gateway(real_gateway: GatewayFactory, model: FakeLLM) -> RealGateway:
    """The real gateway with the fake model, its exec tool placed on nodes."""
    gw = real_gateway(fake_llm_port=model.port)
    gw.cli("config", "set", "tools.exec.host", "node")
    return gw


def _with_exec_on(home: Path) -> None:
    """*Run commands* on in the app's settings, as the user sets it, before the launch."""
    paths = AppPaths.under(home / "openclaw")
    SettingsStore(paths.settings_file).save(Settings(node=NodeSettings(exec=True)))


async def _our_node(gw: RealGateway, timeout: float = 90) -> str:
    """The id of this computer's node once the real gateway lists it connected with the
    exec commands."""
    deadline = time.monotonic() + timeout
    while True:
        nodes = (await asyncio.to_thread(gw.cli_json, "nodes", "status"))["nodes"]
        for node in nodes:
            if node.get("connected") and set(node.get("commands") or []) >= EXEC:
                return str(node["nodeId"])
        assert time.monotonic() < deadline, f"our node never had the exec commands: {nodes}"
        await asyncio.sleep(1)


def _approvals_set_stdin(gw: RealGateway, node: str, document: dict[str, Any]) -> str:
    """``openclaw approvals set --node <id> --stdin`` with ``document`` on its stdin."""
    done = subprocess.run(
        gw.install.argv("approvals", "set", "--node", node, "--stdin"),
        input=json.dumps(document),
        env=gw.env,
        cwd=gw.state_dir,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout


def tool_results(model: FakeLLM, prompt: str) -> list[str]:
    """The tool results the gateway handed the model's follow-up turns after ``prompt``
    (the real gateway wraps the user's text: a time stamp before it)."""
    found: list[str] = []
    for body in model.bodies("/chat/completions"):
        said, result = find_prompt(body.get("messages") or [])
        if prompt in said and result is not None and result not in found:
            found.append(result)
    return found


async def _decide(j: Journey, button: str, shot: str) -> str:
    """Wait for *Allow command?*, read what it asks about, press ``button`` with the mouse."""
    pressed = await j.control("push button", button, timeout=120)
    command = await j.control("text", "Command")
    asked = await j.atspi.text(command)
    await j.desktop.screenshot(shot)
    await j.click(pressed)
    deadline = time.monotonic() + 20
    while await j.showing("push button", button):
        assert time.monotonic() < deadline, "the approval dialog stayed open"
        await asyncio.sleep(0.2)
    return asked


async def _answer(j: Journey, needle: str, what: str) -> str:
    """The model's final answer row once it contains ``needle``."""

    def final(rows: list[str]) -> bool:
        return any(r.startswith("FAKE-LLM tool result") and needle in r for r in rows)

    await j.wait_messages(final, what, 180)
    await idle(j, 90)
    rows = await j.messages()  # the whole answer, streamed to its end
    return next(r for r in rows if r.startswith("FAKE-LLM tool result") and needle in r)


@pytest.mark.timeout(900)
async def test_the_agent_runs_a_command_on_our_node_once_allowed_and_is_told_when_denied(
    open_journey: OpenJourney,
    model: FakeLLM,
    real_gateway: GatewayFactory,
    tmp_path: Path,
) -> None:
    gw = _exec_gateway(real_gateway, model)
    _with_exec_on(tmp_path / "home")
    async with open_journey(model=model, remote=(gw.url, gw.token)) as j:
        await approve_own_node(j)
        node = await _our_node(gw)
        await asyncio.to_thread(gw.cli, "config", "set", "tools.exec.node", node)
        await asyncio.to_thread(_approvals_set_stdin, gw, node, ASK_ALWAYS)
        approvals = AppPaths.under(tmp_path / "home" / "openclaw").config_dir
        approvals /= "exec-approvals.json"
        document = json.loads(approvals.read_text("utf-8"))
        assert document["defaults"] == ASK_ALWAYS["defaults"], document
        await j.control("text", "Message")

        # Allowed: the command runs on our node and its output reaches the model and the chat.
        await j.send(ALLOWED)
        asked = await _decide(j, "Allow once", "allow-command-asked")
        assert "node-ran-$((6*7))" in asked, asked
        final = await _answer(j, "node-ran-42", "the answer quoting the command's output")
        await j.desktop.screenshot("allowed-output-in-the-chat")
        results = tool_results(model, ALLOWED)
        assert any("node-ran-42" in r and node in r for r in results), results
        assert "node-ran-42" in final
        painted = await read_row(j, "FAKE-LLM tool result", "allowed-answer")
        assert "node-ran-42" in painted, painted

        # Denied: nothing runs; the gateway tells the model so, and the window shows it.
        marker = tmp_path / "denied-marker"
        denied_prompt = "CALLTOOL:exec:" + json.dumps(
            {"command": f"touch {marker}", "host": "node"}
        )
        await j.send(denied_prompt)
        asked = await _decide(j, "Deny", "deny-command-asked")
        assert f"touch {marker}" in asked, asked
        denied = await _wait_results(model, denied_prompt)
        told = denied[-1]
        print(f"the real gateway told the model: {told!r}")
        # The real gateway's words: a tool error, the command not run.
        assert json.loads(told) == {
            "status": "error",
            "tool": "exec",
            "error": "exec denied: user-denied",
        }, denied
        final = await _answer(j, told[:40], "the answer quoting the denial")
        await j.desktop.screenshot("denied-in-the-chat")
        assert "exec denied: user-denied" in final, (final, told)
        assert not marker.exists(), "the denied command ran"

        # Both answers are in the Activity view, with what they were about.
        for words, about in (("you allowed it once", "node-ran"), ("you denied it", "touch")):

            def is_row(n: Seen, w: str = words, a: str = about) -> bool:
                return n.role == "list item" and w in n.name and a in n.name

            [row, *_] = await j.atspi.find(await j.root(), is_row, f"the Activity row {words!r}")
            assert "exec approval" in row.name, row.name
        await j.desktop.screenshot("answers-in-the-activity-view")

        # The operator CLI, through the real gateway, adds to the window's node's allowlist.
        await asyncio.to_thread(
            gw.cli, "approvals", "allowlist", "add", "--node", node, "/usr/bin/uname"
        )
        document = json.loads(approvals.read_text("utf-8"))
        assert [e["pattern"] for e in document["agents"]["*"]["allowlist"]] == ["/usr/bin/uname"]
        assert document["defaults"] == ASK_ALWAYS["defaults"], document


async def _wait_results(model: FakeLLM, prompt: str, timeout: float = 120) -> list[str]:
    deadline = time.monotonic() + timeout
    while not (found := tool_results(model, prompt)):
        assert time.monotonic() < deadline, f"no tool result for {prompt!r}"
        await asyncio.sleep(0.5)
    return found
