"""Pending device pairing requests (``device.pair.*``).

A device that is not approved gets a pending request; the real gateway answers its connect
with ``NOT_PAIRED`` carrying the ``requestId``. A retry that asks for nothing new (same key,
role and scopes already requested) reuses the request and pushes its expiry to five minutes
after the retry; a retry that asks for more replaces every pending request of the device with
one new request for the union (the old ids are reported as superseded). Expired requests are
dropped when requests are listed or created.
"""

from __future__ import annotations

import builtins
import sqlite3
import uuid
from collections.abc import Iterable

from gateway.state._codec import decode_list, encode_list, merge_lists, require_text
from gateway.state._db import Database
from gateway.state.bootstrap import BootstrapTokens
from gateway.state.devices import DeviceRegistry
from gateway.state.errors import StateCorruptError
from gateway.state.records import ApprovalKind, PairingDecision, PairingRequest, PendingOutcome

__all__ = ["PAIRING_REQUEST_TTL_MS", "PairingRequests"]

#: A pending device pairing request lives five minutes after its last retry.
PAIRING_REQUEST_TTL_MS = 300_000

_COLUMNS = (
    "request_id, device_id, public_key, role, roles, scopes, display_name, platform, "
    "device_family, client_id, client_mode, remote_ip, silent, is_repair, ts_ms, "
    "refreshed_at_ms, expires_at_ms"
)


def _opt(value: str | None) -> str | None:
    if value is None:
        return None
    return value.strip() or None


class PairingRequests:
    """The ``pairing_requests`` table. Get one from :attr:`GatewayState.pairing`."""

    def __init__(self, db: Database, devices: DeviceRegistry, bootstrap: BootstrapTokens) -> None:
        self._db = db
        self._devices = devices
        self._bootstrap = bootstrap

    def _record(self, row: sqlite3.Row) -> PairingRequest:
        try:
            roles, scopes = decode_list(row["roles"]), decode_list(row["scopes"])
        except ValueError as exc:
            raise StateCorruptError(self._db.path, f"request {row['request_id']}: {exc}") from exc
        return PairingRequest(
            request_id=row["request_id"],
            device_id=row["device_id"],
            public_key=row["public_key"],
            role=row["role"],
            roles=roles,
            scopes=scopes,
            silent=bool(row["silent"]),
            is_repair=bool(row["is_repair"]),
            ts_ms=row["ts_ms"],
            expires_at_ms=row["expires_at_ms"],
            refreshed_at_ms=row["refreshed_at_ms"],
            display_name=row["display_name"],
            platform=row["platform"],
            device_family=row["device_family"],
            client_id=row["client_id"],
            client_mode=row["client_mode"],
            remote_ip=row["remote_ip"],
        )

    def _prune(self, now_ms: int) -> None:
        self._db.execute("DELETE FROM pairing_requests WHERE expires_at_ms < ?", (now_ms,))

    def get(self, request_id: str, now_ms: int) -> PairingRequest | None:
        """The pending request with this id, or None if unknown or expired."""
        row = self._db.row(
            f"SELECT {_COLUMNS} FROM pairing_requests WHERE request_id = ? AND expires_at_ms >= ?",
            (request_id, now_ms),
        )
        return None if row is None else self._record(row)

    def list_pending(self, now_ms: int) -> builtins.list[PairingRequest]:
        """Every live pending request, newest first; expired ones are deleted."""
        with self._db.transaction():
            self._prune(now_ms)
        rows = self._db.rows(f"SELECT {_COLUMNS} FROM pairing_requests ORDER BY ts_ms DESC")
        return [self._record(row) for row in rows]

    def for_device(self, device_id: str, now_ms: int) -> builtins.list[PairingRequest]:
        """The live pending requests of one device (normally at most one), newest first."""
        rows = self._db.rows(
            f"SELECT {_COLUMNS} FROM pairing_requests WHERE device_id = ? AND expires_at_ms >= ? "
            "ORDER BY ts_ms DESC",
            (device_id, now_ms),
        )
        return [self._record(row) for row in rows]

    def request(
        self,
        device_id: str,
        public_key: str,
        *,
        role: str,
        scopes: Iterable[str],
        now_ms: int,
        client_id: str | None = None,
        client_mode: str | None = None,
        display_name: str | None = None,
        platform: str | None = None,
        device_family: str | None = None,
        remote_ip: str | None = None,
        silent: bool = False,
    ) -> PendingOutcome[PairingRequest]:
        """Create or refresh the pending request for a device that wants ``role``/``scopes``.

        Returns:
            The request in force, whether it was created by this call, and the ids of the
            requests it replaced.
        """
        device_id = require_text("device_id", device_id)
        public_key = require_text("public_key", public_key)
        role = require_text("role", role)
        wanted = merge_lists(scopes)
        with self._db.transaction():
            self._prune(now_ms)
            existing = self.for_device(device_id, now_ms)
            if len(existing) == 1 and _covers(existing[0], public_key, role, wanted):
                current = existing[0]
                self._db.execute(
                    "UPDATE pairing_requests SET display_name = coalesce(?, display_name), "
                    "platform = coalesce(?, platform), device_family = coalesce(?, device_family), "
                    "client_id = coalesce(?, client_id), client_mode = coalesce(?, client_mode), "
                    "remote_ip = coalesce(?, remote_ip), silent = ?, is_repair = ?, "
                    "refreshed_at_ms = ?, expires_at_ms = ? WHERE request_id = ?",
                    (
                        _opt(display_name),
                        _opt(platform),
                        _opt(device_family),
                        _opt(client_id),
                        _opt(client_mode),
                        _opt(remote_ip),
                        int(current.silent and silent),
                        int(current.is_repair or self._devices.get(device_id) is not None),
                        now_ms,
                        now_ms + PAIRING_REQUEST_TTL_MS,
                        current.request_id,
                    ),
                )
                refreshed = self.get(current.request_id, now_ms)
                assert refreshed is not None  # updated in this transaction
                return PendingOutcome(refreshed, created=False)
            same_key = [entry for entry in existing if entry.public_key == public_key]
            roles = merge_lists(*(entry.roles for entry in same_key), [role])
            merged = merge_lists(*(entry.scopes for entry in same_key), wanted)
            superseded = tuple(entry.request_id for entry in existing)
            self._db.execute("DELETE FROM pairing_requests WHERE device_id = ?", (device_id,))
            request_id = str(uuid.uuid4())
            self._db.execute(
                f"INSERT INTO pairing_requests ({_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)",
                (
                    request_id,
                    device_id,
                    public_key,
                    role,
                    encode_list(roles),
                    encode_list(merged),
                    _opt(display_name),
                    _opt(platform),
                    _opt(device_family),
                    _opt(client_id),
                    _opt(client_mode),
                    _opt(remote_ip),
                    int(silent and all(entry.silent for entry in existing)),
                    int(self._devices.get(device_id) is not None),
                    now_ms,
                    now_ms + PAIRING_REQUEST_TTL_MS,
                ),
            )
            created = self.get(request_id, now_ms)
            assert created is not None  # inserted in this transaction
            return PendingOutcome(created, created=True, superseded=superseded)

    def resolve(
        self,
        request_id: str,
        decision: PairingDecision,
        now_ms: int,
        *,
        approved_via: ApprovalKind = "owner",
    ) -> PairingRequest | None:
        """Answer a pending request and delete it, atomically with the consequences.

        ``approved`` approves every role and scope of the request on the device record (see
        :meth:`DeviceRegistry.approve`; the record takes the request's client metadata, as
        on the real gateway) in the same transaction, so a crash cannot lose the
        request without approving the device. ``rejected`` also deletes bootstrap tokens
        bound to the device and key, as the real gateway does. Tokens are not issued here;
        a revoked token of an approved role is deleted (the role is in force again).

        Returns:
            The resolved request, or None if it is unknown or expired.
        """
        with self._db.transaction(durable=True):
            request = self.get(request_id, now_ms)
            if request is None:
                return None
            self._db.execute("DELETE FROM pairing_requests WHERE request_id = ?", (request_id,))
            if decision == "approved":
                for role in request.roles:
                    self._devices.approve(
                        request.device_id,
                        request.public_key,
                        role=role,
                        scopes=request.scopes,
                        approved_via=approved_via,
                        now_ms=now_ms,
                        client_id=request.client_id,
                        client_mode=request.client_mode,
                        display_name=request.display_name,
                        platform=request.platform,
                        device_family=request.device_family,
                        remote_ip=request.remote_ip,
                        replace_metadata=True,
                    )
                    # A revoked token no longer stands for the role once it is approved
                    # again: the next connect is issued a new one.
                    self._db.execute(
                        "DELETE FROM device_tokens WHERE device_id = ? AND role = ? "
                        "AND revoked_at_ms IS NOT NULL",
                        (request.device_id, role),
                    )
            else:
                self._bootstrap.revoke_for_device(request.device_id, request.public_key)
        return request


def _covers(existing: PairingRequest, public_key: str, role: str, scopes: tuple[str, ...]) -> bool:
    """Whether a retry asks for nothing the pending request does not already ask for.

    Unlike the real gateway, the retry's role only has to be among the request's roles, not
    equal to its primary role: a device connecting as node and as operator would otherwise
    replace its merged request (with a new id) on every alternate retry.
    """
    return (
        existing.public_key == public_key
        and role in existing.roles
        and set(scopes) <= set(existing.scopes)
    )
