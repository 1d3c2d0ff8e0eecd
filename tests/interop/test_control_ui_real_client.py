"""The REAL Control UI (the real gateway's web app) chats through OUR gateway (issue #17).

The web app shipped in the real ``openclaw`` package (``dist/control-ui``) is served from a
loopback HTTP server (:class:`tests.helpers.control_ui_web.ControlUiServer`) and opened in
headless Chromium (system ``chromium``, driven over CDP) pointed at a gateway with the real
Control UI's own handoff (``?gatewayUrl=…#token=…``). On each gateway, with its own fake
model (same script), a user types ``hello there`` into the chat composer and presses Enter;
the test waits for the run's final reply (as the gateway sent it) to be rendered, and
records every WebSocket frame of the page: what it called and every error answer it got.

Against the real gateway this is the reference: its own web app's normal path gets no error
answer. Against ours the proof is the same: the message leaves the queue (``chat.send``), the
reply is rendered, and no request of the normal path is answered with an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from gateway.methods import control_ui
from tests.helpers.cdp import Chromium, Page, chromium_path
from tests.helpers.chat_trace import bundled_with_fake_llm
from tests.helpers.control_ui_web import (
    DEEP_TEXT,
    ControlUiServer,
    ErrorAnswer,
    error_answers,
    final_reply,
    open_chat,
    requested_methods,
    send_message,
    text_contains,
)
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.real_openclaw import GatewayFactory, OpenClawInstall

pytestmark = [
    pytest.mark.timeout(420),
    # In CI (``./dev`` installs it) a missing browser fails the test instead.
    pytest.mark.skipif(
        chromium_path() is None and not os.environ.get("CI"),
        reason="needs the Debian package chromium (./dev installs it)",
    ),
]

MESSAGE = "hello there"
REPLY_TIMEOUT_S = 180.0
#: Once the final reply arrived, how long its text may take to appear on the page.
RENDER_TIMEOUT_S = 30.0
#: The page is left this long without a new request before its record is taken (the UI
#: refreshes side panels after a run), bounded by SETTLE_MAX_S.
QUIET_S = 3.0
SETTLE_MAX_S = 30.0


@dataclass
class UiRun:
    """What the Control UI did against one gateway."""

    methods: list[str] = field(default_factory=list)
    errors: list[ErrorAnswer] = field(default_factory=list)
    #: The model's reply as the gateway sent it (the run's final chat event).
    reply: str | None = None
    reply_rendered: bool = False
    console_errors: list[str] = field(default_factory=list)
    #: The page's visible text at the end (for failure reports).
    text: str = ""
    #: The ``chat.send_timing`` events the page got, and its ``chat.send`` ack(s).
    timings: list[dict[str, Any]] = field(default_factory=list)
    send_acks: list[dict[str, Any]] = field(default_factory=list)


def _timings(page: Page) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The ``chat.send_timing`` payloads the page received and its ``chat.send`` acks."""
    sent = [f.json() for f in page.ws_frames if f.direction == "sent"]
    got = [f.json() for f in page.ws_frames if f.direction == "received"]
    send_ids = {f.get("id") for f in sent if isinstance(f, dict) and f.get("method") == "chat.send"}
    events = [
        f["payload"]
        for f in got
        if isinstance(f, dict) and f.get("type") == "event" and f.get("event") == "chat.send_timing"
    ]
    acks = [
        f.get("payload") or {}
        for f in got
        if isinstance(f, dict) and f.get("type") == "res" and f.get("id") in send_ids
    ]
    return events, acks


async def _settle(read: Callable[[], list[str]]) -> None:
    """Wait until the page made no new request for QUIET_S (at most SETTLE_MAX_S)."""
    deadline = time.monotonic() + SETTLE_MAX_S
    seen, quiet_since = len(read()), time.monotonic()
    while time.monotonic() < deadline:
        await asyncio.sleep(0.25)
        now = len(read())
        if now != seen:
            seen, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= QUIET_S:
            return


async def _final_reply(page: Page) -> str | None:
    """The run's final reply once it came (None after REPLY_TIMEOUT_S)."""
    deadline = time.monotonic() + REPLY_TIMEOUT_S
    while time.monotonic() < deadline:
        reply = final_reply(page)
        if reply is not None:
            return reply
        await asyncio.sleep(0.25)
    return None


def _longest_line(text: str) -> str:
    """The reply's longest line: what identifies it on the page (the real gateway strips
    the fake model's echo of its internal context, and its first line is the prompt)."""
    return max((line.strip() for line in text.splitlines()), key=len, default="")


async def drive(web: ControlUiServer, url: str, token: str) -> UiRun:
    """Open the chat on ``url``, send MESSAGE, wait for the reply; the page's record."""
    run = UiRun()
    async with Chromium.launch() as browser:
        page = await open_chat(browser, web, url, token)
        # The composer is there once the chat view is; let its startup calls answer.
        await _settle(lambda: requested_methods(page))
        await send_message(page, MESSAGE)
        run.reply = await _final_reply(page)
        if run.reply is not None:
            with contextlib.suppress(TimeoutError):
                await page.until(text_contains(_longest_line(run.reply)), timeout=RENDER_TIMEOUT_S)
                run.reply_rendered = True
        await _settle(lambda: requested_methods(page))
        run.methods = requested_methods(page)
        run.text = str(await page.evaluate(DEEP_TEXT))
        run.errors = error_answers(page)
        run.timings, run.send_acks = _timings(page)
        run.console_errors = [
            entry.text for entry in page.console if entry.level in ("error", "exception")
        ]
    return run


async def _both(install: OpenClawInstall, root: Path) -> tuple[UiRun, UiRun]:
    """The scenario on the real gateway, then on ours (one browser at a time: 2 cores)."""
    factory = GatewayFactory(install)
    web = ControlUiServer.start(install)
    try:
        with FakeLLM() as llm:
            gw = await asyncio.to_thread(factory, fake_llm_port=llm.port)
            real = await drive(web, gw.url, gw.token)
            await asyncio.to_thread(factory.close)
        with FakeLLM() as llm:
            async with bundled_with_fake_llm(llm.port, root) as ours_gw:
                ours = await drive(web, ours_gw.url, ours_gw.token)
    finally:
        web.stop()
        await asyncio.to_thread(factory.close)
    return real, ours


@pytest.fixture(scope="module")
def runs(
    openclaw_install: OpenClawInstall, tmp_path_factory: pytest.TempPathFactory
) -> tuple[UiRun, UiRun]:
    """(real, ours): the Control UI scenario on each gateway."""
    root = tmp_path_factory.mktemp("control-ui-ours")

    async def both() -> tuple[UiRun, UiRun]:
        async with asyncio.timeout(400):
            return await _both(openclaw_install, root)

    return asyncio.run(both())


def _described(errors: list[ErrorAnswer]) -> list[str]:
    return [f"{e.method} {e.params!r}: {e.code} {e.message}" for e in errors]


@pytest.mark.parametrize("side", ["real", "ours"])
def test_the_reply_is_rendered(side: str, runs: tuple[UiRun, UiRun]) -> None:
    """The typed message leaves the queue (chat.send) and the model's reply is shown."""
    run = runs[0] if side == "real" else runs[1]
    assert "chat.send" in run.methods, run.methods
    assert run.reply is not None, _described(run.errors)
    # The fake model echoes the prompt (ours shows its "FAKE-LLM reply #1: " prefix; the
    # real gateway strips the echo of its context block, prefix and all).
    assert MESSAGE in run.reply
    if side == "ours":
        assert run.reply.startswith("FAKE-LLM reply #1: ")
    assert run.reply_rendered, (run.reply, run.text[-1500:])


def test_the_real_gateway_answers_its_web_app_without_errors(runs: tuple[UiRun, UiRun]) -> None:
    """The reference: the normal path of its own Control UI gets no error answer."""
    real, _ours = runs
    assert _described(real.errors) == []


def test_our_control_ui_methods_answer_without_errors(runs: tuple[UiRun, UiRun]) -> None:
    """Every Control UI method of gateway.methods.control_ui that the web app called on ours
    was answered, none with an error."""
    _real, ours = runs
    mine = {spec.name for spec in control_ui.table}
    called = mine & set(ours.methods)
    assert {"chat.startup", "chat.metadata", "agent.identity.get", "system.info"} <= called
    assert _described([e for e in ours.errors if e.method in mine]) == []


def test_our_gateway_answers_the_web_app_without_errors(runs: tuple[UiRun, UiRun]) -> None:
    """The proof of issue #17: on ours the whole normal path gets no error answer either."""
    _real, ours = runs
    assert _described(ours.errors) == []


def test_no_script_errors_on_ours(runs: tuple[UiRun, UiRun]) -> None:
    """The web app logs no error and throws nothing against ours (as against the real)."""
    real, ours = runs
    assert real.console_errors == []
    assert ours.console_errors == []


def test_the_send_is_timed_the_same_way(runs: tuple[UiRun, UiRun]) -> None:
    """``chat.send_timing``: the phases of the web app's send reach it in the same order
    with the same fields, and its ack carries ``serverTiming``, on both gateways."""
    real, ours = runs

    def phases(run: UiRun) -> list[str]:
        return [str(t.get("phase")) for t in run.timings]

    assert phases(real), real.timings
    assert phases(ours) == phases(real)
    for mine, theirs in zip(ours.timings, real.timings, strict=True):
        assert set(mine) == set(theirs), (mine, theirs)
    timed = [a for a in real.send_acks if "serverTiming" in a]
    assert timed, real.send_acks
    assert {k for a in ours.send_acks for k in a.get("serverTiming", {})} >= {
        "receivedToAckMs",
        "loadSessionMs",
    }
