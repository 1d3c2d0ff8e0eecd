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
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
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
from openclaw_desktop.protocol import HelloOk, Role
from openclaw_desktop.sdk.errors import Unsupported
from openclaw_desktop.sdk.events import Event, now_ms
from openclaw_desktop.sdk.normalize import Normalizer
from openclaw_desktop.sdk.resources import (
    Agents,
    Approvals,
    Artifacts,
    Models,
    Nodes,
    Sessions,
    Tools,
)
from openclaw_desktop.sdk.run import TERMINAL, Run
from openclaw_desktop.session import EventReceived, SequenceGap
from openclaw_desktop.transport import (
    ConnectionOptions,
    ConnectionState,
    ConnectionStatus,
    GatewayConnection,
)
from openclaw_desktop.trust import TrustCallback

__all__ = ["DEFAULT_SCOPES", "OpenClaw"]

log = logging.getLogger("openclaw.sdk")

#: What the SDK asks for unless told otherwise: read and write (chat), nothing more.
DEFAULT_SCOPES = ("operator.read", "operator.write")
#: Methods every gateway has even when its feature list is conservative.
_ALWAYS = frozenset({"health", "status"})
#: Finished runs still found by ``runs.get`` (older ones are forgotten: a long-running app
#: keeps only what its own objects hold, such as the chat timeline's items).
FINISHED_KEPT = 32
#: Runs of other clients followed (to know what a steered message joins).
LIVE_KEPT = 64
#: A run created this long before the gateway (re)started is one it never finished.
_RESTART_SLACK_MS = 1_000
# How long a catch-up after a reconnect waits for a gateway that says it is still starting.
_CATCH_UP_PATIENCE_S = 5.0
#: ``chat.history`` ``sessionInfo.status`` of a session with no run going (both gateways).
_IDLE = frozenset({"done", "aborted", "failed", "error", "interrupted"})
#: How a session's status ends a run whose end was missed and left no final message.
_ENDS = {"aborted": "run.cancelled", "failed": "run.failed", "error": "run.failed"}


class OpenClaw:
    """A connected operator session with the SDK's objects."""

    def __init__(self, options: ConnectionOptions) -> None:
        self.connection = GatewayConnection(options)
        self.scopes = tuple(options.scopes)
        self.sessions = Sessions(self)
        self.models = Models(self)
        self.nodes = Nodes(self)
        self.approvals = Approvals(self)
        self.agents = Agents(self)
        self.tools = Tools(self)
        self.artifacts = Artifacts(self)
        self.runs = Runs(self)
        self._normalizer = Normalizer()
        self._runs: dict[str, Run] = {}
        self._finished: OrderedDict[str, Run] = OrderedDict()
        #: Live runs seen in events (any client's): run id -> session key.
        self._live: OrderedDict[str, str] = OrderedDict()
        #: Run id -> steered runs it took in (they end with it).
        self._absorbed: dict[str, list[Run]] = {}
        self._listeners: list[asyncio.Queue[Event]] = []
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
        caps = ["tool-events"]
        if {"operator.approvals", "operator.admin"} & set(scopes):
            # Gateways send approval requests only to clients that say they handle them.
            caps += ["exec-approvals", "plugin-approvals"]
        options = ConnectionOptions(
            url=url,
            role=Role.OPERATOR,
            client=cli_client(),
            signer=signer,
            credentials=creds,
            scopes=tuple(scopes),
            caps=tuple(caps),
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

    async def call(self, method: str, params: Any = None, *, timeout: float = 30) -> Any:
        """One RPC (the namespaces use this); :class:`Unsupported` / :class:`MissingScope`."""
        if not self.supports(method):
            raise Unsupported(method, str(self.connection.endpoint.display))
        return await self.connection.request(method, params, timeout_s=timeout)

    # ------------------------------------------------------------------ events
    async def events(self) -> AsyncIterator[Event]:
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
            run = self._runs.get(event.run_id or "")
            if run is None and event.type.startswith("approval."):
                run = self._run_for_session(event.session_key)
            if run is not None:
                run._feed(event)
            self._follow_live(event)
            self._publish(event)
            if event.type in TERMINAL and event.run_id:
                self._ended(event.run_id, event)

    def _publish(self, event: Event) -> None:
        for queue in list(self._listeners):
            if queue.full():
                queue.get_nowait()  # a slow reader loses the oldest, not the newest
            queue.put_nowait(event)

    def _follow_live(self, event: Event) -> None:
        run_id = event.run_id
        if not run_id or not event.session_key:
            return
        if event.type in TERMINAL:
            self._live.pop(run_id, None)
        elif event.type in ("run.started", "assistant.delta") or event.type.startswith("tool."):
            self._live[run_id] = event.session_key
            self._live.move_to_end(run_id)
            while len(self._live) > LIVE_KEPT:
                self._live.popitem(last=False)

    def _ended(self, run_id: str, terminal: Event) -> None:
        """A run ended: the steered messages it took in end with it; finished runs are
        forgotten but for the last :data:`FINISHED_KEPT`."""
        for steered in self._absorbed.pop(run_id, []):
            if not steered.has_own_events:
                synthesized = steered._end_with(terminal)
                if synthesized is not None:
                    self._publish(synthesized)
            self._retire(steered)
        run = self._runs.get(run_id)
        if run is not None and run.done:
            self._retire(run)

    def _retire(self, run: Run) -> None:
        if not run.done or self._runs.get(run.run_id) is not run:
            return
        del self._runs[run.run_id]
        self._finished[run.run_id] = run
        while len(self._finished) > FINISHED_KEPT:
            self._finished.popitem(last=False)

    def _steer_target(self, key: str, run_id: str) -> str | None:
        """The run a message steered into session ``key`` joins: the session's live run."""
        own = [
            r.run_id
            for r in self._runs.values()
            if not r.done and r.run_id != run_id and _same_session(r.session_key, key)
        ]
        if own:
            return own[-1]
        seen = [r for r, k in self._live.items() if r != run_id and _same_session(k, key)]
        return seen[-1] if seen else None

    def _absorb(self, run: Run, target: str) -> None:
        """``run`` (a steered message) was taken into ``target``: it ends when that does."""
        run.absorbed_by = target
        self._absorbed.setdefault(target, []).append(run)

    def _run_for_session(self, key: str | None) -> Run | None:
        """The live run of a session, for events that name the session but not the run."""
        if not key:
            return None
        live = [r for r in self._runs.values() if not r.done and _same_session(key, r.session_key)]
        return live[-1] if live else None

    def _on_gap(self, gap: SequenceGap) -> None:
        for run in self._runs.values():
            if not run.done:
                run._reset(f"{gap.received - gap.expected} gateway events were missed")

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
        waiting = [
            r
            for r in self._runs.values()
            if not r.done and (r.absorbed_by is None or r.absorbed_by not in self._runs)
        ]
        for run in waiting:
            try:
                messages, over = await self._history_when_ready(run)
            except Exception as exc:
                log.warning("could not catch up on run %s: %s", run.run_id, exc)
                run._reset("reconnected; the run's history is unavailable")
                continue
            final = [
                m
                for m in messages
                if m.get("role") == "assistant" and m.get("stopReason") not in (None, "toolUse")
            ]
            added: list[Event] = []
            if final:
                added = run._finish_from_history(final[-1])
            elif over == "interrupted" or (
                started is not None and run.created_at < started - _RESTART_SLACK_MS
            ):
                cut = run._interrupted()
                added = [cut] if cut is not None else []
            elif over is not None:  # ended while we were away, leaving no final message
                kind = _ENDS.get(over, "run.completed")
                data: dict[str, Any] = {"replayed": True, "sessionStatus": over}
                if kind == "run.failed":
                    data |= {"errorMessage": "the run failed", "errorKind": "unknown"}
                ended = run._synthesize(kind, now_ms(), data)
                added = [ended] if ended is not None else []
            else:
                run._reset("reconnected while the run was going; live events resume")
            for event in added:
                self._publish(event)
                if event.type in TERMINAL:
                    self._ended(run.run_id, event)

    # ------------------------------------------------------------------ runs
    async def _finished_before(self, run: Run) -> None:
        """The gateway says it already finished this run (a send repeated with the same
        idempotency key, ack ``ok``): end it from ``chat.history``."""
        try:
            messages = await self._run_messages(run.session_key, run.run_id)
        except Exception as exc:
            log.warning("could not look up finished run %s: %s", run.run_id, exc)
            messages = []
        final = [
            m
            for m in messages
            if m.get("role") == "assistant" and m.get("stopReason") not in (None, "toolUse")
        ]
        if final:
            added = run._finish_from_history(final[-1])
        else:
            done = run._synthesize("run.completed", now_ms(), {"replayed": True})
            added = [done] if done is not None else []
        for event in added:
            self._publish(event)
            if event.type in TERMINAL:
                self._ended(run.run_id, event)

    def _track_run(self, run_id: str, key: str) -> Run:
        run = self._runs.get(run_id) or self._finished.get(run_id)
        if run is None:
            run = Run(self, run_id, key, now_ms())
            self._runs[run_id] = run
        return run

    def _forget_run(self, run_id: str) -> None:
        self._runs.pop(run_id, None)
        self._finished.pop(run_id, None)

    async def _run_messages(self, key: str, run_id: str) -> list[dict[str, Any]]:
        """The transcript messages of one run (its user message onwards)."""
        return (await self._run_history(key, run_id))[0]

    async def _history_when_ready(self, run: Run) -> tuple[list[dict[str, Any]], str | None]:
        """:meth:`_run_history` of ``run``, asked again while the gateway answers that it
        is still starting (a retryable error) for at most :data:`_CATCH_UP_PATIENCE_S`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _CATCH_UP_PATIENCE_S
        delay = 0.1
        while True:
            try:
                return await self._run_history(run.session_key, run.run_id)
            except GatewayError as exc:
                wait = exc.retry_after_ms / 1000 if exc.retry_after_ms else delay
                if not exc.retryable or loop.time() + wait > deadline:
                    raise
                await asyncio.sleep(wait)
                delay = min(delay * 2, 1.0)

    async def _run_history(self, key: str, run_id: str) -> tuple[list[dict[str, Any]], str | None]:
        """The run's transcript messages, and how it ended when the history shows it is
        over without a final message (the session is idle, the run's message is stored):
        the session's ``sessionInfo.status`` when the run was its latest, else ``done``."""
        result = await self.call("chat.history", {"sessionKey": key, "limit": 200})
        messages = [m for m in (result.get("messages") or []) if isinstance(m, dict)]
        out: list[dict[str, Any]] = []
        latest = None
        for message in messages:
            raw_meta = message.get("__openclaw")
            meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
            ikey = str(message.get("idempotencyKey") or meta.get("idempotencyKey") or "")
            if message.get("role") == "user" and ikey.endswith(":user"):
                latest = ikey[: -len(":user")]
            if meta.get("runId") == run_id or ikey == f"{run_id}:user":
                out.append(message)
        raw_info = result.get("sessionInfo")
        info: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
        status = info.get("status")
        stored = any(m.get("idempotencyKey") == f"{run_id}:user" for m in out)
        if status not in _IDLE or not stored:
            return out, None
        last = info.get("lastRunId")
        return out, str(status) if (last or latest) == run_id else "done"


class Runs:
    """The runs this client started (``sessions.send`` creates them)."""

    def __init__(self, client: OpenClaw) -> None:
        self._client = client

    def get(self, run_id: str) -> Run | None:
        """A run by id (a finished one only while it is among the last few)."""
        return self._client._runs.get(run_id) or self._client._finished.get(run_id)

    def active(self) -> list[Run]:
        """Runs still going."""
        return [r for r in self._client._runs.values() if not r.done]

    async def send(self, session_key: str, message: str, **options: Any) -> Run:
        """Same as ``sessions.send``."""
        return await self._client.sessions.send(session_key, message, **options)


def _same_session(gateway_key: str, wanted: str) -> bool:
    """Whether the gateway's canonical key names the session the app called ``wanted``
    (``main`` is ``agent:main:main``; ``agent:x:y`` only itself)."""
    if gateway_key == wanted:
        return True
    parts = gateway_key.split(":", 2)
    return len(parts) == 3 and parts[0] == "agent" and parts[2] == wanted
