"""The app SDK (:mod:`openclaw_desktop.sdk`) against the REAL OpenClaw gateway and against ours.

Every test runs twice, once per gateway (``real`` / ``ours``), through the public SDK only
(one exception, marked below: the approval path needs capabilities the SDK does not
advertise yet). Both gateways answer with a :class:`tests.helpers.fake_llm.FakeLLM` of their
own and are started once for the module, concurrently (the real one takes 10-30 s).

1. send -> ordered, unique events -> ``wait()`` result (text, this run's messages, usage);
2. cancel mid-stream -> ``run.cancelled`` / ``cancelled``, and the session takes a new send;
3. reconnect mid-run -> ``events(after=cursor)`` resumes without repeats and ends with the
   gateway's final text;
4. approvals: the real gateway's exec approval (``exec.approvals.set`` asks on every
   command) answered by ``run.on_approval``; ours has none -> :class:`Unsupported`;
5. a method the gateway does not advertise -> :class:`Unsupported`, nothing sent;
6. ``scopes=("operator.read",)`` -> ``sessions.send`` raises :class:`MissingScope`;
7. the session, pairing and optional namespaces answer (or raise :class:`Unsupported`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.discovery import decode_setup_code
from openclaw_desktop.errors import GatewayError
from openclaw_desktop.sdk import (
    DEFAULT_SCOPES,
    Approval,
    Event,
    MissingScope,
    OpenClaw,
    Run,
    Unsupported,
)
from openclaw_desktop.sdk.events import now_ms
from openclaw_desktop.transport import ConnectionState, ConnectionStatus
from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.chat_trace import write_fake_providers
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.real_openclaw import GatewayFactory, OpenClawInstall

pytestmark = pytest.mark.timeout(300)

#: Bound of one run on either gateway (the real one spends seconds preparing a first run).
RUN_TIMEOUT_S = 120.0
#: Chunk delay of both fakes: several chat deltas per plain reply on both gateways.
CHUNK_DELAY_S = 0.03
TERMINAL = frozenset({"run.completed", "run.failed", "run.cancelled", "run.timed_out"})
APPROVER_SCOPES = ("operator.read", "operator.write", "operator.approvals", "operator.admin")
#: The connect capabilities that make the real gateway route exec approvals to a client
#: (``canDeliverApprovals``: ``approvals`` or ``exec-approvals``, with operator.approvals).
APPROVAL_CAPS = ("exec-approvals", "plugin-approvals")
EXEC_PROMPT = 'CALLTOOL:exec:{"command":"ls"}'
#: What the fake answers to ``SLOW:<ms>``: 20 chunks.
SLOW_REPLY = "".join(f"slow{i} " for i in range(20))


@dataclass(frozen=True)
class Target:
    """One gateway under test."""

    kind: str
    url: str
    token: str


def _start_both(
    factory: GatewayFactory, root: Path, real_port: int, our_port: int
) -> tuple[Target, BundledGateway]:
    """Start the real gateway and ours at the same time; stops whichever started on failure
    (the real one through ``factory.close``)."""
    write_fake_providers(root / "state", our_port)
    with ThreadPoolExecutor(2, thread_name_prefix="sdk-gw") as pool:
        real_future = pool.submit(factory, fake_llm_port=real_port)
        ours_future = pool.submit(BundledGateway.start, root=root)
        ours: BundledGateway | None = None
        try:
            ours = ours_future.result(timeout=120)
            real = real_future.result(timeout=180)
        except BaseException:
            if ours is None and ours_future.done() and ours_future.exception() is None:
                ours = ours_future.result()
            if ours is not None:
                ours.cleanup()
            raise
    return Target("real", real.url, real.token), ours


@pytest.fixture(scope="module")
def targets(
    openclaw_install: OpenClawInstall, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Target]]:
    """Both gateways with a fake model each, for the whole module."""
    factory = GatewayFactory(openclaw_install)
    root = tmp_path_factory.mktemp("sdk-ours")
    with (
        FakeLLM(chunk_delay_s=CHUNK_DELAY_S) as real_llm,
        FakeLLM(chunk_delay_s=CHUNK_DELAY_S) as our_llm,
    ):
        try:
            real, ours = _start_both(factory, root, real_llm.port, our_llm.port)
            try:
                yield {"real": real, "ours": Target("ours", ours.url, ours.token)}
            finally:
                ours.cleanup()
        finally:
            factory.close()


@pytest.fixture(params=["real", "ours"])
def target(request: pytest.FixtureRequest, targets: dict[str, Target]) -> Target:
    """The gateway of this parametrization."""
    return targets[str(request.param)]


def connect(target: Target, scopes: Sequence[str] = DEFAULT_SCOPES) -> OpenClaw:
    """The SDK client for ``target`` with a throw-away identity."""
    return OpenClaw.connect(
        target.url, token=target.token, identity="ephemeral", scopes=scopes, timeout=60
    )


@contextlib.asynccontextmanager
async def events_of(run: Run, after: str | None = None) -> AsyncIterator[AsyncIterator[Event]]:
    """``run.events(after)``, closed on exit (also when the reader breaks out early)."""
    stream = run.events(after=after)
    try:
        yield stream
    finally:
        # Typed as an AsyncIterator, it is an async generator: close it deterministically.
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()


async def collect(run: Run, after: str | None = None) -> list[Event]:
    """Every event of ``run`` (after ``after``) until its terminal one, bounded."""
    events: list[Event] = []
    async with asyncio.timeout(RUN_TIMEOUT_S):
        async with events_of(run, after) as stream:
            async for event in stream:
                events.append(event)
    return events


def _of(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e.type == kind]


def _history_text(messages: list[dict[str, Any]]) -> str:
    """The text of the last assistant message of a ``chat.history`` list."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return "".join(
                str(b.get("text", ""))
                for b in content or []
                if isinstance(b, dict) and b.get("type") == "text"
            )
    raise AssertionError(f"no assistant message in {messages!r}")


def _content_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(str(b.get("text", "")) for b in content or [] if isinstance(b, dict))


# ---------------------------------------------------------------------------------- 1. send


async def test_send_streams_ordered_events_and_a_result(target: Target) -> None:
    async with connect(target) as oc:
        run = await oc.sessions.send("main", "hello sdk")
        events = await collect(run)
        result = await run.wait(30)

    types = [e.type for e in events]
    assert types[0] == "run.created", types
    assert types[-1] == "run.completed", types
    assert sum(t in TERMINAL for t in types) == 1, types
    deltas = _of(events, "assistant.delta")
    assert deltas, types
    assert "run.started" in types
    assert types.index("run.started") < types.index("assistant.delta"), types
    (message,) = _of(events, "assistant.message")
    assert types.index("assistant.message") > types.index("assistant.delta")
    assert not any(d.data["replace"] for d in deltas)
    text = str(message.data["text"])
    assert "".join(str(d.data["text"]) for d in deltas) == text
    assert text.startswith("FAKE-LLM reply #") and "hello sdk" in text, text
    assert deltas[-1].data["cumulative"] == text

    ids = [e.id for e in events]
    assert len(set(ids)) == len(ids), ids
    assert all(a < b for a, b in itertools.pairwise(ids)), ids
    assert {e.run_id for e in events} == {run.run_id}

    assert result.run_id == run.run_id
    assert result.status == "completed"
    assert result.error is None
    assert result.text == text
    assert [m.get("role") for m in result.messages] == ["user", "assistant"], result.messages
    assert _content_text(result.messages[0]) == "hello sdk"
    assert _content_text(result.messages[1]) == text
    assert result.usage.input_tokens > 0
    assert result.usage.output_tokens > 0
    assert result.usage.total_tokens == result.usage.input_tokens + result.usage.output_tokens
    assert result.started_at is not None and result.ended_at is not None
    assert result.started_at <= result.ended_at
    assert result.output == {"text": text, "messages": result.messages}


# -------------------------------------------------------------------------------- 2. cancel


async def test_cancel_mid_stream_then_send_again(target: Target) -> None:
    async with connect(target) as oc:
        run = await oc.sessions.send("main", "SLOW:200 please stop me")
        events: list[Event] = []
        aborted: bool | None = None
        async with asyncio.timeout(RUN_TIMEOUT_S):
            async with events_of(run) as stream:
                async for event in stream:
                    events.append(event)
                    if event.type == "assistant.delta" and aborted is None:
                        aborted = await run.cancel()
        result = await run.wait(30)

        assert aborted is True
        types = [e.type for e in events]
        assert types[-1] == "run.cancelled", types
        assert "run.completed" not in types
        assert result.status == "cancelled"
        # 20 chunks 200 ms apart: cancelled after the first delta, far from the whole reply.
        assert len(_of(events, "assistant.delta")) < 10, types

        again = await oc.sessions.send("main", "after the cancel")
        second = await again.wait(RUN_TIMEOUT_S)
        assert second.status == "completed", second
        assert "after the cancel" in second.text
        assert second.run_id != run.run_id


# ----------------------------------------------------------------------------- 3. reconnect


async def test_reconnect_mid_run_resumes_after_the_cursor(target: Target) -> None:
    async with connect(target) as oc:
        statuses: list[ConnectionState] = []

        def on_status(status: ConnectionStatus) -> None:
            statuses.append(status.state)

        oc.connection.on_status(on_status)
        run = await oc.sessions.send("main", "SLOW:100 survive a reconnect")
        before: list[Event] = []
        async with asyncio.timeout(RUN_TIMEOUT_S):
            async with events_of(run) as stream:
                async for event in stream:
                    before.append(event)
                    if len(_of(before, "assistant.delta")) >= 2:
                        break
        cursor = before[-1].id
        assert before[-1].type == "assistant.delta"

        await oc.connection.reconnect("test")
        after = await collect(run, after=cursor)
        history = await oc.sessions.history("main")
        result = await run.wait(30)

    # The socket really went away and came back.
    assert ConnectionState.CONNECTED in statuses
    assert any(s is not ConnectionState.CONNECTED for s in statuses), statuses

    ids = [e.id for e in after]
    assert after, "nothing after the cursor"
    assert all(i > cursor for i in ids), (cursor, ids)
    assert len(set(ids)) == len(ids), ids
    assert not set(ids) & {e.id for e in before}
    assert after[-1].type == "run.completed", [e.type for e in after]
    finals = _of(after, "assistant.message")
    assert finals, [e.type for e in after]
    resets = _of(after, "stream.reset")
    if not resets and not finals[-1].data.get("replayed"):
        # Neither replayed nor reset: the remaining live events, so the deltas add up.
        seen = "".join(
            str(e.data["text"]) for e in [*before, *after] if e.type == "assistant.delta"
        )
        assert seen == finals[-1].data["text"]
    expected = _history_text(history)
    assert expected == SLOW_REPLY
    # The real gateway trims trailing whitespace off the live text (deltas and final), not
    # off the transcript (which a replayed final comes from); ours keeps it in both.
    replayed = bool(finals[-1].data.get("replayed"))
    live = expected.rstrip() if target.kind == "real" and not replayed else expected
    assert finals[-1].data["text"] == live
    assert result.status == "completed"
    assert result.text == live


# ----------------------------------------------------------------------------- 4. approvals


@contextlib.asynccontextmanager
async def _exec_asks_always(oc: OpenClaw) -> AsyncIterator[None]:
    """The real gateway's host exec policy asks for every command, restored afterwards.

    ``exec.approvals.set`` (operator.admin) tightens the approvals defaults; the effective
    policy is the stricter of these and ``tools.exec`` (full/off by default), so no config
    file change is needed.
    """
    snapshot = await oc.call("exec.approvals.get", {})
    original = dict(snapshot["file"])
    strict = {**original, "defaults": {"security": "allowlist", "ask": "always"}}
    changed = await oc.call("exec.approvals.set", {"file": strict, "baseHash": snapshot["hash"]})
    assert changed["resolvedDefaults"]["ask"] == "always", changed
    try:
        yield
    finally:
        current = await oc.call("exec.approvals.get", {})
        await oc.call("exec.approvals.set", {"file": original, "baseHash": current["hash"]})


async def _approved_exec_run(oc: OpenClaw) -> tuple[list[Approval], list[Event], str]:
    """Send the exec prompt, allow its approval once; (approvals seen, events, result text)."""
    seen: list[Approval] = []

    async def allow_once(approval: Approval) -> str | None:
        seen.append(approval)
        return "allow-once"

    async with _exec_asks_always(oc):
        run = await oc.sessions.send("main", EXEC_PROMPT)
        run.on_approval(allow_once)
        events = await collect(run)
        result = await run.wait(30)
        assert await oc.approvals.list() == []
    return seen, events, result.text


async def test_approval_handler_allows_the_real_gateways_exec(targets: dict[str, Target]) -> None:
    """The handler path end to end through the public SDK: asking for operator.approvals
    makes the SDK advertise the approval capabilities, so the real gateway asks it."""
    async with connect(targets["real"], APPROVER_SCOPES) as oc:
        assert set(APPROVAL_CAPS) <= set(oc.connection.options.caps)
        seen, events, text = await _approved_exec_run(oc)

    (approval,) = seen
    assert approval.kind == "exec"
    assert approval.command == "ls"
    assert approval.id
    assert approval.raw.get("sessionKey") == "agent:main:main"
    assert "allow-once" in approval.decisions
    types = [e.type for e in events]
    assert "approval.requested" in types, types
    assert types.index("tool.call.started") < types.index("approval.requested"), types
    assert types[-1] == "run.completed", types
    (done,) = _of(events, "tool.call.completed")
    assert done.data["name"] == "exec"
    assert "AGENTS.md" in text, text
    assert "exec denied" not in text


async def test_approvals_are_listed_empty_and_unanswerable_on_ours(
    targets: dict[str, Target],
) -> None:
    """Ours lists exec approvals (none is ever pending: its agent never asks) but serves no
    ``exec.approval.resolve``: answering one is Unsupported, without sending."""
    async with connect(targets["ours"], APPROVER_SCOPES) as oc:
        assert oc.supports("exec.approval.list")
        assert await oc.approvals.list() == []
        with pytest.raises(Unsupported) as caught:
            await oc.approvals.respond("some-id", "deny")
        # The connection is fine afterwards.
        assert isinstance(await oc.sessions.history("main"), list)
    assert caught.value.method == "exec.approval.resolve"
    assert "exec.approval.resolve" in str(caught.value)


# --------------------------------------------------------------------------- 5. unsupported


async def test_unadvertised_method_is_unsupported_without_sending(target: Target) -> None:
    method = "no.such.method"
    async with connect(target) as oc:
        assert "chat.send" in oc.methods
        assert method not in oc.methods
        with pytest.raises(Unsupported) as caught:
            await oc.call(method, {})
        # Nothing went out: a sent unknown method would have come back as a GatewayError,
        # and the connection still answers.
        assert isinstance(await oc.models.list(), list)
    assert caught.value.method == method


# -------------------------------------------------------------------------------- 6. scopes


async def test_read_only_scope_cannot_send(target: Target) -> None:
    async with connect(target, ("operator.read",)) as oc:
        assert oc.scopes == ("operator.read",)
        with pytest.raises(MissingScope) as caught:
            await oc.sessions.send("main", "must not run")
        # Advertised but scoped, on both: the gateway refuses (operator.approvals).
        with pytest.raises(MissingScope) as approvals:
            await oc.approvals.list()
        assert approvals.value.missing_scope == "operator.approvals"
        # Reading still works on the same connection.
        history = await oc.sessions.history("main")
    assert caught.value.missing_scope == "operator.write"
    assert "operator.write" in caught.value.required_scopes
    assert caught.value.method == "chat.send"
    assert not any(_content_text(m) == "must not run" for m in history)


# ------------------------------------------------------------------------ 7. namespaces


async def test_session_and_other_namespaces(target: Target) -> None:
    """sessions.create/get/list/patch/history/reset/delete, models.status, nodes.list and
    the optional namespaces (agents, tools, artifacts): each works, or raises Unsupported
    where the gateway does not offer it."""
    async with connect(target, APPROVER_SCOPES) as oc:
        created = await oc.sessions.create(label=f"sdk-{target.kind}")
        key = created["key"]
        assert key.startswith("agent:main:")
        row = await oc.sessions.get(key)
        assert row is not None and row["key"] == key
        assert key in [r["key"] for r in await oc.sessions.list()]
        await oc.sessions.patch(key, label=f"renamed-{target.kind}")
        patched = await oc.sessions.get(key)
        assert patched is not None and patched.get("label") == f"renamed-{target.kind}"
        run = await oc.sessions.send(key, "hello namespaces")
        assert (await run.wait(60)).status == "completed"
        roles = [m["role"] for m in await oc.sessions.history(key)]
        assert roles[:2] == ["user", "assistant"]
        await oc.sessions.reset(key)
        # The real gateway keeps a "Reset" system marker; no conversation is left on either.
        left = [m for m in await oc.sessions.history(key) if m["role"] in ("user", "assistant")]
        assert left == []
        await oc.sessions.delete(key)
        assert await oc.sessions.get(key) is None
        assert isinstance(await oc.models.status(), dict)
        assert isinstance(await oc.nodes.list(), list)
        for name, call in (
            ("agents.list", oc.agents.list),
            ("tools.catalog", oc.tools.catalog),
            ("artifacts.list", lambda: oc.artifacts.list(sessionKey="agent:main:main")),
        ):
            if oc.supports(name):
                assert await call() is not None
            else:
                with pytest.raises(Unsupported):
                    await call()


async def test_pairing_namespace(target: Target) -> None:
    """pairing.setup_code hands out a code naming the address it is given, on both gateways
    (the real one serves device.pair.setupCode without advertising it: the SDK asks all the
    same). Without an address, the real gateway on loopback refuses, and ours mints a
    loopback code (the window shows it with a warning). Approving or rejecting a request
    that is not pending is the same typed refusal on both."""
    async with connect(target, APPROVER_SCOPES) as oc:
        assert oc.supports("device.pair.setupCode") is (target.kind == "ours")
        setup = await oc.pairing.setup_code(public_url=target.url)
        payload = decode_setup_code(setup["setupCode"])
        assert (payload.url, setup["gatewayUrl"]) == (target.url, target.url)
        assert payload.bootstrap_token
        assert setup["expiresAtMs"] > now_ms()
        if target.kind == "ours":
            assert (await oc.pairing.setup_code())["urlSource"] == "loopback"
        else:
            with pytest.raises(GatewayError, match="only bound to loopback") as refused:
                await oc.pairing.setup_code()
            assert refused.value.code == "INVALID_REQUEST"
        refusals = []
        for kind, answer in itertools.product(
            ("device", "node"), (oc.pairing.approve, oc.pairing.reject)
        ):
            with pytest.raises(GatewayError) as refused:
                await answer(kind, "no-such-request")  # type: ignore[arg-type]
            refusals.append((kind, refused.value.code))
    assert refusals == [
        ("device", "INVALID_REQUEST"),
        ("device", "INVALID_REQUEST"),
        ("node", "INVALID_REQUEST"),
        ("node", "INVALID_REQUEST"),
    ]
