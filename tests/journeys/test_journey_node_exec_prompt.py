"""Journey: a command asked of this computer through the window's own BUNDLED gateway, and
the node's own *Allow command on this computer?* prompt lets the person decide, under Xvfb.

The app is launched as a person launches it (its bundled gateway, the fake model behind it)
with *Run commands* on in its settings file and the node's exec approvals document saying
``ask: always`` before the launch; the app approves its own node's surface there (which
needs ``operator.admin``). An operator on that gateway calls ``node.invoke system.run`` on the
window's node, as a real gateway's ``exec`` tool (``host=node``) does: our gateway's agent
``node_invoke`` tool refuses ``system.run`` (an operator's admin command, not the agent's), so
the model cannot ask by itself here. The prompt appears (found through AT-SPI); Escape
denies (``SYSTEM_RUN_DENIED``, the marker file is not there); a second run is allowed with a
mouse click on *Allow once* and its output comes back through the gateway.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.config import AppPaths, NodeSettings, Settings, SettingsStore
from openclaw_desktop.identity import IdentityStore
from openclaw_desktop.node.exec.approvals import FILE_NAME
from tests.helpers.bundled_gateway import raw_operator
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.journey_app import Journey, idle
from tests.journeys.conftest import OpenJourney
from tests.journeys.test_journey_exec_approval import tool_results

pytestmark = [pytest.mark.timeout(600)]

#: Ask for every command; nobody answering means no.
ASK_ALWAYS = {
    "version": 1,
    "defaults": {"security": "full", "ask": "always", "askFallback": "deny"},
}


def _prepare(home: Path) -> tuple[str, Path]:
    """Settings (Run commands on) and the approvals document before the launch; the
    device identity created as the app would, so the test knows its node id."""
    paths = AppPaths.under(home / "openclaw")
    SettingsStore(paths.settings_file).save(Settings(node=NodeSettings(exec=True)))
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    (paths.config_dir / FILE_NAME).write_text(json.dumps(ASK_ALWAYS), "utf-8")
    node_id = IdentityStore(paths.identity_file).load_or_create().device_id
    return node_id, paths.config_dir


async def _prompted(j: Journey, shot: str) -> None:
    """The node's prompt is on the screen (its title and the command it asks about)."""
    await j.control("label", "Allow command on this computer?", timeout=120)
    command = await j.control("text", "Command")
    asked = await j.atspi.text(command)
    assert "-ran-$((6*7))" in asked, asked
    await j.desktop.screenshot(shot)


async def _closed(j: Journey) -> None:
    deadline = time.monotonic() + 20
    while await j.showing("label", "Allow command on this computer?"):
        assert time.monotonic() < deadline, "the prompt stayed open"
        await asyncio.sleep(0.2)


async def _node_ready(j: Journey, model: FakeLLM, node_id: str) -> None:
    """Ask the model to list the nodes until this computer's node offers system.run."""
    deadline = time.monotonic() + 120
    attempt = 0
    while True:
        attempt += 1
        answers = sum(r.startswith("FAKE-LLM tool result") for r in await j.messages())
        prompt = f"ready-{attempt} CALLTOOL:nodes_list:{{}}"
        await j.send(prompt)

        def answered(rows: list[str], before: int = answers) -> bool:
            return sum(r.startswith("FAKE-LLM tool result") for r in rows) > before

        await j.wait_messages(answered, "the node list answer", 120)
        await idle(j, 60)
        # The whole list as the model got it (a chat row shows only its beginning).
        listed = "\n".join(tool_results(model, prompt))
        if node_id in listed and '"system.run"' in listed:
            return
        assert time.monotonic() < deadline, f"our node never offered system.run: {listed}"
        await asyncio.sleep(2)


@pytest.mark.timeout(900)
async def test_the_nodes_own_prompt_denies_on_escape_and_allows_on_a_click(
    open_journey: OpenJourney, model: FakeLLM, tmp_path: Path
) -> None:
    node_id, folder = _prepare(tmp_path / "home")
    work = tmp_path / "work"
    work.mkdir()
    token_file = AppPaths.under(tmp_path / "home" / "openclaw").gateway_token_file
    async with open_journey(model=model) as j:
        await j.control("text", "Message", timeout=120)
        await _node_ready(j, model, node_id)
        url = f"ws://127.0.0.1:{j.app.gateway_port}"
        async with raw_operator(url, auth={"token": token_file.read_text("utf-8").strip()}) as op:

            async def run(marker: str) -> dict[str, Any]:
                argv = ["sh", "-c", f"touch {marker} && echo {marker}-ran-$((6*7))"]
                params = {"command": argv, "cwd": str(work)}
                res: dict[str, Any] = await op.call(
                    "node.invoke",
                    {
                        "nodeId": node_id,
                        "command": "system.run",
                        "params": params,
                        "idempotencyKey": f"k-{marker}",
                        "timeoutMs": 150_000,
                    },
                    timeout=180,
                )
                return res

            # Escape denies: nothing runs.
            pending = asyncio.ensure_future(run("first"))
            await _prompted(j, "node-prompt-escape")
            command = await j.control("text", "Command")
            await j.click(command)  # the prompt has the keyboard focus
            await j.desktop.key("Escape")
            await _closed(j)
            denied = await pending
            assert not denied["ok"], denied
            assert "SYSTEM_RUN_DENIED" in json.dumps(denied["error"]), denied
            assert "user denied" in json.dumps(denied["error"]), denied
            assert not (work / "first").exists(), "a denied command ran"
            await j.desktop.screenshot("node-prompt-denied")

            # A click on Allow once: it runs and its output comes back.
            pending = asyncio.ensure_future(run("second"))
            await _prompted(j, "node-prompt-allow")
            allow = await j.control("push button", "Allow once")
            await j.click(allow)
            await _closed(j)
            ran = await pending
            assert ran["ok"], ran
            assert ran["payload"]["payload"]["stdout"] == "second-ran-42\n", ran
            assert (work / "second").exists(), "the allowed command did not run"
            await j.desktop.screenshot("node-prompt-allowed")
        assert json.loads((folder / FILE_NAME).read_text("utf-8"))["defaults"]["ask"] == "always"
