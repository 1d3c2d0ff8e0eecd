"""Setup-code bootstrap tokens (``device.pair.setupCode`` / ``setupStatus``).

Life of a setup code: :meth:`BootstrapTokens.mint` makes a single-use token valid for ten
minutes. The first device that presents it (:meth:`~BootstrapTokens.redeem`) binds it to its
id and key; the same device may present it again while its pairing is pending, any other
device is refused. Once the server has issued that device its hand-off tokens it calls
:meth:`~BootstrapTokens.consume`; the token can never be redeemed again and the completion
stays visible to ``setupStatus`` for twenty minutes. Only the token's SHA-256 is stored.

What a redemption uses up follows the real gateway (``redeemDeviceBootstrapTokenProfile``):
a connect that is not the phone hand-off redeems one *leg* (its role and scopes,
:meth:`~BootstrapTokens.redeem_leg`); the server consumes the code once the legs cover every
role of its profile, so an operator-only connect does not use up a node + operator code.
While a redemption is pending (the device awaits approval) the bound device must ask for
the same role and scopes again (the real gateway's ``pendingProfile``).

All of it is in the ``bootstrap_tokens`` row (schema 4): the ``voice-node`` profile (stored as
access ``node`` plus a marker), the redeemed legs and the pending request, so a gateway
restarted mid-setup answers the device exactly as before the restart. A ``voice-node`` code
minted before schema 4 has no marker and stays a ``node`` code (narrower, never wider).
"""

from __future__ import annotations

import hmac
import sqlite3
import uuid
from collections.abc import Callable, Sequence
from typing import Literal, cast

from gateway.state._codec import (
    decode_list,
    encode_list,
    hash_token,
    new_token,
    require_text,
    wall_clock_ms,
)
from gateway.state._db import Database
from gateway.state.errors import StateCorruptError
from gateway.state.records import BootstrapRecord, SetupAccess

__all__ = [
    "BOOTSTRAP_TOKEN_TTL_MS",
    "SETUP_COMPLETION_RETENTION_MS",
    "BootstrapTokens",
    "SetupProfile",
]

#: A setup code can be redeemed for ten minutes after it was minted.
BOOTSTRAP_TOKEN_TTL_MS = 600_000
#: A completed setup stays visible to ``device.pair.setupStatus`` this long (twice the TTL).
SETUP_COMPLETION_RETENTION_MS = 2 * BOOTSTRAP_TOKEN_TTL_MS

#: The profile a setup code was minted with: the stored access levels, and ``voice-node``
#: (node + operator.read/operator.talk for embedded voice nodes), which is stored as ``node``.
SetupProfile = Literal["full", "limited", "node", "voice-node"]

#: One role and its (profile-bounded, sorted) scopes, as a connect asks for them.
_Leg = tuple[str, tuple[str, ...]]


_COLUMNS = (
    "setup_id, access, issued_at_ms, expires_at_ms, device_id, public_key, bound_at_ms, "
    "last_used_at_ms, consumed_at_ms, device_name, delivery"
)


class BootstrapTokens:
    """The ``bootstrap_tokens`` table. Get one from :attr:`GatewayState.bootstrap`."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def profile_of(self, record: BootstrapRecord) -> SetupProfile:
        """The profile the code was minted with (``voice-node`` is stored as ``node``)."""
        if record.access != "node":
            return record.access
        row = self._db.row(
            "SELECT voice_node FROM bootstrap_tokens WHERE setup_id = ?", (record.setup_id,)
        )
        return "voice-node" if row is not None and row["voice_node"] else "node"

    def _lists(self, setup_id: str, row: sqlite3.Row, *names: str) -> list[tuple[str, ...]]:
        try:
            return [decode_list(row[name]) for name in names]
        except ValueError as exc:
            raise StateCorruptError(self._db.path, f"setup {setup_id}: {exc}") from exc

    def _pending(self, setup_id: str) -> _Leg | None:
        row = self._db.row(
            "SELECT pending_role, pending_scopes FROM bootstrap_tokens WHERE setup_id = ?",
            (setup_id,),
        )
        if row is None or row["pending_role"] is None:
            return None
        (scopes,) = self._lists(setup_id, row, "pending_scopes")
        return row["pending_role"], scopes

    def _set_pending(self, setup_id: str, leg: _Leg | None) -> None:
        role, scopes = (None, None) if leg is None else (leg[0], encode_list(leg[1]))
        self._db.execute(
            "UPDATE bootstrap_tokens SET pending_role = ?, pending_scopes = ? WHERE setup_id = ?",
            (role, scopes, setup_id),
        )

    @staticmethod
    def _record(row: sqlite3.Row) -> BootstrapRecord:
        return BootstrapRecord(
            setup_id=row["setup_id"],
            access=cast(SetupAccess, row["access"]),
            issued_at_ms=row["issued_at_ms"],
            expires_at_ms=row["expires_at_ms"],
            device_id=row["device_id"],
            public_key=row["public_key"],
            bound_at_ms=row["bound_at_ms"],
            last_used_at_ms=row["last_used_at_ms"],
            consumed_at_ms=row["consumed_at_ms"],
            device_name=row["device_name"],
            delivery_confirmed=row["delivery"] == "confirmed",
        )

    def _prune(self, now_ms: int) -> None:
        """Drop unconsumed tokens past their expiry and completions past their retention."""
        self._db.execute(
            "DELETE FROM bootstrap_tokens WHERE (consumed_at_ms IS NULL AND expires_at_ms < ?) "
            "OR (consumed_at_ms IS NOT NULL AND consumed_at_ms + ? < ?)",
            (now_ms, SETUP_COMPLETION_RETENTION_MS, now_ms),
        )

    def _by_setup_id(self, setup_id: str) -> BootstrapRecord | None:
        row = self._db.row(
            f"SELECT {_COLUMNS} FROM bootstrap_tokens WHERE setup_id = ?", (setup_id,)
        )
        return None if row is None else self._record(row)

    def mint(
        self, now_ms: int, *, ttl_ms: int = BOOTSTRAP_TOKEN_TTL_MS, access: SetupProfile = "full"
    ) -> tuple[str, BootstrapRecord]:
        """Create a setup-code token.

        Args:
            access: Its profile; ``voice-node`` is stored as ``node`` with a marker
                (:meth:`profile_of`).

        Returns:
            The token (goes into the setup code as ``bootstrapToken``; it is not stored) and
            its record, whose ``setup_id`` is the non-secret handle for ``setupStatus``.

        Raises:
            ValueError: If ``ttl_ms`` is not positive.
        """
        if ttl_ms <= 0:
            raise ValueError("ttl_ms must be positive")
        token = new_token()
        setup_id = str(uuid.uuid4())
        stored: SetupAccess = "node" if access == "voice-node" else access
        with self._db.transaction(durable=True):
            self._prune(now_ms)
            self._db.execute(
                "INSERT INTO bootstrap_tokens (setup_id, token_sha256, access, issued_at_ms, "
                "expires_at_ms, voice_node) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    setup_id,
                    hash_token(token),
                    stored,
                    now_ms,
                    now_ms + ttl_ms,
                    int(access == "voice-node"),
                ),
            )
            record = self._by_setup_id(setup_id)
        assert record is not None  # inserted in the transaction above
        return token, record

    def redeem(
        self,
        token: str,
        device_id: str,
        public_key: str,
        now_ms: int,
        *,
        admit: Callable[[BootstrapRecord], bool] | None = None,
        request: Callable[[BootstrapRecord], tuple[str, Sequence[str]]] | None = None,
    ) -> BootstrapRecord | None:
        """Present a setup-code token for a device.

        Args:
            admit: Checked on a live token before it is bound: False refuses the
                redemption and leaves the token as it was (the real gateway checks the
                requested role and scopes against the token's profile first, so an
                over-broad request does not burn the code for the device that sent it).
            request: Gives the role and profile-bounded scopes asked for, for the live token.
                Staged as the pending request until :meth:`redeem_leg`; while one is
                pending, a different request from the bound device is refused (the real
                gateway's ``pendingProfile``).

        Returns:
            The record (now bound to the device) if the token is known, unexpired, not
            consumed, admitted, and either unbound or bound to this same device id and key;
            else None.
        """
        device_id = require_text("device_id", device_id)
        public_key = require_text("public_key", public_key)
        presented = hash_token(token.strip())
        with self._db.transaction(durable=True):
            self._prune(now_ms)
            row = self._db.row(
                f"SELECT {_COLUMNS}, token_sha256 FROM bootstrap_tokens WHERE token_sha256 = ?",
                (presented,),
            )
            if row is None or not hmac.compare_digest(presented, bytes(row["token_sha256"])):
                return None
            record = self._record(row)
            if record.consumed or record.expired(now_ms):
                return None
            if admit is not None and not admit(record):
                return None
            leg = None if request is None else _leg(*request(record))
            if record.device_id is None:
                self._db.execute(
                    "UPDATE bootstrap_tokens SET device_id = ?, public_key = ?, bound_at_ms = ?, "
                    "last_used_at_ms = ? WHERE setup_id = ? AND device_id IS NULL",
                    (device_id, public_key, now_ms, now_ms, record.setup_id),
                )
                if leg is not None:
                    self._set_pending(record.setup_id, leg)
            elif record.device_id == device_id and record.public_key == public_key:
                if leg is not None:
                    pending = self._pending(record.setup_id)
                    if pending is not None and pending != leg:
                        return None
                    self._set_pending(record.setup_id, leg)
                self._db.execute(
                    "UPDATE bootstrap_tokens SET last_used_at_ms = ? WHERE setup_id = ?",
                    (now_ms, record.setup_id),
                )
            else:
                return None
            return self._by_setup_id(record.setup_id)

    def redeem_leg(
        self, record: BootstrapRecord, role: str, scopes: Sequence[str]
    ) -> tuple[frozenset[str], frozenset[str]]:
        """Record that the bound device connected with ``role`` and ``scopes`` (bounded by
        the code's profile) and clear the pending request.

        Returns:
            Every role and every scope redeemed with this code so far; the caller consumes
            the code once they cover its profile. Empty sets if the code is gone.
        """
        leg_role, leg_scopes = _leg(role, scopes)
        with self._db.transaction(durable=True):
            row = self._db.row(
                "SELECT redeemed_roles, redeemed_scopes FROM bootstrap_tokens WHERE setup_id = ?",
                (record.setup_id,),
            )
            if row is None:
                return frozenset(), frozenset()
            roles, redeemed = self._lists(record.setup_id, row, "redeemed_roles", "redeemed_scopes")
            roles = tuple(sorted({*roles, leg_role}))
            redeemed = tuple(sorted({*redeemed, *leg_scopes}))
            self._db.execute(
                "UPDATE bootstrap_tokens SET pending_role = NULL, pending_scopes = NULL, "
                "redeemed_roles = ?, redeemed_scopes = ? WHERE setup_id = ?",
                (encode_list(roles), encode_list(redeemed), record.setup_id),
            )
        return frozenset(roles), frozenset(redeemed)

    def consume(
        self, setup_id: str, now_ms: int | None = None, *, device_name: str | None = None
    ) -> BootstrapRecord | None:
        """Mark a bound token used up once its device received its hand-off tokens.

        Args:
            now_ms: The completion time; the wall clock when omitted.
            device_name: Shown by ``setupStatus`` (``deviceName``).

        Returns:
            The completed record, or None if the token is unknown, expired, unbound or
            already consumed.
        """
        if now_ms is None:
            now_ms = wall_clock_ms()
        with self._db.transaction(durable=True):
            record = self._by_setup_id(setup_id)
            if (
                record is None
                or record.consumed
                or record.device_id is None
                or record.expired(now_ms)
            ):
                return None
            # The legs and the pending request are of no use once the code is used up; the
            # voice-node marker stays for setupStatus.
            self._db.execute(
                "UPDATE bootstrap_tokens SET consumed_at_ms = ?, last_used_at_ms = ?, "
                "device_name = ?, delivery = 'uncertain', pending_role = NULL, "
                "pending_scopes = NULL, redeemed_roles = '[]', redeemed_scopes = '[]' "
                "WHERE setup_id = ?",
                (now_ms, now_ms, device_name, setup_id),
            )
        return self._by_setup_id(setup_id)

    def confirm_delivery(self, setup_id: str) -> bool:
        """Record that the hand-off response reached the device (``setupStatus`` then reports
        ``completion`` instead of ``deliveryUncertain``).

        Returns:
            False unless the setup was consumed.
        """
        with self._db.transaction():
            cursor = self._db.execute(
                "UPDATE bootstrap_tokens SET delivery = 'confirmed' "
                "WHERE setup_id = ? AND consumed_at_ms IS NOT NULL",
                (setup_id,),
            )
        return cursor.rowcount > 0

    def status(self, setup_id: str, now_ms: int) -> BootstrapRecord | None:
        """The record behind a setup id, or None once it expired unused (or its completion
        passed its retention) or was never minted. See :meth:`BootstrapRecord.to_wire`."""
        record = self._by_setup_id(setup_id)
        if record is None:
            return None
        if record.consumed_at_ms is not None:
            alive = now_ms <= record.consumed_at_ms + SETUP_COMPLETION_RETENTION_MS
        else:
            alive = not record.expired(now_ms)
        return record if alive else None

    def revoke_for_device(self, device_id: str, public_key: str) -> int:
        """Delete unconsumed tokens bound to a device and key (its pairing was rejected).

        Returns:
            How many tokens were deleted.
        """
        with self._db.transaction(durable=True):
            cursor = self._db.execute(
                "DELETE FROM bootstrap_tokens WHERE device_id = ? AND public_key = ? "
                "AND consumed_at_ms IS NULL",
                (device_id, public_key),
            )
        return cursor.rowcount


def _leg(role: str, scopes: Sequence[str]) -> _Leg:
    return role, tuple(sorted({s.strip() for s in scopes if s.strip()}))
