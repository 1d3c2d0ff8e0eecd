"""The database schema as an ordered list of forward migrations.

Rules for adding a migration: append a new :class:`Migration` with the next version number and
never edit a released one. Every pending migration runs inside one write transaction at open,
so a crash mid-upgrade leaves the previous version intact.

The SQL sticks to what SQLite 3.31 already had (no STRICT tables, no JSON functions), because
Python builds on older Linux distributions link the system SQLite. JSON columns hold arrays of
strings or ``{name: bool}`` objects and are validated when read.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["APPLICATION_ID", "MIGRATIONS", "SCHEMA_VERSION", "Migration"]

#: ``PRAGMA application_id`` of a gateway state database ("OCGW"), so a stray SQLite file
#: with other tables is reported as "not ours" instead of being migrated.
APPLICATION_ID = 0x4F434757


@dataclass(frozen=True, slots=True)
class Migration:
    """One forward step of the schema.

    Attributes:
        version: The schema version after this step.
        description: What the step does, for the log.
        statements: SQL statements, run in order.
    """

    version: int
    description: str
    statements: tuple[str, ...]


_V1 = Migration(
    version=1,
    description="devices, device pairing, device tokens, bootstrap tokens, node surfaces, meta",
    statements=(
        """
        CREATE TABLE devices (
            device_id        TEXT PRIMARY KEY NOT NULL,
            public_key       TEXT NOT NULL,
            display_name     TEXT,
            operator_label   TEXT,
            platform         TEXT,
            device_family    TEXT,
            client_id        TEXT,
            client_mode      TEXT,
            roles            TEXT NOT NULL,
            scopes           TEXT NOT NULL,
            remote_ip        TEXT,
            approved_via     TEXT NOT NULL CHECK (approved_via IN ('owner', 'silent',
                                 'bootstrap', 'trusted-cidr', 'trusted-proxy', 'ssh-verified')),
            created_at_ms    INTEGER NOT NULL,
            approved_at_ms   INTEGER NOT NULL,
            last_seen_at_ms  INTEGER,
            last_seen_reason TEXT
        )
        """,
        """
        CREATE TABLE pairing_requests (
            request_id      TEXT PRIMARY KEY NOT NULL,
            device_id       TEXT NOT NULL,
            public_key      TEXT NOT NULL,
            role            TEXT NOT NULL,
            roles           TEXT NOT NULL,
            scopes          TEXT NOT NULL,
            display_name    TEXT,
            platform        TEXT,
            device_family   TEXT,
            client_id       TEXT,
            client_mode     TEXT,
            remote_ip       TEXT,
            silent          INTEGER NOT NULL CHECK (silent IN (0, 1)),
            is_repair       INTEGER NOT NULL CHECK (is_repair IN (0, 1)),
            ts_ms           INTEGER NOT NULL,
            refreshed_at_ms INTEGER,
            expires_at_ms   INTEGER NOT NULL
        )
        """,
        "CREATE INDEX pairing_requests_device ON pairing_requests (device_id)",
        "CREATE INDEX pairing_requests_expiry ON pairing_requests (expires_at_ms)",
        """
        CREATE TABLE device_tokens (
            device_id       TEXT NOT NULL REFERENCES devices (device_id) ON DELETE CASCADE,
            role            TEXT NOT NULL,
            token_sha256    BLOB NOT NULL CHECK (length(token_sha256) = 32),
            scopes          TEXT NOT NULL,
            created_at_ms   INTEGER NOT NULL,
            rotated_at_ms   INTEGER,
            revoked_at_ms   INTEGER,
            last_used_at_ms INTEGER,
            PRIMARY KEY (device_id, role)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE bootstrap_tokens (
            setup_id        TEXT PRIMARY KEY NOT NULL,
            token_sha256    BLOB NOT NULL UNIQUE CHECK (length(token_sha256) = 32),
            access          TEXT NOT NULL CHECK (access IN ('full', 'limited', 'node')),
            issued_at_ms    INTEGER NOT NULL,
            expires_at_ms   INTEGER NOT NULL,
            device_id       TEXT,
            public_key      TEXT,
            bound_at_ms     INTEGER,
            last_used_at_ms INTEGER,
            consumed_at_ms  INTEGER,
            device_name     TEXT,
            delivery        TEXT CHECK (delivery IN ('uncertain', 'confirmed')),
            CHECK ((device_id IS NULL) = (public_key IS NULL))
        )
        """,
        "CREATE INDEX bootstrap_tokens_device ON bootstrap_tokens (device_id)",
        """
        CREATE TABLE node_surfaces (
            node_id              TEXT PRIMARY KEY NOT NULL
                                     REFERENCES devices (device_id) ON DELETE CASCADE,
            display_name         TEXT,
            version              TEXT,
            caps                 TEXT NOT NULL,
            commands             TEXT NOT NULL,
            permissions          TEXT,
            created_at_ms        INTEGER NOT NULL,
            approved_at_ms       INTEGER NOT NULL,
            last_connected_at_ms INTEGER,
            last_disconnected_at_ms INTEGER
        )
        """,
        """
        CREATE TABLE node_pair_requests (
            request_id      TEXT PRIMARY KEY NOT NULL,
            node_id         TEXT NOT NULL UNIQUE
                                REFERENCES devices (device_id) ON DELETE CASCADE,
            client_id       TEXT,
            client_mode     TEXT,
            display_name    TEXT,
            platform        TEXT,
            version         TEXT,
            device_family   TEXT,
            caps            TEXT NOT NULL,
            commands        TEXT NOT NULL,
            permissions     TEXT,
            required_approve_scopes TEXT NOT NULL,
            remote_ip       TEXT,
            silent          INTEGER NOT NULL CHECK (silent IN (0, 1)),
            ts_ms           INTEGER NOT NULL,
            expires_at_ms   INTEGER NOT NULL
        )
        """,
        "CREATE INDEX node_pair_requests_expiry ON node_pair_requests (expires_at_ms)",
        """
        CREATE TABLE meta (
            key   TEXT PRIMARY KEY NOT NULL,
            value TEXT NOT NULL
        ) WITHOUT ROWID
        """,
    ),
)

#: Every migration, oldest first; versions are 1, 2, 3, ... without gaps.
_V2 = Migration(
    version=2,
    description="chat sessions index",
    statements=(
        """
        CREATE TABLE chat_sessions (
            session_key      TEXT PRIMARY KEY NOT NULL,
            session_id       TEXT NOT NULL,
            agent_id         TEXT NOT NULL,
            label            TEXT,
            model            TEXT,
            thinking         TEXT,
            status           TEXT NOT NULL DEFAULT 'idle',
            last_run_id      TEXT,
            aborted_last_run INTEGER NOT NULL DEFAULT 0 CHECK (aborted_last_run IN (0, 1)),
            input_tokens     INTEGER NOT NULL DEFAULT 0,
            output_tokens    INTEGER NOT NULL DEFAULT 0,
            compactions      INTEGER NOT NULL DEFAULT 0,
            created_at_ms    INTEGER NOT NULL,
            updated_at_ms    INTEGER NOT NULL
        )
        """,
        "CREATE INDEX chat_sessions_updated ON chat_sessions (updated_at_ms DESC)",
    ),
)

_V3 = Migration(
    version=3,
    description="device tokens keep the token itself (handed back on reconnect)",
    statements=(
        # NULL for rows written before this version: they hold only the hash, still verify,
        # and are replaced by a new token the next time the device authenticates otherwise.
        "ALTER TABLE device_tokens ADD COLUMN token TEXT",
    ),
)

_V4 = Migration(
    version=4,
    description="setup codes keep their voice-node profile, redeemed legs and pending request",
    statements=(
        # A voice-node code is stored with access 'node' (the access CHECK of version 1
        # allows no other value) and this marker. Rows written before this version have none
        # of it: such a code stays a node code, and its legs start empty.
        "ALTER TABLE bootstrap_tokens ADD COLUMN voice_node INTEGER NOT NULL DEFAULT 0 "
        "CHECK (voice_node IN (0, 1))",
        # The role and (profile-bounded, sorted) scopes the bound device asked for while its
        # approval is pending; both NULL when nothing is pending.
        "ALTER TABLE bootstrap_tokens ADD COLUMN pending_role TEXT",
        "ALTER TABLE bootstrap_tokens ADD COLUMN pending_scopes TEXT "
        "CHECK ((pending_role IS NULL) = (pending_scopes IS NULL))",
        # Every role and scope the bound device redeemed so far (JSON arrays).
        "ALTER TABLE bootstrap_tokens ADD COLUMN redeemed_roles TEXT NOT NULL DEFAULT '[]'",
        "ALTER TABLE bootstrap_tokens ADD COLUMN redeemed_scopes TEXT NOT NULL DEFAULT '[]'",
    ),
)

_V5 = Migration(
    version=5,
    description="device tokens: only their SHA-256 is kept (the plaintext column goes)",
    statements=(
        # Freed pages and cells are zeroed, so the dropped plaintext does not linger in the
        # file's free space (the WAL is checkpointed over it when the database closes).
        "PRAGMA secure_delete = ON",
        """
        CREATE TABLE device_tokens_v5 (
            device_id       TEXT NOT NULL REFERENCES devices (device_id) ON DELETE CASCADE,
            role            TEXT NOT NULL,
            token_sha256    BLOB NOT NULL CHECK (length(token_sha256) = 32),
            scopes          TEXT NOT NULL,
            created_at_ms   INTEGER NOT NULL,
            rotated_at_ms   INTEGER,
            revoked_at_ms   INTEGER,
            last_used_at_ms INTEGER,
            PRIMARY KEY (device_id, role)
        ) WITHOUT ROWID
        """,
        "INSERT INTO device_tokens_v5 (device_id, role, token_sha256, scopes, created_at_ms, "
        "rotated_at_ms, revoked_at_ms, last_used_at_ms) SELECT device_id, role, token_sha256, "
        "scopes, created_at_ms, rotated_at_ms, revoked_at_ms, last_used_at_ms FROM device_tokens",
        "DROP TABLE device_tokens",
        "ALTER TABLE device_tokens_v5 RENAME TO device_tokens",
    ),
)

_V6 = Migration(
    version=6,
    description="node surfaces: the last host stats a node reported (JSON object)",
    statements=("ALTER TABLE node_surfaces ADD COLUMN last_host_stats TEXT",),
)

_V7 = Migration(
    version=7,
    description="chat sessions: archive, pin, unread marks, icon, colour, category",
    statements=(
        # All NULL for rows written before this version: not archived, not pinned, not
        # marked unread, no icon, colour or category (what the reference shows for them).
        "ALTER TABLE chat_sessions ADD COLUMN archived_at_ms INTEGER",
        "ALTER TABLE chat_sessions ADD COLUMN archive_reason TEXT",
        "ALTER TABLE chat_sessions ADD COLUMN pinned_at_ms INTEGER",
        "ALTER TABLE chat_sessions ADD COLUMN marked_unread_at_ms INTEGER",
        "ALTER TABLE chat_sessions ADD COLUMN last_read_at_ms INTEGER",
        "ALTER TABLE chat_sessions ADD COLUMN icon TEXT",
        "ALTER TABLE chat_sessions ADD COLUMN color TEXT",
        "ALTER TABLE chat_sessions ADD COLUMN category TEXT",
    ),
)

MIGRATIONS: tuple[Migration, ...] = (_V1, _V2, _V3, _V4, _V5, _V6, _V7)

#: The version a fresh database ends at.
SCHEMA_VERSION = MIGRATIONS[-1].version
