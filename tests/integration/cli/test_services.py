"""`openclaw-desktop gateway|node install-service / uninstall-service`: the systemd user units
are written where systemd reads them, pass `systemd-analyze verify`, and their ExecStart
really runs the gateway; systemctl is driven when a user systemd answers, else the user is
told what to run."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from openclaw_desktop.integration.command import EMBEDDED_ALLOW
from openclaw_desktop.integration.systemd import (
    GATEWAY_UNIT,
    NODE_UNIT,
    gateway_unit,
    install_service,
    uninstall_service,
)
from tests.helpers.ports import free_port, port_open

pytestmark = pytest.mark.timeout(120)

SCRIPT = Path(sys.executable).parent / "openclaw-desktop"


def _env(tmp_path: Path) -> dict[str, str]:
    """No user systemd reachable, whatever the machine has: a test never installs a real
    service for the user running it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCLAW_")}
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env.update(
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_RUNTIME_DIR=str(runtime),
        DBUS_SESSION_BUS_ADDRESS=f"unix:path={runtime}/no-bus",
        OPENCLAW_DESKTOP_HOME=str(tmp_path / "home"),
    )
    return env


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _exec_start(unit: str) -> list[str]:
    """ExecStart split as systemd would (the generated lines use only plain and "..." words)."""
    line = next(v for v in unit.splitlines() if v.startswith("ExecStart="))
    return [w.replace("%%", "%").replace("$$", "$") for w in shlex.split(line[10:])]


def _environment(unit: str) -> dict[str, str]:
    values = [line[12:] for line in unit.splitlines() if line.startswith("Environment=")]
    pairs = (shlex.split(v)[0].split("=", 1) for v in values)
    return {k: v.replace("%%", "%") for k, v in pairs}


def _verify(unit: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("systemd-analyze")
    assert tool is not None
    return subprocess.run(
        [tool, "--user", "verify", str(unit)],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_gateway_install_service_writes_a_unit_and_says_what_to_run(tmp_path: Path) -> None:
    env = _env(tmp_path)
    done = _cli(env, "gateway", "install-service", "--port", "18790", "--bind", "lan")
    assert done.returncode == 0, done.stderr
    unit_path = tmp_path / "config" / "systemd" / "user" / GATEWAY_UNIT
    unit = unit_path.read_text(encoding="utf-8")
    assert _exec_start(unit) == [
        str(SCRIPT),
        "gateway",
        "run",
        "--port",
        "18790",
        "--allow",
        ",".join(EMBEDDED_ALLOW),
        "--bind",
        "lan",
        "--auth",
        "token",
    ]
    assert _environment(unit)["OPENCLAW_DESKTOP_HOME"] == str(tmp_path / "home")
    assert "Restart=on-failure" in unit.splitlines()
    assert stat.S_IMODE(unit_path.stat().st_mode) == 0o644
    assert "no user systemd reachable" in done.stderr
    assert f"systemctl --user enable --now {GATEWAY_UNIT}" in done.stderr
    assert "systemctl --user daemon-reload" in done.stderr

    refused = _cli(env, "gateway", "install-service", "--auth", "password", "--password", "pw")
    assert refused.returncode == 2
    assert "readable in the unit file" in refused.stderr
    assert "pw" not in unit_path.read_text(encoding="utf-8")

    (unit_path.parent / "default.target.wants").mkdir()
    (unit_path.parent / "default.target.wants" / GATEWAY_UNIT).symlink_to(unit_path)
    done = _cli(env, "gateway", "uninstall-service")
    assert done.returncode == 0, done.stderr
    assert not unit_path.exists()
    assert not (unit_path.parent / "default.target.wants" / GATEWAY_UNIT).is_symlink()
    assert "systemctl --user daemon-reload" in done.stderr


def test_node_install_service(tmp_path: Path) -> None:
    env = _env(tmp_path)
    env.pop("OPENCLAW_GATEWAY_TOKEN", None)
    done = _cli(
        env, "node", "install-service", "--url", "ws://127.0.0.1:18790", "--display-name", "Lab pc"
    )
    assert done.returncode == 0, done.stderr
    unit = (tmp_path / "config" / "systemd" / "user" / NODE_UNIT).read_text(encoding="utf-8")
    assert _exec_start(unit) == [
        str(SCRIPT),
        "node",
        "--url",
        "ws://127.0.0.1:18790",
        "--display-name",
        "Lab pc",
    ]
    assert f"After={GATEWAY_UNIT}" in unit.splitlines()
    refused = _cli(env, "node", "install-service", "--token", "s3cret-token")
    assert refused.returncode == 2
    assert "readable in the unit file" in refused.stderr
    assert "s3cret-token" not in unit and "s3cret-token" not in refused.stderr
    done = _cli(env, "node", "uninstall-service")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "config" / "systemd" / "user" / NODE_UNIT).exists()


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze missing")
def test_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    env = _env(tmp_path)
    awkward = tmp_path / "home with 'quotes' 100% $HOME"
    env["OPENCLAW_DESKTOP_HOME"] = str(awkward)
    assert _cli(env, "gateway", "install-service", "--display-name", "Ann's 50% pc").returncode == 0
    assert _cli(env, "node", "install-service", "--display-name", 'say "hi"').returncode == 0
    units = tmp_path / "config" / "systemd" / "user"
    for name in (GATEWAY_UNIT, NODE_UNIT):
        done = _verify(units / name, tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
    assert _environment((units / GATEWAY_UNIT).read_text())["OPENCLAW_DESKTOP_HOME"] == str(awkward)
    # The check can fail: a relative ExecStart is refused.
    broken = units / "broken.service"
    broken.write_text(
        (units / GATEWAY_UNIT).read_text().replace(f"ExecStart={SCRIPT}", "ExecStart=bin/app")
    )
    assert _verify(broken, tmp_path).returncode != 0


def test_the_gateway_unit_command_runs_the_gateway(tmp_path: Path) -> None:
    """What systemd would start: ExecStart with the unit's environment serves, stops on TERM."""
    port = free_port()
    home = tmp_path / "home"
    unit = gateway_unit(
        ["run", "--port", str(port)], environment={"OPENCLAW_DESKTOP_HOME": str(home)}
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCLAW_")}
    env.update(_environment(unit))
    log_path = tmp_path / "gateway.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            _exec_start(unit),
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 30
        # "ready" is printed once its SIGTERM handler is in place.
        while "gateway ready on" not in log_path.read_text():
            assert proc.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.1)
        assert port_open(port)
        assert (home / "state" / "gateway" / "gateway-token").is_file()
        proc.send_signal(signal.SIGTERM)
        timeout_stop = int(re.findall(r"^TimeoutStopSec=(\d+)$", unit, re.M)[0])
        assert proc.wait(timeout_stop) == 0, log_path.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def _recording_systemctl(tmp_path: Path) -> tuple[str, Path]:
    """A stand-in for systemctl that records its arguments (there is no user systemd here)."""
    calls = tmp_path / "calls.txt"
    tool = tmp_path / "systemctl"
    tool.write_text(f'#!/bin/sh\necho "$*" >> {shlex.quote(str(calls))}\n', encoding="utf-8")
    tool.chmod(0o755)
    return str(tool), calls


def test_systemctl_is_driven_when_a_user_systemd_answers(tmp_path: Path) -> None:
    tool, calls = _recording_systemctl(tmp_path)
    units = tmp_path / "units"
    report = install_service(GATEWAY_UNIT, "[Unit]\n", directory=units, systemctl=tool)
    assert report.active and report.changed and not report.todo
    assert calls.read_text().splitlines() == [
        "--user show-environment",
        "--user daemon-reload",
        f"--user enable --now {GATEWAY_UNIT}",
        f"--user try-restart {GATEWAY_UNIT}",
    ]
    calls.unlink()
    again = install_service(GATEWAY_UNIT, "[Unit]\n", directory=units, systemctl=tool)
    assert not again.changed
    assert f"--user try-restart {GATEWAY_UNIT}" not in calls.read_text()
    calls.unlink()
    removed = uninstall_service(GATEWAY_UNIT, directory=units, systemctl=tool)
    assert removed.changed and not (units / GATEWAY_UNIT).exists()
    assert calls.read_text().splitlines() == [
        "--user show-environment",
        f"--user disable --now {GATEWAY_UNIT}",
        "--user daemon-reload",
    ]


def test_a_failing_systemctl_step_is_reported(tmp_path: Path) -> None:
    tool = tmp_path / "systemctl"
    tool.write_text(
        '#!/bin/sh\ncase "$*" in *enable*) echo "Unit file is masked." >&2; exit 1;; esac\n',
        encoding="utf-8",
    )
    tool.chmod(0o755)
    report = install_service(NODE_UNIT, "[Unit]\n", directory=tmp_path, systemctl=str(tool))
    assert not report.active
    assert any("Unit file is masked." in m for m in report.messages)
    assert report.todo[0] == f"systemctl --user enable --now {NODE_UNIT}"
