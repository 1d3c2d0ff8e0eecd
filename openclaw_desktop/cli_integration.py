"""``openclaw-desktop desktop install|uninstall`` and ``openclaw-desktop node
install-service|uninstall-service``: desktop integration and the node's systemd user unit."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable

from openclaw_desktop.integration import systemd, xdg
from openclaw_desktop.integration.command import app_argv

__all__ = [
    "NODE_ACTIONS",
    "add_desktop_parser",
    "desktop_command",
    "integration_status",
    "node_service_command",
]

NODE_ACTIONS = ("run", "install-service", "uninstall-service")


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")


def add_desktop_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``desktop`` subcommand."""
    desktop = sub.add_parser(
        "desktop",
        help="add or remove the menu entry, icons and openclaw:// link handler (Linux)",
        description="Install this app's desktop entry, AppStream metadata and icons into "
        "$XDG_DATA_HOME (~/.local/share) and make it the handler of openclaw:// links.",
    )
    desktop.add_argument("action", choices=["install", "uninstall"])


def desktop_command(
    args: argparse.Namespace, render_png: Callable[[int], bytes] | None = None
) -> int:
    """Run ``desktop install|uninstall``; ``render_png`` renders the PNG icons (Qt)."""
    if not sys.platform.startswith("linux"):
        _say("error: desktop integration is only written for Linux (freedesktop) so far")
        return 2
    if args.action == "install":
        report = xdg.install(app_argv(), render_png=render_png, xdg_mime=shutil.which("xdg-mime"))
        _say(f"installed {len(report.written)} files, e.g. {report.written[0]}")
    else:
        report = xdg.uninstall()
        _say(f"removed {len(report.removed)} files")
    for note in report.notes:
        _say(note)
    return 0


def node_service_command(args: argparse.Namespace) -> int:
    """Run ``node install-service|uninstall-service``."""
    if args.action == "uninstall-service":
        report = systemd.uninstall_service(systemd.NODE_UNIT)
    else:
        if args.token or args.password:
            _say(
                "error: a token or password would be readable in the unit file. Connect once "
                "with `openclaw-desktop node --url URL --token TOKEN` (this device's own token "
                "is then kept in the keyring), then install the service without --token and "
                "without OPENCLAW_GATEWAY_TOKEN / OPENCLAW_GATEWAY_PASSWORD set. A node of the "
                "bundled gateway on this computer needs no token."
            )
            return 2
        node_args = ["--url", args.url]
        if args.tls_fingerprint:
            node_args += ["--tls-fingerprint", args.tls_fingerprint]
        if args.display_name:
            node_args += ["--display-name", args.display_name]
        try:
            text = systemd.node_unit(node_args)
        except ValueError as exc:
            _say(f"error: {exc}")
            return 2
        report = systemd.install_service(systemd.NODE_UNIT, text)
    for message in report.messages:
        _say(message)
    if report.todo:
        _say("To finish, run in your desktop session:")
        for command in report.todo:
            _say(f"  {command}")
    return 0


def integration_status() -> list[str]:
    """``doctor`` lines: the desktop entry, the link handler and the service units."""
    entry = xdg.data_home() / "applications" / xdg.DESKTOP_FILE
    lines = [
        f"desktop entry: {entry}"
        if entry.exists()
        else "desktop entry: not installed (openclaw-desktop desktop install)"
    ]
    for name, command in ((systemd.GATEWAY_UNIT, "gateway"), (systemd.NODE_UNIT, "node")):
        unit = systemd.unit_dir() / name
        lines.append(
            f"{command} service: {unit}"
            if unit.exists()
            else f"{command} service: not installed (openclaw-desktop {command} install-service)"
        )
    return lines
