"""The asyncio adapter: one gateway connection with its reconnect loop.

It drives :class:`~openclaw_desktop.session.GatewayClientProtocol` over
``websockets.asyncio.client``: TLS trust and pinning before any credential is sent,
request futures, event listeners, the tick watchdog (through the core's deadlines), device
token storage and the reconnect policy (backoff, pause on auth failures, pairing waits).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections.abc import Callable
from typing import Any

import websockets
from websockets.asyncio.client import ClientConnection, connect

from openclaw_desktop.errors import (
    ConfigError,
    ConnectionClosed,
    GatewayError,
    InvalidState,
    OpenClawError,
    PairingRequired,
    ReconnectPaused,
    TrustError,
)
from openclaw_desktop.protocol import HelloOk
from openclaw_desktop.session import (
    AuthSelection,
    CloseRequested,
    ConnectPlan,
    ErrorCategory,
    EventReceived,
    FailureDecision,
    GatewayClientProtocol,
    HandshakeComplete,
    HandshakeFailed,
    LateResponse,
    ProtocolViolation,
    RequestFailed,
    ResponseReceived,
    SequenceGap,
    SessionState,
    select_auth,
)
from openclaw_desktop.transport.options import (
    ConnectionOptions,
    ConnectionState,
    ConnectionStatus,
    Endpoint,
)
from openclaw_desktop.transport.vault import ConnectionVault
from openclaw_desktop.trust import verify_pin

__all__ = ["EventListener", "GatewayConnection", "StatusListener"]

log = logging.getLogger("openclaw.transport")

EventListener = Callable[[EventReceived], None]
StatusListener = Callable[[ConnectionStatus], None]
GapListener = Callable[[SequenceGap], None]


class GatewayConnection:
    """A self-healing connection to one gateway in one role.

    Use :meth:`start` (or ``async with``), then :meth:`wait_ready`, :meth:`request` and the
    listener registrations, each of which returns an unsubscribe callable.
    """

    def __init__(self, options: ConnectionOptions) -> None:
        self.options = options
        self.endpoint = Endpoint.parse(options.url)
        self._vault = ConnectionVault(options, self.endpoint)
        self._status = ConnectionStatus(ConnectionState.IDLE)
        self._core: GatewayClientProtocol | None = None
        self._ws: ClientConnection | None = None
        self._send_lock = asyncio.Lock()
        self._futures: dict[str, asyncio.Future[Any]] = {}
        self._event_listeners: list[EventListener] = []
        self._status_listeners: list[StatusListener] = []
        self._gap_listeners: list[GapListener] = []
        self._ready: asyncio.Event = asyncio.Event()
        self._wake: asyncio.Event = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self._auth: AuthSelection | None = None
        self._announced_pairing: str | None = None
        self._close_request: tuple[int, str] | None = None
        self._failure: OpenClawError | None = None
        self._rearm = asyncio.Event()
        self._timer_deadline: float | None = None
        self._reconnect_now = False

    # ------------------------------------------------------------------ lifecycle
    async def __aenter__(self) -> GatewayConnection:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def start(self) -> None:
        """Start the connection loop in the background."""
        if self._task is not None:
            raise InvalidState("connection already started")
        self._task = asyncio.create_task(self._run(), name=f"gateway-{self.options.role}")

    async def aclose(self) -> None:
        """Close the socket, stop reconnecting and fail pending requests."""
        self._closing = True
        self._wake.set()
        ws = self._ws
        if ws is not None:
            with contextlib.suppress(Exception):
                await ws.close(1000, "client closing")
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._fail_futures(ConnectionClosed(1000, "client closed"))
        self._set_status(ConnectionStatus(ConnectionState.CLOSED, error=self._status.error))

    def resume(self) -> None:
        """The user acted (approved, changed a token, trusted a pin): try again now."""
        self._vault.device_retry_used = False
        if self._status.state is ConnectionState.PAUSED:
            self._set_status(ConnectionStatus(ConnectionState.CONNECTING))
        self._wake.set()

    async def reconnect(self, reason: str = "reconnecting") -> None:
        """Close the current socket and connect again at once, with the current options.

        This is how a node re-advertises a changed command surface: ``connect`` params are
        only read at the handshake.
        """
        self._reconnect_now = True
        self._vault.device_retry_used = False
        if self._status.state is ConnectionState.PAUSED:
            self._set_status(ConnectionStatus(ConnectionState.CONNECTING))
        self._wake.set()
        ws = self._ws
        if ws is not None:
            with contextlib.suppress(Exception):
                await ws.close(1000, reason[:120])

    # ------------------------------------------------------------------ queries
    @property
    def status(self) -> ConnectionStatus:
        """The current status snapshot."""
        return self._status

    @property
    def hello(self) -> HelloOk | None:
        """The ``hello-ok`` of the live session, if connected."""
        return self._core.hello if self._core is not None and self._ready.is_set() else None

    async def wait_ready(self, timeout: float | None = None) -> HelloOk:
        """Wait for a live session.

        Raises:
            ReconnectPaused: reconnecting paused and waits for the user.
            OpenClawError: the last failure, when reconnecting is off.
            TimeoutError: not ready in ``timeout`` seconds.
        """
        async with asyncio.timeout(timeout):
            while True:
                if self._ready.is_set() and self.hello is not None:
                    return self.hello
                status = self._status
                if status.state is ConnectionState.PAUSED and status.error is not None:
                    raise ReconnectPaused(status.error)
                if status.state is ConnectionState.CLOSED:
                    raise status.error or ConnectionClosed(None, "connection closed")
                waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()

                def wake(_status: ConnectionStatus, w: asyncio.Future[None] = waiter) -> None:
                    if not w.done():
                        w.set_result(None)

                unsubscribe = self.on_status(wake)
                try:
                    await waiter
                finally:
                    unsubscribe()

    # ------------------------------------------------------------------ listeners
    def on_event(self, listener: EventListener) -> Callable[[], None]:
        """Call ``listener`` for every gateway event. Returns the unsubscribe callable."""
        return _subscribe(self._event_listeners, listener)

    def on_status(self, listener: StatusListener) -> Callable[[], None]:
        """Call ``listener`` on every status change."""
        return _subscribe(self._status_listeners, listener)

    def on_gap(self, listener: GapListener) -> Callable[[], None]:
        """Call ``listener`` when events were missed (resync needed)."""
        return _subscribe(self._gap_listeners, listener)

    # ------------------------------------------------------------------ requests
    async def request(
        self, method: str, params: Any = None, *, timeout_s: float | None = None
    ) -> Any:
        """Send one request on the live session and return its payload.

        Raises:
            InvalidState: not connected.
            GatewayError: the gateway answered ``ok: false`` (typed subclasses).
            RequestTimeout: no answer in time (a ``cancel`` frame was sent).
            RequestOutcomeUnknown: the connection dropped before the answer.
            PayloadTooLarge: the frame exceeds ``policy.maxPayload``.
        """
        core = self._core
        if core is None or not self._ready.is_set():
            raise InvalidState(f"cannot send {str(method)!r}: not connected ({self._status.state})")
        timeout = self.options.request_timeout_s if timeout_s is None else timeout_s
        request_id = core.send_request(
            method, params, timeout_s=timeout, now=asyncio.get_running_loop().time()
        )
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._futures[request_id] = future
        if timeout > 0:
            deadline = asyncio.get_running_loop().time() + timeout
            if self._timer_deadline is None or deadline < self._timer_deadline:
                self._rearm.set()
        try:
            await self._flush(core)
            return await future
        except asyncio.CancelledError:
            core.abandon_request(request_id)
            with contextlib.suppress(Exception):
                await self._flush(core)
            raise
        finally:
            self._futures.pop(request_id, None)

    # ------------------------------------------------------------------ the loop
    async def _run(self) -> None:
        attempt = 0
        while not self._closing:
            self._set_status(ConnectionStatus(ConnectionState.CONNECTING, attempt=attempt))
            decision = FailureDecision(ErrorCategory.NETWORK, pause=False)
            error: OpenClawError = ConnectionClosed(None, "connection lost")
            try:
                await self._attempt()
                # A live session ended: classify its close like any failure, so 1012/1013
                # (service restart / try again later) get their longer first delay.
                attempt = 0
                error = self._status.error or error
                decision = self._vault.decide(error, self._auth.source if self._auth else "none")
            except OpenClawError as exc:
                error = exc
                decision = self._vault.decide(exc, self._auth.source if self._auth else "none")
            except (OSError, websockets.InvalidHandshake, websockets.InvalidURI) as exc:
                error = ConnectionClosed(None, f"{type(exc).__name__}: {exc}")
            except TimeoutError:
                error = ConnectionClosed(None, "timed out opening the connection")
            finally:
                self._ready.clear()
                self._ws = None
            if self._is_closing():
                break
            if self._reconnect_now:
                self._reconnect_now = False
                attempt = 0
                continue
            if not self.options.reconnect:
                self._set_status(
                    ConnectionStatus(
                        ConnectionState.CLOSED, attempt, None, decision.category, error
                    )
                )
                return
            if decision.retry_now:
                continue
            if decision.pause and not (
                decision.category is ErrorCategory.PAIRING and self.options.wait_for_pairing
            ):
                log.warning("reconnect paused until you act: %s", error)
                self._set_status(
                    ConnectionStatus(
                        ConnectionState.PAUSED, attempt, None, decision.category, error
                    )
                )
                await self._sleep(None)
                attempt = 0
                continue
            delay_s = (
                self.options.retry.delay_ms(attempt, decision.category, decision.retry_after_ms)
                / 1000
            )
            state = (
                ConnectionState.AWAITING_APPROVAL
                if decision.category is ErrorCategory.PAIRING
                else ConnectionState.RECONNECTING
            )
            if state is ConnectionState.RECONNECTING:
                log.info(
                    "connection to %s failed (%s); retrying in %.1fs",
                    self.endpoint.display,
                    error,
                    delay_s,
                )
            else:
                # Quiet by default: the request was announced once (the WARNING above, or
                # the caller's own banner); -v shows each check.
                log.info(
                    "pairing request %s still waits for approval; checking again in %.1fs",
                    error.request_id if isinstance(error, PairingRequired) else "?",
                    delay_s,
                )
            self._set_status(
                ConnectionStatus(
                    state,
                    attempt + 1,
                    delay_s,
                    decision.category,
                    error,
                    retry_at=time.monotonic() + delay_s,
                )
            )
            attempt += 1
            await self._sleep(delay_s)

    async def _sleep(self, seconds: float | None) -> None:
        if self._reconnect_now:
            return
        self._wake.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wake.wait()

    def _is_closing(self) -> bool:
        return self._closing

    def _requested_close(self) -> tuple[int, str]:
        return self._close_request or (1000, "")

    async def _attempt(self) -> None:
        opts = self.options
        tls = await self._vault.resolve_tls()
        ssl_ctx: ssl.SSLContext | None = tls.context if tls else None
        extra: dict[str, Any] = {}
        if self.endpoint.loopback:
            extra["proxy"] = None  # never through a proxy; also skips reading the environment
        if tls is not None and tls.server_hostname is not None:
            extra["server_hostname"] = tls.server_hostname
        ws = await connect(
            self.endpoint.url,
            ssl=ssl_ctx,
            open_timeout=opts.open_timeout_s,
            max_size=opts.max_inbound_bytes,
            ping_interval=30,
            ping_timeout=30,
            close_timeout=2,
            user_agent_header=opts.user_agent,
            **extra,
        )
        self._ws = ws
        try:
            if tls is not None and tls.pin is not None:
                ssl_object = ws.transport.get_extra_info("ssl_object")
                verify_pin(ssl_object, tls.pin, self.endpoint.display)
            await self._session(ws)
        finally:
            with contextlib.suppress(Exception):
                await ws.close()

    async def _session(self, ws: ClientConnection) -> None:
        opts = self.options
        creds = self._vault.credentials()
        use_device_retry = self._vault.device_retry_used and creds.stored_device_token is not None
        self._auth = select_auth(
            creds, role=opts.role, requested_scopes=opts.scopes, device_token_retry=use_device_retry
        )
        plan = ConnectPlan(
            client=opts.client,
            role=opts.role,
            auth=self._auth,
            signer=opts.signer,
            caps=opts.caps,
            commands=opts.commands,
            permissions=opts.permissions,
            computer_use=opts.computer_use,
            path_env=opts.path_env,
            min_protocol=opts.min_protocol,
            max_protocol=opts.max_protocol,
            locale=opts.locale,
            user_agent=opts.user_agent,
        )
        loop = asyncio.get_running_loop()
        core = GatewayClientProtocol(
            plan,
            now=loop.time(),
            challenge_timeout_s=opts.challenge_timeout_s,
            connect_timeout_s=opts.connect_timeout_s,
            default_timeout_s=opts.request_timeout_s,
            max_inbound_bytes=opts.max_inbound_bytes,
        )
        self._core = core
        self._close_request = None
        self._failure = None
        timer = asyncio.create_task(self._timer(core, ws), name="gateway-deadlines")
        try:
            while True:
                try:
                    message = await ws.recv(decode=False)
                except websockets.ConnectionClosed as exc:
                    rcvd = exc.rcvd
                    core.connection_lost(rcvd.code if rcvd else None, rcvd.reason if rcvd else "")
                    self._process(core)
                    break
                state = core.state
                core.receive_data(message, loop.time())
                self._process(core)
                await self._flush(core)
                if core.state is not state:  # once READY, inbound data only moves deadlines later
                    self._rearm_if_earlier(core)
                if core.state >= SessionState.CLOSING:
                    await self._close_socket(ws)
        finally:
            timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await timer
            self._ready.clear()
            self._core = None
            self._fail_futures(ConnectionClosed(ws.close_code, ws.close_reason or ""))
        if self._failure is not None:
            raise self._failure
        if self._status.state is ConnectionState.CONNECTED:
            self._set_status(
                ConnectionStatus(
                    ConnectionState.RECONNECTING,
                    error=ConnectionClosed(ws.close_code, ws.close_reason or ""),
                )
            )

    async def _timer(self, core: GatewayClientProtocol, ws: ClientConnection) -> None:
        """Fire the core's deadlines: handshake, request timeouts, tick watchdog."""
        loop = asyncio.get_running_loop()
        while core.state < SessionState.CLOSING:
            deadline = core.next_deadline()
            self._timer_deadline = deadline
            self._rearm.clear()
            timeout = None if deadline is None else max(0.0, deadline - loop.time())
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self._rearm.wait()
            core.advance(loop.time())
            self._process(core)
            await self._flush(core)
        await self._close_socket(ws)

    def _rearm_if_earlier(self, core: GatewayClientProtocol) -> None:
        deadline = core.next_deadline()
        if deadline is not None and (
            self._timer_deadline is None or deadline < self._timer_deadline
        ):
            self._rearm.set()

    async def _close_socket(self, ws: ClientConnection) -> None:
        code, reason = self._requested_close()
        with contextlib.suppress(Exception):
            await ws.close(code, reason)  # bounded by close_timeout

    def _process(self, core: GatewayClientProtocol) -> None:
        for event in core.events_received():
            if isinstance(event, EventReceived):
                self._dispatch(self._event_listeners, event)
            elif isinstance(event, ResponseReceived):
                future = self._futures.get(event.request_id)
                if future is not None and not future.done():
                    if event.ok:
                        future.set_result(event.payload)
                    else:
                        future.set_exception(
                            event.error or GatewayError("UNKNOWN", "request failed")
                        )
            elif isinstance(event, RequestFailed):
                future = self._futures.get(event.request_id)
                if future is not None and not future.done():
                    future.set_exception(event.error)
            elif isinstance(event, HandshakeComplete):
                self._on_hello(event.hello)
            elif isinstance(event, HandshakeFailed):
                self._failure = self._failure or event.error
                self._log_handshake_failure(event.error)
            elif isinstance(event, SequenceGap):
                log.info("missed events %d..%d; resync", event.expected, event.received - 1)
                self._dispatch(self._gap_listeners, event)
            elif isinstance(event, CloseRequested):
                self._close_request = (event.code, event.reason)
                if event.code == 4000:
                    log.warning("gateway silent for two tick intervals; reconnecting")
            elif isinstance(event, LateResponse):
                log.debug(
                    "dropped late answer to %s %s (given up on; ok=%s%s)",
                    event.method,
                    event.request_id,
                    event.ok,
                    f", {event.error_code}" if event.error_code else "",
                )
            elif isinstance(event, ProtocolViolation):
                log.warning("dropped invalid frame from gateway (%s): %s", event.kind, event.detail)

    def _log_handshake_failure(self, error: OpenClawError) -> None:
        if isinstance(error, PairingRequired):
            rid = error.request_id
            if rid != self._announced_pairing:
                self._announced_pairing = rid
                log.log(
                    logging.WARNING if self.options.announce_pairing else logging.INFO,
                    "pairing required (requestId %s): approve on the gateway with `%s`",
                    rid,
                    error.approve_command,
                )
        elif not isinstance(error, ConnectionClosed | TrustError | ConfigError):
            log.info("handshake failed: %s", error)

    def _on_hello(self, hello: HelloOk) -> None:
        self._announced_pairing = None
        self._reconnect_now = False  # this handshake already carried the current options
        self._vault.store_tokens(hello)
        self._ready.set()
        log.info(
            "connected to %s as %s (protocol %d, gateway %s)",
            self.endpoint.display,
            hello.auth.role,
            hello.protocol,
            hello.server.version,
        )
        self._set_status(ConnectionStatus(ConnectionState.CONNECTED, hello=hello))

    async def _flush(self, core: GatewayClientProtocol) -> None:
        frames = core.data_to_send()
        if not frames or self._ws is None:
            return
        async with self._send_lock:
            for frame in frames:
                await self._ws.send(frame, text=True)

    def _fail_futures(self, error: OpenClawError) -> None:
        for future in self._futures.values():
            if not future.done():
                future.set_exception(error)
                future.exception()  # mark retrieved: the caller may already be gone

    def _set_status(self, status: ConnectionStatus) -> None:
        self._status = status
        self._dispatch(self._status_listeners, status)

    @staticmethod
    def _dispatch(listeners: list[Callable[[Any], None]], item: Any) -> None:
        for listener in list(listeners):
            try:
                listener(item)
            except Exception:
                log.exception("listener %r failed", listener)


def _subscribe(listeners: list[Any], listener: Any) -> Callable[[], None]:
    listeners.append(listener)

    def unsubscribe() -> None:
        with contextlib.suppress(ValueError):
            listeners.remove(listener)

    return unsubscribe
