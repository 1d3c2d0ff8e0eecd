"""Journey: the bundled gateway is killed while a reply streams. The cut reply is marked
interrupted (not "stopped", which is what Stop says), the app starts its gateway again and
reconnects by itself, the status bar says connected again, and the next message is answered."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import time
from pathlib import Path

import pytest
from dbus_fast.errors import DBusError

from tests.helpers.atspi import AtspiError
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.journey_app import Journey
from tests.journeys.conftest import OpenJourney

pytestmark = [pytest.mark.journey, pytest.mark.timeout(240)]


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


async def chat_status(j: Journey) -> str:
    """What the status bar says about the chat connection (the label described so)."""
    for seen in await j.atspi.walk(await j.root()):
        if seen.role == "label":
            with contextlib.suppress(AtspiError, DBusError):
                if await j.atspi.description(seen.node) == "Chat connection":
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
