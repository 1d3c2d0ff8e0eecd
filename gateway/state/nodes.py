"""Node capability approval (``node.pair.*``): which declared commands a paired node may expose.

Device pairing lets a node connect; this second layer gates its commands. A node declaring a
surface that is not approved gets one pending request. Re-declaring the same surface (same
caps, commands and permissions) reuses the request and moves its expiry to five minutes after
that retry; a different surface replaces it with a new request id. The server decides whether
a declaration needs a request at all (compare with :meth:`NodeSurfaces.approved`).
"""

from __future__ import annotations

import builtins
import json
import sqlite3
import uuid
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from gateway.state._codec import (
    decode_flags,
    decode_list,
    encode_flags,
    encode_list,
    normalize_list,
    require_text,
)
from gateway.state._db import Database
from gateway.state.devices import DeviceRegistry
from gateway.state.errors import StateCorruptError, UnknownDeviceError, UnknownRequestError
from gateway.state.node_records import NodePairRequest, NodeSurface, decode_host_stats
from gateway.state.records import PendingOutcome

__all__ = ["NODE_PAIR_REQUEST_TTL_MS", "NodeSurfaces"]

#: A pending node-surface request lives five minutes after the node's last retry.
NODE_PAIR_REQUEST_TTL_MS = 300_000

_SURFACE_SELECT = (
    "SELECT s.node_id, s.caps, s.commands, s.permissions, s.created_at_ms, s.approved_at_ms, "
    "coalesce(s.display_name, d.display_name) AS display_name, s.version, d.client_id, "
    "d.client_mode, d.platform, d.device_family, d.remote_ip, s.last_connected_at_ms, "
    "s.last_disconnected_at_ms, d.last_seen_at_ms, d.last_seen_reason, s.last_host_stats "
    "FROM node_surfaces s JOIN devices d ON d.device_id = s.node_id"
)
_REQUEST_SELECT = (
    "SELECT r.request_id, r.node_id, r.caps, r.commands, r.permissions, "
    "r.required_approve_scopes, r.silent, r.ts_ms, r.expires_at_ms, "
    "coalesce(r.client_id, d.client_id) AS client_id, "
    "coalesce(r.client_mode, d.client_mode) AS client_mode, "
    "coalesce(r.display_name, d.display_name) AS display_name, "
    "coalesce(r.platform, d.platform) AS platform, r.version, "
    "coalesce(r.device_family, d.device_family) AS device_family, "
    "coalesce(r.remote_ip, d.remote_ip) AS remote_ip "
    "FROM node_pair_requests r JOIN devices d ON d.device_id = r.node_id"
)


def _opt(value: str | None) -> str | None:
    if value is None:
        return None
    return value.strip() or None


def _frozen(flags: Mapping[str, bool] | None) -> Mapping[str, bool] | None:
    return None if flags is None else MappingProxyType(dict(flags))


class NodeSurfaces:
    """The ``node_surfaces`` and ``node_pair_requests`` tables (:attr:`GatewayState.nodes`)."""

    def __init__(self, db: Database, devices: DeviceRegistry) -> None:
        self._db = db
        self._devices = devices

    # ------------------------------------------------------------------ rows

    def _surface(self, row: sqlite3.Row) -> NodeSurface:
        try:
            caps, commands = decode_list(row["caps"]), decode_list(row["commands"])
            permissions = decode_flags(row["permissions"])
        except ValueError as exc:
            raise StateCorruptError(self._db.path, f"node {row['node_id']}: {exc}") from exc
        return NodeSurface(
            node_id=row["node_id"],
            commands=commands,
            caps=caps,
            permissions=_frozen(permissions),
            created_at_ms=row["created_at_ms"],
            approved_at_ms=row["approved_at_ms"],
            display_name=row["display_name"],
            version=row["version"],
            client_id=row["client_id"],
            client_mode=row["client_mode"],
            platform=row["platform"],
            device_family=row["device_family"],
            remote_ip=row["remote_ip"],
            last_connected_at_ms=row["last_connected_at_ms"],
            last_disconnected_at_ms=row["last_disconnected_at_ms"],
            last_seen_at_ms=row["last_seen_at_ms"],
            last_seen_reason=row["last_seen_reason"],
            last_host_stats=decode_host_stats(row["last_host_stats"]),
        )

    def _request(self, row: sqlite3.Row) -> NodePairRequest:
        try:
            caps, commands = decode_list(row["caps"]), decode_list(row["commands"])
            permissions = decode_flags(row["permissions"])
            required = decode_list(row["required_approve_scopes"])
        except ValueError as exc:
            raise StateCorruptError(
                self._db.path, f"node request {row['request_id']}: {exc}"
            ) from exc
        return NodePairRequest(
            request_id=row["request_id"],
            node_id=row["node_id"],
            commands=commands,
            caps=caps,
            permissions=_frozen(permissions),
            required_approve_scopes=required,
            silent=bool(row["silent"]),
            ts_ms=row["ts_ms"],
            expires_at_ms=row["expires_at_ms"],
            client_id=row["client_id"],
            client_mode=row["client_mode"],
            display_name=row["display_name"],
            platform=row["platform"],
            version=row["version"],
            device_family=row["device_family"],
            remote_ip=row["remote_ip"],
        )

    def _prune(self, now_ms: int) -> None:
        self._db.execute("DELETE FROM node_pair_requests WHERE expires_at_ms < ?", (now_ms,))

    def _pending_for(self, node_id: str, now_ms: int) -> NodePairRequest | None:
        row = self._db.row(
            f"{_REQUEST_SELECT} WHERE r.node_id = ? AND r.expires_at_ms >= ?", (node_id, now_ms)
        )
        return None if row is None else self._request(row)

    # ------------------------------------------------------------------ approved surfaces

    def approved(self, node_id: str) -> NodeSurface | None:
        """The approved surface of a node, or None if nothing was approved yet."""
        row = self._db.row(f"{_SURFACE_SELECT} WHERE s.node_id = ?", (node_id,))
        return None if row is None else self._surface(row)

    def list_approved(self) -> builtins.list[NodeSurface]:
        """Every approved surface, most recently approved first."""
        rows = self._db.rows(f"{_SURFACE_SELECT} ORDER BY s.approved_at_ms DESC, s.node_id")
        return [self._surface(row) for row in rows]

    def display_name(self, node_id: str) -> str | None:
        """The operator-facing name: set at approval or by :meth:`rename`, else the device's."""
        row = self._db.row(
            "SELECT coalesce(s.display_name, d.display_name) FROM devices d "
            "LEFT JOIN node_surfaces s ON s.node_id = d.device_id WHERE d.device_id = ?",
            (node_id,),
        )
        return None if row is None else row[0]

    def rename(self, node_id: str, display_name: str) -> NodeSurface | None:
        """Rename an approved node (``node.rename``); reconnects never overwrite this name.

        Returns:
            The updated surface, or None if the node has no approved surface.

        Raises:
            ValueError: If ``display_name`` is blank.
        """
        display_name = require_text("display_name", display_name)
        with self._db.transaction():
            self._db.execute(
                "UPDATE node_surfaces SET display_name = ? WHERE node_id = ?",
                (display_name, node_id),
            )
            return self.approved(node_id)

    def remove(self, node_id: str) -> bool:
        """``node.pair.remove``: take the ``node`` role from the device (see
        :meth:`DeviceRegistry.remove_role`): surface, pending request and node token go; a
        device with no other role is unpaired, a mixed-role device keeps its row.

        Returns:
            False if the device was not paired as a node.
        """
        with self._db.transaction(durable=True):
            removed = self._devices.remove_role(node_id, "node") is not None
            stray = self._db.execute("DELETE FROM node_surfaces WHERE node_id = ?", (node_id,))
        return removed or stray.rowcount > 0

    def record_connection(self, node_id: str, now_ms: int) -> bool:
        """Note that an approved node connected (``lastConnectedAtMs``)."""
        with self._db.transaction():
            cursor = self._db.execute(
                "UPDATE node_surfaces SET last_connected_at_ms = ? WHERE node_id = ?",
                (now_ms, node_id),
            )
        return cursor.rowcount > 0

    def record_host_stats(self, node_id: str, stats: Mapping[str, Any]) -> bool:
        """Save the node's latest host stats on its approved surface (False: it has none)."""
        text = json.dumps(dict(stats), separators=(",", ":"))
        with self._db.transaction():
            cursor = self._db.execute(
                "UPDATE node_surfaces SET last_host_stats = ? WHERE node_id = ?",
                (text, node_id),
            )
        return cursor.rowcount > 0

    def record_disconnection(self, node_id: str, now_ms: int) -> bool:
        """Note that an approved node disconnected (``lastDisconnectedAtMs``)."""
        with self._db.transaction():
            cursor = self._db.execute(
                "UPDATE node_surfaces SET last_disconnected_at_ms = ? WHERE node_id = ?",
                (now_ms, node_id),
            )
        return cursor.rowcount > 0

    # ------------------------------------------------------------------ pending requests

    def get(self, request_id: str, now_ms: int) -> NodePairRequest | None:
        """The pending request with this id, or None if unknown or expired."""
        row = self._db.row(
            f"{_REQUEST_SELECT} WHERE r.request_id = ? AND r.expires_at_ms >= ?",
            (request_id, now_ms),
        )
        return None if row is None else self._request(row)

    def list_pending(self, now_ms: int) -> builtins.list[NodePairRequest]:
        """Every live pending request, newest first; expired ones are deleted."""
        with self._db.transaction():
            self._prune(now_ms)
        rows = self._db.rows(f"{_REQUEST_SELECT} ORDER BY r.ts_ms DESC, r.request_id")
        return [self._request(row) for row in rows]

    def request(
        self,
        node_id: str,
        *,
        commands: Iterable[str],
        caps: Iterable[str],
        permissions: Mapping[str, bool] | None,
        required_approve_scopes: Iterable[str],
        now_ms: int,
        client_id: str | None = None,
        client_mode: str | None = None,
        display_name: str | None = None,
        platform: str | None = None,
        version: str | None = None,
        device_family: str | None = None,
        remote_ip: str | None = None,
        silent: bool = False,
    ) -> PendingOutcome[NodePairRequest]:
        """Create or refresh the node's pending surface request.

        Args:
            commands: Declared commands, already filtered by the command allowlist.
            required_approve_scopes: Operator scopes an approver needs (the server computes
                them from the commands; stored and shown as ``requiredApproveScopes``).

        Raises:
            UnknownDeviceError: The node is not a paired device.
        """
        node_id = require_text("node_id", node_id)
        declared = (normalize_list(commands), normalize_list(caps), dict(permissions or {}))
        with self._db.transaction():
            if self._devices.get(node_id) is None:
                raise UnknownDeviceError(node_id)
            self._prune(now_ms)
            existing = self._pending_for(node_id, now_ms)
            meta = (
                _opt(client_id),
                _opt(client_mode),
                _opt(display_name),
                _opt(platform),
                _opt(version),
                _opt(device_family),
                _opt(remote_ip),
            )
            if existing is not None and _same_surface(existing, *declared):
                self._db.execute(
                    "UPDATE node_pair_requests SET client_id = coalesce(?, client_id), "
                    "client_mode = coalesce(?, client_mode), "
                    "display_name = coalesce(?, display_name), platform = coalesce(?, platform), "
                    "version = coalesce(?, version), device_family = coalesce(?, device_family), "
                    "remote_ip = coalesce(?, remote_ip), required_approve_scopes = ?, "
                    "silent = ?, ts_ms = ?, expires_at_ms = ? WHERE request_id = ?",
                    (
                        *meta,
                        encode_list(normalize_list(required_approve_scopes)),
                        int(existing.silent and silent),
                        now_ms,
                        now_ms + NODE_PAIR_REQUEST_TTL_MS,
                        existing.request_id,
                    ),
                )
                refreshed = self.get(existing.request_id, now_ms)
                assert refreshed is not None  # updated in this transaction
                return PendingOutcome(refreshed, created=False)
            self._db.execute("DELETE FROM node_pair_requests WHERE node_id = ?", (node_id,))
            request_id = str(uuid.uuid4())
            self._db.execute(
                "INSERT INTO node_pair_requests (request_id, node_id, client_id, client_mode, "
                "display_name, platform, version, device_family, remote_ip, caps, commands, "
                "permissions, required_approve_scopes, silent, ts_ms, expires_at_ms) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    request_id,
                    node_id,
                    *meta,
                    encode_list(declared[1]),
                    encode_list(declared[0]),
                    encode_flags(permissions),
                    encode_list(normalize_list(required_approve_scopes)),
                    int(silent),
                    now_ms,
                    now_ms + NODE_PAIR_REQUEST_TTL_MS,
                ),
            )
            created = self.get(request_id, now_ms)
            assert created is not None  # inserted in this transaction
            superseded = (existing.request_id,) if existing is not None else ()
            return PendingOutcome(created, created=True, superseded=superseded)

    def approve(self, request_id: str, now_ms: int) -> NodeSurface:
        """Approve a pending surface: it replaces the node's approved surface.

        The operator-facing name of an already approved node is kept; ``approved_at_ms`` is
        ``now_ms`` but always moves forward, so each approval is distinguishable.

        Returns:
            The approved surface.

        Raises:
            UnknownRequestError: The request is unknown or expired.
        """
        with self._db.transaction(durable=True):
            request = self.get(request_id, now_ms)
            if request is None:
                raise UnknownRequestError(request_id)
            previous = self.approved(request.node_id)
            approved_at = now_ms if previous is None else max(now_ms, previous.approved_at_ms + 1)
            self._db.execute(
                "INSERT INTO node_surfaces (node_id, display_name, version, caps, commands, "
                "permissions, created_at_ms, approved_at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (node_id) DO UPDATE SET "
                "display_name = coalesce(node_surfaces.display_name, excluded.display_name), "
                "version = excluded.version, caps = excluded.caps, commands = excluded.commands, "
                "permissions = excluded.permissions, approved_at_ms = excluded.approved_at_ms",
                (
                    request.node_id,
                    request.display_name,
                    request.version,
                    encode_list(request.caps),
                    encode_list(request.commands),
                    encode_flags(request.permissions),
                    now_ms,
                    approved_at,
                ),
            )
            self._db.execute("DELETE FROM node_pair_requests WHERE request_id = ?", (request_id,))
            surface = self.approved(request.node_id)
        assert surface is not None  # written in the transaction above
        return surface

    def reject(self, request_id: str, now_ms: int) -> NodePairRequest | None:
        """Reject a pending surface; an earlier approved surface stays in force.

        Returns:
            The rejected request, or None if it is unknown or expired.
        """
        with self._db.transaction(durable=True):
            request = self.get(request_id, now_ms)
            if request is not None:
                self._db.execute(
                    "DELETE FROM node_pair_requests WHERE request_id = ?", (request_id,)
                )
        return request


def _same_surface(
    existing: NodePairRequest,
    commands: tuple[str, ...],
    caps: tuple[str, ...],
    permissions: dict[str, bool],
) -> bool:
    """Same caps and commands (as sets) and the same permissions."""
    return (
        set(existing.commands) == set(commands)
        and set(existing.caps) == set(caps)
        and dict(existing.permissions or {}) == permissions
    )
