"""The device identity file: load it, create it once, reset it on request.

An identity that exists but cannot be used is never replaced automatically: a new key
means a new device that must be paired again, so :meth:`IdentityStore.load_or_create`
raises :class:`~openclaw_desktop.errors.IdentityError` instead. The explicit way to start
over is :meth:`IdentityStore.reset` (``openclaw-desktop identity reset``).
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from ..errors import IdentityError
from ._files import path_exists, read_private_file, write_private_file
from .device import DeviceIdentity
from .encoding import b64url_decode, b64url_encode

__all__ = ["IDENTITY_FILE_VERSION", "IdentityStore"]

log = logging.getLogger("openclaw.identity")

IDENTITY_FILE_VERSION = 1
_MAX_FILE_BYTES = 64 * 1024


class IdentityStore:
    """The JSON file holding this install's single device identity.

    File format (mode 0600)::

        {"version": 1, "deviceId": "<hex sha256>", "publicKey": "<b64url raw>",
         "privateKey": "<b64url 32-byte seed>", "createdAtMs": <int>}

    Args:
        path: The identity file, normally ``AppPaths.identity_file``.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def __repr__(self) -> str:
        return f"IdentityStore({str(self.path)!r})"

    def exists(self) -> bool:
        """True if something is at the identity path (even an unusable file)."""
        return path_exists(self.path)

    def load(self) -> DeviceIdentity:
        """Read the identity.

        A file readable by other users is tightened to 0600 with a warning.

        Returns:
            The identity.

        Raises:
            IdentityError: If the file is missing, unreadable, not JSON, of another
                version, holds a bad key, or its ``deviceId``/``publicKey`` do not
                match the private key.
        """
        try:
            data = read_private_file(self.path, limit=_MAX_FILE_BYTES, what="identity file")
        except FileNotFoundError as exc:
            raise self._error("the file does not exist") from exc
        except OSError as exc:
            raise self._error(f"cannot read it: {exc.strerror or type(exc).__name__}") from exc
        if data is None:
            raise self._error("the file is too large")
        return self._parse(data)

    def load_or_create(self) -> DeviceIdentity:
        """Load the identity, creating one only if no file exists yet.

        Returns:
            The existing or newly created identity.

        Raises:
            IdentityError: If a file exists but is unusable (it is left untouched), or
                the new identity cannot be written.
        """
        if self.exists():
            return self.load()
        identity = DeviceIdentity.generate()
        try:
            created = write_private_file(self.path, self._serialize(identity), overwrite=False)
        except OSError as exc:
            raise self._error(f"cannot write it: {exc.strerror or type(exc).__name__}") from exc
        if not created:  # another process created it first: use theirs
            return self.load()
        log.info("created a new device identity %s at %s", identity.device_id, self.path)
        return identity

    def reset(self) -> DeviceIdentity:
        """Move the current identity file aside and create a fresh identity.

        The old file is renamed to ``<name>.old-<ms>`` (or ``<name>.broken-<ms>`` if it
        was unusable) in the same folder. The new device must be paired again.

        Returns:
            The new identity.

        Raises:
            IdentityError: If the old file cannot be moved or the new one not written.
        """
        if self.exists():
            try:
                self.load()
                kind = "old"
            except IdentityError:
                kind = "broken"
            backup = self._backup_path(kind)
            try:
                os.replace(self.path, backup)
            except OSError as exc:
                reason = exc.strerror or type(exc).__name__
                raise self._error(f"cannot move it aside: {reason}") from exc
            log.warning("moved the previous device identity to %s", backup)
        identity = self.load_or_create()
        log.warning(
            "new device identity %s: it must be approved on each gateway again",
            identity.device_id,
        )
        return identity

    def _backup_path(self, kind: str) -> Path:
        stamp = time.time_ns() // 1_000_000
        candidate = self.path.with_name(f"{self.path.name}.{kind}-{stamp}")
        counter = 1
        while path_exists(candidate):
            candidate = self.path.with_name(f"{self.path.name}.{kind}-{stamp}-{counter}")
            counter += 1
        return candidate

    def _error(self, problem: str) -> IdentityError:
        return IdentityError(str(self.path), problem)

    @staticmethod
    def _serialize(identity: DeviceIdentity) -> bytes:
        document = {
            "version": IDENTITY_FILE_VERSION,
            "deviceId": identity.device_id,
            "publicKey": identity.public_key,
            "privateKey": b64url_encode(identity.private_key_seed()),
            "createdAtMs": identity.created_at_ms,
        }
        return (json.dumps(document, indent=2) + "\n").encode("utf-8")

    def _parse(self, data: bytes) -> DeviceIdentity:
        try:
            document: Any = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise self._error("the file is not valid JSON") from exc
        if not isinstance(document, dict):
            raise self._error("the file is not a JSON object")
        version = document.get("version")
        if type(version) is not int:
            raise self._error("version is missing or not an integer")
        if version != IDENTITY_FILE_VERSION:
            raise self._error(f"unsupported version {version}")
        created = document.get("createdAtMs")
        if type(created) is not int or created < 0:
            raise self._error("createdAtMs is missing or not a non-negative integer")
        private = document.get("privateKey")
        if not isinstance(private, str):
            raise self._error("privateKey is missing")
        try:
            identity = DeviceIdentity.from_seed(b64url_decode(private), created)
        except ValueError as exc:
            raise self._error("privateKey is not a base64url 32-byte Ed25519 key") from exc
        if document.get("publicKey") != identity.public_key:
            raise self._error("publicKey does not match privateKey")
        if document.get("deviceId") != identity.device_id:
            raise self._error("deviceId does not match the key")
        return identity
