"""``openclaw-desktop devices …`` and ``openclaw-desktop nodes …``: pairing administration.

Each is one operator RPC against any gateway (the bundled one or the real OpenClaw one):
``device.pair.list/approve/reject`` and ``node.list``, ``node.pair.list/approve/reject``,
``node.invoke``.
"""

from __future__ import annotations

import argparse
import json
import uuid
from typing import Any

from openclaw_desktop.errors import ConfigError
from openclaw_desktop.protocol import Method

__all__ = ["add_admin_parsers", "admin_request"]

ADMIN_SCOPES = ("operator.read", "operator.write", "operator.admin", "operator.pairing")
#: The method of each ``devices``/``nodes`` action on a pairing request.
_RESOLVE_METHODS = {
    ("devices", "approve"): Method.DEVICE_PAIR_APPROVE,
    ("devices", "reject"): Method.DEVICE_PAIR_REJECT,
    ("nodes", "approve"): Method.NODE_PAIR_APPROVE,
    ("nodes", "reject"): Method.NODE_PAIR_REJECT,
}


def add_admin_parsers(sub: Any, add_connection_args: Any) -> None:
    """Register the ``devices`` and ``nodes`` subcommands."""
    devices = sub.add_parser("devices", help="device pairing: list, approve, reject")
    add_connection_args(devices)
    devices.add_argument("action", choices=["list", "approve", "reject"])
    devices.add_argument("request_id", nargs="?", help="pairing request id (approve/reject)")
    devices.add_argument("--json", action="store_true", help="print raw JSON")

    nodes = sub.add_parser("nodes", help="nodes: list, pending, approve, reject, invoke")
    add_connection_args(nodes)
    nodes.add_argument("action", choices=["list", "pending", "approve", "reject", "invoke"])
    nodes.add_argument("request_id", nargs="?", help="node pairing request id (approve/reject)")
    nodes.add_argument("--node", help="node id (invoke)")
    nodes.add_argument("--command", dest="command_name", help="command to invoke, e.g. device.info")
    nodes.add_argument("--params", default="{}", help="JSON params for invoke")
    nodes.add_argument("--invoke-timeout", type=int, default=30_000, help="ms (default 30000)")
    nodes.add_argument("--json", action="store_true", help="print raw JSON")


def admin_request(args: argparse.Namespace) -> tuple[str, Any, float]:
    """``(method, params, timeout_s)`` for a ``devices``/``nodes`` invocation."""
    needs_id = args.action in ("approve", "reject")
    if needs_id and not args.request_id:
        raise ConfigError(f"{args.command} {args.action} needs a request id")
    if needs_id:
        return _RESOLVE_METHODS[args.command, args.action], {"requestId": args.request_id}, 30.0
    if args.command == "devices":
        return Method.DEVICE_PAIR_LIST, {}, 30.0
    if args.action == "list":
        return Method.NODE_LIST, {}, 30.0
    if args.action == "pending":
        return Method.NODE_PAIR_LIST, {}, 30.0
    if not args.node or not args.command_name:
        raise ConfigError("nodes invoke needs --node and --command")
    try:
        params = json.loads(args.params)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--params is not valid JSON: {exc}") from None
    request = {
        "nodeId": args.node,
        "command": args.command_name,
        "params": params,
        "timeoutMs": args.invoke_timeout,
        "idempotencyKey": uuid.uuid4().hex,
    }
    return Method.NODE_INVOKE, request, args.invoke_timeout / 1000 + 5


def print_admin_result(args: argparse.Namespace, result: Any) -> None:
    """Human-readable output (or raw JSON with ``--json``)."""
    if args.json or args.action == "invoke":
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    if args.action in ("approve", "reject"):
        print(f"{args.action.removesuffix('e')}ed {args.request_id}")  # approved, rejected
        return
    if args.command == "devices":
        _print_rows(
            "pending",
            result.get("pending", []),
            ("requestId", "deviceId", "role", "clientId", "platform"),
        )
        _print_rows(
            "paired",
            result.get("paired", []),
            ("deviceId", "roles", "clientId", "platform", "approvedVia"),
        )
    elif args.action == "pending":
        _print_rows(
            "pending", result.get("pending", []), ("requestId", "nodeId", "displayName", "commands")
        )
    else:
        _print_rows(
            "nodes",
            result.get("nodes", []),
            ("nodeId", "displayName", "connected", "approvalState", "commands"),
        )


def _print_rows(title: str, rows: list[dict[str, Any]], columns: tuple[str, ...]) -> None:
    print(f"{title} ({len(rows)}):")
    for row in rows:
        cells = []
        for column in columns:
            value = row.get(column)
            if isinstance(value, list):
                value = ",".join(str(v) for v in value)
            if (
                column.endswith("Id")
                and isinstance(value, str)
                and len(value) > 16
                and column != "requestId"
            ):
                value = value[:16] + "…"
            cells.append(f"{column}={value}")
        print("  " + "  ".join(cells))
    if not rows:
        print("  (none)")
