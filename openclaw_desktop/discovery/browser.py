"""Browse the LAN for OpenClaw gateways (``_openclaw-gw._tcp.local.``).

Built the way Home Assistant's zeroconf discovery is: the browser callback stays cheap.
Removals are applied at once; adds and updates are read from the zeroconf cache first, and
only when the cache is incomplete is a named, tracked background task started to ask the
network (``AsyncServiceInfo.async_request``). Bad names are logged at debug and skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from typing import Literal

from zeroconf import BadTypeInNameException, IPVersion, ServiceStateChange, Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from openclaw_desktop.discovery.txt import SERVICE_TYPE, GatewayEndpoint, endpoint_from_service

__all__ = ["ChangeKind", "GatewayBrowser", "Listener"]

log = logging.getLogger("openclaw.discovery")

ChangeKind = Literal["added", "updated", "removed"]
Listener = Callable[[ChangeKind, GatewayEndpoint], None]
"""Called with the kind of change and the endpoint (the last known one for a removal)."""

_REQUEST_TIMEOUT_MS = 3000


class GatewayBrowser:
    """Keeps the list of gateways currently advertised on the LAN.

    Args:
        zeroconf: A shared :class:`AsyncZeroconf` to browse with (not closed by
            :meth:`stop`); by default the browser opens and closes its own.
        request_timeout_ms: How long to ask the network for a service's records when the
            cache does not hold them all.
        interfaces: Interface addresses to browse on (``["127.0.0.1"]``: only this
            computer; see :func:`openclaw_desktop.config.discovery.discovery_interfaces`);
            None for every interface. Ignored with a shared zeroconf.
    """

    def __init__(
        self,
        *,
        zeroconf: AsyncZeroconf | None = None,
        request_timeout_ms: int = _REQUEST_TIMEOUT_MS,
        interfaces: Sequence[str] | None = None,
    ) -> None:
        self._shared = zeroconf
        self._interfaces = list(interfaces) if interfaces else None
        self._zc: AsyncZeroconf | None = None
        self._browser: AsyncServiceBrowser | None = None
        self._endpoints: dict[str, GatewayEndpoint] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._listeners: list[Listener] = []
        self._timeout_ms = request_timeout_ms

    async def start(self, interfaces: Sequence[str] | None = None) -> None:
        """Start browsing.

        Args:
            interfaces: Interface addresses to browse on (``["127.0.0.1"]`` in tests);
                None for those given to the constructor (by default every interface).
                Ignored with a shared zeroconf.

        Raises:
            RuntimeError: If already started.
        """
        if self._browser is not None:
            raise RuntimeError("the gateway browser is already started")
        if interfaces is None:
            interfaces = self._interfaces
        if self._shared is not None:
            self._zc = self._shared
        elif interfaces is None:
            self._zc = AsyncZeroconf(ip_version=IPVersion.V4Only)
        else:
            self._zc = AsyncZeroconf(interfaces=list(interfaces))
        self._browser = AsyncServiceBrowser(
            self._zc.zeroconf, SERVICE_TYPE, handlers=[self._on_service_state_change]
        )
        where = "every interface" if interfaces is None else ", ".join(interfaces)
        log.info("browsing for %s on %s", SERVICE_TYPE, where)

    async def stop(self) -> None:
        """Stop browsing, cancel pending look-ups and forget every endpoint. Idempotent."""
        browser, zc = self._browser, self._zc
        self._browser, self._zc = None, None
        if browser is not None:
            await browser.async_cancel()
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if zc is not None and self._shared is None:
            await zc.async_close()
        self._endpoints.clear()

    def endpoints(self) -> list[GatewayEndpoint]:
        """The gateways currently known, sorted by display name then stable id."""
        return sorted(
            self._endpoints.values(), key=lambda e: (e.display_name.casefold(), e.stable_id)
        )

    def on_change(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` on every add, update and removal; returns the unsubscribe."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return unsubscribe

    # ------------------------------------------------------------------ zeroconf callbacks
    def _on_service_state_change(
        self,
        zeroconf: Zeroconf,
        service_type: str,
        name: str,
        state_change: ServiceStateChange,
    ) -> None:
        """The browser handler: runs on the event loop and must not block."""
        if state_change is ServiceStateChange.Removed:
            self._cancel_lookup(name)
            self._forget(name)
            return
        try:
            info = AsyncServiceInfo(service_type, name)
        except BadTypeInNameException as exc:
            log.debug("ignoring a badly named service %r: %s", name, exc)
            return
        if info.load_from_cache(zeroconf):
            self._apply(name, info)
            return
        self._cancel_lookup(name)
        task = asyncio.get_running_loop().create_task(
            self._lookup(zeroconf, name, info), name=f"openclaw-discovery-lookup:{name}"
        )
        self._tasks[name] = task
        task.add_done_callback(lambda done: self._lookup_done(name, done))

    async def _lookup(self, zeroconf: Zeroconf, name: str, info: AsyncServiceInfo) -> None:
        """Ask the network for a service the cache does not fully know."""
        if await info.async_request(zeroconf, self._timeout_ms):
            self._apply(name, info)
        else:
            log.debug("no complete answer for %r within %d ms", name, self._timeout_ms)

    def _lookup_done(self, name: str, task: asyncio.Task[None]) -> None:
        """Drop a finished look-up and log (never raise) a failure."""
        if self._tasks.get(name) is task:
            del self._tasks[name]
        if not task.cancelled() and task.exception() is not None:
            log.debug("looking up %r failed", name, exc_info=task.exception())

    def _cancel_lookup(self, name: str) -> None:
        """Cancel an in-flight look-up of ``name``, if any."""
        task = self._tasks.pop(name, None)
        if task is not None:
            task.cancel()

    def _apply(self, name: str, info: AsyncServiceInfo) -> None:
        """Turn resolved records into an endpoint and tell listeners what changed."""
        endpoint = endpoint_from_service(
            name,
            info.type,
            info.parsed_scoped_addresses(),
            info.port,
            info.properties,
            info.server,
        )
        if endpoint is None:
            self._forget(name)
            return
        previous = self._endpoints.get(name)
        if previous == endpoint and previous.txt == endpoint.txt:
            return
        self._endpoints[name] = endpoint
        self._emit("added" if previous is None else "updated", endpoint)

    def _forget(self, name: str) -> None:
        """Drop a service and report its removal if it was known."""
        endpoint = self._endpoints.pop(name, None)
        if endpoint is not None:
            self._emit("removed", endpoint)

    def _emit(self, kind: ChangeKind, endpoint: GatewayEndpoint) -> None:
        """Call each listener; one failing listener does not stop the others."""
        log.debug("gateway %s: %s (%s)", kind, endpoint.display_name, endpoint.url)
        for listener in list(self._listeners):
            try:
                listener(kind, endpoint)
            except Exception:
                log.exception("a discovery listener failed")
