"""`openclaw-desktop` with no subcommand: bundled gateway plus this computer as its node."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.ports import free_port, port_open
from tests.helpers.processes import stop_group

pytestmark = pytest.mark.timeout(120)


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENCLAW_DESKTOP_HOME": str(home)}
    env.pop("OPENCLAW_GATEWAY_TOKEN", None)
    return subprocess.run(
        [sys.executable, "-m", "openclaw_desktop.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_embedded_default_runs_gateway_and_node(tmp_path: Path) -> None:
    """No subcommand starts the bundled gateway, joins it as an approved node, stops cleanly."""
    port = free_port()
    log_path = tmp_path / "embedded.log"
    env = {**os.environ, "OPENCLAW_DESKTOP_HOME": str(tmp_path)}
    env.pop("OPENCLAW_GATEWAY_TOKEN", None)
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "openclaw_desktop.cli", "--gateway-port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while "node commands approved and active" not in log_path.read_text():
            assert proc.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.2)
        node_id = json.loads(_cli(tmp_path, "identity", "show").stdout)["deviceId"]
        url = f"ws://127.0.0.1:{port}"
        result = _cli(
            tmp_path, "nodes", "invoke", "--url", url, "--node", node_id, "--command", "device.info"
        )
        assert result.returncode == 0, result.stderr
        payload = json.loads(result.stdout)["payload"]
        assert payload["systemName"]
        token = (tmp_path / "state" / "gateway" / "gateway-token").read_text().strip()
        assert token not in log_path.read_text()
    finally:
        stop_group(proc)
    deadline = time.monotonic() + 10
    while port_open(port) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not port_open(port), "the bundled gateway outlived the app"
