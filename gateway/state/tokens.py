"""Device tokens: one bearer token per paired device and role (``hello-ok.auth.deviceToken``).

Only the SHA-256 of a token is kept at rest (column ``token_sha256``): verification hashes
the presented token and compares in constant time, and nothing in the database can be turned
back into a working token. The token itself exists only in the ``hello-ok`` (or
``device.token.rotate``) answer that hands it to the device, which stores it.

The real gateway keeps its device tokens in its state so that a paired device
authenticating again some other way (shared token, setup code) gets its *existing* token back.
Without the plaintext this gateway gives such a device a new token instead (the old token's
scopes while they still cover the connection) and the old one stops working; the clients
store whatever ``hello-ok.auth.deviceToken`` says. Databases from schema 3 and 4 held the
plaintext too: schema 5 drops it (see :mod:`gateway.state._schema`). A revoked token keeps
its record; rotation writes a new hash and the old token stops working.
"""

from __future__ import annotations

import builtins
import hmac
import sqlite3
from collections.abc import Iterable
from dataclasses import replace

from gateway.state._codec import (
    decode_list,
    encode_list,
    hash_token,
    new_token,
    normalize_list,
    wall_clock_ms,
)
from gateway.state._db import Database
from gateway.state.devices import DeviceRegistry, role_owns_scope
from gateway.state.errors import ScopeNotApprovedError, StateCorruptError, UnknownDeviceError
from gateway.state.records import DeviceRecord, TokenRecord

__all__ = ["DeviceTokens"]

_COLUMNS = "device_id, role, scopes, created_at_ms, rotated_at_ms, revoked_at_ms, last_used_at_ms"


class DeviceTokens:
    """The ``device_tokens`` table. Get one from :attr:`GatewayState.tokens`."""

    def __init__(self, db: Database, devices: DeviceRegistry) -> None:
        self._db = db
        self._devices = devices

    def _record(self, row: sqlite3.Row) -> TokenRecord:
        try:
            scopes = decode_list(row["scopes"])
        except ValueError as exc:
            raise StateCorruptError(self._db.path, f"token {row['device_id']}: {exc}") from exc
        return TokenRecord(
            device_id=row["device_id"],
            role=row["role"],
            scopes=scopes,
            created_at_ms=row["created_at_ms"],
            rotated_at_ms=row["rotated_at_ms"],
            revoked_at_ms=row["revoked_at_ms"],
            last_used_at_ms=row["last_used_at_ms"],
        )

    def _get(self, device_id: str, role: str) -> TokenRecord | None:
        row = self._db.row(
            f"SELECT {_COLUMNS} FROM device_tokens WHERE device_id = ? AND role = ?",
            (device_id, role),
        )
        return None if row is None else self._record(row)

    def _approved_device(self, device_id: str, role: str) -> DeviceRecord:
        device = self._devices.get(device_id)
        if device is None or role not in device.roles:
            raise UnknownDeviceError(device_id, role)
        return device

    @staticmethod
    def _check_scopes(device: DeviceRecord, role: str, scopes: tuple[str, ...]) -> None:
        for scope in scopes:
            if scope not in device.scopes or not role_owns_scope(role, scope):
                raise ScopeNotApprovedError(device.device_id, role, scope)

    def _write(
        self,
        device_id: str,
        role: str,
        scopes: tuple[str, ...],
        *,
        created_at_ms: int,
        rotated_at_ms: int | None,
        last_used_at_ms: int | None,
    ) -> str:
        token = new_token()
        self._db.execute(
            "INSERT OR REPLACE INTO device_tokens (device_id, role, token_sha256, scopes, "
            "created_at_ms, rotated_at_ms, revoked_at_ms, last_used_at_ms) "
            "VALUES (?, ?, ?, ?, ?, ?, NULL, ?)",
            (
                device_id,
                role,
                hash_token(token),
                encode_list(scopes),
                created_at_ms,
                rotated_at_ms,
                last_used_at_ms,
            ),
        )
        return token

    def issue(self, device_id: str, role: str, scopes: Iterable[str], now_ms: int) -> str:
        """Issue a fresh token for an approved role, replacing any earlier one.

        Returns:
            The token (43 characters of unpadded base64url).

        Raises:
            UnknownDeviceError: The device is not paired with ``role``.
            ScopeNotApprovedError: A scope is not approved for the device, or is another
                role's scope (``operator.*`` scopes belong to operator tokens only).
        """
        wanted = normalize_list(scopes)
        with self._db.transaction(durable=True):
            device = self._approved_device(device_id, role)
            self._check_scopes(device, role, wanted)
            return self._write(
                device_id,
                role,
                wanted,
                created_at_ms=now_ms,
                rotated_at_ms=None,
                last_used_at_ms=None,
            )

    def rotate(self, device_id: str, role: str, scopes: Iterable[str] | None, now_ms: int) -> str:
        """Replace a role's token (``device.token.rotate``); the old one stops working.

        Args:
            scopes: The new token's scopes; None keeps the current token's scopes (or, with no
                token yet, the device's approved scopes owned by ``role``).

        Returns:
            The new token. ``created_at_ms`` of the record is kept, ``rotated_at_ms`` is now,
            and a revoked token comes back to life as the new one.

        Raises:
            UnknownDeviceError: The device is not paired with ``role``.
            ScopeNotApprovedError: A scope is outside the device's approved scopes.
        """
        with self._db.transaction(durable=True):
            device = self._approved_device(device_id, role)
            existing = self._get(device_id, role)
            if scopes is not None:
                wanted = normalize_list(scopes)
            elif existing is not None:
                wanted = existing.scopes
            else:
                wanted = tuple(scope for scope in device.scopes if role_owns_scope(role, scope))
            self._check_scopes(device, role, wanted)
            return self._write(
                device_id,
                role,
                wanted,
                created_at_ms=existing.created_at_ms if existing else now_ms,
                rotated_at_ms=now_ms,
                last_used_at_ms=existing.last_used_at_ms if existing else None,
            )

    def verify(
        self, device_id: str, role: str, token: str, *, now_ms: int | None = None
    ) -> TokenRecord | None:
        """Check a presented device token in constant time.

        Args:
            now_ms: When given and the token is valid, recorded as ``last_used_at_ms``.

        Returns:
            The token's record, or None if there is no token for the device and role, it was
            revoked, or it does not match.
        """
        row = self._db.row(
            f"SELECT {_COLUMNS}, token_sha256 FROM device_tokens WHERE device_id = ? AND role = ?",
            (device_id, role),
        )
        presented = hash_token(token)
        if row is None:
            hmac.compare_digest(presented, presented)  # same work whether or not a row exists
            return None
        matches = hmac.compare_digest(presented, bytes(row["token_sha256"]))
        if not matches or row["revoked_at_ms"] is not None:
            return None
        if now_ms is not None:
            self.mark_used(device_id, role, now_ms)
            return replace(self._record(row), last_used_at_ms=now_ms)
        return self._record(row)

    def mark_used(self, device_id: str, role: str, now_ms: int) -> None:
        """Record ``last_used_at_ms`` of a token that was just accepted."""
        with self._db.transaction():
            self._db.execute(
                "UPDATE device_tokens SET last_used_at_ms = ? WHERE device_id = ? AND role = ?",
                (now_ms, device_id, role),
            )

    def revoke(self, device_id: str, role: str, now_ms: int | None = None) -> bool:
        """Revoke a role's token (``device.token.revoke``); the record stays, marked revoked.

        Args:
            now_ms: ``revoked_at_ms``; the wall clock when omitted.

        Returns:
            False if the device has no token for that role. Revoking twice keeps the first
            ``revoked_at_ms``.
        """
        with self._db.transaction(durable=True):
            cursor = self._db.execute(
                "UPDATE device_tokens SET revoked_at_ms = coalesce(revoked_at_ms, ?) "
                "WHERE device_id = ? AND role = ?",
                (wall_clock_ms() if now_ms is None else now_ms, device_id, role),
            )
        return cursor.rowcount > 0

    def get(self, device_id: str, role: str) -> TokenRecord | None:
        """The token record (active or revoked) for a device and role, or None."""
        return self._get(device_id, role)

    def list(self, device_id: str) -> builtins.list[TokenRecord]:
        """Every token record of a device (active and revoked), ordered by role."""
        rows = self._db.rows(
            f"SELECT {_COLUMNS} FROM device_tokens WHERE device_id = ? ORDER BY role",
            (device_id,),
        )
        return [self._record(row) for row in rows]

    def scopes(self, device_id: str, role: str) -> tuple[str, ...] | None:
        """The scopes of the device's active token for ``role``, or None without one."""
        record = self._get(device_id, role)
        if record is None or not record.active:
            return None
        return record.scopes
