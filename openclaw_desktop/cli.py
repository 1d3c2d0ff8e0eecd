"""``openclaw-desktop``: the headless node, one-shot operator calls, identity and doctor.

Exit codes: 0 ok, 1 the gateway refused the request, 2 bad usage or configuration,
3 authentication / identity failure, 4 TLS trust failure, 5 pairing required,
6 gateway unreachable.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from openclaw_desktop import __version__
from openclaw_desktop.cli_admin import add_admin_parsers, admin_request, print_admin_result
from openclaw_desktop.cli_integration import (
    NODE_ACTIONS,
    add_desktop_parser,
    desktop_command,
    node_service_command,
)
from openclaw_desktop.cli_launch import GATEWAY_PORT_ENV, launch_gateway, port_number
from openclaw_desktop.cli_settings import add_settings_parser, doctor, settings_command
from openclaw_desktop.config import AppPaths
from openclaw_desktop.embedded import GatewayKeepsStopping
from openclaw_desktop.errors import (
    AuthError,
    ConfigError,
    ConnectionClosed,
    GatewayError,
    IdentityError,
    OpenClawError,
    PairingRequired,
    ProtocolMismatch,
    ReconnectPaused,
    RequestOutcomeUnknown,
    RequestTimeout,
    TrustError,
)
from openclaw_desktop.identity import (
    IdentityStore,
    gateway_key,
)
from openclaw_desktop.integration.command import gateway_argv
from openclaw_desktop.log import configure_logging
from openclaw_desktop.protocol import DEFAULT_GATEWAY_PORT, Method, OperatorScope
from openclaw_desktop.protocol.version import loopback_url
from openclaw_desktop.runtime import DesktopRuntime, RuntimeTarget, bundled_token, operator_options
from openclaw_desktop.supervisor import GatewaySupervisor, SupervisorState, SupervisorStatus
from openclaw_desktop.transport import (
    ConnectionOptions,
    ConnectionState,
    ConnectionStatus,
    Endpoint,
    GatewayConnection,
)
from openclaw_desktop.trust import (
    TrustCallback,
    TrustPrompt,
    format_fingerprint,
    normalize_fingerprint,
)

if TYPE_CHECKING:  # the node pulls in the device adapters: the runtime loads it on use
    from openclaw_desktop.node.host import NodeHost

__all__ = ["build_parser", "main"]

log = logging.getLogger("openclaw.cli")

DEFAULT_URL = loopback_url(DEFAULT_GATEWAY_PORT)
DEFAULT_CALL_SCOPES = (
    OperatorScope.READ,
    OperatorScope.WRITE,
    OperatorScope.ADMIN,
    OperatorScope.APPROVALS,
    OperatorScope.PAIRING,
)


def _exit_code(error: BaseException) -> int:
    if isinstance(error, ReconnectPaused):
        return _exit_code(error.cause)
    if isinstance(error, TrustError):
        return 4
    if isinstance(error, PairingRequired):
        return 5
    if isinstance(error, AuthError | ProtocolMismatch | IdentityError):
        return 3
    if isinstance(error, ConfigError):
        return 2
    if isinstance(error, ConnectionClosed | RequestOutcomeUnknown | RequestTimeout | OSError):
        return 6
    if isinstance(error, GatewayError) and error.method == Method.CONNECT:
        return 3
    return 1


def _explain(error: BaseException) -> str:
    cause = error.cause if isinstance(error, ReconnectPaused) else error
    if isinstance(cause, PairingRequired) and cause.request_id:
        return (
            f"pairing required: this device waits for approval (requestId {cause.request_id}).\n"
            f"Approve it on the gateway host with:\n  {cause.approve_command}\n"
            f"(on a bundled gateway: openclaw-desktop devices approve {cause.request_id})"
        )
    return str(cause)


def _add_connection_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url",
        default=os.environ.get("OPENCLAW_GATEWAY_URL", DEFAULT_URL),
        help="gateway URL, ws:// (loopback/LAN only) or wss:// (default %(default)s)",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("OPENCLAW_GATEWAY_TOKEN"),
        help="shared gateway token (or env OPENCLAW_GATEWAY_TOKEN)",
    )
    parser.add_argument(
        "--password",
        default=os.environ.get("OPENCLAW_GATEWAY_PASSWORD"),
        help="shared gateway password (or env OPENCLAW_GATEWAY_PASSWORD)",
    )
    parser.add_argument(
        "--tls-fingerprint",
        help="pin the gateway's TLS certificate (SHA-256, hex; colons and sha256: prefix ok)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``openclaw-desktop`` (the GUI launcher reuses it)."""
    return _parser()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="openclaw-desktop", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"openclaw-desktop {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging")
    parser.add_argument(
        "--gateway-port",
        type=port_number,
        default=None,
        help="without a subcommand: use the bundled gateway on this port now, instead of the "
        f"gateway chosen last (default: env {GATEWAY_PORT_ENV}, else {DEFAULT_GATEWAY_PORT})",
    )
    parser.add_argument(
        "--gateway-url",
        default=None,
        help="without a subcommand: use this gateway now, instead of the gateway chosen last "
        "(its token from the keyring or env OPENCLAW_GATEWAY_TOKEN; headless: this computer "
        "joins it as a node)",
    )
    sub = parser.add_subparsers(dest="command")

    node = sub.add_parser("node", help="run this computer as an OpenClaw node (headless)")
    _add_connection_args(node)
    node.add_argument("--display-name", help="name shown to operators (default: hostname)")
    node.add_argument(
        "action",
        nargs="?",
        choices=NODE_ACTIONS,
        default="run",
        help="run (default), or install-service / uninstall-service: a systemd user unit "
        "running this node with these options",
    )

    call = sub.add_parser("call", help="one operator RPC; prints the JSON result")
    _add_connection_args(call)
    call.add_argument("method", help="gateway method, e.g. health or node.list")
    call.add_argument("params", nargs="?", default=None, help="JSON params (default none)")
    call.add_argument("--scopes", help="comma-separated operator scopes to request")
    call.add_argument("--timeout", type=float, default=30.0, help="seconds (default 30)")

    ident = sub.add_parser("identity", help="show or reset this device's identity")
    ident.add_argument("action", choices=["show", "reset"])

    sub.add_parser("doctor", help="what works here and why not")
    add_settings_parser(sub)
    add_desktop_parser(sub)
    sub.add_parser("gateway", help="run or administer the bundled gateway (see: gateway --help)")
    add_admin_parsers(sub, _add_connection_args)
    return parser


def _cli_trust_callback() -> TrustCallback | None:
    if not sys.stdin.isatty():
        return None

    async def ask(prompt: TrustPrompt) -> bool:
        print(
            f"\nThe gateway {prompt.endpoint} presents a TLS certificate that is not trusted yet."
            f"\nSHA-256 fingerprint:\n{format_fingerprint(prompt.fingerprint)}\n"
            "Verify it out of band (on the gateway host) before trusting it.",
            file=sys.stderr,
        )
        answer = await asyncio.to_thread(input, "Trust this certificate? [y/N] ")
        return answer.strip().lower() in ("y", "yes")

    return ask


def _bundled_token(args: argparse.Namespace, paths: AppPaths) -> str | None:
    """The bundled gateway's token, when talking to it on this machine without --token."""
    explicit: str | None = args.token
    if explicit or args.password:
        return explicit
    try:
        endpoint = Endpoint.parse(args.url)
    except ConfigError:
        return None
    if not endpoint.loopback:
        return None
    return bundled_token(paths)


def _pin(args: argparse.Namespace) -> str | None:
    """``--tls-fingerprint``, normalized (None when not given)."""
    if not args.tls_fingerprint:
        return None
    try:
        return normalize_fingerprint(args.tls_fingerprint)
    except ValueError as exc:
        raise ConfigError(f"--tls-fingerprint: {exc}") from None


def _target(args: argparse.Namespace, paths: AppPaths) -> RuntimeTarget:
    """The gateway ``--url`` names, with the connection flags given for this run."""
    return RuntimeTarget(
        url=args.url,
        token=_bundled_token(args, paths),
        # A token typed for this run (--token or OPENCLAW_GATEWAY_TOKEN) goes ahead of the
        # stored device token; refused on a trusted endpoint, one retry adds the stored one.
        token_first=bool(args.token),
        password=args.password,
        tls_fingerprint=_pin(args),
    )


def _operator_options(args: argparse.Namespace, paths: AppPaths) -> ConnectionOptions:
    return operator_options(paths, _target(args, paths), _cli_trust_callback())


def _remember_pin(options: ConnectionOptions) -> None:
    """Store the ``--tls-fingerprint`` pin, once a connection with it succeeded.

    Never before: a mistyped pin must not persist and break later runs without the flag.
    """
    pin, store = options.tls_fingerprint, options.credentials
    if pin is None or store is None or not Endpoint.parse(options.url).tls:
        return
    key = gateway_key(options.url)
    if store.tls_pin(key) != pin:
        store.save_tls_pin(key, pin)


def _local_shared_secret(options: ConnectionOptions) -> bool:
    """A loopback gateway and an explicit shared token or password."""
    try:
        loopback = Endpoint.parse(options.url).loopback
    except ConfigError:
        return False
    return loopback and bool(options.shared_token or options.password)


async def _operator_rpc(
    args: argparse.Namespace,
    paths: AppPaths,
    method: str,
    params: Any,
    *,
    scopes: tuple[str, ...],
    timeout: float,
) -> Any:
    options = _operator_options(args, paths)
    options.reconnect = False
    options.scopes = scopes
    if _local_shared_secret(options):
        # As the real CLI does (``shouldOmitDeviceIdentityForGatewayCall``): a cli/cli call to
        # a loopback gateway with the shared token or password connects without a device
        # identity, so it works before (and without) this device being paired, e.g. to
        # approve the first pairing requests on a gateway that does not auto-approve.
        options.signer = None
    async with GatewayConnection(options) as conn:
        await conn.wait_ready(timeout=timeout)
        _remember_pin(options)
        return await conn.request(method, params, timeout_s=timeout)


async def _call(args: argparse.Namespace, paths: AppPaths) -> int:
    scopes = (
        tuple(s.strip() for s in args.scopes.split(",") if s.strip())
        if args.scopes
        else tuple(s.value for s in DEFAULT_CALL_SCOPES)
    )
    params: Any = None
    if args.params is not None:
        try:
            params = json.loads(args.params)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"params are not valid JSON: {exc}") from None
    result = await _operator_rpc(
        args, paths, args.method, params, scopes=scopes, timeout=args.timeout
    )
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0


async def _admin(args: argparse.Namespace, paths: AppPaths) -> int:
    method, params, timeout = admin_request(args)
    scopes = tuple(s.value for s in DEFAULT_CALL_SCOPES)
    try:
        result = await _operator_rpc(args, paths, method, params, scopes=scopes, timeout=timeout)
    except GatewayError as exc:
        if not getattr(args, "json", False):
            raise
        # Scripts asked for JSON: the refusal as JSON too (same shape as the real CLI's).
        error = {"code": exc.code, "message": exc.message, "details": exc.details}
        print(json.dumps({"ok": False, "error": error}, indent=2, ensure_ascii=False))
        return _exit_code(exc)
    print_admin_result(args, result)
    return 0


def _exec_gateway(argv: Sequence[str]) -> int:
    """``openclaw-desktop gateway …`` runs ``python -m gateway …`` (the core never imports it)."""
    command = [*gateway_argv(), *argv]
    if os.name == "posix":
        os.execv(command[0], command)
    return subprocess.call(command)


async def _node(args: argparse.Namespace, paths: AppPaths) -> int:
    """``openclaw-desktop node``: this computer as a node of ``--url`` (see :func:`_run_node`)."""
    target = _target(args, paths)
    target.display_name = args.display_name
    return await _run_node(paths, target)


async def _embedded(args: argparse.Namespace, paths: AppPaths) -> int:
    """No subcommand, headless: the bundled gateway (supervised: restarted when it exits, as
    the window's) plus this computer as its node; or, with ``--gateway-url``, this computer
    as a node of that gateway."""
    choice = launch_gateway(args)
    if choice.url is not None:
        remote = argparse.Namespace(
            url=choice.url,
            token=choice.token,
            password=None,
            tls_fingerprint=None,
            display_name=None,
        )
        return await _node(remote, paths)
    return await _run_node(paths, RuntimeTarget(port=choice.port))


async def _run_node(paths: AppPaths, target: RuntimeTarget) -> int:
    """Run this computer as a node of ``target`` until SIGINT/SIGTERM (or a pause that needs
    the user), composed by :class:`DesktopRuntime` as the window's node is, with no operator
    session. On the bundled gateway: it is supervised (the node reconnects at once when it was
    restarted) and the run stops once it keeps stopping. This prints what happens."""
    runtime = DesktopRuntime(paths, target, _cli_trust_callback())
    stop = asyncio.Event()
    failure: list[BaseException] = []
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)

    def fail(error: BaseException) -> None:
        failure.append(error)
        stop.set()

    runtime.gateway_status_listeners.append(
        lambda status: _say_gateway(status, runtime.supervisor, fail)
    )
    runtime.node_started_listeners.append(lambda host: _say_node(host, fail))
    try:
        url, _token = await runtime.open_gateway()
        if runtime.supervisor is not None:
            pid = runtime.supervisor.pid
            print(
                f"OpenClaw Desktop: bundled gateway on {url}"
                + (f" (pid {pid})" if pid is not None else "")
                + ", this computer joins it as a node.\nPair a phone with "
                "`openclaw-desktop gateway setup-code`. Ctrl+C stops.",
                file=sys.stderr,
            )
        await runtime.start_node()
        await stop.wait()
    finally:
        await runtime.aclose()
    if failure:
        print(f"error: {_explain(failure[0])}", file=sys.stderr)
        return _exit_code(failure[0])
    return 0


def _say_gateway(
    status: SupervisorStatus,
    supervisor: GatewaySupervisor | None,
    fail: Callable[[BaseException], None],
) -> None:
    """The bundled gateway stopped, runs again (the runtime reconnects the node), or keeps
    stopping (the run ends)."""
    if status.state is SupervisorState.RESTARTING:
        _say(
            f"the bundled gateway stopped ({status.reason}); "
            f"starting it again in {status.retry_in_s:g} s"
        )
    elif status.state is SupervisorState.RUNNING and status.restarts > 0:
        pid = supervisor.pid if supervisor is not None else None
        _say(f"the bundled gateway runs again (restart {status.restarts}, pid {pid}); reconnecting")
    elif status.state is SupervisorState.FAILED:
        fail(GatewayKeepsStopping(status))


def _say_node(host: NodeHost, fail: Callable[[BaseException], None]) -> None:
    """Print the node's progress: connected, waiting for pairing (once per request), its
    command surface approved or pending; a pause that needs the user ends the run."""
    conn, options = host.connection, host.connection.options
    options.announce_pairing = False  # the banner below says it, once per request
    announced: set[str] = set()

    def on_status(status: ConnectionStatus) -> None:
        if status.state is ConnectionState.CONNECTED and status.hello is not None:
            _remember_pin(options)
            device = options.signer.device_id if options.signer else "?"
            commands = ", ".join(options.commands or ())
            _say(
                f"connected to {conn.endpoint.display} as node {device} ({commands}); "
                "waiting for invokes"
            )
        elif status.state is ConnectionState.AWAITING_APPROVAL and status.pairing:
            rid = status.pairing.request_id or "?"
            if rid not in announced:
                announced.add(rid)
                _say(
                    _explain(status.pairing)
                    + "\nWaiting; this node continues by itself once approved."
                )
        elif status.state is ConnectionState.PAUSED and status.error is not None:
            fail(status.error)

    def on_surface(state: str) -> None:
        if state == "pending":
            _say(
                "This node's commands wait for operator approval on the gateway:\n"
                "  openclaw nodes pending   then   openclaw nodes approve <requestId>\n"
                "(no reconnect needed; they become active as soon as they are approved)"
            )
        elif state == "approved":
            _say("node commands approved and active")
        else:
            _say(f"node command surface: {state}")

    conn.on_status(on_status)
    host.session.surface_listeners.append(on_surface)


def _say(text: str) -> None:
    print(text, file=sys.stderr)


def _identity(args: argparse.Namespace, paths: AppPaths) -> int:
    store = IdentityStore(paths.identity_file)
    identity = store.reset() if args.action == "reset" else store.load_or_create()
    print(
        json.dumps(
            {
                "deviceId": identity.device_id,
                "publicKey": identity.public_key,
                "path": str(paths.identity_file),
            },
            indent=2,
        )
    )
    if args.action == "reset":
        print(
            "A new identity was created; approve this device again on each gateway.",
            file=sys.stderr,
        )
    return 0


def main(
    argv: Sequence[str] | None = None, *, render_png: Callable[[int], bytes] | None = None
) -> int:
    """Entry point of ``openclaw-desktop``; ``render_png`` (from the UI, which has Qt)
    renders the icon for ``desktop install``."""
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw and raw[0] == "gateway":
        return _exec_gateway(raw[1:])
    args = _parser().parse_args(raw)
    configure_logging(args.verbose)
    paths = AppPaths.default()
    try:
        if args.command == "call":
            return asyncio.run(_call(args, paths))
        if args.command == "node":
            if args.action != "run":
                return node_service_command(args)
            return asyncio.run(_node(args, paths))
        if args.command == "desktop":
            return desktop_command(args, render_png)
        if args.command in ("devices", "nodes"):
            return asyncio.run(_admin(args, paths))
        if args.command == "identity":
            return _identity(args, paths)
        if args.command == "doctor":
            return doctor(paths)
        if args.command == "settings":
            return settings_command(args, paths)
        return asyncio.run(_embedded(args, paths))
    except (OpenClawError, OSError, TimeoutError) as exc:
        if isinstance(exc, TimeoutError):
            print("error: timed out waiting for the gateway", file=sys.stderr)
            return 6
        print(f"error: {_explain(exc)}", file=sys.stderr)
        return _exit_code(exc)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
