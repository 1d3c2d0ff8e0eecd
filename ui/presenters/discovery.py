"""What the connect screen shows, without the widgets: the gateways a :class:`GatewayBrowser`
finds on the LAN (bridged to the GUI thread with a Qt signal), fingerprints shortened for
showing and the URL a person typed. The known gateways and the last choice are kept by
:mod:`openclaw_desktop.known_gateways`."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Signal

from openclaw_desktop.config import SettingsStore
from openclaw_desktop.config.discovery import discovery_interfaces
from openclaw_desktop.discovery import ChangeKind, GatewayBrowser, GatewayEndpoint, Listener
from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.transport import Endpoint

__all__ = [
    "BrowserFactory",
    "DiscoveryPresenter",
    "GatewaySource",
    "configured_browsers",
    "short_fingerprint",
    "typed_gateway",
]

log = logging.getLogger("openclaw.ui")


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


def typed_gateway(text: str) -> tuple[str, str]:
    """A gateway URL a person typed (or a setup code names) as ``(url, name to show)``;
    :class:`~openclaw_desktop.errors.ConfigError` says why it is not one."""
    endpoint = Endpoint.parse(text)
    return endpoint.url, endpoint.display
