"""The gateways the user chose: the known gateways file the connect screen lists, the one
chosen last (the next launch connects to it), and the rules of which gateway a launch uses.

Qt-free: the window (:mod:`ui.app`, :mod:`ui.gateway_choice`, the connect screen) remembers
and forgets through :class:`SavedGateways`. Neither file ever holds a token (a typed one is
kept in the keyring by the runtime); forgetting a gateway drops its pin and tokens too.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from openclaw_desktop.config import AppPaths
from openclaw_desktop.identity import CredentialStore, gateway_key, open_secret_store
from openclaw_desktop.runtime import RuntimeTarget

__all__ = [
    "ConnectTarget",
    "KnownGateway",
    "KnownGateways",
    "LastGateway",
    "SavedGateways",
    "first_run",
    "launch_target",
    "remember_bundled_choice",
]

log = logging.getLogger("openclaw.gateways")

_MAX_KNOWN = 64
_MAX_KNOWN_BYTES = 256 * 1024
_MAX_NAME_CHARS = 128


@dataclass
class ConnectTarget(RuntimeTarget):
    """A :class:`RuntimeTarget` plus what the connect screen learned about the gateway.

    ``tls_hint`` is a fingerprint hint (TXT ``gatewayTlsSha256`` or a setup code's
    ``tlsFingerprint``): show it in the trust prompt, never pin it without the user.
    """

    name: str | None = None
    tls_hint: str | None = None
    bootstrap_token: str | None = field(default=None, repr=False)
    """A setup code's single-use bootstrap token (a secret; never logged)."""


@dataclass(frozen=True)
class KnownGateway:
    """A gateway the user connected to before."""

    name: str
    url: str


class KnownGateways:
    """The known gateways file: a JSON list of ``{"name": ..., "url": ...}``.

    A missing file is an empty list; an unreadable or malformed one is logged and treated
    as empty (and replaced on the next write). Writes are atomic (temp file + rename).
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> list[KnownGateway]:
        """The entries, in file order (invalid entries skipped, URLs unique)."""
        try:
            if self.path.stat().st_size > _MAX_KNOWN_BYTES:
                log.warning("ignoring %s: larger than %d bytes", self.path, _MAX_KNOWN_BYTES)
                return []
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            log.warning("ignoring unreadable known gateways file %s: %s", self.path, exc)
            return []
        if not isinstance(raw, list):
            log.warning("ignoring known gateways file %s: not a JSON list", self.path)
            return []
        entries: list[KnownGateway] = []
        for item in raw[:_MAX_KNOWN]:
            if not isinstance(item, dict):
                continue
            name, url = item.get("name"), item.get("url")
            if not isinstance(url, str) or not url or any(e.url == url for e in entries):
                continue
            label = name[:_MAX_NAME_CHARS] if isinstance(name, str) and name else url
            entries.append(KnownGateway(label, url))
        return entries

    def save(self, entries: list[KnownGateway]) -> None:
        """Replace the file with ``entries`` (atomically)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = [{"name": e.name, "url": e.url} for e in entries[:_MAX_KNOWN]]
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
            os.replace(tmp, self.path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()

    def add(self, name: str, url: str) -> list[KnownGateway]:
        """Add ``url`` (or rename it if known) at the top; returns the new list."""
        entries = [e for e in self.load() if e.url != url]
        entries.insert(0, KnownGateway(name[:_MAX_NAME_CHARS] or url, url))
        self.save(entries)
        return entries

    def remove(self, url: str) -> list[KnownGateway]:
        """Drop ``url``; returns the new list."""
        entries = [e for e in self.load() if e.url != url]
        self.save(entries)
        return entries


class LastGateway:
    """The gateway the app connected to last, for the next launch: ``{"url", "name"}`` of a
    remote one, ``{"bundled": true}`` for this computer's (its port comes from the
    command line). Never a token: a typed token is kept in the keyring by the runtime.

    A missing, unreadable or malformed file means "no choice yet" (logged).
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> KnownGateway | bool | None:
        """The remote gateway, True for the bundled one, or None (no choice remembered)."""
        try:
            if self.path.stat().st_size > _MAX_KNOWN_BYTES:
                return None
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            log.warning("ignoring unreadable last gateway file %s: %s", self.path, exc)
            return None
        if not isinstance(raw, dict):
            return None
        if raw.get("bundled") is True:
            return True
        url, name = raw.get("url"), raw.get("name")
        if not isinstance(url, str) or not url:
            return None
        label = name[:_MAX_NAME_CHARS] if isinstance(name, str) and name else url
        return KnownGateway(label, url)

    def save(self, target: RuntimeTarget) -> None:
        """Remember ``target`` (atomically)."""
        if target.url is None:
            data: dict[str, object] = {"bundled": True}
        else:
            name = getattr(target, "name", None) or target.url
            data = {"url": target.url, "name": str(name)[:_MAX_NAME_CHARS]}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_text(json.dumps(data) + "\n", encoding="utf-8")
            os.replace(tmp, self.path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()

    def target(self, bundled_port: int) -> RuntimeTarget | None:
        """The remembered choice as a target (None: nothing remembered)."""
        last = self.load()
        if last is None:
            return None
        if isinstance(last, bool):
            return RuntimeTarget(port=bundled_port)
        return ConnectTarget(url=last.url, name=last.name, port=bundled_port)


def launch_target(target: RuntimeTarget, paths: AppPaths) -> RuntimeTarget:
    """The gateway a launch connects to: the one the command line named (``--gateway-port``
    or ``--gateway-url``: "this one now"), else the one chosen last (remote or this
    computer's, on ``target``'s port), else ``target`` (the bundled gateway). A pairing link
    opens the connect screen, so nothing remembered is used for it either."""
    named = bool(getattr(target, "explicit", False)) or target.url is not None
    if named or getattr(target, "pair_link", None) is not None:
        return target
    return LastGateway(paths.last_gateway_file).target(target.port) or target


def first_run(target: RuntimeTarget, paths: AppPaths) -> bool:
    """Whether this launch asks where to connect first: no gateway was ever chosen here (no
    known gateways file) and the command line gave no URL."""
    return not paths.known_gateways_file.exists() and target.url is None


def remember_bundled_choice(paths: AppPaths) -> None:
    """Choosing this computer's gateway ends the first run too (an empty known gateways
    file: the bundled gateway is not listed there)."""
    SavedGateways.of(paths).remember(RuntimeTarget())


class SavedGateways:
    """The one place the app remembers and forgets the gateways the user chose.

    * :meth:`remember`: a gateway chosen on the connect screen. A remote one goes to the top
      of the known gateways file (renamed when listed already); this computer's is not
      listed, but choosing it ends the first run (the file exists from then on).
    * :meth:`remember_connected`: the gateway the app connected to, for the next launch
      (the last gateway file; needs ``last_file``).
    * :meth:`forget`: a known gateway leaves the list, and its TLS pin and tokens leave the
      secret store (when ``secrets_file`` is given).

    Args:
        known_file: The known gateways JSON file (``AppPaths.known_gateways_file``).
        last_file: The last gateway file (``AppPaths.last_gateway_file``).
        secrets_file: The secret store's fallback file (``AppPaths.secrets_file``).
    """

    def __init__(
        self, known_file: Path, last_file: Path | None = None, secrets_file: Path | None = None
    ) -> None:
        self.known = KnownGateways(known_file)
        self.last_file = last_file
        self.secrets_file = secrets_file

    @classmethod
    def of(cls, paths: AppPaths) -> SavedGateways:
        """The saved gateways of an app folder (all three files)."""
        return cls(paths.known_gateways_file, paths.last_gateway_file, paths.secrets_file)

    def load(self) -> list[KnownGateway]:
        """The known gateways, in the order the connect screen lists them."""
        return self.known.load()

    def remember(self, target: RuntimeTarget) -> list[KnownGateway]:
        """The user chose ``target``; returns the known gateways now."""
        if target.url is None:
            path = self.known.path
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists():
                path.write_text("[]\n", encoding="utf-8")
            return self.known.load()
        name = getattr(target, "name", None) or target.url
        return self.known.add(str(name), target.url)

    def remember_connected(self, target: RuntimeTarget) -> None:
        """The app connected to ``target``: the next launch uses it (never its token)."""
        if self.last_file is not None:
            LastGateway(self.last_file).save(target)

    def forget(self, url: str) -> list[KnownGateway]:
        """Forget the gateway at ``url``: off the list, its pin and tokens dropped; returns
        the known gateways now."""
        entries = self.known.remove(url)
        if self.secrets_file is not None:
            CredentialStore(open_secret_store(self.secrets_file)).forget_gateway(gateway_key(url))
        return entries
