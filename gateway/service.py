"""``gateway install-service`` / ``uninstall-service``: the bundled gateway as a systemd user
service (unit text and ``systemctl`` handling live in ``openclaw_desktop.integration``)."""

from __future__ import annotations

import argparse
import sys

from gateway.errors import BundledGatewayError
from openclaw_desktop.integration.command import bundled_gateway_args
from openclaw_desktop.integration.systemd import (
    GATEWAY_UNIT,
    ServiceReport,
    gateway_unit,
    install_service,
    uninstall_service,
)

__all__ = ["install", "run_args", "uninstall"]


class ServiceArgsError(BundledGatewayError, ValueError):
    """The options cannot go into a unit file."""


def run_args(args: argparse.Namespace) -> list[str]:
    """``gateway [--state-dir D] run ...`` arguments equal to the parsed ``run`` options, with
    every node command of this app allowed (as the embedded default runs it)."""
    if args.password or args.auth == "password":
        raise ServiceArgsError(
            "a password would be readable in the unit file: use --auth token (the token is "
            "kept in the gateway's state folder, mode 0600)"
        )
    out = [f"--state-dir={args.state_dir}"] if args.state_dir else []
    out += bundled_gateway_args(args.port, allow=args.allow)
    out += ["--bind", args.bind, "--auth", args.auth]
    if args.tls:
        out.append("--tls")
    if args.deny:
        out += ["--deny", ",".join(args.deny)]
    if args.mdns:
        out += ["--mdns", args.mdns]
    if args.mdns_interfaces:
        out += ["--mdns-interfaces", ",".join(args.mdns_interfaces)]
    if args.manual_pairing:
        out.append("--manual-pairing")
    if args.display_name:
        out += ["--display-name", args.display_name]
    for proxy in args.trusted_proxy:
        out += ["--trusted-proxy", proxy]
    if args.allow_real_ip_fallback:
        out.append("--allow-real-ip-fallback")
    return out


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")


def _print(report: ServiceReport) -> None:
    for message in report.messages:
        _say(message)
    if report.todo:
        _say("To finish, run in your desktop session:")
        for command in report.todo:
            _say(f"  {command}")


def install(args: argparse.Namespace) -> int:
    """Write, enable and start the unit; 0 when written (even if systemd must be run by hand)."""
    if args.auth == "none" and args.bind != "loopback":
        _say("error: --auth none is only allowed with --bind loopback")
        return 2
    try:
        text = gateway_unit(run_args(args))
    except (ServiceArgsError, ValueError) as exc:
        _say(f"error: {exc}")
        return 2
    report = install_service(GATEWAY_UNIT, text, start=not args.no_start)
    _print(report)
    if report.active:
        _say("The gateway runs as a user service; `openclaw-desktop` attaches to it.")
    return 0


def uninstall() -> int:
    """Stop, disable and delete the unit."""
    _print(uninstall_service(GATEWAY_UNIT))
    return 0
