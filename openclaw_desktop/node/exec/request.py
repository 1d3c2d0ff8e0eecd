"""``system.run`` / ``system.run.prepare`` params, checked as the real node host checks them.

Every problem is a :class:`~openclaw_desktop.node.handlers.params.BadParams`
(``INVALID_REQUEST``) naming the field; nothing is run for a request that fails here.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from typing import Any

from openclaw_desktop.node.exec.policy import is_shell_wrapper
from openclaw_desktop.node.handlers.params import BadParams

__all__ = ["RunParams", "parse_run_params", "plan_matches", "thrown"]

DECISIONS = ("allow-once", "allow-always")
APPROVAL_SOURCES = ("ask-fallback", "auto-review")


@dataclass(frozen=True)
class RunParams:
    """A checked ``system.run`` request."""

    argv: tuple[str, ...]
    command_text: str
    cwd: str | None
    env: dict[str, Any] | None
    timeout_ms: int | None
    agent_id: str | None
    session_key: str | None
    run_id: str | None
    approved: bool
    approval_decision: str | None
    approval_source: str | None
    plan: dict[str, Any] | None
    needs_screen_recording: bool


def thrown(message: str) -> BadParams:
    """A refusal worded as the real node host words the errors it throws while checking
    params (``Error: INVALID_REQUEST: <message>``, its exception text), so the answers match
    word for word."""
    return BadParams(f"Error: INVALID_REQUEST: {message}")


def _arg(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    raise BadParams("command must be an array of strings")


def _optional_text(params: dict[str, Any], key: str) -> str | None:
    value = params.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadParams(f"{key} must be a string")
    return value.strip() or None


def command_text(argv: tuple[str, ...]) -> str:
    """How the command is shown: the shell payload of ``sh -c``, else the quoted argv."""
    if is_shell_wrapper(argv):
        return argv[-1]
    return shlex.join(argv)


def parse_run_params(params: Any) -> RunParams:
    """Check ``system.run`` (or ``system.run.prepare``) params.

    Raises:
        BadParams: The first bad field.
    """
    if params is None:
        raise BadParams("paramsJSON required")
    if not isinstance(params, dict):
        raise BadParams("params must be an object")
    command = params.get("command")
    raw = _optional_text(params, "rawCommand")
    if not isinstance(command, list) or not command:
        raise BadParams("rawCommand requires params.command" if raw else "command required")
    argv = tuple(_arg(value) for value in command)
    if not argv[0].strip():
        raise BadParams("command required")
    text = command_text(argv)
    if raw is not None and raw not in (text, " ".join(argv)):
        raise BadParams("rawCommand does not match command")
    env = params.get("env")
    if env is not None and not isinstance(env, dict):
        raise BadParams("env must be an object")
    timeout = params.get("timeoutMs")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout < 0
    ):
        raise BadParams("timeoutMs must be a non-negative number")
    decision = params.get("approvalDecision")
    if decision is not None and decision not in DECISIONS:
        raise BadParams(f"approvalDecision must be one of {', '.join(DECISIONS)}")
    source = params.get("approvalSource")
    if source is not None and source not in APPROVAL_SOURCES:
        raise BadParams("approvalSource invalid")
    approved = params.get("approved")
    if approved is not None and not isinstance(approved, bool):
        raise BadParams("approved must be a boolean")
    if source is not None and (approved is not None or decision is not None):
        raise BadParams("approvalSource cannot be combined with explicit approval")
    plan = params.get("systemRunPlan")
    if plan is not None and (not isinstance(plan, dict) or not isinstance(plan.get("argv"), list)):
        raise BadParams("systemRunPlan invalid")
    cwd = _optional_text(params, "cwd")
    return RunParams(
        argv=argv,
        command_text=text,
        cwd=os.path.expanduser(cwd) if cwd else None,
        env=env,
        timeout_ms=int(timeout) if timeout is not None else None,
        agent_id=_optional_text(params, "agentId"),
        session_key=_optional_text(params, "sessionKey"),
        run_id=_optional_text(params, "runId"),
        approved=approved is True,
        approval_decision=decision,
        approval_source=source,
        plan=plan,
        needs_screen_recording=params.get("needsScreenRecording") is True,
    )


def plan_matches(run: RunParams) -> bool:
    """The prepared plan is for exactly this command, directory, agent and session."""
    plan = run.plan or {}
    return (
        [str(a) for a in plan.get("argv") or []] == list(run.argv)
        and plan.get("commandText") == run.command_text
        and (plan.get("cwd") or None) == run.cwd
        and (plan.get("agentId") or None) == run.agent_id
        and (plan.get("sessionKey") or None) == run.session_key
    )
