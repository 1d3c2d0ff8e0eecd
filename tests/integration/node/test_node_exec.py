"""Our node's exec commands over a real loopback WebSocket: ``system.run``, ``system.which``,
``system.run.prepare`` and ``system.execApprovals.get/set``.

The real stack (``GatewayConnection`` + ``NodeSession`` + the spec table with ``exec`` on)
connects to a scripted gateway, which sends ``node.invoke.request`` / ``node.invoke.cancel``
exactly as a gateway does; commands really run (``/bin/sh``, ``printf``, ``sleep``) and the
approvals document is a real file.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.config import NodeSettings
from openclaw_desktop.node import NodeContext, NodeSession
from openclaw_desktop.node.exec.approvals import hash_text, normalize_document
from openclaw_desktop.node.exec.env import DEFAULT_PATH, check_overrides, child_env
from openclaw_desktop.node.exec.policy import ExecDecision, ExecRequest
from openclaw_desktop.node.handlers.exec import EXEC_COMMANDS
from tests.helpers.scripted_gateway import ScriptedPeer, node_behind_script

pytestmark = pytest.mark.timeout(60)


@dataclass
class Node:
    """Our node behind a scripted gateway peer."""

    peer: ScriptedPeer
    session: NodeSession
    ctx: NodeContext
    approvals: Path
    decisions: list[ExecDecision] = field(default_factory=list)
    counter: int = 0

    def results(self) -> list[dict[str, Any]]:
        return self.peer.invoke_results()

    async def send(self, command: str, params: Any, **extra: Any) -> str:
        self.counter += 1
        invoke_id = f"inv-{self.counter}"
        payload = {"id": invoke_id, "nodeId": "node-1", "command": command, **extra}
        if params is not None:
            payload["paramsJSON"] = json.dumps(params)
        await self.peer.send({"type": "event", "event": "node.invoke.request", "payload": payload})
        return invoke_id

    async def result(self, invoke_id: str, timeout: float = 20) -> dict[str, Any]:
        return await self.peer.invoke_result(invoke_id, timeout)

    async def invoke(self, command: str, params: Any = None, **extra: Any) -> dict[str, Any]:
        return await self.result(await self.send(command, params, **extra))

    async def ok(self, command: str, params: Any = None) -> Any:
        result = await self.invoke(command, params)
        assert result["ok"] is True, result
        return result["payload"]

    async def error(self, command: str, params: Any = None) -> dict[str, Any]:
        result = await self.invoke(command, params)
        assert result["ok"] is False, result
        error: dict[str, Any] = result["error"]
        return error

    async def set_document(self, file: dict[str, Any]) -> dict[str, Any]:
        current = await self.ok("system.execApprovals.get", {})
        payload: dict[str, Any] = await self.ok(
            "system.execApprovals.set", {"file": file, "baseHash": current["hash"]}
        )
        return payload


@pytest.fixture
async def node(tmp_path: Path) -> AsyncIterator[Node]:
    ctx = NodeContext(
        settings=lambda: NodeSettings(exec=True), exec_approvals_path=tmp_path / "approvals.json"
    )
    async with node_behind_script(ctx, EXEC_COMMANDS, ("system",)) as (peer, session):
        result = Node(peer, session, ctx, tmp_path / "approvals.json")
        ctx.exec_decision_listeners.append(result.decisions.append)
        yield result


# ---------------------------------------------------------------- system.run


async def test_run_exit_codes_output_and_environment(node: Node, tmp_path: Path) -> None:
    """argv runs without a shell, in cwd, with env overrides; the exit code comes back."""
    ok = await node.ok("system.run", {"command": ["printf", "%s|", "a b", "$HOME"]})
    assert ok == {
        "exitCode": 0,
        "timedOut": False,
        "success": True,
        "stdout": "a b|$HOME|",
        "stderr": "",
        "error": None,
    }
    failed = await node.ok("system.run", {"command": ["sh", "-c", "echo oops >&2; exit 3"]})
    assert (failed["exitCode"], failed["success"], failed["stderr"]) == (3, False, "oops\n")
    here = await node.ok(
        "system.run",
        {"command": ["sh", "-c", 'pwd; echo "$GREETING"'], "cwd": str(tmp_path)},
    )
    assert here["stdout"] == f"{tmp_path}\n\n"  # a shell-wrapped command keeps locale vars only
    env = await node.ok(
        "system.run",
        {"command": ["env"], "env": {"GREETING": "hi", "LC_ALL": "C"}},
    )
    lines = env["stdout"].splitlines()
    assert "GREETING=hi" in lines
    assert "OPENCLAW_CLI=1" in lines
    missing = await node.ok("system.run", {"command": ["/nonexistent/tool"]})
    assert "exitCode" not in missing
    assert missing["success"] is False
    assert missing["error"] == "Command failed during launch or output capture (ENOENT)"


async def test_dangerous_environment_is_dropped_and_refused(
    node: Node, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LD_PRELOAD/NODE_OPTIONS never reach the child; overriding them or PATH is refused."""
    monkeypatch.setenv("LD_PRELOAD", "/tmp/evil.so")
    monkeypatch.setenv("NODE_OPTIONS", "--require=/tmp/evil.js")
    monkeypatch.setenv("OPENCLAW_TEST_SAFE", "kept")
    out = await node.ok("system.run", {"command": ["env"]})
    names = {line.split("=", 1)[0] for line in out["stdout"].splitlines()}
    assert "OPENCLAW_TEST_SAFE" in names
    assert not names & {"LD_PRELOAD", "NODE_OPTIONS"}
    error = await node.error(
        "system.run", {"command": ["env"], "env": {"PATH": "/tmp", "LD_PRELOAD": "x", "A-B": "1"}}
    )
    assert error == {
        "code": "INVALID_REQUEST",
        "message": "SYSTEM_RUN_DENIED: environment override rejected (blocked override keys: "
        "LD_PRELOAD, PATH; invalid non-portable override keys: A-B)",
    }


async def test_output_is_capped_and_marked_truncated(node: Node) -> None:
    """stdout+stderr keep their first 200,000 bytes; the rest is dropped, the end marked."""
    out = await node.ok(
        "system.run", {"command": ["sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' x"]}
    )
    assert out["exitCode"] == 0
    assert out["stdout"] == "x" * 200_000 + "\n... (truncated)"


async def test_timeout_kills_the_process_group(node: Node, tmp_path: Path) -> None:
    """timeoutMs ends the command and its children: timedOut, no exit code."""
    pidfile = tmp_path / "child.pid"
    out = await node.ok(
        "system.run",
        {"command": ["sh", "-c", f"sleep 30 & echo $! > {pidfile}; wait"], "timeoutMs": 300},
    )
    assert out["timedOut"] is True
    assert out["success"] is False
    assert out["exitCode"] == 124  # as timeout(1) and the real node host
    child = int(pidfile.read_text())
    await _gone(child)


async def test_cancel_kills_the_process_tree(node: Node, tmp_path: Path) -> None:
    """node.invoke.cancel answers CANCELLED and the whole process group is gone."""
    pidfile = tmp_path / "child.pid"
    invoke_id = await node.send(
        "system.run", {"command": ["sh", "-c", f"sleep 30 & echo $! > {pidfile}; wait"]}
    )
    async with asyncio.timeout(10):
        while not pidfile.exists() or not pidfile.read_text().strip():
            await asyncio.sleep(0.02)
    child = int(pidfile.read_text())
    await node.peer.send(
        {"type": "event", "event": "node.invoke.cancel", "payload": {"id": invoke_id}}
    )
    result = await node.result(invoke_id)
    assert result["ok"] is False
    assert result["error"]["code"] == "CANCELLED"
    await _gone(child)
    assert (await node.ok("system.which", {"bins": ["sh"]}))["bins"]  # still serving


def _dead(pid: int) -> bool:
    """Gone, or a zombie waiting for whoever inherited it to reap it (it runs no more)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return True


async def _gone(pid: int) -> None:
    async with asyncio.timeout(10):
        while not await asyncio.to_thread(_dead, pid):
            await asyncio.sleep(0.05)


# ---------------------------------------------------------------- bad input


async def test_malformed_requests_get_typed_errors_and_the_node_stays(node: Node) -> None:
    """Every malformed request is answered INVALID_REQUEST and nothing runs."""
    bad: list[tuple[str, Any, str]] = [
        ("system.run", None, "paramsJSON required"),
        ("system.run", [], "params must be an object"),
        ("system.run", {}, "command required"),
        ("system.run", {"command": []}, "command required"),
        ("system.run", {"command": "ls"}, "command required"),
        ("system.run", {"command": [{"x": 1}]}, "command must be an array of strings"),
        (
            "system.run",
            {"command": ["ls"], "timeoutMs": "soon"},
            "timeoutMs must be a non-negative",
        ),
        ("system.run", {"command": ["ls"], "env": []}, "env must be an object"),
        ("system.run", {"command": ["ls"], "cwd": 5}, "cwd must be a string"),
        ("system.run", {"command": ["ls"], "rawCommand": "rm -rf /"}, "rawCommand does not match"),
        ("system.run", {"rawCommand": "ls"}, "rawCommand requires params.command"),
        ("system.run", {"command": ["ls"], "approved": True}, "explicit approval requires"),
        ("system.run", {"command": ["ls"], "approvalSource": "x"}, "approvalSource invalid"),
        ("system.which", {}, "bins required"),
        ("system.which", {"bins": "sh"}, "bins required"),
        ("system.execApprovals.get", {"includeResolvedDefaults": 1}, "includeResolvedDefaults"),
        ("system.execApprovals.set", {}, "exec approvals file required"),
        ("system.execApprovals.set", {"file": []}, "exec approvals file required"),
        ("system.run.prepare", {"command": 1}, "command required"),
    ]
    for command, params, text in bad:
        error = await node.error(command, params)
        assert error["code"] == "INVALID_REQUEST", (command, params, error)
        assert text in error["message"], (command, params, error)
    raw = await node.invoke("system.run", None, paramsJSON="{oops")
    assert raw["error"]["code"] == "INVALID_REQUEST"
    assert node.decisions == []
    assert (await node.ok("system.which", {"bins": ["sh", "no-such-bin-xyz", "", 3]}))["bins"] == {
        "sh": (await node.ok("system.which", {"bins": ["sh"]}))["bins"]["sh"]
    }


# ---------------------------------------------------------------- approvals document


async def test_document_get_set_hash_and_conflicts(node: Node) -> None:
    """get creates the document (0600); set needs the current hash; a stale one is refused."""
    first = await node.ok("system.execApprovals.get", {})
    assert first["exists"] is True
    assert set(first) == {"path", "exists", "hash", "file"}
    assert "token" not in first["file"]["socket"]
    assert first["file"]["version"] == 1
    raw = node.approvals.read_text()
    assert first["hash"] == hash_text(raw)
    assert stat.S_IMODE(node.approvals.stat().st_mode) == 0o600
    again = await node.ok("system.execApprovals.get", {})
    assert again["hash"] == first["hash"]  # reading does not rewrite
    wanted = {
        "version": 1,
        "defaults": {"security": "allowlist", "ask": "bogus"},
        "agents": {"main": {"allowlist": ["/usr/bin/env", {"pattern": " "}]}},
    }
    no_base = await node.error("system.execApprovals.set", {"file": wanted})
    assert no_base["message"].endswith("exec approvals base hash required; reload and retry")
    stale = await node.error("system.execApprovals.set", {"file": wanted, "baseHash": "0" * 64})
    assert stale["message"].endswith("exec approvals changed; reload and retry")
    assert node.approvals.read_text() == raw  # refused writes change nothing
    saved = await node.ok("system.execApprovals.set", {"file": wanted, "baseHash": first["hash"]})
    assert saved["hash"] != first["hash"]
    assert saved["hash"] == hash_text(node.approvals.read_text())
    assert saved["file"]["defaults"] == {"security": "allowlist"}
    (entry,) = saved["file"]["agents"]["main"]["allowlist"]
    assert entry["pattern"] == "/usr/bin/env"
    assert entry["id"]
    assert saved["file"]["socket"] == first["file"]["socket"]  # kept, token still hidden
    stored = json.loads(node.approvals.read_text())
    assert stored["socket"]["token"]
    resolved = await node.ok("system.execApprovals.get", {"includeResolvedDefaults": True})
    assert resolved["resolvedDefaults"] == {
        "security": "allowlist",
        "ask": "off",
        "askFallback": "deny",
        "autoAllowSkills": False,
    }


async def test_policy_deny_allowlist_and_fallback(node: Node) -> None:
    """deny refuses all; allowlist runs matches only; an ask with nobody to ask falls back."""
    await node.set_document({"version": 1, "defaults": {"security": "deny"}})
    denied = await node.error("system.run", {"command": ["true"]})
    assert denied == {"code": "SYSTEM_RUN_DENIED", "message": "SYSTEM_RUN_DISABLED: security=deny"}
    env_path = await asyncio.to_thread(os.path.realpath, "/usr/bin/env")
    await node.set_document(
        {
            "version": 1,
            "defaults": {"security": "allowlist", "ask": "off"},
            "agents": {
                "*": {"allowlist": [{"pattern": env_path, "argPattern": "^-0$"}]},
                "main": {"allowlist": [{"pattern": "/usr/bin/*"}]},
            },
        }
    )
    assert (await node.ok("system.run", {"command": ["/usr/bin/env", "-0"]}))["exitCode"] == 0
    doc = await node.ok("system.execApprovals.get", {})
    (used,) = doc["file"]["agents"]["*"]["allowlist"]
    assert used["lastUsedCommand"] == "/usr/bin/env -0"
    assert used["lastResolvedPath"] == env_path
    assert used["lastUsedAt"] > 0
    # "main" entries apply to runs of agent main only (a run naming no agent is "default").
    as_main = await node.ok("system.run", {"command": ["/usr/bin/env"], "agentId": "main"})
    assert as_main["exitCode"] == 0
    miss = await node.error("system.run", {"command": ["/usr/bin/env"]})
    assert miss == {"code": "SYSTEM_RUN_DENIED", "message": "SYSTEM_RUN_DENIED: allowlist miss"}
    shell = await node.error("system.run", {"command": ["sh", "-c", "/usr/bin/env -0"]})
    assert shell["message"] == "SYSTEM_RUN_DENIED: allowlist miss"
    await node.set_document({"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss"}})
    asked = await node.error("system.run", {"command": ["true"]})
    assert asked == {"code": "SYSTEM_RUN_DENIED", "message": "SYSTEM_RUN_DENIED: approval required"}
    await node.set_document(
        {"version": 1, "defaults": {"security": "full", "ask": "always", "askFallback": "full"}}
    )
    assert (await node.ok("system.run", {"command": ["true"]}))["success"] is True
    outcomes = [(d.allowed, d.source) for d in node.decisions]
    assert outcomes == [
        (False, "policy"),
        (True, "allowlist"),
        (True, "allowlist"),
        (False, "policy"),
        (False, "policy"),
        (False, "ask-fallback"),
        (True, "ask-fallback"),
    ]


async def test_prompt_allow_always_adds_an_exact_entry(node: Node) -> None:
    """A window prompt (the async port) allowing always adds an exact-argv allowlist entry;
    the next identical command runs without asking, a different one asks again."""
    asked: list[ExecRequest] = []

    async def prompt(request: ExecRequest) -> str | None:
        asked.append(request)
        return "allow-always" if len(asked) == 1 else "deny"

    node.ctx.exec_prompt = prompt  # read at every decision, as the window will plug in
    await node.set_document({"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss"}})
    assert (await node.ok("system.run", {"command": ["printf", "x y"]}))["stdout"] == "x y"
    assert asked[0].argv == ("printf", "x y")
    assert asked[0].resolved_path
    doc = await node.ok("system.execApprovals.get", {})
    (entry,) = doc["file"]["agents"]["*"]["allowlist"]
    assert entry["pattern"] == asked[0].resolved_path
    assert (await node.ok("system.run", {"command": ["printf", "x y"]}))["stdout"] == "x y"
    assert len(asked) == 1
    denied = await node.error("system.run", {"command": ["printf", "other"]})
    assert denied["message"] == "SYSTEM_RUN_DENIED: user denied"
    assert len(asked) == 2


async def test_prompt_under_ask_always_offers_no_always_allow(node: Node) -> None:
    """Under ``ask=always`` durable trust would not stop the prompts (as on the reference,
    which then offers only allow-once and deny): the prompt is told not to offer Always
    allow, and an ``allow-always`` answer runs once and adds nothing."""
    asked: list[ExecRequest] = []

    async def prompt(request: ExecRequest) -> str | None:
        asked.append(request)
        return "allow-always"

    node.ctx.exec_prompt = prompt
    await node.set_document({"version": 1, "defaults": {"security": "full", "ask": "always"}})
    assert (await node.ok("system.run", {"command": ["printf", "x"]}))["stdout"] == "x"
    assert (await node.ok("system.run", {"command": ["printf", "x"]}))["stdout"] == "x"
    assert [r.allow_always for r in asked] == [False, False]
    doc = await node.ok("system.execApprovals.get", {})
    assert not doc["file"].get("agents")
    await node.set_document({"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss"}})
    assert (await node.ok("system.run", {"command": ["printf", "y"]}))["stdout"] == "y"
    assert asked[-1].allow_always is True
    shell = await node.ok("system.run", {"command": ["/bin/sh", "-c", "printf z"]})
    assert shell["stdout"] == "z"
    assert asked[-1].allow_always is False  # a shell is never added to an allowlist


async def test_prepare_then_explicit_approval_runs_once_policy_changes_refuse(node: Node) -> None:
    """The gateway's prepare/approve flow: a matching plan with approval runs; after a
    policy change the same approval is refused."""
    await node.set_document({"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss"}})
    params = {"command": ["printf", "ok"], "agentId": "main", "sessionKey": "s1"}
    prepared = await node.ok("system.run.prepare", params)
    assert prepared["execPolicy"] == {"security": "allowlist", "ask": "on-miss"}
    plan = prepared["plan"]
    printf = await asyncio.to_thread(lambda: os.path.realpath(shutil.which("printf") or ""))
    assert plan["argv"] == [printf, "ok"]
    assert plan["cwd"] == await asyncio.to_thread(os.path.realpath, os.getcwd())
    assert plan["policySnapshot"]["security"] == "allowlist"
    # As the gateway does after its operator approved: the plan's argv and cwd, the decision.
    approved = {
        **params,
        "command": plan["argv"],
        "cwd": plan["cwd"],
        "systemRunPlan": plan,
        "approvalDecision": "allow-once",
    }
    assert (await node.ok("system.run", approved))["stdout"] == "ok"
    mismatch = await node.error("system.run", {**approved, "command": ["printf", "no"]})
    assert "requires matching systemRunPlan" in mismatch["message"]
    await node.set_document({"version": 1, "defaults": {"security": "full"}})
    changed = await node.error("system.run", approved)
    assert changed["message"] == (
        "SYSTEM_RUN_DENIED: exec approval policy changed; request approval again"
    )


# ---------------------------------------------------------------- document and environment


def test_document_normalization_as_the_reference() -> None:
    """String entries become {pattern}, empty ones go, ids are added, commandText is
    dropped, invalid policy values are dropped, agents.default folds into agents.main."""
    doc = normalize_document(
        {
            "version": 1,
            "socket": {"path": " /run/x.sock ", "token": " "},
            "defaults": {"security": "nope", "ask": "always", "askFallback": "full"},
            "agents": {
                "default": {
                    "security": "deny",
                    "allowlist": [{"pattern": "/bin/ls"}, {"pattern": "rg"}],
                },
                "main": {"allowlist": [{"pattern": "RG", "commandText": "rg x"}]},
                "ops": {"allowlist": ["/bin/ls", " ", {"pattern": ""}]},
            },
        }
    )
    assert doc["socket"] == {"path": "/run/x.sock"}
    assert doc["defaults"] == {"ask": "always", "askFallback": "full"}
    main = doc["agents"]["main"]
    assert sorted(doc["agents"]) == ["main", "ops"]
    assert main["security"] == "deny"
    assert [e["pattern"] for e in main["allowlist"]] == ["RG", "/bin/ls"]  # rg: same pattern
    assert all(e["id"] and "commandText" not in e for e in main["allowlist"])
    (ls,) = doc["agents"]["ops"]["allowlist"]
    assert ls["pattern"] == "/bin/ls" and ls["id"]


def test_child_environment_is_sanitized() -> None:
    """Dangerous inherited variables are dropped, git protocols narrowed, the marker set."""
    base = {
        "LD_PRELOAD": "x",
        "BASH_FUNC_x%%": "() { :; }",
        "PYTHONPATH": "/evil",
        "HOME": "/home/u",
        "AWS_SECRET_ACCESS_KEY": "s",
        "GIT_ALLOW_PROTOCOL": "ext:https:file",
        "GIT_PROTOCOL_FROM_USER": "1",
        "LANG": "C.UTF-8",
    }
    env = child_env({"GREETING": "hi"}, base)
    assert env == {
        "HOME": "/home/u",
        "GIT_ALLOW_PROTOCOL": "https",
        "GIT_PROTOCOL_FROM_USER": "0",
        "LANG": "C.UTF-8",
        "GREETING": "hi",
        "PATH": DEFAULT_PATH,
        "OPENCLAW_CLI": "1",
    }
    assert check_overrides({"PAGER": "cat", "N": 1, "TERM": "xterm"}) == {
        "PAGER": "",
        "TERM": "xterm",
    }


async def test_a_broken_document_denies_and_is_only_replaced_by_a_set(node: Node) -> None:
    """A file that is not a document is read as deny-everything, never rewritten by a read;
    a set with its hash replaces it."""
    await asyncio.to_thread(node.approvals.write_text, "{not json", "utf-8")
    doc = await node.ok("system.execApprovals.get", {})
    assert doc["file"]["defaults"]["security"] == "deny"
    assert await asyncio.to_thread(node.approvals.read_text, "utf-8") == "{not json"
    denied = await node.error("system.run", {"command": ["true"]})
    assert denied["message"] == "SYSTEM_RUN_DISABLED: security=deny"
    fixed = await node.ok(
        "system.execApprovals.set", {"file": {"version": 1}, "baseHash": doc["hash"]}
    )
    assert fixed["file"]["defaults"] == {}
    assert (await node.ok("system.run", {"command": ["true"]}))["success"] is True
