"""The embedded default attaches to a bundled gateway that already runs (as the systemd user
service would run it) instead of starting a second one, and leaves it running at exit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.ports import free_port, port_open
from tests.helpers.processes import stop_group, wait_for_log

pytestmark = pytest.mark.timeout(120)


def _gateways_on(port: int) -> list[int]:
    """Pids of processes whose command line runs a gateway on ``port``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"gateway" in argv and b"run" in argv and str(port).encode() in argv:
            found.append(int(proc.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs /proc")
def test_embedded_default_attaches_to_a_running_gateway(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCLAW_")}
    env["OPENCLAW_DESKTOP_HOME"] = str(tmp_path)
    service_log, app_log = tmp_path / "service.log", tmp_path / "app.log"
    cli = [sys.executable, "-m", "openclaw_desktop.cli"]
    with service_log.open("w") as out:
        # What the gateway's unit runs (`openclaw-desktop gateway run ...`).
        service = subprocess.Popen(
            [*cli, "gateway", "run", "--port", str(port), "--allow", "device.info"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    app: subprocess.Popen[bytes] | None = None
    try:
        wait_for_log(service_log, "gateway ready on", service, 30)
        assert _gateways_on(port) == [service.pid]
        with app_log.open("w") as out:
            app = subprocess.Popen(
                [*cli, "--gateway-port", str(port)],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        wait_for_log(app_log, "node commands approved and active", app, 60)
        assert f"using the gateway already running on 127.0.0.1:{port}" in app_log.read_text()
        assert _gateways_on(port) == [service.pid], "a second gateway was started"
        stop_group(app)
        assert app.returncode == 0, app_log.read_text()
        assert service.poll() is None, "the app stopped a gateway it did not start"
        assert port_open(port)
    finally:
        if app is not None:
            stop_group(app)
        stop_group(service)
