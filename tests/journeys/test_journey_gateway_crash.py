"""Journeys: the gateway goes away and comes back.

* The bundled gateway is killed while a reply streams. The cut reply is marked interrupted
  (not "stopped", which is what Stop says), the app starts its gateway again and reconnects
  by itself, the status bar says connected again, and the next message is answered.
* A message typed while the gateway is down shows as waiting; once the gateway is back it is
  delivered exactly once (the fake model sees it once), answered, and its label goes.
* A gateway that keeps stopping (killed past the supervisor's cap per minute) gives up with a
  card showing its last log lines; the card's Retry brings the chat back.
* A gateway started by hand (the app attaches to it) goes away and comes back while the app
  counts down to its next try: *Reconnect now* connects while the countdown still runs.

The gateway is made to stay down without mocking anything: its restarted process is stopped
(SIGSTOP) before it listens, a start that is slow to come up, and let go (SIGCONT)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import time
import weakref
from collections.abc import Callable
from pathlib import Path

import pytest
from dbus_fast.errors import DBusError

from openclaw_desktop.integration.command import bundled_gateway_args, gateway_argv
from openclaw_desktop.supervisor import RestartPolicy
from tests.helpers.atspi import SHOWING, AtspiError, Node
from tests.helpers.fake_llm import FakeLLM, find_prompt
from tests.helpers.journey_app import DesktopAppProcess, Journey, read_row
from tests.helpers.ports import port_open
from tests.helpers.xsession import stop_process_group
from tests.journeys.conftest import OpenJourney

pytestmark = pytest.mark.timeout(240)


def gateway_pids(app_pid: int) -> list[int]:
    """The app's bundled gateway processes (its children running ``gateway run``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == app_pid and b"gateway" in cmdline and b"run" in cmdline:
            found.append(int(entry.name))
    return found


#: The status label found in each journey's current launch (a walk of the whole tree is
#: slow; the label lives as long as the window).
_STATUS_LABELS: weakref.WeakKeyDictionary[Journey, tuple[int, Node]] = weakref.WeakKeyDictionary()


async def chat_status(j: Journey) -> str:
    """What the status bar says about the chat connection (the label described so)."""
    known = _STATUS_LABELS.get(j)
    if known is not None and known[0] == j.app.launches:
        with contextlib.suppress(AtspiError, DBusError):
            return await j.atspi.name(known[1])
    for seen in await j.atspi.walk(await j.root()):
        if seen.role == "label":
            with contextlib.suppress(AtspiError, DBusError):
                if await j.atspi.description(seen.node) == "Chat connection":
                    _STATUS_LABELS[j] = (j.app.launches, seen.node)
                    return seen.name
    raise AssertionError("no chat connection status in the window")


async def test_the_gateway_killed_mid_reply_is_restarted_and_the_chat_goes_on(
    open_journey: OpenJourney, model: FakeLLM
) -> None:
    async with open_journey(model=model) as j:
        await j.send("SLOW:300 keep talking")
        await j.wait_messages(
            lambda rows: any(r.startswith("slow0") for r in rows), "the reply streaming"
        )
        assert j.app.proc is not None
        [pid] = gateway_pids(j.app.proc.pid)
        os.kill(pid, signal.SIGKILL)

        rows = await j.wait_messages(
            lambda rows: any(r.startswith("slow0") and "interrupted" in r for r in rows),
            "the cut reply marked interrupted",
            timeout=60,
        )
        assert not any("(stopped)" in r for r in rows), rows
        await j.desktop.screenshot("cut-by-the-crash")

        deadline = time.monotonic() + 90
        while not (await chat_status(j)).startswith("chat: connected"):
            j.alive()
            assert time.monotonic() < deadline, f"not connected again: {await chat_status(j)}"
            await asyncio.sleep(0.3)
        assert j.app.gateway_listening()
        [restarted] = gateway_pids(j.app.proc.pid)
        assert restarted != pid
        await j.desktop.screenshot("connected-again")

        await j.send("after the crash")
        answer = re.compile(r"^FAKE-LLM reply #\d+: after the crash$")
        await j.wait_messages(lambda rows: any(answer.match(r) for r in rows), "the answer", 60)
        await j.desktop.screenshot("answered-after-the-crash")

        await j.click(await j.control("text", "Message"))
        await j.desktop.key("ctrl+q")
        assert await j.wait_exit(30) == 0, j.app.output()[-3000:]
        j.app.wait_gateway_gone()


# --------------------------------------------------------------------------- outages
WAITING = " (waiting for the gateway: sent when it is back)"
KEEPS_STOPPING = "The bundled gateway keeps stopping"


def freeze_next_gateway(app_pid: int, known: set[int], timeout: float = 30.0) -> int:
    """SIGSTOP the next gateway the app starts (a pid not in ``known``) as soon as it
    exists, long before it listens: a restart that is slow to come up, so the outage lasts
    as long as the journey needs (SIGCONT lets it go on)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in gateway_pids(app_pid):
            if pid not in known:
                os.kill(pid, signal.SIGSTOP)
                return pid
        time.sleep(0.005)
    raise AssertionError(f"the app started no new gateway in {timeout:g} s")


def resume(pid: int) -> None:
    """SIGCONT a frozen gateway (nothing if it is gone)."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGCONT)


def prompts(model: FakeLLM) -> list[str]:
    """The prompt of every completion request the fake model got, in order."""
    return [find_prompt(body.get("messages", []))[0] for body in model.bodies("/chat/completions")]


async def until_status(
    j: Journey, check: Callable[[str], bool], what: str, timeout: float = 60.0
) -> str:
    """The status bar's chat text once ``check`` holds for it."""
    deadline = time.monotonic() + timeout
    while True:
        j.alive()
        status = await chat_status(j)
        if check(status):
            return status
        assert time.monotonic() < deadline, f"{what}: the status says {status!r}"
        await asyncio.sleep(0.2)


def countdown(status: str) -> int | None:
    """N of ``chat: reconnecting in N s (…)``."""
    found = re.match(r"^chat: reconnecting in (\d+) s", status)
    return int(found.group(1)) if found else None


async def row(j: Journey, prefix: str) -> tuple[str, str]:
    """(accessible name, description) of the chat row whose name starts with ``prefix``."""
    listing = await j.control("list", "Messages")
    for node in await j.atspi.children(listing):
        with contextlib.suppress(AtspiError, DBusError):
            name = await j.atspi.name(node)
            if name.startswith(prefix):
                return name, await j.atspi.description(node)
    raise AssertionError(f"no row starting with {prefix!r}: {await j.messages()}")


async def chat_once(j: Journey, text: str) -> None:
    """Send ``text`` and wait for the fake model's answer to it."""
    await j.send(text)
    answer = re.compile(rf"^FAKE-LLM reply #\d+: {re.escape(text)}$")
    await j.wait_messages(lambda rows: any(answer.match(r) for r in rows), f"the answer to {text}")


async def quit_app(j: Journey) -> None:
    await j.click(await j.control("text", "Message"))
    await j.desktop.key("ctrl+q")
    assert await j.wait_exit(30) == 0, j.app.output()[-3000:]


async def test_a_message_sent_while_the_gateway_is_down_is_delivered_once_when_it_is_back(
    open_journey: OpenJourney, model: FakeLLM
) -> None:
    async with open_journey(model=model) as j:
        await chat_once(j, "before the outage")
        assert j.app.proc is not None
        app_pid = j.app.proc.pid
        [pid] = gateway_pids(app_pid)
        freezing = asyncio.create_task(asyncio.to_thread(freeze_next_gateway, app_pid, {pid}))
        os.kill(pid, signal.SIGKILL)
        frozen = await freezing
        try:
            assert not j.app.gateway_listening(), "the restarted gateway listened already"
            await until_status(j, lambda s: s.startswith("chat: reconnecting"), "the drop seen")

            text = "sent while the gateway is down"
            await j.send(text)
            rows = await j.wait_messages(lambda rows: text + WAITING in rows, "the waiting label")
            name, description = await row(j, text)
            assert description == "Your message, waiting", description
            status = await chat_status(j)  # reconnecting, or connecting in an attempt
            assert not status.startswith("chat: connected"), status
            assert text not in prompts(model), "sent to the model while the gateway was down"
            await j.desktop.screenshot("waiting-for-the-gateway")
            painted = " ".join((await read_row(j, text, "the-waiting-message")).split())
            assert "waiting for the gateway" in painted, painted
        finally:
            resume(frozen)

        answer = re.compile(rf"^FAKE-LLM reply #\d+: {re.escape(text)}$")
        rows = await j.wait_messages(
            lambda rows: any(answer.match(r) for r in rows), "the answer once it is back", 90
        )
        assert (await chat_status(j)).startswith("chat: connected"), await chat_status(j)
        name, description = await row(j, text)
        assert name == text, f"the label stayed: {name!r}"
        assert "waiting" not in description, description
        assert rows.count(text) == 1, rows
        await j.desktop.screenshot("delivered-after-the-outage")
        painted = " ".join((await read_row(j, text, "the-delivered-message")).split())
        assert text in painted and "waiting" not in painted, painted
        assert not await j.showing("push button", "Reconnect now")

        # A later message is answered after it: a second copy would have reached the
        # model first, on the same session.
        await chat_once(j, "after the outage")
        said = prompts(model)
        assert said.count(text) == 1, said
        assert said.index(text) < said.index("after the outage"), said
        rows = await j.messages()
        assert rows.count(text) == 1, rows
        assert sum(bool(answer.match(r)) for r in rows) == 1, rows
        await j.desktop.screenshot("answered-after-the-outage")
        await quit_app(j)
        j.app.wait_gateway_gone()


async def test_a_gateway_that_keeps_stopping_shows_a_card_and_try_again_recovers(
    open_journey: OpenJourney, model: FakeLLM
) -> None:
    cap = RestartPolicy().max_per_minute
    async with open_journey(model=model) as j:
        await until_status(j, lambda s: s.startswith("chat: connected"), "the first connect")
        assert j.app.proc is not None
        app_pid = j.app.proc.pid
        killed: list[int] = []
        deadline = time.monotonic() + 120
        looked = time.monotonic()
        # Kill each run as soon as it listens, until the window gives up on it.
        while True:
            j.alive()
            assert time.monotonic() < deadline, f"no card after {len(killed)} kills"
            assert len(killed) <= cap + 1, f"still restarted after {len(killed)} kills"
            fresh = [p for p in gateway_pids(app_pid) if p not in killed]
            if fresh and j.app.gateway_listening():
                for pid in fresh:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            if time.monotonic() - looked > 1.0:
                looked = time.monotonic()
                if await j.showing("label", KEEPS_STOPPING):
                    break
            await asyncio.sleep(0.05)
        assert len(killed) == cap + 1, killed
        await asyncio.sleep(1.0)  # nothing restarts it by itself now
        assert gateway_pids(app_pid) == [] and not j.app.gateway_listening()
        status = await chat_status(j)
        assert not status.startswith("chat: connected"), status
        for button in ("Retry", "Choose another gateway", "Show details"):
            await j.control("push button", button, timeout=5)
        await j.desktop.screenshot("keeps-stopping")

        await j.click(await j.control("push button", "Show details"))
        details = await j.atspi.text(await j.control("text", "Error details", timeout=10))
        lines = [line for line in details.splitlines() if line.strip()]
        assert lines, "the card shows none of the gateway's last lines"
        output = j.app.output()
        assert all(line in output for line in lines), (lines, output[-3000:])
        assert str(j.app.gateway_port) in details, details
        await j.desktop.screenshot("keeps-stopping-details")

        await j.click(await j.control("push button", "Retry"))
        await until_status(j, lambda s: s.startswith("chat: connected"), "back after Retry", 60)
        [restarted] = gateway_pids(app_pid)
        assert restarted not in killed
        assert not await j.showing("label", KEEPS_STOPPING)
        await chat_once(j, "after trying again")
        await j.desktop.screenshot("recovered-after-retry")
        await quit_app(j)
        j.app.wait_gateway_gone()


def start_by_hand(app: DesktopAppProcess, log: Path) -> subprocess.Popen[bytes]:
    """The bundled gateway started by hand (as ``python -m gateway run`` in a terminal), on
    the app's port and with the app's home: the app attaches to it and leaves it alone."""
    port = app.gateway_port
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [*gateway_argv(), *bundled_gateway_args(port)],
            env=app.env(),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + 30
    while not port_open(port):
        assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
        assert time.monotonic() < deadline, "the gateway started by hand did not listen"
        time.sleep(0.05)
    return proc


async def test_reconnect_now_connects_at_once_while_the_countdown_runs(
    open_journey: OpenJourney, model: FakeLLM, tmp_path: Path
) -> None:
    by_hand: list[subprocess.Popen[bytes]] = []
    log = tmp_path / "gateway-by-hand.log"
    try:
        async with open_journey(model=model) as j:
            # The first launch sets the home up (token, pairing); then the person runs the
            # gateway in a terminal and starts the app again: it uses that gateway.
            await until_status(j, lambda s: s.startswith("chat: connected"), "the first connect")
            await quit_app(j)
            j.app.wait_gateway_gone()
            by_hand.append(start_by_hand(j.app, log))
            j.app.start()
            j.relaunched()
            await until_status(j, lambda s: s.startswith("chat: connected"), "attached")
            assert "using the gateway already running" in j.app.output()
            assert j.app.proc is not None and gateway_pids(j.app.proc.pid) == []
            await j.desktop.screenshot("attached-to-the-gateway-started-by-hand")

            # The terminal is closed: the gateway is gone, the app counts down to its next try.
            by_hand[0].kill()
            by_hand[0].wait(10)
            shown = await until_status(
                j, lambda s: (countdown(s) or 0) >= 12, "a long countdown", timeout=90
            )
            assert "Reconnect now" in [n for _r, n in await shown_controls(j)], shown
            by_hand.append(start_by_hand(j.app, log))
            before = await chat_status(j)
            left = countdown(before)
            assert left is not None and left >= 3, f"too late to click: {before}"
            await j.desktop.screenshot("reconnecting-while-the-gateway-is-back")

            await j.click(await j.control("push button", "Reconnect now"))
            seen = [before]
            deadline = time.monotonic() + 30
            while not seen[-1].startswith("chat: connected"):
                j.alive()
                assert time.monotonic() < deadline, seen
                await asyncio.sleep(0.05)
                if (status := await chat_status(j)) != seen[-1]:
                    seen.append(status)
            # Connected while the countdown still ran: the click did it, not the timer.
            counting = [n for n in map(countdown, seen) if n is not None]
            assert counting and min(counting) >= 2, seen
            assert not [s for s in seen if "reconnecting now" in s], seen
            assert not await j.showing("push button", "Reconnect now")
            await j.desktop.screenshot("reconnected-at-once")
            await chat_once(j, "after reconnect now")
            await j.desktop.screenshot("answered-after-reconnect-now")
            await quit_app(j)
            # The app leaves a gateway it did not start running.
            assert by_hand[-1].poll() is None and port_open(j.app.gateway_port)
    finally:
        for proc in by_hand:
            stop_process_group(proc)


async def shown_controls(j: Journey) -> list[tuple[str, str]]:
    """(role, name) of every showing node."""
    out = []
    for seen in await j.atspi.walk(await j.root()):
        with contextlib.suppress(AtspiError, DBusError):
            if SHOWING in await j.atspi.states(seen.node):
                out.append((seen.role, seen.name))
    return out
