"""The REAL ``openclaw tui`` chats through OUR gateway as through the real one (issue #17).

Each gateway gets its own fake model (:class:`tests.helpers.fake_llm.FakeLLM`); the TUI runs
in a tmux pane (:mod:`tests.helpers.tmux_tui`) in remote mode against it. The message
``SLOW:150 ...`` makes the fake answer ``slow0 slow1 ... slow19`` in 20 chunks 150 ms apart,
the same text through both gateways (no prompt echo), so the panes can be compared word for
word. For each gateway the test records the pane once connected, every distinct pane while
the reply streams, and the pane at the end, and then checks on both:

* the TUI says ``gateway connected`` and never ``failed``, ``not sent`` or ``disconnected``
  (against ours it used to retry ``sessions.subscribe`` and give up);
* the reply streamed: a pane showed part of it (``slow3`` without ``slow19``) before the whole;
* the last pane holds the typed line and the whole reply, and the footer is idle, connected,
  with the fake model's name.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.bundled_gateway import BundledGateway, RawClient
from tests.helpers.chat_trace import write_fake_providers
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.real_openclaw import GatewayFactory, OpenClawInstall
from tests.helpers.tmux_tui import TuiPane, tmux_available

pytestmark = [
    pytest.mark.timeout(420),
    # In CI (``./dev`` installs tmux) a missing tmux fails the test instead of skipping it.
    pytest.mark.skipif(
        not tmux_available() and not os.environ.get("CI"),
        reason="tmux is not installed (./dev test installs it)",
    ),
]

MESSAGE = "SLOW:150 tell me about the weather"
REPLY = " ".join(f"slow{i}" for i in range(20))
CONNECT_TIMEOUT_S = 90.0
REPLY_TIMEOUT_S = 120.0
#: Words the TUI shows when something on its path failed.
FAILURE_WORDS = re.compile(r"failed|not sent|disconnected|unknown method", re.IGNORECASE)


@dataclass
class TuiRun:
    """What the pane showed through one gateway."""

    connected: str = ""
    streaming: list[str] = field(default_factory=list)
    final: str = ""


def _drive(tui: TuiPane) -> TuiRun:
    run = TuiRun()
    run.connected = tui.wait_for("gateway connected", CONNECT_TIMEOUT_S)
    tui.type_line(MESSAGE)
    final = tui.wait_for("slow0", REPLY_TIMEOUT_S, after=MESSAGE)
    seen = [final]
    while "slow19" not in final.rpartition(MESSAGE)[2]:
        final = tui.wait_for("slow", REPLY_TIMEOUT_S, after=MESSAGE)
        if final != seen[-1]:
            seen.append(final)
    run.streaming = seen
    run.final = tui.wait_for("idle", 30, after="slow19")
    return run


def _ours(install: OpenClawInstall) -> TuiRun:
    root = Path(tempfile.mkdtemp(prefix="tui-ours-"))
    with FakeLLM(chunk_delay_s=0.03) as llm:
        write_fake_providers(root / "state", llm.port)
        with BundledGateway.start(root=root) as gw, TuiPane.start(install, gw.url, gw.token) as t:
            return _drive(t)


def _real(factory: GatewayFactory) -> TuiRun:
    with FakeLLM(chunk_delay_s=0.03) as llm:
        gw = factory(fake_llm_port=llm.port)
        with TuiPane.start(factory.install, gw.url, gw.token) as tui:
            return _drive(tui)


@pytest.fixture(scope="module")
def runs(openclaw_install: OpenClawInstall) -> Iterator[dict[str, TuiRun]]:
    factory = GatewayFactory(openclaw_install)
    try:
        yield {"ours": _ours(openclaw_install), "real": _real(factory)}
    finally:
        factory.close()


@pytest.mark.parametrize("which", ["ours", "real"])
def test_the_tui_connects_without_errors(runs: dict[str, TuiRun], which: str) -> None:
    run = runs[which]
    assert "gateway connected" in run.connected
    # The footer names the model from the start (chat.history's defaults), not "unknown".
    assert "fake-model" in run.connected.rpartition("gateway connected")[2], run.connected
    for pane in (run.connected, *run.streaming, run.final):
        assert not FAILURE_WORDS.search(pane), pane


@pytest.mark.parametrize("which", ["ours", "real"])
def test_the_reply_streams_into_the_pane(runs: dict[str, TuiRun], which: str) -> None:
    partial = [
        pane
        for pane in runs[which].streaming
        if "slow3" in pane.rpartition(MESSAGE)[2] and "slow19" not in pane
    ]
    assert partial, f"no pane showed part of the reply:\n{runs[which].streaming[-1]}"


def _conversation(pane: str) -> str:
    """The typed line and the reply as the pane shows them, spaces normalized."""
    lines: list[str] = []
    for line in pane.partition(MESSAGE)[2].splitlines():
        if "| idle" in line:  # the status line ("connected | idle"): the chat log ends
            break
        lines.append(line)
    return " ".join(" ".join(lines).split())


def test_both_gateways_show_the_same_conversation(runs: dict[str, TuiRun]) -> None:
    for which, run in runs.items():
        assert MESSAGE in run.final, (which, run.final)
        assert _conversation(run.final) == REPLY, (which, run.final)
        footer = run.final.rpartition("| idle")[2]
        assert "fake-model" in footer, (which, run.final)
    assert _conversation(runs["ours"].final) == _conversation(runs["real"].final)


#: The TUI's subscription and session calls, with the edge cases around them: answered alike.
SIDE_BY_SIDE: list[tuple[str, object]] = [
    ("sessions.subscribe", None),
    ("sessions.subscribe", {"bogus": 1}),
    ("sessions.subscribe", {"sortBy": "nope"}),
    ("sessions.list", {"agentId": "other"}),
    ("sessions.list", {"agentId": "main", "spawnedBy": "agent:main:main"}),
    ("sessions.list", {"activeOnly": "yes"}),
    ("sessions.describe", {"key": "agent:main:nope"}),
    ("sessions.describe", {"key": " "}),
    ("sessions.describe", {"key": "main", "agentId": "zz"}),
    ("sessions.describe", {}),
    ("sessions.messages.subscribe", {"key": "main"}),
    ("sessions.messages.subscribe", {"key": "agent:zz:main"}),
    ("sessions.messages.subscribe", {"key": "main", "agentId": "zz"}),
    ("sessions.messages.subscribe", {"key": "main", "includeApprovals": False}),
    ("sessions.messages.subscribe", {"key": " "}),
    ("sessions.messages.unsubscribe", {"key": "main"}),
    ("sessions.messages.unsubscribe", {"key": "main", "x": 1}),
    ("commands.list", {"scope": "web"}),
    ("commands.list", {"agentId": "main", "scope": "text", "includeArgs": False, "x": 1}),
    ("sessions.unsubscribe", {}),  # the real gateway has none: unknown on both
]
#: Keys only the real ``sessions.list`` answer has (its store path and owner facets).
REAL_ONLY_LIST_KEYS = {"path", "owners"}


async def _answers(url: str, token: str) -> list[object]:
    client = await RawClient.open(url)
    try:
        scopes = ["operator.read", "operator.write", "operator.admin"]
        hello = await client.connect(
            DeviceIdentity.generate(), scopes=scopes, auth={"token": token}
        )
        assert hello["ok"] is True, hello
        out: list[object] = []
        for method, params in SIDE_BY_SIDE:
            res = await client.call(method, params, timeout=20)
            out.append(_comparable(res["payload"]) if res["ok"] else res["error"])
        return out
    finally:
        await client.close()


def _comparable(payload: object) -> object:
    """A success answer without what differs by nature (times, the default model)."""
    if not isinstance(payload, dict):
        return payload
    if "sessions" in payload:  # a sessions.list answer
        return sorted(k for k in payload if k not in REAL_ONLY_LIST_KEYS)
    return {k: _comparable(v) for k, v in payload.items()}


def test_subscription_and_session_calls_side_by_side(
    real_gateway: GatewayFactory, tmp_path: Path
) -> None:
    """The same answers (errors word for word) from both gateways."""
    real = real_gateway()
    with BundledGateway.start(root=tmp_path) as ours:
        mine = asyncio.run(_answers(ours.url, ours.token))
    theirs = asyncio.run(_answers(real.url, real.token))
    differing = [
        f"{method} {params}: real {a} ours {b}"
        for (method, params), a, b in zip(SIDE_BY_SIDE, theirs, mine, strict=True)
        if a != b
    ]
    assert not differing, "\n".join(differing)
