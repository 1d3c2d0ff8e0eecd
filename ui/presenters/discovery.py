"""What the connect screen shows, without the widgets: the gateways a :class:`GatewayBrowser`
finds on the LAN (bridged to the GUI thread with a Qt signal), the "known gateways" JSON file,
and the target a choice turns into."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Signal

from openclaw_desktop.config import SettingsStore
from openclaw_desktop.config.discovery import discovery_interfaces
from openclaw_desktop.discovery import ChangeKind, GatewayBrowser, GatewayEndpoint, Listener
from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.transport import Endpoint
from ui.runtime import RuntimeTarget

__all__ = [
    "BrowserFactory",
    "ConnectTarget",
    "DiscoveryPresenter",
    "GatewaySource",
    "KnownGateway",
    "KnownGateways",
    "LastGateway",
    "configured_browsers",
    "short_fingerprint",
    "typed_gateway",
]

log = logging.getLogger("openclaw.ui")

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


class GatewaySource(Protocol):
    """What the screen needs of a browser (``GatewayBrowser`` fits)."""

    async def start(self) -> None:
        """Start browsing."""

    async def stop(self) -> None:
        """Stop browsing."""

    def on_change(self, listener: Listener) -> Callable[[], None]:
        """Subscribe to changes; returns the unsubscribe."""


BrowserFactory = Callable[[], GatewaySource]


def configured_browsers(settings_file: Path) -> BrowserFactory:
    """Makes :class:`GatewayBrowser` s that browse where the settings say (and
    ``OPENCLAW_DISCOVERY_INTERFACES``), read when each browser is made.

    The factory raises :class:`~openclaw_desktop.errors.ConfigError` for a bad address list
    or settings file: discovery then stays off (the presenter reports it) rather than
    browsing on every interface.
    """

    def make() -> GatewaySource:
        settings = SettingsStore(settings_file).load()
        return GatewayBrowser(interfaces=discovery_interfaces(settings.discovery))

    return make


def short_fingerprint(fingerprint: str | None) -> str:
    """``"7270b9b1…fd6b"`` for a fingerprint hint, ``""`` for None."""
    if not fingerprint:
        return ""
    if len(fingerprint) <= 16:
        return fingerprint
    return f"{fingerprint[:8]}…{fingerprint[-4:]}"


class DiscoveryPresenter(QObject):
    """Owns a browser and re-emits its changes on the GUI thread.

    Zeroconf may call the listener on its own thread; :attr:`changed` is emitted from there
    and Qt queues it to this object's (the GUI) thread. :attr:`gateways` is only touched in
    the GUI thread.
    """

    changed = Signal(str, object)
    """``(kind, GatewayEndpoint)`` on the GUI thread, after :attr:`gateways` is updated."""
    _bridge = Signal(str, object)
    failed = Signal(str)
    """Discovery could not start (the text says why)."""

    def __init__(self, factory: BrowserFactory, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._factory = factory
        self._browser: GatewaySource | None = None
        self._unsubscribe: Callable[[], None] | None = None
        #: Discovered gateways by stable id, in discovery order.
        self.gateways: dict[str, GatewayEndpoint] = {}
        self._bridge.connect(self._apply)

    @property
    def running(self) -> bool:
        """Whether a browser is started."""
        return self._browser is not None

    async def start(self) -> None:
        """Create and start the browser; a failure is reported on :attr:`failed`."""
        if self._browser is not None:
            return
        try:
            browser = self._factory()
        except OpenClawError as exc:
            log.warning("LAN discovery is off: %s", exc)
            self.failed.emit(f"LAN discovery is off: {exc}")
            return
        unsubscribe = browser.on_change(self._listener)
        try:
            await browser.start()
        except (OSError, RuntimeError, ValueError) as exc:
            unsubscribe()
            log.warning("LAN discovery unavailable: %s", exc)
            self.failed.emit(f"LAN discovery unavailable: {exc}")
            return
        self._browser, self._unsubscribe = browser, unsubscribe

    async def stop(self) -> None:
        """Stop the browser and forget what it found. Idempotent."""
        browser, unsubscribe = self._browser, self._unsubscribe
        self._browser, self._unsubscribe = None, None
        if unsubscribe is not None:
            unsubscribe()
        if browser is not None:
            await browser.stop()
        for endpoint in list(self.gateways.values()):
            self._apply("removed", endpoint)

    def _listener(self, kind: ChangeKind, endpoint: GatewayEndpoint) -> None:
        """The browser's listener: any thread; only emits."""
        self._bridge.emit(kind, endpoint)

    def _apply(self, kind: str, endpoint: object) -> None:
        if not isinstance(endpoint, GatewayEndpoint):
            return
        if kind == "removed":
            if self.gateways.pop(endpoint.stable_id, None) is None:
                return
        else:
            self.gateways[endpoint.stable_id] = endpoint
        self.changed.emit(kind, endpoint)


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


def typed_gateway(text: str) -> tuple[str, str]:
    """A gateway URL a person typed (or a setup code names) as ``(url, name to show)``;
    :class:`~openclaw_desktop.errors.ConfigError` says why it is not one."""
    endpoint = Endpoint.parse(text)
    return endpoint.url, endpoint.display
