"""Who decided each ``system.run`` and why: the typed decision the Activity view shows and
the log line the headless node writes (never the command's arguments)."""

from __future__ import annotations

import asyncio
import logging
import shutil
from pathlib import Path

import pytest

from openclaw_desktop.node.exec.approvals import ApprovalsStore, ResolvedPolicy
from openclaw_desktop.node.exec.policy import (
    DecisionKind,
    ExecDecision,
    ExecPrompt,
    ExecRequest,
    decide,
)
from openclaw_desktop.node.handlers.exec import ExecHost

SECRET = "Bearer abcdefghijklmnop1234"
ECHO = shutil.which("echo") or "/bin/echo"


def request(*args: str) -> ExecRequest:
    argv = ("echo", *args)
    return ExecRequest(argv, " ".join(argv), "/tmp", "main", "agent:main:main", ECHO)


def policy(
    security: str, ask: str = "off", fallback: str = "deny", *entries: dict[str, str]
) -> ResolvedPolicy:
    return ResolvedPolicy(security, ask, fallback, tuple(entries))


def answering(answer: str | None, delay: float = 0.0) -> ExecPrompt:
    """A prompt that answers ``answer`` (None: nobody answered in time)."""

    async def prompt(_request: ExecRequest) -> str | None:
        await asyncio.sleep(delay)
        return answer

    return prompt


async def verdict_of(
    pol: ResolvedPolicy, prompt: ExecPrompt | None, *args: str
) -> tuple[bool, DecisionKind, str]:
    v = await decide(request(*args), pol, explicit=None, ask_fallback_request=False, prompt=prompt)
    return v.allowed, v.kind, v.why


async def test_each_way_a_command_is_decided_has_its_kind_and_words() -> None:
    entry = {"pattern": ECHO, "argPattern": "^hi$"}
    cases = [
        (policy("full"), None, (True, DecisionKind.POLICY_FULL, "security is full")),
        (
            policy("allowlist", "off", "deny", entry),
            None,
            (True, DecisionKind.ALLOWLIST, f"allowlist entry {ECHO} (with an argument pattern)"),
        ),
        (policy("deny"), None, (False, DecisionKind.POLICY_DENIED, "security is deny")),
        (
            policy("allowlist", "off"),
            None,
            (False, DecisionKind.POLICY_DENIED, "not in the allowlist (ask off)"),
        ),
        (
            policy("full", "always"),
            answering("allow-once"),
            (True, DecisionKind.USER_ONCE, "you allowed it once"),
        ),
        (
            policy("allowlist", "on-miss"),
            answering("allow-always"),
            (True, DecisionKind.USER_ALWAYS, "you allowed it always (added to the allowlist)"),
        ),
        (
            policy("full", "always"),
            answering("deny"),
            (False, DecisionKind.USER_DENIED, "you denied it"),
        ),
        (
            policy("full", "always", "deny"),
            answering(None),
            (False, DecisionKind.TIMEOUT_FALLBACK, "nobody answered in time; ask fallback deny"),
        ),
        (
            policy("full", "always", "full"),
            answering(None),
            (True, DecisionKind.TIMEOUT_FALLBACK, "nobody answered in time; ask fallback full"),
        ),
        (
            policy("allowlist", "on-miss", "deny"),
            None,
            (False, DecisionKind.HEADLESS_FALLBACK, "no window to ask; ask fallback deny"),
        ),
        (
            policy("full", "always", "allowlist", entry),
            None,
            (
                True,
                DecisionKind.HEADLESS_FALLBACK,
                "no window to ask; ask fallback allowlist, "
                f"allowlist entry {ECHO} (with an argument pattern)",
            ),
        ),
    ]
    for pol, prompt, expected in cases:
        assert await verdict_of(pol, prompt, "hi") == expected, pol
    gateway = await decide(
        request("hi"),
        policy("allowlist", "always"),
        explicit="allow-once",
        ask_fallback_request=False,
        prompt=None,
    )
    assert (gateway.allowed, gateway.kind, gateway.why) == (
        True,
        DecisionKind.GATEWAY_APPROVED,
        "approved through the gateway",
    )
    # "Always allow" on a command the policy would not let be remembered is only once.
    assert (await verdict_of(policy("full", "always"), answering("allow-always"), "hi"))[1] is (
        DecisionKind.USER_ONCE
    )


async def test_the_log_says_who_decided_but_never_the_arguments(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    heard: list[ExecDecision] = []
    host = ExecHost(ApprovalsStore(tmp_path / "approvals.json"), None, [heard.append])
    req = request("-H", f"Authorization: {SECRET}", "password=hunter2")
    verdict = await decide(
        req,
        policy("full", "always"),
        explicit=None,
        ask_fallback_request=False,
        prompt=answering("deny"),
    )
    decision = ExecDecision(req, False, verdict.message, verdict.source, verdict.kind, verdict.why)
    with caplog.at_level(logging.INFO, logger="openclaw.node.exec"):
        host.record(decision)
    assert heard == [decision]
    (record,) = caplog.records
    text = record.getMessage()
    assert record.levelno == logging.WARNING
    assert text == (
        f"exec denied (you denied it): {ECHO} with 3 arguments in /tmp, "
        "asked by agent main, session agent:main:main"
    )
    assert "abcdefghijklmnop1234" not in text and "hunter2" not in text
    assert decision.verb == "denied"
    once = ExecDecision(req, True, "", "prompt", DecisionKind.USER_ONCE, "you allowed it once")
    assert once.verb == "allowed once"
