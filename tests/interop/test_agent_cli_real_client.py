"""The REAL ``openclaw agent --message`` (remote mode: ``gateway.mode=remote`` with
``gateway.remote.url/token``) against OUR bundled gateway and against the REAL one, each with
a fake model of its own: the same printed reply (the real gateway's time stamp and runtime
line aside), the same ``--json`` document shape, exit code 0.

Three runs per gateway, as a user types them:

* ``agent --message`` naming no agent or session: the CLI first asks ``agents.list`` for the
  roster (it failed here while our gateway did not serve it), then runs ``agent`` in the
  default agent's main session;
* ``agent --agent main --message ... --json``: the run's whole result as JSON;
* ``agent --session-key side --message``: another session.

Before them, bad ``agents.list`` / ``agent`` / ``agent.wait`` params on a raw operator
socket: the same error code and wording from both.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.bundled_gateway import RawClient
from tests.helpers.chat_trace import bundled_with_fake_llm
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.openclaw_node import undecorated
from tests.helpers.real_openclaw import GatewayFactory, OpenClawInstall, parse_json_output

pytestmark = pytest.mark.timeout(300)

RUNS: dict[str, tuple[str, ...]] = {
    "plain": ("agent", "--message", "hello there"),
    "json": ("agent", "--agent", "main", "--message", "hello json", "--json"),
    "side": ("agent", "--session-key", "side", "--message", "hello side"),
}


#: Bad params, each answered with an error (label, method, params).
BAD_CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("agents.list extra", "agents.list", {"x": 1}),
    ("agent without key", "agent", {"message": "hi"}),
    ("agent empty message", "agent", {"message": "", "idempotencyKey": "k1"}),
    ("agent unknown property", "agent", {"message": "hi", "idempotencyKey": "k2", "bogus": 1}),
    ("agent timeout text", "agent", {"message": "hi", "idempotencyKey": "k3", "timeout": "x"}),
    ("agent unknown agent", "agent", {"message": "hi", "idempotencyKey": "k4", "agentId": "no"}),
    ("wait without runId", "agent.wait", {}),
    ("wait negative", "agent.wait", {"runId": "x", "timeoutMs": -1}),
    ("wait unknown property", "agent.wait", {"runId": "x", "y": 1}),
]


@dataclass
class CliRuns:
    """What the real CLI did against one gateway, by run name, and the raw probes."""

    results: dict[str, subprocess.CompletedProcess[str]] = field(default_factory=dict)
    errors: dict[str, tuple[str, str] | None] = field(default_factory=dict)
    unknown_wait: Any = None


async def _probe(url: str, token: str) -> tuple[dict[str, tuple[str, str] | None], Any]:
    """The error (code, message) of each of :data:`BAD_CALLS` (None: it succeeded), and
    ``agent.wait`` on a run nobody started."""
    client = await RawClient.open(url)
    try:
        scopes = ["operator.read", "operator.write"]
        hello = await client.connect(
            DeviceIdentity.generate(), scopes=scopes, auth={"token": token}
        )
        assert hello["ok"], hello
        errors: dict[str, tuple[str, str] | None] = {}
        for label, method, params in BAD_CALLS:
            res = await client.call(method, params, timeout=30)
            errors[label] = None if res["ok"] else (res["error"]["code"], res["error"]["message"])
        unknown = await client.ok("agent.wait", {"runId": "never-started", "timeoutMs": 50}, 30)
    finally:
        await client.close()
    return errors, unknown


def _cli(install: OpenClawInstall, home: Path, url: str, token: str) -> dict[str, str]:
    """A CLI home of its own whose config points the CLI at ``url`` in remote mode."""
    for sub in ("home", "state"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    config = {
        "gateway": {"mode": "remote", "remote": {"url": url, "token": token}},
        "update": {"checkOnStart": False},
    }
    (home / "openclaw.json").write_text(json.dumps(config), "utf-8")
    return install.isolated_env(
        {
            "HOME": str(home / "home"),
            "OPENCLAW_STATE_DIR": str(home / "state"),
            "OPENCLAW_CONFIG_PATH": str(home / "openclaw.json"),
            "OPENCLAW_DISABLE_BONJOUR": "1",
            "OPENCLAW_NO_AUTO_UPDATE": "1",
        }
    )


def _run_all(install: OpenClawInstall, url: str, token: str) -> CliRuns:
    runs = CliRuns()
    with tempfile.TemporaryDirectory(prefix="openclaw-cli-agent-") as tmp:
        env = _cli(install, Path(tmp), url, token)
        for name, args in RUNS.items():
            runs.results[name] = subprocess.run(
                install.argv(*args),
                env=env,
                cwd=tmp,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=150,
                check=False,
            )
    return runs


async def _both(install: OpenClawInstall) -> tuple[CliRuns, CliRuns]:
    factory = GatewayFactory(install)
    with FakeLLM() as real_llm, FakeLLM() as our_llm:
        try:

            async def real_side() -> CliRuns:
                gw = await asyncio.to_thread(factory, fake_llm_port=real_llm.port)
                errors, unknown = await _probe(gw.url, gw.token)
                runs = await asyncio.to_thread(_run_all, install, gw.url, gw.token)
                runs.errors, runs.unknown_wait = errors, unknown
                return runs

            async def our_side() -> CliRuns:
                async with bundled_with_fake_llm(
                    our_llm.port, Path(tempfile.mkdtemp(prefix="openclaw-ours-cli-"))
                ) as gw:
                    errors, unknown = await _probe(gw.url, gw.token)
                    runs = await asyncio.to_thread(_run_all, install, gw.url, gw.token)
                    runs.errors, runs.unknown_wait = errors, unknown
                    return runs

            real, ours = await asyncio.gather(real_side(), our_side())
        finally:
            await asyncio.to_thread(factory.close)
    return real, ours


@pytest.fixture(scope="module")
def runs(openclaw_install: OpenClawInstall) -> tuple[CliRuns, CliRuns]:
    """(real, ours): the three CLI runs against each gateway (concurrently)."""

    async def both() -> tuple[CliRuns, CliRuns]:
        async with asyncio.timeout(280):
            return await _both(openclaw_install)

    return asyncio.run(both())


def _printed(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr[-3000:]}"
    return undecorated(result.stdout)


@pytest.mark.parametrize("name", ["plain", "side"])
def test_the_cli_prints_the_same_reply_through_both_gateways(
    runs: tuple[CliRuns, CliRuns], name: str
) -> None:
    """Exit 0 and the model's reply on stdout, the same on both."""
    real, ours = runs
    number = list(RUNS).index(name) + 1
    message = RUNS[name][-1]
    assert _printed(real.results[name]) == f"FAKE-LLM reply #{number}: {message}"
    assert _printed(ours.results[name]) == _printed(real.results[name])


def test_the_json_output_has_the_real_shape(runs: tuple[CliRuns, CliRuns]) -> None:
    """``--json``: the same top-level and payload keys, the same status words and text;
    every result, meta and agentMeta key of ours is one the real gateway has too."""
    real_result, our_result = (side.results["json"] for side in runs)
    assert real_result.returncode == our_result.returncode == 0, our_result.stderr[-2000:]
    real, ours = parse_json_output(real_result.stdout), parse_json_output(our_result.stdout)
    assert set(ours) == set(real) == {"runId", "status", "summary", "result"}
    assert (
        (ours["status"], ours["summary"])
        == (real["status"], real["summary"])
        == (
            "ok",
            "completed",
        )
    )
    assert set(ours["result"]) == set(real["result"])
    assert ours["result"]["sourceReplyDeliveryState"] == real["result"]["sourceReplyDeliveryState"]
    [our_payload], [real_payload] = ours["result"]["payloads"], real["result"]["payloads"]
    assert set(our_payload) == set(real_payload) == {"text", "mediaUrl"}
    assert undecorated(our_payload["text"]) == undecorated(real_payload["text"])
    assert undecorated(our_payload["text"]) == "FAKE-LLM reply #2: hello json"
    our_meta, real_meta = ours["result"]["meta"], real["result"]["meta"]
    assert set(our_meta) <= set(real_meta), set(our_meta) - set(real_meta)
    assert set(our_meta["agentMeta"]) <= set(real_meta["agentMeta"])
    for key in ("aborted", "stopReason", "livenessState", "completion"):
        assert our_meta[key] == real_meta[key], key
    for key in ("provider", "model", "sessionFile"):
        assert our_meta["agentMeta"][key] == real_meta["agentMeta"][key], key
    assert set(our_meta["agentMeta"]["usage"]) <= set(real_meta["agentMeta"]["usage"])


@pytest.mark.parametrize("label", [label for label, _method, _params in BAD_CALLS])
def test_bad_params_are_refused_in_the_same_words(
    runs: tuple[CliRuns, CliRuns], label: str
) -> None:
    """The closed schemas of agents.list, agent and agent.wait: same code, same message."""
    real, ours = runs
    assert real.errors[label] is not None, "the real gateway refuses it"
    assert ours.errors[label] == real.errors[label]


def test_waiting_for_an_unknown_run_times_out_on_both(runs: tuple[CliRuns, CliRuns]) -> None:
    real, ours = runs
    assert ours.unknown_wait == real.unknown_wait == {"runId": "never-started", "status": "timeout"}
