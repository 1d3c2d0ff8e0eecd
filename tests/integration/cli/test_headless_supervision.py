"""Headless ``openclaw-desktop`` (no subcommand) supervises its bundled gateway as the window
does: killed with SIGKILL, the gateway is started again on the same port and this computer's
node reconnects to it at once (an invoke through the new gateway reaches it); a gateway that
keeps stopping (its state unusable) is given up after the cap per minute, and the run ends
with exit code 6 and the gateway's last lines. With ``--gateway-url`` it starts no gateway
and joins that one as a node instead."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.ports import free_port, port_open
from tests.helpers.processes import stop_group, wait_for_log

pytestmark = pytest.mark.timeout(150)

CONNECTED = "connected to 127.0.0.1:{port} as node"


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCLAW_")}
    env["OPENCLAW_DESKTOP_HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _headless(home: Path, port: int, log: Path, *args: str, **env: str) -> subprocess.Popen[bytes]:
    with log.open("w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "openclaw_desktop.cli", "--gateway-port", str(port), *args],
            env={**_env(home), **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "openclaw_desktop.cli", *args],
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _gateway_pid(log: Path) -> int:
    found = re.search(r"bundled gateway on ws://\S+ \(pid (\d+)\)", log.read_text())
    assert found, log.read_text()
    return int(found.group(1))


def _wait_count(log: Path, text: str, count: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while log.read_text(errors="replace").count(text) < count:
        assert proc.poll() is None, log.read_text(errors="replace")
        assert time.monotonic() < deadline, log.read_text(errors="replace")
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_killed_gateway_is_restarted_and_the_node_reconnects(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "headless.log"
    proc = _headless(tmp_path, port, log)
    try:
        wait_for_log(log, "node commands approved and active", proc, 90)
        first = _gateway_pid(log)
        assert _alive(first) and port_open(port)
        os.kill(first, signal.SIGKILL)

        wait_for_log(log, "the bundled gateway stopped (killed by signal 9)", proc, 30)
        wait_for_log(log, "the bundled gateway runs again (restart 1, pid ", proc, 60)
        _wait_count(log, CONNECTED.format(port=port), 2, proc)
        again = re.search(r"runs again \(restart 1, pid (\d+)\)", log.read_text())
        assert again, log.read_text()
        second = int(again.group(1))
        assert second != first and _alive(second) and not _alive(first)
        assert port_open(port)

        # The node is really back: an invoke through the restarted gateway reaches it.
        node_id = json.loads(_cli(tmp_path, "identity", "show").stdout)["deviceId"]
        url = f"ws://127.0.0.1:{port}"
        done = _cli(
            tmp_path, "nodes", "invoke", "--url", url, "--node", node_id, "--command", "device.info"
        )
        assert done.returncode == 0, done.stderr + log.read_text()
        assert json.loads(done.stdout)["payload"]["systemName"]
        token = (tmp_path / "state" / "gateway" / "gateway-token").read_text().strip()
        assert token not in log.read_text()

        stop_group(proc)
        assert proc.returncode == 0, log.read_text()
    finally:
        stop_group(proc)
    deadline = time.monotonic() + 10
    while port_open(port) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not port_open(port), "the restarted gateway outlived the headless run"


def test_a_gateway_that_keeps_stopping_ends_the_run_with_its_last_lines(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "headless.log"
    proc = _headless(tmp_path, port, log)
    try:
        wait_for_log(log, "node commands approved and active", proc, 90)
        first = _gateway_pid(log)
        # Its state becomes unusable (as after a disk fault): every restart exits at once.
        state = tmp_path / "state" / "gateway"
        broken = state / "broken.sqlite3"
        broken.write_bytes(b"this is not a database\n" * 200)
        os.replace(broken, state / "gateway.sqlite3")
        for extra in state.glob("gateway.sqlite3-*"):
            extra.unlink()
        os.kill(first, signal.SIGKILL)

        code = proc.wait(90)
        output = log.read_text(errors="replace")
        assert code == 6, output
        assert "starting it again in" in output
        assert "error: the bundled gateway keeps stopping" in output, output
        # The gateway's own words come with it (the last lines it logged).
        tail = output.split("error: the bundled gateway keeps stopping", 1)[1]
        assert "file is not a database" in tail, output
        token = (state / "gateway-token").read_text().strip()
        assert token not in output
    finally:
        stop_group(proc)
    assert not port_open(port)


def test_a_gateway_url_is_joined_as_a_node_and_no_gateway_is_started(tmp_path: Path) -> None:
    from tests.helpers.bundled_gateway import BundledGateway

    port = free_port()
    log = tmp_path / "headless.log"
    with BundledGateway.start() as remote:
        proc = _headless(
            tmp_path,
            port,
            log,
            "--gateway-url",
            remote.url,
            OPENCLAW_GATEWAY_TOKEN=remote.token,
        )
        try:
            wait_for_log(log, CONNECTED.format(port=remote.port), proc, 60)
            assert not port_open(port), "a bundled gateway was started beside the URL given"
            assert not (tmp_path / "state" / "gateway").exists()
            assert remote.token not in log.read_text()
            stop_group(proc)
            assert proc.returncode == 0, log.read_text()
        finally:
            stop_group(proc)
