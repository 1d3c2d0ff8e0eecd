"""``TestGateway`` of the SDK's testing helpers: the real bundled gateway as a child process
with the scripted fake model, driven by a real operator over loopback WebSockets."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.config.client_profile import cli_client
from openclaw_desktop.errors import InvalidState
from openclaw_desktop.identity import CredentialStore, DeviceIdentity, MemorySecretStore
from openclaw_desktop.protocol import OperatorScope, Role
from openclaw_desktop.sdk.testing import MODEL_REF, FakeLLM, TestGateway, TestGatewayError
from openclaw_desktop.sdk.testing import gateway as gateway_module
from openclaw_desktop.session import EventReceived
from openclaw_desktop.transport import ConnectionOptions, GatewayConnection

pytestmark = pytest.mark.timeout(90)

TERMINAL = ("final", "aborted", "error")


@contextlib.asynccontextmanager
async def operator(gw: TestGateway) -> AsyncIterator[tuple[GatewayConnection, list[Any]]]:
    """A raw operator on our client library, and the payloads of the chat events it got."""
    options = ConnectionOptions(
        url=gw.url,
        role=Role.OPERATOR,
        client=cli_client(),
        signer=DeviceIdentity.generate(),
        credentials=CredentialStore(MemorySecretStore()),
        shared_token=gw.token,
        scopes=(OperatorScope.READ.value, OperatorScope.WRITE.value),
        reconnect=False,
    )
    chat: list[Any] = []

    def on_event(event: EventReceived) -> None:
        if event.event == "chat":
            chat.append(event.payload)

    async with GatewayConnection(options) as conn:
        conn.on_event(on_event)
        await conn.wait_ready(15)
        yield conn, chat


async def chat_once(gw: TestGateway, message: str) -> dict[str, Any]:
    """``chat.send`` one message to the main session; the run's terminal chat event."""
    async with operator(gw) as (conn, chat):
        run_id = str(uuid.uuid4())
        params = {"sessionKey": "main", "message": message, "idempotencyKey": run_id}
        ack = await conn.request("chat.send", params)
        assert ack == {"runId": run_id, "status": "started"}
        async with asyncio.timeout(20):
            while True:
                done = [p for p in chat if p.get("runId") == run_id and p["state"] in TERMINAL]
                if done:
                    return dict(done[0])
                await asyncio.sleep(0.02)


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (ours are reaped, so gone means gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def port_free(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:port and a new server could listen there (with
    SO_REUSEADDR, like every server: closed connections may linger in TIME_WAIT)."""
    with (
        contextlib.suppress(ConnectionRefusedError),
        socket.create_connection(("127.0.0.1", port), timeout=2),
    ):
        return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen()
        except OSError:
            return False
        return True


def assert_all_gone(gw: TestGateway, state_dir: Path | None = None) -> None:
    """No gateway process, no fake model thread, the port free, the temp state dir gone."""
    assert not gw.running
    if gw.pid is not None:
        assert not pid_alive(gw.pid), "the gateway process is gone"
    if gw.port is not None:
        assert port_free(gw.port), "the gateway port is free again"
    assert not gw.model.running, "the fake model stopped"
    if state_dir is not None:
        assert not state_dir.exists(), "the temporary state folder is removed"


async def test_an_operator_chats_with_the_fake_model() -> None:
    """chat.send through the gateway child reaches the fake model and comes back final."""
    async with TestGateway() as gw:
        assert gw.running and gw.url == f"ws://127.0.0.1:{gw.port}"
        state_dir = gw.state_dir
        assert (state_dir / "gateway-token").read_text("utf-8").strip() == gw.token
        providers = json.loads((state_dir / "providers.json").read_text("utf-8"))
        assert providers["defaultModel"] == MODEL_REF == "fake/fake-model"
        assert providers["providers"]["fake"]["baseUrl"] == gw.model.openai_base_url

        final = await chat_once(gw, "hello from the sdk test")

        assert final["state"] == "final"
        text = final["message"]["content"][0]["text"]
        assert text.startswith("FAKE-LLM reply #") and text.endswith("hello from the sdk test")
        bodies = gw.model.bodies("/chat/completions")
        assert len(bodies) == 1 and bodies[0]["model"] == "fake-model"
        sent = [m for m in bodies[0]["messages"] if m["role"] == "user"]
        assert any("hello from the sdk test" in json.dumps(m) for m in sent)
    assert_all_gone(gw, state_dir)


async def test_the_anthropic_wire_format_and_scripts() -> None:
    """With ``api="anthropic-messages"`` the gateway talks Messages to the fake; script words
    work through the whole stack (``FAIL:500`` is a failed run)."""
    async with TestGateway(api="anthropic-messages") as gw:
        final = await chat_once(gw, "THINK first")
        assert final["state"] == "final"
        assert "FAKE-LLM reply" in final["message"]["content"][-1]["text"]
        assert gw.model.bodies("/v1/messages") and not gw.model.bodies("/chat/completions")
        failed = await chat_once(gw, "FAIL:500")
        assert failed["state"] == "error"
    assert_all_gone(gw)


async def test_two_gateways_run_side_by_side() -> None:
    """Parallel test gateways get their own port, token, state folder and fake model."""
    async with contextlib.AsyncExitStack() as stack:
        first, second = await asyncio.gather(
            stack.enter_async_context(TestGateway()), stack.enter_async_context(TestGateway())
        )
        assert first.port != second.port
        assert first.token != second.token
        assert first.state_dir != second.state_dir
        assert first.model.port != second.model.port
        one, two = await asyncio.gather(chat_once(first, "one"), chat_once(second, "two"))
        assert one["message"]["content"][0]["text"].endswith("one")
        assert two["message"]["content"][0]["text"].endswith("two")
        assert len(first.model.bodies("/chat/completions")) == 1
        assert len(second.model.bodies("/chat/completions")) == 1
    assert_all_gone(first)
    assert_all_gone(second)


def test_sync_form_with_a_given_state_dir_and_model(tmp_path: Path) -> None:
    """``with TestGateway(state_dir=..., model=...)``: the folder is created and kept; a
    running model of the caller's is used and left running; it can start again."""
    state_dir = tmp_path / "deep" / "state"
    with FakeLLM() as model:
        gw = TestGateway(state_dir=state_dir, model=model, allow="device.info")
        with gw:
            assert gw.state_dir == state_dir and gw.running
            assert (state_dir / "gateway-token").read_text("utf-8").strip() == gw.token
            first_pid, first_token = gw.pid, gw.token
            with pytest.raises(InvalidState, match="already started"):
                gw.start()
        assert first_pid is not None
        assert not pid_alive(first_pid)
        assert state_dir.is_dir(), "a given state folder is kept"
        assert model.running, "the caller's model is the caller's to stop"
        with gw:
            assert gw.pid != first_pid
            assert gw.running
            assert gw.token == first_token, "same state folder, same token"
        assert not gw.running


async def test_a_state_dir_that_is_a_file_fails_fast(tmp_path: Path) -> None:
    """A state folder that cannot be created is a clear error before anything runs."""
    bogus = tmp_path / "not-a-dir"
    bogus.write_text("x", "utf-8")
    gw = TestGateway(state_dir=bogus / "state")
    started = time.monotonic()
    with pytest.raises(TestGatewayError, match="cannot prepare the gateway state folder"):
        async with gw:
            pytest.fail("must not start")
    assert time.monotonic() - started < 10
    assert gw.pid is None
    assert_all_gone(gw)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"env": {"PYTHONHOME": "/nonexistent-python-home"}}, "Fatal Python error"),
        ({"args": ["--auth", "password"]}, "--auth password needs --password"),
    ],
    ids=["broken-env", "bad-args"],
)
async def test_a_gateway_that_exits_at_startup_is_a_clear_error(
    options: dict[str, Any], expected: str
) -> None:
    """The child exits before it is ready: the error has its exit code and output, fast."""
    gw = TestGateway(**options)
    started = time.monotonic()
    with pytest.raises(TestGatewayError) as caught:
        async with gw:
            pytest.fail("must not start")
    assert time.monotonic() - started < 15
    error = caught.value
    assert error.returncode not in (None, 0)
    assert expected in error.output and expected in str(error)
    assert "exited during startup" in str(error)
    assert_all_gone(gw)


async def test_startup_is_bounded() -> None:
    """Not ready within ``startup_timeout_s``: the child is stopped and the error says so."""
    gw = TestGateway(startup_timeout_s=0.2)
    started = time.monotonic()
    with pytest.raises(TestGatewayError, match=r"not ready within 0\.2 s"):
        async with gw:
            pytest.fail("must not start")
    assert time.monotonic() - started < 15
    assert gw.pid is not None
    assert_all_gone(gw)


async def test_a_cancelled_start_cleans_up() -> None:
    """Cancelling ``async with`` during startup leaves no process, thread or folder."""
    gw = TestGateway()

    async def enter() -> None:
        async with gw:
            pytest.fail("must be cancelled before it is ready")

    task = asyncio.create_task(enter())
    async with asyncio.timeout(10):
        while gw.pid is None:
            await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert_all_gone(gw)


async def test_a_taken_port_is_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the chosen port is taken by the time the gateway binds, another one is tried."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        taken = blocker.getsockname()[1]
        ports = iter([taken])
        real = gateway_module._free_port
        monkeypatch.setattr(gateway_module, "_free_port", lambda: next(ports, None) or real())
        async with TestGateway() as gw:
            assert gw.port != taken
            assert (await chat_once(gw, "retried"))["state"] == "final"
    assert_all_gone(gw)
