"""The node's exec approvals document: the real node host's shape and hash, kept as a file.

The document (``version: 1``, ``socket``, ``defaults``, ``agents.<id>.allowlist``) is stored
as ``exec-approvals.json`` in our config folder, mode 0600, written atomically. Its text is
the JSON with two-space indentation and a trailing newline, as the reference serializes it,
and its hash is the SHA-256 hex of that text (``missing:<sha256 of "">`` before the first
write), so a hash read through ``system.execApprovals.get`` on either node host means the
same thing and ``openclaw approvals ... --node`` can compare-and-swap against ours.

Normalization follows the reference: unknown policy values are dropped, string allowlist
entries become ``{pattern}``, entries without a pattern are dropped, entries get a UUID
``id``, legacy ``commandText`` is removed, ``agents.default`` merges into ``agents.main``;
other fields are kept as they are.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import os
import secrets
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.protocol import NodeErrorCode

__all__ = [
    "CHANGED",
    "SECURITIES",
    "ApprovalsChanged",
    "ApprovalsSnapshot",
    "ApprovalsStore",
    "ResolvedPolicy",
    "normalize_document",
    "resolve_policy",
]

SECURITIES = ("deny", "allowlist", "full")
ASKS = ("off", "on-miss", "always")
DEFAULT_AGENT = "main"
FILE_NAME = "exec-approvals.json"
SOCKET_NAME = "exec-approvals.sock"
CHANGED = "Error: INVALID_REQUEST: exec approvals changed; reload and retry"
BASE_REQUIRED = "Error: INVALID_REQUEST: exec approvals base hash required; reload and retry"


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) else None


def _policy(policy: Any, into: dict[str, Any]) -> dict[str, Any]:
    """``security``/``ask``/``askFallback`` kept only when valid (others dropped)."""
    source = policy if isinstance(policy, dict) else {}
    out = dict(into)
    for key, allowed in (("security", SECURITIES), ("ask", ASKS), ("askFallback", SECURITIES)):
        value = _text(source.get(key))
        if value in allowed:
            out[key] = value
        else:
            out.pop(key, None)
    if "autoAllowSkills" in source:
        out["autoAllowSkills"] = source["autoAllowSkills"]
    return out


def _allowlist(entries: Any) -> list[Any] | None:
    if not isinstance(entries, list):
        return None
    result: list[Any] = []
    for item in entries:
        if isinstance(item, str):
            if item.strip():
                result.append({"pattern": item.strip()})
        elif isinstance(item, dict):
            pattern = item.get("pattern")
            if isinstance(pattern, str) and pattern.strip():
                result.append(dict(item))
    for index, entry in enumerate(result):
        entry.pop("commandText", None)
        if not entry.get("id"):
            result[index] = {**entry, "id": str(uuid.uuid4())}
    return result or ([] if not entries else None)


def _merge_legacy(main: dict[str, Any], legacy: dict[str, Any]) -> dict[str, Any]:
    seen: set[str] = set()
    merged: list[Any] = []
    for entry in [*(main.get("allowlist") or []), *(legacy.get("allowlist") or [])]:
        if not isinstance(entry, dict) or not isinstance(entry.get("pattern"), str):
            continue
        key = f"{entry['pattern'].strip().lower()}\0{str(entry.get('argPattern') or '').strip()}"
        if key not in seen:
            seen.add(key)
            merged.append(entry)
    out = {**legacy, **main}
    for key in ("security", "ask", "askFallback", "autoAllowSkills"):
        if main.get(key) is None and legacy.get(key) is not None:
            out[key] = legacy[key]
    if merged:
        out["allowlist"] = merged
    else:
        out.pop("allowlist", None)
    return out


def normalize_document(file: dict[str, Any]) -> dict[str, Any]:
    """The normalized document (never raises; ``file`` is not modified)."""
    raw_socket = file.get("socket")
    socket: dict[str, Any] = raw_socket if isinstance(raw_socket, dict) else {}
    raw_agents = file.get("agents")
    agents: dict[str, Any] = copy.deepcopy(raw_agents) if isinstance(raw_agents, dict) else {}
    legacy = agents.pop("default", None)
    if isinstance(legacy, dict):
        main = agents.get(DEFAULT_AGENT)
        agents[DEFAULT_AGENT] = _merge_legacy(main, legacy) if isinstance(main, dict) else legacy
    for key, agent in list(agents.items()):
        if not isinstance(agent, dict):
            agents[key] = {}
            continue
        normalized = _policy(agent, agent)
        allowlist = _allowlist(agent.get("allowlist"))
        if allowlist is None:
            normalized.pop("allowlist", None)
        else:
            normalized["allowlist"] = allowlist
        agents[key] = normalized
    out_socket: dict[str, Any] = {}
    if _text(socket.get("path")):
        out_socket["path"] = _text(socket.get("path"))
    if _text(socket.get("token")):
        out_socket["token"] = _text(socket.get("token"))
    return {
        "version": 1,
        "socket": out_socket,
        "defaults": _policy(file.get("defaults"), {}),
        "agents": agents,
    }


def serialize(file: dict[str, Any]) -> str:
    """The stored text: what the hash is computed over."""
    return json.dumps(file, indent=2, ensure_ascii=False) + "\n"


def hash_text(raw: str | None) -> str:
    """The reference's document hash."""
    if raw is None:
        return "missing:" + hashlib.sha256(b"").hexdigest()
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ApprovalsSnapshot:
    """The document as stored now."""

    path: str
    exists: bool
    hash: str
    file: dict[str, Any]
    #: False when the stored text is not a document (read as deny-everything meanwhile).
    valid: bool = True

    def redacted(self) -> dict[str, Any]:
        """The ``system.execApprovals.get``/``set`` payload: the socket token never leaves."""
        file = dict(self.file)
        socket_path = _text((file.get("socket") or {}).get("path"))
        if socket_path:
            file["socket"] = {"path": socket_path}
        else:
            file.pop("socket", None)
        return {"path": self.path, "exists": self.exists, "hash": self.hash, "file": file}


@dataclass(frozen=True)
class ResolvedPolicy:
    """What applies to one agent's commands."""

    security: str
    ask: str
    ask_fallback: str
    allowlist: tuple[dict[str, Any], ...]
    auto_allow_skills: bool = False

    def snapshot(self) -> dict[str, Any]:
        """The policy a prepared plan was made under (``plan.policySnapshot``)."""
        rules = sorted(
            (
                {k: e[k] for k in ("pattern", "argPattern", "source") if k in e}
                for e in self.allowlist
            ),
            key=lambda r: json.dumps(r, sort_keys=True),
        )
        return {
            "security": self.security,
            "ask": self.ask,
            "askFallback": self.ask_fallback,
            "autoAllowSkills": self.auto_allow_skills,
            "allowlistRules": rules,
        }


def resolve_policy(file: dict[str, Any], agent_id: str | None) -> ResolvedPolicy:
    """The agent's policy: its own field, else the ``*`` agent's, else the defaults, else the
    unconfigured baseline (``full``/``off``, fallback ``deny``, as the reference).

    A request naming no agent looks up the agent ``default``, as the reference does; since
    normalization folds ``default`` into ``main``, only ``*`` and the defaults apply to it
    (observed side by side: a ``main`` allowlist entry does not allow an agent-less run).
    """
    agents = file.get("agents") or {}
    agent = agents.get(agent_id or "default") or {}
    wildcard = agents.get("*") or {}
    defaults = file.get("defaults") or {}

    def pick(key: str, fallback: str) -> str:
        for source in (agent, wildcard, defaults):
            value = source.get(key)
            if isinstance(value, str):
                return value
        return fallback

    entries = [*(wildcard.get("allowlist") or []), *(agent.get("allowlist") or [])]
    skills = next(
        (s["autoAllowSkills"] for s in (agent, wildcard, defaults) if "autoAllowSkills" in s),
        False,
    )
    return ResolvedPolicy(
        pick("security", "full"),
        pick("ask", "off"),
        pick("askFallback", "deny"),
        tuple(e for e in entries if isinstance(e, dict)),
        skills is True,
    )


class ApprovalsChanged(DeviceError):
    """A compare-and-swap found the stored document's hash is not its base hash any more
    (``INVALID_REQUEST``, :data:`CHANGED`, as the reference says it)."""

    def __init__(self) -> None:
        super().__init__(NodeErrorCode.INVALID_REQUEST, CHANGED)


def _storage_error(exc: OSError) -> DeviceError:
    return DeviceError(NodeErrorCode.UNAVAILABLE, f"exec approvals storage: {exc.strerror or exc}")


class ApprovalsStore:
    """``exec-approvals.json`` with compare-and-swap; every change is serialized by a lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = asyncio.Lock()

    def read(self) -> ApprovalsSnapshot:
        """The current snapshot (a missing file is the empty document).

        Raises:
            DeviceError: ``UNAVAILABLE`` when the file cannot be read; a file that is not a
                valid document is treated as deny-everything (fail closed), never rewritten
                without a matching base hash.
        """
        try:
            raw = self.path.read_text("utf-8")
        except FileNotFoundError:
            empty = normalize_document({"version": 1, "agents": {}})
            return ApprovalsSnapshot(str(self.path), False, hash_text(None), empty)
        except OSError as exc:
            raise _storage_error(exc) from exc
        try:
            parsed = json.loads(raw)
            valid = isinstance(parsed, dict) and parsed.get("version") == 1
        except ValueError:
            valid = False
        if not valid:
            closed = {"security": "deny", "ask": "off", "askFallback": "deny"}
            parsed = {"version": 1, "defaults": {**closed, "autoAllowSkills": False}}
        return ApprovalsSnapshot(
            str(self.path), True, hash_text(raw), normalize_document(parsed), valid
        )

    def _write(self, file: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".exec-approvals-", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(serialize(file))
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _with_socket(self, file: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
        socket = file.get("socket") or {}
        old = current.get("socket") or {}
        path = socket.get("path") or old.get("path") or str(self.path.parent / SOCKET_NAME)
        token = socket.get("token") or old.get("token") or secrets.token_urlsafe(24)
        return {**file, "socket": {"path": path, "token": token}}

    async def ensure(self) -> ApprovalsSnapshot:
        """The snapshot, first written (with its socket defaults) when missing, as the
        reference's ``get`` does."""
        async with self.lock:
            snapshot = await asyncio.to_thread(self.read)
            socket = snapshot.file.get("socket") or {}
            if snapshot.exists and (
                not snapshot.valid or (socket.get("path") and socket.get("token"))
            ):
                return snapshot  # a broken file waits for a set with its hash
            try:
                await asyncio.to_thread(self._write, self._with_socket(snapshot.file, {}))
                return await asyncio.to_thread(self.read)
            except OSError as exc:
                raise _storage_error(exc) from exc

    async def replace(self, file: dict[str, Any], base_hash: str) -> ApprovalsSnapshot:
        """Write ``file`` (normalized) if the stored document still has ``base_hash``.

        Raises:
            ApprovalsChanged: the base hash is stale.
            DeviceError: ``INVALID_REQUEST`` when the base hash is missing.
        """
        normalized = normalize_document(file)
        async with self.lock:
            snapshot = await asyncio.to_thread(self.read)
            if not snapshot.exists:
                if base_hash and base_hash != snapshot.hash:
                    raise ApprovalsChanged()
            elif not base_hash:
                raise DeviceError(NodeErrorCode.INVALID_REQUEST, BASE_REQUIRED)
            elif base_hash != snapshot.hash:
                raise ApprovalsChanged()
            try:
                await asyncio.to_thread(self._write, self._with_socket(normalized, snapshot.file))
                return await asyncio.to_thread(self.read)
            except OSError as exc:
                raise _storage_error(exc) from exc
