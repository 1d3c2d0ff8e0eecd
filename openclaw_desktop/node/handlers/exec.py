"""``system.run``, ``system.run.prepare``, ``system.which`` and ``system.execApprovals.get/set``:
this computer runs commands for the agent under a local approvals document, as the real
node host (``openclaw node run``) does.

All five are gated by the ``exec`` setting (off by default: it lets the agent run anything
the approvals document allows as this user). Once on, the document decides; an
unconfigured document means the reference's baseline (``security=full``, ``ask=off``,
``askFallback=deny``). The gateway must still approve the wider command surface.

Decisions where the reference is silent or differs:

* The reference node host never prompts locally; ours asks :attr:`ExecHost.prompt` (the
  window, later) when the policy needs an approval, and applies ``askFallback`` when nobody
  answers. Every decision is logged and given to :attr:`ExecHost.decision_listeners`.
* ``system.run`` streams its output while it runs as ``node.invoke.progress`` chunks
  (:mod:`openclaw_desktop.node.exec.chunker`: ordered ``seq``, at most 16 KiB of UTF-8 each,
  only within the output cap), where the reference's node host answers only at the end; the
  final result is the same. ``node.invoke.cancel`` ends the process group.
* The reference's ``exec.finished``/``exec.denied`` node events are not sent.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openclaw_desktop.config.paths import AppPaths
from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.node.context import Area, NodeContext
from openclaw_desktop.node.exec.approvals import FILE_NAME, ApprovalsStore, resolve_policy
from openclaw_desktop.node.exec.chunker import ProgressStream
from openclaw_desktop.node.exec.env import (
    EnvRejected,
    check_overrides,
    child_env,
    shell_wrapper_overrides,
)
from openclaw_desktop.node.exec.policy import (
    DecisionKind,
    ExecDecision,
    ExecPrompt,
    ExecRequest,
    decide,
    is_shell_wrapper,
    resolve_executable,
)
from openclaw_desktop.node.exec.request import (
    RunParams,
    command_text,
    parse_run_params,
    plan_matches,
    thrown,
)
from openclaw_desktop.node.exec.runner import run_command
from openclaw_desktop.node.handlers.params import BadParams, params_object
from openclaw_desktop.node.progress import INVOKE_PROGRESS
from openclaw_desktop.node.registry import CommandSpec
from openclaw_desktop.node.results import InvokeResult
from openclaw_desktop.protocol import NodeErrorCode

__all__ = ["EXEC_COMMANDS", "ExecHost", "approvals_path", "exec_area"]

log = logging.getLogger("openclaw.node.exec")

EXEC_COMMANDS = (
    "system.run.prepare",
    "system.run",
    "system.which",
    "system.execApprovals.get",
    "system.execApprovals.set",
)
DENIED = "SYSTEM_RUN_DENIED"


@dataclass
class ExecHost:
    """The approvals store, the prompt port and the decision listeners of this node."""

    store: ApprovalsStore
    prompt: ExecPrompt | None = None
    decision_listeners: list[Callable[[ExecDecision], None]] = field(default_factory=list)
    #: Where a prompt plugged in later (the window) is found; read at every decision.
    context: NodeContext | None = None

    def current_prompt(self) -> ExecPrompt | None:
        """The prompt to ask now: our own, else the context's, else nobody."""
        if self.prompt is not None:
            return self.prompt
        return self.context.exec_prompt if self.context is not None else None

    def record(self, decision: ExecDecision) -> None:
        """Log one decision (allowed at INFO, denied at WARNING; who decided and why, the
        executable and its argument count, never the arguments, environment or output) and
        tell the listeners (the Activity view), which get the whole request."""
        log.log(logging.INFO if decision.allowed else logging.WARNING, "%s", decision.log_line())
        for listener in list(self.decision_listeners):
            try:
                listener(decision)
            except Exception:
                log.exception("exec decision listener failed")

    # ------------------------------------------------------------------ system.which

    async def which(self, params: Any) -> InvokeResult:
        """``{bins: {name: path}}`` for the names found on the sanitized ``PATH``."""
        if params is None:
            raise thrown("paramsJSON required")
        params = params_object(params)
        bins = params.get("bins")
        if not isinstance(bins, list):
            raise thrown("bins required")
        found = await asyncio.to_thread(_which, bins, child_env().get("PATH", ""))
        return InvokeResult.success({"bins": found})

    # ------------------------------------------------------------------ approvals document

    async def approvals_get(self, params: Any) -> InvokeResult:
        """The document (socket token removed), its hash, and optionally the resolved
        defaults."""
        params = params_object(params)
        include = params.get("includeResolvedDefaults")
        if include is not None and not isinstance(include, bool):
            raise thrown("includeResolvedDefaults must be boolean")
        snapshot = await self.store.ensure()
        payload = snapshot.redacted()
        if include:
            policy = resolve_policy({"defaults": snapshot.file.get("defaults")}, "\0")
            defaults = snapshot.file.get("defaults") or {}
            payload["resolvedDefaults"] = {
                "security": policy.security,
                "ask": policy.ask,
                "askFallback": policy.ask_fallback,
                "autoAllowSkills": bool(defaults.get("autoAllowSkills", False)),
            }
        return InvokeResult.success(payload)

    async def approvals_set(self, params: Any) -> InvokeResult:
        """Replace the document if ``baseHash`` is still current (compare-and-swap)."""
        if params is None:
            raise thrown("paramsJSON required")
        params = params_object(params)
        file = params.get("file")
        if not isinstance(file, dict):
            raise thrown("exec approvals file required")
        base = params.get("baseHash")
        base_hash = base.strip() if isinstance(base, str) else ""
        snapshot = await self.store.replace(file, base_hash)
        log.warning("exec approvals document replaced (hash %s)", snapshot.hash[:12])
        return InvokeResult.success(snapshot.redacted())

    # ------------------------------------------------------------------ system.run*

    def _request(self, run: RunParams, env: dict[str, str]) -> ExecRequest:
        resolved = resolve_executable(run.argv[0], run.cwd, env)
        return ExecRequest(
            run.argv, run.command_text, run.cwd, run.agent_id, run.session_key, resolved
        )

    async def prepare(self, params: Any) -> InvokeResult:
        """The canonical plan an approval is bound to, and the policy it was made under."""
        run = parse_run_params(params)
        try:
            check_overrides(run.env)
        except EnvRejected as exc:
            raise BadParams(exc.message()) from exc
        cwd = await asyncio.to_thread(_real_cwd, run.cwd)
        argv = list(run.argv)
        if not is_shell_wrapper(argv):  # the plan pins the executable it resolved
            resolved = await asyncio.to_thread(resolve_executable, argv[0], cwd, child_env())
            argv[0] = resolved or argv[0]
        policy = resolve_policy((await self.store.ensure()).file, run.agent_id)
        plan = {
            "argv": argv,
            "cwd": cwd,
            "commandText": command_text(tuple(argv)),
            "commandPreview": None,
            "agentId": run.agent_id,
            "sessionKey": run.session_key,
            "policySnapshot": policy.snapshot(),
        }
        return InvokeResult.success(
            {
                "plan": plan,
                "execPolicy": {"security": policy.security, "ask": policy.ask},
                "allowAlwaysCoverage": {"complete": False, "patterns": []},
            }
        )

    async def run(self, params: Any) -> InvokeResult:
        """Check, decide, run; the result is ``{exitCode, timedOut, success, stdout, stderr,
        error}``. A refusal is ``SYSTEM_RUN_DENIED`` (``SYSTEM_RUN_DISABLED`` for
        ``security=deny``) with the reason."""
        run = parse_run_params(params)
        explicit = run.approval_decision or ("allow-once" if run.approved else None)
        if (explicit or run.approval_source) and not plan_matches(run):
            what = "approvalSource" if run.approval_source else "explicit approval"
            raise BadParams(f"{what} requires matching systemRunPlan")
        try:
            overrides = check_overrides(run.env)
        except EnvRejected as exc:
            return InvokeResult.error(NodeErrorCode.INVALID_REQUEST, exc.message())
        if is_shell_wrapper(run.argv):
            overrides = shell_wrapper_overrides(overrides)
        env = child_env(overrides)
        request = await asyncio.to_thread(self._request, run, env)
        snapshot = await self.store.ensure()
        policy = resolve_policy(snapshot.file, run.agent_id)
        if explicit or run.approval_source == "auto-review":
            prepared = (run.plan or {}).get("policySnapshot")
            if prepared != policy.snapshot():
                message = f"{DENIED}: exec approval policy changed; request approval again"
                why = "the approval was given under another policy"
                return self._denied(request, message, "explicit-approval", why)
        verdict = await decide(
            request,
            policy,
            explicit=explicit or ("allow-once" if run.approval_source == "auto-review" else None),
            ask_fallback_request=run.approval_source == "ask-fallback",
            prompt=self.current_prompt(),
        )
        if not verdict.allowed:
            return self._denied(request, verdict.message, verdict.source, verdict.why, verdict.kind)
        if run.needs_screen_recording:
            message = "PERMISSION_MISSING: screenRecording"
            why = "screen recording is not permitted here"
            return self._denied(request, message, verdict.source, why)
        if verdict.persist is not None:
            await self._persist(run.agent_id, verdict.persist)
        if verdict.matched is not None:
            await self._record_use(run.agent_id, verdict.matched, request)
        self.record(
            ExecDecision(
                request, True, "", verdict.source, verdict.kind, verdict.why, verdict.matched
            )
        )
        send = INVOKE_PROGRESS.get()
        stream = ProgressStream(send) if send is not None else None
        try:
            result = await run_command(
                list(run.argv),
                cwd=run.cwd,
                env=env,
                timeout_ms=run.timeout_ms,
                on_output=stream.feed if stream is not None else None,
            )
        except BaseException:
            if stream is not None:
                await asyncio.shield(stream.cancel())
            raise
        if stream is not None:
            await stream.aclose()  # the chunks go before the result, in order
        return InvokeResult.success(result.payload())

    def _denied(
        self,
        request: ExecRequest,
        message: str,
        source: str,
        why: str,
        kind: DecisionKind = DecisionKind.POLICY_DENIED,
    ) -> InvokeResult:
        """Every refusal has the code ``SYSTEM_RUN_DENIED`` and keeps its own prefix in the
        message (``SYSTEM_RUN_DISABLED: security=deny``, ``SYSTEM_RUN_DENIED: allowlist
        miss``), as the reference sends it."""
        self.record(ExecDecision(request, False, message, source, kind, why))
        # InvokeResult drops a leading "CODE: " from the wire message; say it twice so the
        # message keeps its own.
        return InvokeResult.error(DENIED, f"{DENIED}: {message}")

    async def _record_use(
        self, agent_id: str | None, matched: dict[str, Any], request: ExecRequest
    ) -> None:
        """Stamp the allowlist entries that allowed a run (``lastUsedAt``,
        ``lastUsedCommand``, ``lastResolvedPath``), in ``*`` and the run's agent, as the
        reference does; best effort (a concurrent change wins)."""

        def key(entry: Any) -> tuple[str, str]:
            if not isinstance(entry, dict):
                return ("", "")
            pattern = str(entry.get("pattern") or "").strip().lower()
            return (pattern, str(entry.get("argPattern") or "").strip())

        wanted = key(matched)
        snapshot = await self.store.ensure()
        agents = dict(snapshot.file.get("agents") or {})
        changed = False
        for name in dict.fromkeys(["*", agent_id or "*"]):
            agent = agents.get(name)
            if not isinstance(agent, dict) or not isinstance(agent.get("allowlist"), list):
                continue
            entries = []
            for entry in agent["allowlist"]:
                if key(entry) == wanted:
                    entry = {
                        **entry,
                        "lastUsedAt": int(time.time() * 1000),
                        "lastUsedCommand": request.command_text,
                        "lastResolvedPath": request.resolved_path,
                    }
                    changed = True
                entries.append(entry)
            agents[name] = {**agent, "allowlist": entries}
        if not changed:
            return
        try:
            await self.store.replace({**snapshot.file, "agents": agents}, snapshot.hash)
        except DeviceError as exc:
            log.info("allowlist use not recorded: %s", exc.message)

    async def _persist(self, agent_id: str | None, entry: dict[str, Any]) -> None:
        """Add an *Always allow* entry to the agent's allowlist (``*`` for a run naming no
        agent; compare-and-swap, retried once if the document changed meanwhile)."""
        for _attempt in range(2):
            snapshot = await self.store.ensure()
            file = dict(snapshot.file)
            agents = dict(file.get("agents") or {})
            key = agent_id or "*"  # an agent-less run is matched by "*" entries only
            agent = dict(agents.get(key) or {})
            agent["allowlist"] = [*(agent.get("allowlist") or []), entry]
            agents[key] = agent
            file["agents"] = agents
            try:
                await self.store.replace(file, snapshot.hash)
                return
            except Exception:
                log.warning("exec approvals changed while saving an Always allow; retrying")


def _which(bins: list[Any], path: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for entry in bins:
        name = entry.strip() if isinstance(entry, str) else ""
        if not name or "/" in name or "\\" in name or name in found:
            continue
        for folder in filter(None, path.split(os.pathsep)):
            candidate = os.path.join(folder, name)
            if os.path.exists(candidate):
                found[name] = candidate
                break
    return found


def _real_cwd(cwd: str | None) -> str:
    if cwd is None:
        return os.path.realpath(os.getcwd())
    if not os.path.isdir(cwd):
        raise BadParams(f"node exec working directory does not exist: {cwd}")
    return os.path.realpath(cwd)


def approvals_path(ctx: NodeContext | None) -> Path:
    """The approvals document a node with ``ctx`` serves (``exec-approvals.json`` in the
    config folder unless the context names another)."""
    if ctx is not None and ctx.exec_approvals_path is not None:
        return Path(ctx.exec_approvals_path)
    return AppPaths.default().config_dir / FILE_NAME


def exec_area(ctx: NodeContext, host: ExecHost | None = None) -> Area:
    """The exec commands, gated by the ``exec`` setting."""
    if host is None:
        store = ApprovalsStore(approvals_path(ctx))
        host = ExecHost(store, None, ctx.exec_decision_listeners, ctx)
    specs = tuple(CommandSpec(name, "system", setting="exec") for name in EXEC_COMMANDS)
    handlers = {
        "system.run.prepare": host.prepare,
        "system.run": host.run,
        "system.which": host.which,
        "system.execApprovals.get": host.approvals_get,
        "system.execApprovals.set": host.approvals_set,
    }
    return Area(specs, handlers)
