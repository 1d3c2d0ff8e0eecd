"""Paired devices: the durable record of which key may connect with which roles and scopes."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import cast

from gateway.state._codec import decode_list, encode_list, merge_lists, require_text
from gateway.state._db import Database
from gateway.state.errors import StateCorruptError
from gateway.state.records import ApprovalKind, DeviceRecord, RoleRemoval

__all__ = ["DeviceRegistry", "role_owns_scope"]

_COLUMNS = (
    "device_id, public_key, display_name, operator_label, platform, device_family, client_id, "
    "client_mode, roles, scopes, remote_ip, approved_via, created_at_ms, approved_at_ms, "
    "last_seen_at_ms, last_seen_reason"
)


def role_owns_scope(role: str, scope: str) -> bool:
    """Whether ``scope`` belongs to ``role``: ``operator.*`` scopes to operators, the rest to
    the other roles (the real gateway splits a device's scopes by role the same way)."""
    return scope.startswith("operator.") == (role == "operator")


def _opt(value: str | None) -> str | None:
    if value is None:
        return None
    stripped = value.strip()
    return stripped or None


class DeviceRegistry:
    """The ``devices`` table. Get one from :attr:`GatewayState.devices`."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def _record(self, row: sqlite3.Row) -> DeviceRecord:
        try:
            roles, scopes = decode_list(row["roles"]), decode_list(row["scopes"])
        except ValueError as exc:
            raise StateCorruptError(self._db.path, f"device {row['device_id']}: {exc}") from exc
        return DeviceRecord(
            device_id=row["device_id"],
            public_key=row["public_key"],
            roles=roles,
            scopes=scopes,
            approved_via=cast(ApprovalKind, row["approved_via"]),
            created_at_ms=row["created_at_ms"],
            approved_at_ms=row["approved_at_ms"],
            display_name=row["display_name"],
            operator_label=row["operator_label"],
            platform=row["platform"],
            device_family=row["device_family"],
            client_id=row["client_id"],
            client_mode=row["client_mode"],
            remote_ip=row["remote_ip"],
            last_seen_at_ms=row["last_seen_at_ms"],
            last_seen_reason=row["last_seen_reason"],
        )

    def get(self, device_id: str) -> DeviceRecord | None:
        """The paired device with this id, or None."""
        row = self._db.row(f"SELECT {_COLUMNS} FROM devices WHERE device_id = ?", (device_id,))
        return None if row is None else self._record(row)

    def list(self) -> list[DeviceRecord]:
        """Every paired device, most recently approved first."""
        rows = self._db.rows(
            f"SELECT {_COLUMNS} FROM devices ORDER BY approved_at_ms DESC, device_id"
        )
        return [self._record(row) for row in rows]

    def approve(
        self,
        device_id: str,
        public_key: str,
        *,
        role: str,
        scopes: Iterable[str],
        approved_via: ApprovalKind,
        now_ms: int,
        client_id: str | None = None,
        client_mode: str | None = None,
        display_name: str | None = None,
        platform: str | None = None,
        device_family: str | None = None,
        remote_ip: str | None = None,
        replace_metadata: bool = False,
    ) -> DeviceRecord:
        """Approve ``role`` (and ``scopes``) for a device, creating its record if needed.

        An existing record keeps its other roles and scopes (the new ones are merged in, in
        first-seen order), its ``created_at_ms`` and its operator label; its key and
        ``approved_at_ms`` are replaced. ``approved_via`` becomes the new kind, except that
        an owner's or a setup code's approval is kept when a later approval is of another
        kind (the real gateway's ``mergeApprovalKind``). Tokens are not touched: issue them
        with :class:`~gateway.state.tokens.DeviceTokens`.

        Args:
            replace_metadata: Take the client metadata (display name, platform, device
                family, client id and mode, remote address) exactly as given, None clearing
                a field, as the real gateway does when it approves a pairing request (the
                record then describes the client that asked). By default metadata not given
                here is kept.
        """
        device_id = require_text("device_id", device_id)
        public_key = require_text("public_key", public_key)
        role = require_text("role", role)
        with self._db.transaction(durable=True):
            existing = self.get(device_id)
            roles = merge_lists(existing.roles if existing else (), [role])
            merged = merge_lists(existing.scopes if existing else (), scopes)
            fields = {
                "display_name": _opt(display_name),
                "platform": _opt(platform),
                "device_family": _opt(device_family),
                "client_id": _opt(client_id),
                "client_mode": _opt(client_mode),
                "remote_ip": _opt(remote_ip),
            }
            kept = existing is not None and existing.approved_via in ("owner", "bootstrap")
            if existing is not None and kept and approved_via != "owner":
                approved_via = existing.approved_via
            if existing is None:
                self._db.execute(
                    "INSERT INTO devices (device_id, public_key, display_name, platform, "
                    "device_family, client_id, client_mode, roles, scopes, remote_ip, "
                    "approved_via, created_at_ms, approved_at_ms) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        device_id,
                        public_key,
                        fields["display_name"],
                        fields["platform"],
                        fields["device_family"],
                        fields["client_id"],
                        fields["client_mode"],
                        encode_list(roles),
                        encode_list(merged),
                        fields["remote_ip"],
                        approved_via,
                        now_ms,
                        now_ms,
                    ),
                )
            else:
                if replace_metadata:
                    assignments = ", ".join(f"{name} = ?" for name in fields)
                else:
                    assignments = ", ".join(f"{name} = coalesce(?, {name})" for name in fields)
                self._db.execute(
                    f"UPDATE devices SET public_key = ?, roles = ?, scopes = ?, "
                    f"approved_via = ?, approved_at_ms = ?, {assignments} WHERE device_id = ?",
                    (
                        public_key,
                        encode_list(roles),
                        encode_list(merged),
                        approved_via,
                        now_ms,
                        *fields.values(),
                        device_id,
                    ),
                )
            approved = self.get(device_id)
        assert approved is not None  # written in the transaction above
        return approved

    def remove(self, device_id: str) -> bool:
        """Unpair a device: its record, tokens, node surface and pending requests all go.

        Bootstrap tokens it redeemed stay, so ``device.pair.setupStatus`` still answers.

        Returns:
            False if no such device was paired.
        """
        with self._db.transaction(durable=True):
            cursor = self._db.execute("DELETE FROM devices WHERE device_id = ?", (device_id,))
            if cursor.rowcount:
                self._db.execute("DELETE FROM pairing_requests WHERE device_id = ?", (device_id,))
        return cursor.rowcount > 0

    def rename(self, device_id: str, label: str) -> DeviceRecord | None:
        """Set the operator's label (``operatorLabel``) for a device.

        Returns:
            The updated record, or None if the device is not paired.

        Raises:
            ValueError: If ``label`` is blank.
        """
        label = require_text("label", label)
        with self._db.transaction():
            self._db.execute(
                "UPDATE devices SET operator_label = ? WHERE device_id = ?", (label, device_id)
            )
            return self.get(device_id)

    def touch(
        self,
        device_id: str,
        now_ms: int,
        remote_ip: str | None,
        *,
        reason: str = "connect",
        platform: str | None = None,
    ) -> bool:
        """Record that the device was just seen (``lastSeenAtMs``/``lastSeenReason``).

        Args:
            platform: A new platform to pin, when the client's own app reported a newer
                version of the same OS (``"iOS 18.2"`` after ``"iOS 18.1"``); else None.

        Returns:
            False if the device is not paired.
        """
        with self._db.transaction():
            cursor = self._db.execute(
                "UPDATE devices SET last_seen_at_ms = ?, last_seen_reason = ?, "
                "remote_ip = coalesce(?, remote_ip), platform = coalesce(?, platform) "
                "WHERE device_id = ?",
                (now_ms, reason, _opt(remote_ip), _opt(platform), device_id),
            )
        return cursor.rowcount > 0

    def remove_role(self, device_id: str, role: str) -> RoleRemoval | None:
        """Take one approved role away from a device (``node.pair.remove`` for role node).

        The role's token and the role's own scopes go; so do the node surface and its pending
        request when the role is ``node``, and the role from pending pairing requests. A device
        left without roles is removed entirely; a mixed-role device keeps its row.

        Returns:
            What happened, or None if the device is not paired with that role.
        """
        with self._db.transaction(durable=True):
            device = self.get(device_id)
            if device is None or role not in device.roles:
                return None
            remaining = tuple(entry for entry in device.roles if entry != role)
            if not remaining:
                self.remove(device_id)
                return RoleRemoval(device_id, role, removed_device=True)
            scopes = tuple(
                scope
                for scope in device.scopes
                if any(role_owns_scope(kept, scope) for kept in remaining)
            )
            self._db.execute(
                "UPDATE devices SET roles = ?, scopes = ? WHERE device_id = ?",
                (encode_list(remaining), encode_list(scopes), device_id),
            )
            self._db.execute(
                "DELETE FROM device_tokens WHERE device_id = ? AND role = ?", (device_id, role)
            )
            if role == "node":
                self._db.execute("DELETE FROM node_surfaces WHERE node_id = ?", (device_id,))
                self._db.execute("DELETE FROM node_pair_requests WHERE node_id = ?", (device_id,))
            self._drop_role_from_pending(device_id, role)
        return RoleRemoval(device_id, role, removed_device=False)

    def _drop_role_from_pending(self, device_id: str, role: str) -> None:
        rows = self._db.rows(
            "SELECT request_id, roles, scopes FROM pairing_requests WHERE device_id = ?",
            (device_id,),
        )
        for row in rows:
            roles = decode_list(row["roles"])
            if role not in roles:
                continue
            left = tuple(entry for entry in roles if entry != role)
            if not left:
                self._db.execute(
                    "DELETE FROM pairing_requests WHERE request_id = ?", (row["request_id"],)
                )
                continue
            scopes = tuple(
                scope
                for scope in decode_list(row["scopes"])
                if any(role_owns_scope(kept, scope) for kept in left)
            )
            self._db.execute(
                "UPDATE pairing_requests SET role = ?, roles = ?, scopes = ? WHERE request_id = ?",
                (left[0], encode_list(left), encode_list(scopes), row["request_id"]),
            )
