"""``OpenClaw``: the app SDK's entry point.

    async with OpenClaw.connect("ws://127.0.0.1:18789", token="…") as oc:
        run = await oc.sessions.send("main", "What's on my calendar?")
        async for event in run.events():
            if event.type == "assistant.delta":
                print(event.data["text"], end="", flush=True)
        result = await run.wait()

Works against the real OpenClaw gateway and the bundled one alike. Methods the gateway does
not advertise raise :class:`Unsupported` without sending; a missing operator scope raises
:class:`MissingScope` with the gateway's details.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Sequence
from typing import Any, Literal

from openclaw_desktop.config.client_profile import cli_client, user_agent
from openclaw_desktop.errors import GatewayError
from openclaw_desktop.identity import (
    CredentialStore,
    DeviceIdentity,
    IdentityStore,
    MemorySecretStore,
    open_secret_store,
)
from openclaw_desktop.protocol import HelloOk, Method, Role
from openclaw_desktop.sdk.errors import Unsupported
from openclaw_desktop.sdk.events import Event, now_ms
from openclaw_desktop.sdk.normalize import Normalizer
from openclaw_desktop.sdk.resources import (
    Agents,
    Approvals,
    Artifacts,
    Models,
    Nodes,
    Pairing,
    Sessions,
    Tools,
)
from openclaw_desktop.sdk.run import Run
from openclaw_desktop.sdk.runbook import FINISHED_KEPT, RunBook
from openclaw_desktop.session import EventReceived, SequenceGap
from openclaw_desktop.transport import (
    ConnectionOptions,
    ConnectionState,
    ConnectionStatus,
    GatewayConnection,
)
from openclaw_desktop.trust import TrustCallback

__all__ = ["DEFAULT_SCOPES", "FINISHED_KEPT", "OpenClaw", "operator_caps"]

log = logging.getLogger("openclaw.sdk")

#: What the SDK asks for unless told otherwise: read and write (chat), nothing more.
DEFAULT_SCOPES = ("operator.read", "operator.write")
#: Methods every gateway has even when its feature list is conservative.
_ALWAYS = frozenset({Method.HEALTH, Method.STATUS})
#: A run created this long before the gateway (re)started is one it never finished.
_RESTART_SLACK_MS = 1_000
# How long a catch-up after a reconnect waits for a gateway that says it is still starting.
_CATCH_UP_PATIENCE_S = 5.0
#: How a session's status ends a run whose end was missed and left no final message.
_ENDS = {"aborted": "run.cancelled", "failed": "run.failed", "error": "run.failed"}


def operator_caps(scopes: Sequence[str]) -> tuple[str, ...]:
    """The client caps an operator with ``scopes`` announces: tool events, and the approval
    requests when it may answer them (gateways send those only to clients that say they
    handle them)."""
    caps = ["tool-events"]
    if {"operator.approvals", "operator.admin"} & set(scopes):
        caps += ["exec-approvals", "plugin-approvals"]
    return tuple(caps)


class OpenClaw:
    """A connected operator session with the SDK's objects."""

    def __init__(self, options: ConnectionOptions) -> None:
        self.connection = GatewayConnection(options)
        self.scopes = tuple(options.scopes)
        self._listeners: list[asyncio.Queue[Event]] = []
        #: The runs this client follows (its own sends, the last finished, others' live).
        self.run_book = RunBook(
            lambda run_id, key: Run(self.sessions, self.approvals, run_id, key, now_ms()),
            self._publish,
        )
        self.sessions = Sessions(self, self.run_book)
        self.models = Models(self)
        self.nodes = Nodes(self)
        self.pairing = Pairing(self)
        self.approvals = Approvals(self, self.events)
        self.agents = Agents(self)
        self.tools = Tools(self)
        self.artifacts = Artifacts(self)
        self.runs = Runs(self)
        self._normalizer = Normalizer()
        self._hello: HelloOk | None = None
        self._connected_once = False
        self.connection.on_event(self._on_event)
        self.connection.on_status(self._on_status)
        self.connection.on_gap(self._on_gap)

    @classmethod
    def connect(
        cls,
        url: str,
        *,
        token: str | None = None,
        password: str | None = None,
        tls_fingerprint: str | None = None,
        scopes: Sequence[str] = DEFAULT_SCOPES,
        identity: DeviceIdentity | Literal["installation", "ephemeral"] = "installation",
        credentials: CredentialStore | None = None,
        timeout: float = 30.0,
        trust_callback: TrustCallback | None = None,
        tls_hint: str | None = None,
        bootstrap_token: str | None = None,
    ) -> OpenClaw:
        """An SDK client for ``url``; use it as ``async with``.

        Args:
            token / password: the gateway's shared secret.
            tls_fingerprint: pin a ``wss://`` gateway's certificate (SHA-256 hex).
            scopes: exactly the operator scopes to ask for (nothing more is requested).
            identity: this installation's device identity (default; pairings persist),
                ``"ephemeral"`` for a throw-away one, or your own.
            credentials: where device tokens are kept (default: the OS keyring for the
                installation identity, memory for others).
            timeout: seconds to wait for the connection in ``async with``.
            trust_callback: asked once about an unpinned ``wss://`` certificate (the
                desktop app's trust dialog); without it such a gateway is refused.
            tls_hint: a fingerprint advertised on the LAN, shown to the trust callback as
                a hint only (never pinned by itself).
            bootstrap_token: a setup code's single-use token (first pairing).
        """
        if identity == "installation":
            from openclaw_desktop.config.paths import AppPaths

            paths = AppPaths.default()
            signer = IdentityStore(paths.identity_file).load_or_create()
            creds = credentials or CredentialStore(open_secret_store(paths.secrets_file))
        else:
            signer = DeviceIdentity.generate() if identity == "ephemeral" else identity
            creds = credentials or CredentialStore(MemorySecretStore())
        options = ConnectionOptions(
            url=url,
            role=Role.OPERATOR,
            client=cli_client(),
            signer=signer,
            credentials=creds,
            scopes=tuple(scopes),
            caps=operator_caps(scopes),
            shared_token=token,
            password=password,
            tls_fingerprint=tls_fingerprint,
            trust_callback=trust_callback,
            tls_hint=tls_hint,
            bootstrap_token=bootstrap_token,
            user_agent=user_agent(),
            wait_for_pairing=True,
        )
        client = cls(options)
        client._connect_timeout = timeout
        return client

    _connect_timeout = 30.0

    async def __aenter__(self) -> OpenClaw:
        self.connection.start()
        try:
            self._hello = await self.connection.wait_ready(self._connect_timeout)
        except BaseException:
            await self.connection.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection."""
        await self.connection.aclose()

    # ------------------------------------------------------------------ features
    @property
    def hello(self) -> HelloOk:
        """The gateway's ``hello-ok`` (after ``async with``)."""
        if self._hello is None:
            raise RuntimeError("not connected: use `async with OpenClaw.connect(...)`")
        return self._hello

    @property
    def methods(self) -> frozenset[str]:
        """Methods the gateway advertises."""
        features = self.hello.features
        return frozenset(getattr(features, "methods", None) or ()) | _ALWAYS

    def supports(self, method: str) -> bool:
        """Whether the gateway advertises ``method``."""
        return method in self.methods

    async def call(
        self, method: str, params: Any = None, *, timeout: float = 30, unadvertised: bool = False
    ) -> Any:
        """One RPC (the namespaces use this): :class:`Unsupported` when the gateway does not
        advertise ``method``, unless ``unadvertised`` (a method gateways serve without
        advertising it; one that does not serve it answers ``unknown method``)."""
        if not unadvertised and not self.supports(method):
            raise Unsupported(method, str(self.connection.endpoint.display))
        return await self.connection.request(method, params, timeout_s=timeout)

    # ------------------------------------------------------------------ events
    async def events(self) -> AsyncGenerator[Event, None]:
        """Every normalized event of this connection from now on."""
        queue: asyncio.Queue[Event] = asyncio.Queue(maxsize=10_000)
        self._listeners.append(queue)
        try:
            while True:
                yield await queue.get()
        finally:
            self._listeners.remove(queue)

    def _on_event(self, received: EventReceived) -> None:
        for event in self._normalizer.feed(received.event, received.payload, now_ms()):
            self.run_book.feed(event)

    def _publish(self, event: Event) -> None:
        for queue in list(self._listeners):
            if queue.full():
                queue.get_nowait()  # a slow reader loses the oldest, not the newest
            queue.put_nowait(event)

    def _on_gap(self, gap: SequenceGap) -> None:
        self.run_book.reset_all(f"{gap.received - gap.expected} gateway events were missed")

    def _on_status(self, status: ConnectionStatus) -> None:
        if status.state is not ConnectionState.CONNECTED:
            return
        if status.hello is not None:
            self._hello = status.hello
        if self._connected_once:
            asyncio.get_running_loop().create_task(self._catch_up())
        self._connected_once = True

    async def _catch_up(self) -> None:
        """After a reconnect: finish runs that ended meanwhile from ``chat.history``; a run
        the gateway has not finished although it (re)started after the run began is
        interrupted (``run.failed``, ``errorKind: interrupted``); mark the others with
        ``stream.reset`` (deltas sent while away are not replayed by gateways). The events
        added go to :meth:`events` readers too."""
        uptime = self._hello.snapshot.uptime_ms if self._hello is not None else None
        started = now_ms() - uptime if uptime is not None else None
        for run in self.run_book.waiting():
            try:
                messages, over = await self._history_when_ready(run)
            except Exception as exc:
                log.warning("could not catch up on run %s: %s", run.run_id, exc)
                run.reset_stream("reconnected; the run's history is unavailable")
                continue
            final = [
                m
                for m in messages
                if m.get("role") == "assistant" and m.get("stopReason") not in (None, "toolUse")
            ]
            added: list[Event] = []
            if final:
                added = run.finish_from_history(final[-1])
            elif over == "interrupted" or (
                started is not None and run.created_at < started - _RESTART_SLACK_MS
            ):
                cut = run.mark_interrupted()
                added = [cut] if cut is not None else []
            elif over is not None:  # ended while we were away, leaving no final message
                kind = _ENDS.get(over, "run.completed")
                data: dict[str, Any] = {"replayed": True, "sessionStatus": over}
                if kind == "run.failed":
                    data |= {"errorMessage": "the run failed", "errorKind": "unknown"}
                ended = run.synthesize(kind, now_ms(), data)
                added = [ended] if ended is not None else []
            else:
                run.reset_stream("reconnected while the run was going; live events resume")
            self.run_book.settle(run, added)

    async def _history_when_ready(self, run: Run) -> tuple[list[dict[str, Any]], str | None]:
        """``sessions.run_history`` of ``run``, asked again while the gateway answers that it
        is still starting (a retryable error) for at most :data:`_CATCH_UP_PATIENCE_S`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _CATCH_UP_PATIENCE_S
        delay = 0.1
        while True:
            try:
                return await self.sessions.run_history(run.session_key, run.run_id)
            except GatewayError as exc:
                wait = exc.retry_after_ms / 1000 if exc.retry_after_ms else delay
                if not exc.retryable or loop.time() + wait > deadline:
                    raise
                await asyncio.sleep(wait)
                delay = min(delay * 2, 1.0)


class Runs:
    """The runs this client started (``sessions.send`` creates them)."""

    def __init__(self, client: OpenClaw) -> None:
        self._client = client

    def get(self, run_id: str) -> Run | None:
        """A run by id (a finished one only while it is among the last few)."""
        return self._client.run_book.get(run_id)

    def active(self) -> list[Run]:
        """Runs still going."""
        return self._client.run_book.active()

    async def send(self, session_key: str, message: str, **options: Any) -> Run:
        """Same as ``sessions.send``."""
        return await self._client.sessions.send(session_key, message, **options)
