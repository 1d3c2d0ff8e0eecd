"""``python -m gateway`` (also ``openclaw-desktop gateway``): run and administer the gateway."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Sequence

from gateway import __version__
from gateway.config import GatewayConfig
from gateway.hub import now_ms
from gateway.logfile import file_handler
from gateway.proxies import parse_proxy_entry
from gateway.setup_code import build_setup_payload, encode_setup_code, render_qr_terminal
from gateway.state import GatewayState, read_or_create_shared_token
from openclaw_desktop.log import JsonLinesFormatter, configure_logging
from openclaw_desktop.protocol import DEFAULT_GATEWAY_PORT

__all__ = ["main", "serve"]

log = logging.getLogger("gateway")


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _proxy(value: str) -> str:
    try:
        parse_proxy_entry(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value.strip()


def _add_run_args(parser: argparse.ArgumentParser) -> None:
    """The options of ``run`` (``install-service`` takes them too)."""
    parser.add_argument(
        "--bind",
        choices=["loopback", "lan"],
        default="loopback",
        help="loopback (default) or lan (all interfaces, for phones)",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_GATEWAY_PORT)
    parser.add_argument(
        "--tls", action="store_true", help="serve wss:// with a self-signed certificate"
    )
    parser.add_argument("--auth", choices=["token", "password", "none"], default="token")
    parser.add_argument("--password", help="shared password (with --auth password)")
    parser.add_argument("--allow", type=_csv, default=[], help="extra node commands to allow (a,b)")
    parser.add_argument("--deny", type=_csv, default=[], help="node commands to always deny (a,b)")
    parser.add_argument(
        "--mdns",
        choices=["off", "minimal", "full"],
        default=None,
        help="mDNS advertising (default: on with --bind lan)",
    )
    parser.add_argument(
        "--mdns-interfaces",
        type=_csv,
        default=None,
        help="interface addresses to advertise on (a,b; default: all)",
    )
    parser.add_argument(
        "--manual-pairing",
        action="store_true",
        help="do not approve devices on this machine automatically",
    )
    parser.add_argument("--display-name", help="name shown to phones on the LAN")
    parser.add_argument(
        "--trusted-proxy",
        type=_proxy,
        action="append",
        default=[],
        metavar="IP_OR_CIDR",
        help="a reverse proxy whose X-Forwarded-For names the client (repeatable; "
        "gateway.trustedProxies); forwarded headers from anyone else are refused",
    )
    parser.add_argument(
        "--allow-real-ip-fallback",
        action="store_true",
        help="from a trusted proxy, use X-Real-IP when X-Forwarded-For names no client",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="openclaw-desktop gateway", description="The bundled OpenClaw gateway"
    )
    parser.add_argument(
        "--version", action="version", version=f"openclaw-desktop gateway {__version__}"
    )
    parser.add_argument("-v", "--verbose", action="count", default=0)
    parser.add_argument(
        "--log-format",
        choices=["text", "json"],
        default="text",
        help="log lines on stderr as text (default) or one JSON object each",
    )
    parser.add_argument("--state-dir", help="state folder (database, token, TLS key)")
    sub = parser.add_subparsers(dest="command")
    _add_run_args(sub.add_parser("run", help="serve (the default)"))
    service = sub.add_parser(
        "install-service",
        help="run it as a systemd user service (takes the options of run)",
        description="Write a systemd user unit that runs `gateway run` with these options "
        "(and every node command of this app allowed, as the embedded default does), then "
        "enable and start it when a user systemd is reachable.",
    )
    _add_run_args(service)
    service.add_argument(
        "--no-start", action="store_true", help="enable it for the next login, do not start it"
    )
    sub.add_parser("uninstall-service", help="stop, disable and remove the systemd user unit")
    sub.add_parser("token", help="print the shared gateway token")
    setup = sub.add_parser("setup-code", help="print a one-time setup code and QR for a phone")
    setup.add_argument("--url", action="append", help="gateway URL phones should use (repeatable)")
    setup.add_argument("--port", type=int, default=DEFAULT_GATEWAY_PORT)
    setup.add_argument("--tls", action="store_true", help="the gateway serves wss://")
    setup.add_argument("--limited", action="store_true", help="no operator.admin for the phone")
    return parser


def lan_urls(port: int, tls: bool) -> list[str]:
    """URLs phones on the LAN can reach this machine's gateway at, best first.

    The IPv4 addresses of the network adapters (:func:`gateway.advertise.lan_addresses`:
    private RFC 1918 ones first, never loopback or link-local), so a hostname that resolves
    to 127.0.1.1 does not matter and no traffic is sent. IPv4 only, as the real gateway's
    LAN URL (its ``pickPrimaryLanIPv4``); at most 8, the real gateway's
    ``PAIRING_SETUP_MAX_URLS``. Empty when the machine has no such address.
    """
    from gateway.advertise import lan_addresses

    max_urls = 8
    scheme = "wss" if tls else "ws"
    try:
        addresses = lan_addresses(ipv6=False)
    except OSError as exc:  # adapters unreadable: callers fall back to loopback
        log.warning("could not list network addresses: %s", exc)
        return []
    return [f"{scheme}://{a}:{port}" for a in addresses[:max_urls]]


async def serve(config: GatewayConfig, *, ready: asyncio.Event | None = None) -> None:
    """Run a gateway until SIGINT/SIGTERM (or cancellation); the public entry point."""
    if config.auth_mode == "token" and config.token is None:
        config.token = read_or_create_shared_token(config.state_dir)
    # What is logged (at the chosen verbosity) also goes to the file logs.tail reads.
    log_file = file_handler(config.state_dir, logging.NOTSET)
    logging.getLogger().addHandler(log_file)
    try:
        await _serve(config, ready)
    finally:
        logging.getLogger().removeHandler(log_file)
        log_file.close()


async def _serve(config: GatewayConfig, ready: asyncio.Event | None) -> None:
    from gateway.server import GatewayServer

    server = GatewayServer(config)
    await server.start()
    if config.bind == "lan":
        server.app.setup_codes.public_urls = lan_urls(server.port, config.tls)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    _announce(f"gateway ready on {server.url}")
    if server.tls_fingerprint:
        _announce(f"TLS fingerprint (SHA-256): {server.tls_fingerprint}")
    if ready is not None:
        ready.set()
    try:
        await stop.wait()
    finally:
        await server.close()


def _setup_code(args: argparse.Namespace, config: GatewayConfig) -> int:
    urls = args.url or lan_urls(args.port, args.tls)
    if not urls:
        urls = [f"{'wss' if args.tls else 'ws'}://127.0.0.1:{args.port}"]
        print(
            "warning: no LAN address found; this code points at 127.0.0.1, so only this "
            "computer can use it (pass --url to name the address phones should use)",
            file=sys.stderr,
        )
    with GatewayState(config.state_dir / "gateway.sqlite3") as state:
        token, record = state.bootstrap.mint(now_ms(), access="limited" if args.limited else "full")
    pin: str | None = None
    if urls[0].startswith("wss://"):
        from gateway.tls import ensure_certificate

        pin = ensure_certificate(config.state_dir).fingerprint
    payload = build_setup_payload(
        urls[0], urls, token, expires_at_ms=record.expires_at_ms, tls_fingerprint=pin
    )
    code = encode_setup_code(payload)
    print(render_qr_terminal(code))
    print(f"Setup code (single use, valid 10 minutes):\n{code}\n")
    print(f"Gateway URL: {urls[0]}")
    print(
        "Scan it with the OpenClaw app (Settings > Gateway > Scan setup code), or paste the code."
    )
    log.debug("minted setup %s", record.setup_id)
    return 0


def _announce(text: str) -> None:
    """A line for whoever started the gateway, on stderr at every verbosity; a log record
    when the log is JSON lines, so the stream stays one object per line."""
    root = logging.getLogger()
    if any(isinstance(h.formatter, JsonLinesFormatter) for h in root.handlers):
        record = logging.LogRecord("gateway", logging.INFO, __file__, 0, text, None, None)
        for handler in root.handlers:
            handler.handle(record)
    else:
        print(text, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m gateway``."""
    args = _parser().parse_args(argv)
    # Text or JSON lines on stderr, redacted; the websockets library's frame dumps stay off
    # even at -vv (a connect frame's tail is a piece of its token).
    configure_logging(args.verbose, json_lines=args.log_format == "json")
    config = GatewayConfig()
    if args.state_dir:
        config.state_dir = args.state_dir
    command = args.command or "run"
    if command == "token":
        print(read_or_create_shared_token(config.state_dir))
        return 0
    if command == "setup-code":
        return _setup_code(args, config)
    if command in ("install-service", "uninstall-service"):
        from gateway import service

        return service.install(args) if command == "install-service" else service.uninstall()
    if args.command is None:
        args = _parser().parse_args([*(argv or []), "run"])
    config.bind = args.bind
    config.port = args.port
    config.tls = args.tls
    config.auth_mode = args.auth
    config.password = args.password
    config.nodes_allow = args.allow
    config.nodes_deny = args.deny
    config.mdns_mode = args.mdns
    config.mdns_interfaces = args.mdns_interfaces or None
    config.auto_approve_local = not args.manual_pairing
    config.display_name = args.display_name
    config.trusted_proxies = args.trusted_proxy
    config.allow_real_ip_fallback = args.allow_real_ip_fallback
    if config.auth_mode == "password" and not config.password:
        print("error: --auth password needs --password", file=sys.stderr)
        return 2
    if config.auth_mode == "none" and config.bind != "loopback":
        print("error: --auth none is only allowed with --bind loopback", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(config))
    except OSError as exc:
        print(f"error: cannot serve on port {config.port}: {exc}", file=sys.stderr)
        return 1
    return 0
