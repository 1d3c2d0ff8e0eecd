"""Typed gateway credentials over any :class:`~.secrets.SecretStore`.

Entries (values are compact JSON; keys are what the secret store sees)::

    gateways                                    ["host:port", ...]   global index
    gateway/<gw>/index                          [key, ...]           keys written for <gw>
    gateway/<gw>/device-token/<deviceId>/<role> {"token","role","scopes","issuedAtMs"}
    gateway/<gw>/shared-token                   {"token"}
    gateway/<gw>/password                       {"password"}
    gateway/<gw>/tls-pin                        {"fingerprint"}

The indexes exist because keyrings cannot list their entries. ``<gw>`` is
:func:`gateway_key` of the gateway URL. Nothing here logs a secret value.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from dataclasses import dataclass, field, replace
from typing import Any

from .gateway_id import DEFAULT_GATEWAY_PORT, gateway_key
from .secrets import SecretStore

__all__ = ["DEFAULT_GATEWAY_PORT", "CredentialStore", "StoredDeviceToken", "gateway_key"]

log = logging.getLogger("openclaw.identity")

_GLOBAL_INDEX = "gateways"
_SAFE_PART = re.compile(r"[^\s/]+")


@dataclass(frozen=True)
class StoredDeviceToken:
    """A device token issued in ``hello-ok.auth`` for one device and role.

    Attributes:
        token: The token itself. Hidden from ``repr``.
        role: The role it was issued for.
        scopes: The approved scopes, in the gateway's order.
        issued_at_ms: ``hello-ok.auth.issuedAtMs`` when given.
    """

    token: str = field(repr=False)
    role: str
    scopes: tuple[str, ...] = ()
    issued_at_ms: int | None = None


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _part(value: str, what: str) -> str:
    if not _SAFE_PART.fullmatch(value):
        raise ValueError(f"{what} must be non-empty without spaces or '/'")
    return value


class CredentialStore:
    """Device tokens, shared tokens, passwords and TLS pins, per gateway.

    Every ``gateway`` argument is a :func:`gateway_key` or a ws(s) URL (turned into its
    key). Values that cannot be parsed are treated as absent, with a warning that never
    includes the value. Errors of the underlying store propagate as
    :class:`~openclaw_desktop.errors.SecretStoreError`.

    Args:
        store: Where the values go.
    """

    def __init__(self, store: SecretStore) -> None:
        self.store = store
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"CredentialStore({self.store.description!r})"

    # ------------------------------------------------------------------ device tokens

    def device_token(self, gateway: str, device_id: str, role: str) -> StoredDeviceToken | None:
        """The stored device token for this gateway, device and role, or None."""
        gw = _gw(gateway)
        value = self._load(_device_key(gw, device_id, role), f"device token ({role})", gw)
        if value is None:
            return None
        token = _parse_device_token(value, role)
        if token is None:
            log.warning("ignoring a corrupt stored device token for %s (role %s)", gw, role)
        return token

    def save_device_token(self, gateway: str, device_id: str, token: StoredDeviceToken) -> None:
        """Store the device token for ``token.role``.

        If the same token string is already stored, the stored scopes are kept rather
        than narrowed to the new list.
        """
        gw = _gw(gateway)
        if not token.token:
            raise ValueError("device token must not be empty")
        with self._lock:
            stored = self.device_token(gw, device_id, token.role)
            if stored is not None and stored.token == token.token:
                token = replace(
                    token,
                    scopes=stored.scopes,
                    issued_at_ms=stored.issued_at_ms
                    if stored.issued_at_ms is not None
                    else token.issued_at_ms,
                )
                if token == stored:
                    return  # nothing new: no keyring write on every reconnect
            document = {
                "token": token.token,
                "role": token.role,
                "scopes": list(token.scopes),
                "issuedAtMs": token.issued_at_ms,
            }
            self._put(gw, _device_key(gw, device_id, token.role), document)

    def clear_device_token(self, gateway: str, device_id: str, role: str) -> None:
        """Forget the device token for this gateway, device and role."""
        gw = _gw(gateway)
        self._remove(gw, _device_key(gw, device_id, role))

    # ------------------------------------------------------------------ shared secrets

    def shared_token(self, gateway: str) -> str | None:
        """The shared gateway token, or None."""
        return self._field(_gw(gateway), "shared-token", "token")

    def save_shared_token(self, gateway: str, token: str) -> None:
        """Store the shared gateway token."""
        gw = _gw(gateway)
        self._put(gw, f"gateway/{gw}/shared-token", {"token": _non_empty(token, "token")})

    def password(self, gateway: str) -> str | None:
        """The gateway password, or None."""
        return self._field(_gw(gateway), "password", "password")

    def save_password(self, gateway: str, password: str) -> None:
        """Store the gateway password."""
        gw = _gw(gateway)
        document = {"password": _non_empty(password, "password")}
        self._put(gw, f"gateway/{gw}/password", document)

    # ------------------------------------------------------------------ TLS pins

    def tls_pin(self, gateway: str) -> str | None:
        """The pinned TLS certificate fingerprint, or None."""
        return self._field(_gw(gateway), "tls-pin", "fingerprint")

    def save_tls_pin(self, gateway: str, fingerprint: str) -> None:
        """Pin a TLS certificate fingerprint (stored as given)."""
        gw = _gw(gateway)
        document = {"fingerprint": _non_empty(fingerprint, "fingerprint")}
        self._put(gw, f"gateway/{gw}/tls-pin", document)

    # ------------------------------------------------------------------ gateways

    def forget_gateway(self, gateway: str) -> None:
        """Remove the pin, shared token, password and every indexed device token."""
        gw = _gw(gateway)
        with self._lock:
            keys = set(self._index(gw))
            keys.update(f"gateway/{gw}/{name}" for name in ("shared-token", "password", "tls-pin"))
            for key in sorted(keys):
                self.store.delete(key)
            self.store.delete(_index_key(gw))
            self._set_global(gw, present=False)

    def known_gateways(self) -> list[str]:
        """Keys of the gateways that have stored credentials, sorted."""
        return sorted(self._string_list(_GLOBAL_INDEX, "gateway index"))

    # ------------------------------------------------------------------ internals

    def _field(self, gw: str, name: str, field_name: str) -> str | None:
        value = self._load(f"gateway/{gw}/{name}", name, gw)
        if value is None:
            return None
        result = value.get(field_name) if isinstance(value, dict) else None
        if not isinstance(result, str) or not result:
            log.warning("ignoring a corrupt stored %s for %s", name, gw)
            return None
        return result

    def _load(self, key: str, what: str, gw: str) -> Any:
        raw = self.store.get(key)
        if raw is None:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            log.warning("ignoring a corrupt stored %s for %s (not JSON)", what, gw)
            return None

    def _put(self, gw: str, key: str, document: Any) -> None:
        with self._lock:
            index = self._index(gw)
            if key not in index:  # index first, so forget_gateway always finds the key
                self.store.set(_index_key(gw), _dumps([*index, key]))
            self._set_global(gw, present=True)
            self.store.set(key, _dumps(document))

    def _remove(self, gw: str, key: str) -> None:
        with self._lock:
            self.store.delete(key)
            index = [entry for entry in self._index(gw) if entry != key]
            if index:
                self.store.set(_index_key(gw), _dumps(index))
            else:
                self.store.delete(_index_key(gw))
                self._set_global(gw, present=False)

    def _index(self, gw: str) -> list[str]:
        return self._string_list(_index_key(gw), f"key index of {gw}")

    def _set_global(self, gw: str, *, present: bool) -> None:
        known = self._string_list(_GLOBAL_INDEX, "gateway index")
        if (gw in known) == present:
            return
        known = [*known, gw] if present else [entry for entry in known if entry != gw]
        if known:
            self.store.set(_GLOBAL_INDEX, _dumps(sorted(known)))
        else:
            self.store.delete(_GLOBAL_INDEX)

    def _string_list(self, key: str, what: str) -> list[str]:
        raw = self.store.get(key)
        if raw is None:
            return []
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            log.warning("ignoring a corrupt stored %s", what)
            return []
        return value


def _gw(gateway: str) -> str:
    if "://" in gateway:
        return gateway_key(gateway)
    key = gateway.strip().lower()
    return _part(key, "gateway key")


def _index_key(gw: str) -> str:
    return f"gateway/{gw}/index"


def _device_key(gw: str, device_id: str, role: str) -> str:
    return f"gateway/{gw}/device-token/{_part(device_id, 'device id')}/{_part(role, 'role')}"


def _non_empty(value: str, what: str) -> str:
    if not value:
        raise ValueError(f"{what} must not be empty")
    return value


def _parse_device_token(value: Any, role: str) -> StoredDeviceToken | None:
    if not isinstance(value, dict):
        return None
    token, stored_role = value.get("token"), value.get("role")
    scopes, issued = value.get("scopes", []), value.get("issuedAtMs")
    if not isinstance(token, str) or not token or stored_role != role:
        return None
    if not isinstance(scopes, list) or not all(isinstance(item, str) for item in scopes):
        return None
    if issued is not None and type(issued) is not int:
        return None
    return StoredDeviceToken(token=token, role=role, scopes=tuple(scopes), issued_at_ms=issued)
