"""systemd user units for the bundled gateway and the headless node.

``openclaw-desktop gateway install-service`` and ``openclaw-desktop node install-service``
write a unit into ``$XDG_CONFIG_HOME/systemd/user`` whose ``ExecStart`` is this app's
absolute command (:func:`~.command.app_argv`), then ``systemctl --user daemon-reload`` and
``enable --now`` it when a user systemd answers; otherwise they say what to run. Units never
hold a token or password: the node reads the bundled gateway's token from its state folder
and keeps its device token in the keyring after the first pairing.

No Qt, no network; the only processes run are ``systemctl``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from openclaw_desktop.integration.command import app_argv, systemd_exec

__all__ = [
    "GATEWAY_UNIT",
    "NODE_UNIT",
    "PASSED_ENV",
    "ServiceReport",
    "gateway_unit",
    "install_service",
    "node_unit",
    "passed_environment",
    "uninstall_service",
    "unit_dir",
    "user_systemd_reachable",
]

GATEWAY_UNIT = "openclaw-desktop-gateway.service"
NODE_UNIT = "openclaw-desktop-node.service"
PASSED_ENV = ("OPENCLAW_DESKTOP_HOME", "OPENCLAW_DESKTOP_GATEWAY_STATE")
"""Variables that choose where state lives: a unit gets the values in effect at install."""
TIMEOUT_S = 30.0


def unit_dir() -> Path:
    """``$XDG_CONFIG_HOME/systemd/user`` (default ``~/.config/systemd/user``)."""
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "systemd" / "user"


def passed_environment() -> dict[str, str]:
    """The :data:`PASSED_ENV` variables that are set now."""
    return {k: os.environ[k] for k in PASSED_ENV if os.environ.get(k)}


def _env_line(key: str, value: str) -> str:
    if any(c in value for c in "\n\r"):
        raise ValueError(f"{key} contains a line break")
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'Environment="{key}={escaped}"'


def _unit(
    description: str,
    argv: Sequence[str],
    *,
    environment: Mapping[str, str],
    after: Sequence[str] = (),
) -> str:
    unit = ["[Unit]", f"Description={description}"]
    unit += [f"After={name}" for name in after]
    service = [
        "[Service]",
        "Type=simple",
        f"ExecStart={systemd_exec(argv)}",
        "Restart=on-failure",
        "RestartSec=5",
        # It stops within two seconds of SIGTERM; leave room, then SIGKILL.
        "TimeoutStopSec=15",
        "UMask=0077",
        "NoNewPrivileges=true",
        'Environment="PYTHONUNBUFFERED=1"',
        *(_env_line(k, v) for k, v in sorted(environment.items())),
    ]
    install = ["[Install]", "WantedBy=default.target"]
    return "\n".join([*unit, "", *service, "", *install]) + "\n"


def gateway_unit(
    gateway_args: Sequence[str],
    *,
    argv: Sequence[str] | None = None,
    environment: Mapping[str, str] | None = None,
) -> str:
    """The bundled gateway's unit: ``<app> gateway <gateway_args>``."""
    command = [*(argv or app_argv()), "gateway", *gateway_args]
    env = passed_environment() if environment is None else environment
    return _unit("OpenClaw Desktop bundled gateway", command, environment=env)


def node_unit(
    node_args: Sequence[str],
    *,
    argv: Sequence[str] | None = None,
    environment: Mapping[str, str] | None = None,
) -> str:
    """The headless node's unit: ``<app> node <node_args>``; ordered after the gateway's
    unit, so a node of this computer's own gateway finds it running."""
    command = [*(argv or app_argv()), "node", *node_args]
    env = passed_environment() if environment is None else environment
    return _unit(
        "OpenClaw Desktop node (this computer as an OpenClaw node)",
        command,
        environment=env,
        after=(GATEWAY_UNIT, "graphical-session.target"),
    )


@dataclass
class ServiceReport:
    """What installing or removing a unit did; :attr:`todo` holds commands left to the user."""

    unit: Path
    changed: bool = False
    active: bool = False
    """Whether systemd enabled and started it (install) or stopped it (uninstall)."""
    messages: list[str] = field(default_factory=list)
    todo: list[str] = field(default_factory=list)


def _systemctl(systemctl: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [systemctl, "--user", *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def user_systemd_reachable(systemctl: str | None) -> bool:
    """Whether ``systemctl --user`` reaches a user service manager."""
    if systemctl is None:
        return False
    try:
        return _systemctl(systemctl, "show-environment").returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _default_systemctl() -> str | None:
    return shutil.which("systemctl")


def install_service(
    name: str,
    text: str,
    *,
    directory: Path | None = None,
    systemctl: str | None = "",
    start: bool = True,
) -> ServiceReport:
    """Write the unit ``name`` and, when a user systemd answers, enable (and start) it.

    Args:
        systemctl: Path of ``systemctl``; ``""`` looks it up on ``PATH``; None never runs it.
        start: ``enable --now`` (True) or only ``enable``.
    """
    path = (directory or unit_dir()) / name
    report = ServiceReport(path)
    try:
        changed = path.read_text(encoding="utf-8") != text
    except FileNotFoundError:
        changed = True
    if changed:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.chmod(0o644)
        os.replace(tmp, path)
    report.changed = changed
    report.messages.append(f"{'wrote' if changed else 'unchanged'}: {path}")
    tool = _default_systemctl() if systemctl == "" else systemctl
    enable = ["enable", "--now", name] if start else ["enable", name]
    steps = [["daemon-reload"], enable]
    if changed and start:
        steps.append(["try-restart", name])  # a running older version picks up the change
    if not user_systemd_reachable(tool):
        report.messages.append("no user systemd reachable from here (systemctl --user)")
        report.todo = ["systemctl --user " + " ".join(step) for step in steps[:2]]
        return report
    assert tool is not None
    for step in steps:
        done = _systemctl(tool, *step)
        if done.returncode != 0:
            report.messages.append(
                f"systemctl --user {' '.join(step)} failed: {done.stderr.strip()[:300]}"
            )
            report.todo = ["systemctl --user " + " ".join(s) for s in steps[steps.index(step) :]]
            return report
    report.active = start
    report.messages.append(f"{'enabled and started' if start else 'enabled'}: {name}")
    return report


def uninstall_service(
    name: str, *, directory: Path | None = None, systemctl: str | None = ""
) -> ServiceReport:
    """Stop and disable the unit ``name`` (when a user systemd answers) and delete it."""
    base = directory or unit_dir()
    path = base / name
    report = ServiceReport(path)
    tool = _default_systemctl() if systemctl == "" else systemctl
    reachable = user_systemd_reachable(tool)
    if reachable and path.exists():
        assert tool is not None
        done = _systemctl(tool, "disable", "--now", name)
        if done.returncode == 0:
            report.active = True
            report.messages.append(f"stopped and disabled: {name}")
        else:
            report.messages.append(f"systemctl --user disable failed: {done.stderr.strip()[:300]}")
    # The enablement link, in case systemctl could not remove it.
    wants = base / "default.target.wants" / name
    if wants.is_symlink():
        wants.unlink()
    if path.exists():
        path.unlink()
        report.changed = True
        report.messages.append(f"removed: {path}")
    else:
        report.messages.append(f"not installed: {path}")
    if reachable:
        assert tool is not None
        _systemctl(tool, "daemon-reload")
    elif report.changed:
        report.messages.append("no user systemd reachable from here (systemctl --user)")
        report.todo = [f"systemctl --user stop {name}", "systemctl --user daemon-reload"]
    return report
