"""The bundled gateway's supervisor against real child processes on loopback: a tiny TCP
server that dies on cue (backoff, the cap per minute, the last lines), and the real bundled
gateway killed with SIGKILL under a :class:`DesktopRuntime` (restarted, both sessions back)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Callable

import pytest

from openclaw_desktop.config import AppPaths
from openclaw_desktop.errors import ConfigError
from openclaw_desktop.interruption import CutCause, Interruption
from openclaw_desktop.runtime import DesktopRuntime, RuntimeTarget
from openclaw_desktop.supervisor import (
    GatewaySupervisor,
    RestartPolicy,
    SupervisorState,
    SupervisorStatus,
    listening,
)
from openclaw_desktop.transport import ConnectionState, GatewayConnection
from tests.helpers.ports import free_port

pytestmark = pytest.mark.timeout(120)

#: Listens on argv[1]; prints a line; exits with argv[2] after argv[3] seconds (never if < 0).
SERVER = """
import socket, sys, time
port, code, after = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port)); s.listen()
print(f"tiny gateway ready on {port}", flush=True)
if after < 0:
    time.sleep(3600)
time.sleep(after)
print("tiny gateway: fatal error, exiting", flush=True)
sys.exit(code)
"""


async def until(predicate: Callable[[], object], what: str, timeout: float = 30) -> None:
    """Poll ``predicate`` (bounded)."""
    try:
        async with asyncio.timeout(timeout):
            while not predicate():
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


def tiny(port: int, code: int = 3, after: float = -1) -> list[str]:
    """The command of a tiny gateway stand-in on ``port``."""
    return [sys.executable, "-c", SERVER, str(port), str(code), str(after)]


async def test_a_killed_child_is_restarted_after_the_backoff() -> None:
    """SIGKILL: restarting (with the exit), then running again on the same port."""
    port = free_port()
    seen: list[SupervisorStatus] = []
    supervisor = GatewaySupervisor(
        tiny(port), port, policy=RestartPolicy(backoff_s=(0.2,)), echo=None
    )
    supervisor.on_status(seen.append)
    await supervisor.start()
    try:
        first = supervisor.pid
        assert first is not None and listening(port)
        os.kill(first, signal.SIGKILL)
        await until(lambda: supervisor.status.restarts == 1, "the restart")
        await until(lambda: supervisor.status.state is SupervisorState.RUNNING, "running")
        assert supervisor.pid not in (None, first)
        restarting = [s for s in seen if s.state is SupervisorState.RESTARTING]
        assert restarting and restarting[0].exit_code == -signal.SIGKILL
        assert restarting[0].retry_in_s == 0.2
        assert listening(port)
    finally:
        await supervisor.aclose()
    assert supervisor.status.state is SupervisorState.STOPPED
    await until(lambda: not listening(port), "the port closed")


async def test_it_gives_up_past_the_cap_with_the_last_lines() -> None:
    """A child that keeps dying: capped restarts, then FAILED with its last log lines; the
    user's Try again starts it once more."""
    port = free_port()
    supervisor = GatewaySupervisor(
        tiny(port, code=3, after=0.3),
        port,
        policy=RestartPolicy(backoff_s=(0.05,), max_per_minute=2),
        echo=None,
    )
    await supervisor.start()
    try:
        await until(lambda: supervisor.status.state is SupervisorState.FAILED, "giving up")
        status = supervisor.status
        assert status.restarts == 2
        assert status.exit_code == 3
        assert status.last_lines[-1] == "tiny gateway: fatal error, exiting"
        assert "3 times in a minute" in (status.reason or "")
        await asyncio.sleep(0.5)
        assert supervisor.status.state is SupervisorState.FAILED, "no restart by itself"
        await supervisor.restart_now()
        await until(lambda: supervisor.status.restarts == 3, "the user's restart")
    finally:
        await supervisor.aclose()


async def test_a_child_that_cannot_start_is_a_config_error() -> None:
    """Exits before listening: start raises with its words and last lines."""
    port = free_port()
    command = [sys.executable, "-c", "print('no config here'); raise SystemExit(2)"]
    supervisor = GatewaySupervisor(command, port, echo=None)
    with pytest.raises(ConfigError, match="exited at start") as caught:
        await supervisor.start()
    assert "no config here" in str(caught.value)
    assert supervisor.status.state is SupervisorState.FAILED
    await supervisor.aclose()


async def test_an_occupied_port_is_attached_not_supervised() -> None:
    """Another process already listens: used as is, nothing started, nothing stopped."""
    port = free_port()
    other = await asyncio.create_subprocess_exec(*tiny(port), stdout=asyncio.subprocess.PIPE)
    try:
        assert other.stdout is not None
        await other.stdout.readline()
        supervisor = GatewaySupervisor(tiny(port), port, echo=None)
        await supervisor.start()
        assert supervisor.status.state is SupervisorState.ATTACHED and supervisor.pid is None
        await supervisor.aclose()
        assert other.returncode is None and listening(port)
    finally:
        other.kill()
        await other.wait()


async def test_the_bundled_gateway_killed_is_restarted_and_both_sessions_reconnect(
    home: AppPaths,
) -> None:
    """kill -9 of the real bundled gateway: the runtime's supervisor restarts it, the
    operator and node sessions reconnect at once, and the cut is a gateway stop."""
    port = free_port()
    runtime = DesktopRuntime(home, RuntimeTarget(port=port, node=True))
    cuts: list[Interruption] = []
    runtime.on_interruption(cuts.append)
    try:
        client = await asyncio.wait_for(runtime.start(), 60)
        node = runtime.node
        supervisor = runtime.supervisor
        assert node is not None and supervisor is not None
        await until(lambda: node.connection.status.state is ConnectionState.CONNECTED, "node")
        pid = supervisor.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        await until(lambda: supervisor.status.restarts == 1, "the restart", 60)
        for connection in (client.connection, node.connection):

            def back(c: GatewayConnection = connection) -> bool:
                return c.status.state is ConnectionState.CONNECTED

            await until(back, f"{connection.options.role} back", 60)
        assert supervisor.pid not in (None, pid)
        assert {c.role for c in cuts} == {"operator", "node"}
        assert {c.cause for c in cuts} == {CutCause.GATEWAY_STOPPED}
        assert runtime.last_interruption is not None
        assert await client.call("health", {}) is not None
    finally:
        await runtime.aclose()
    await until(lambda: not listening(port), "the gateway stopped with the app")
