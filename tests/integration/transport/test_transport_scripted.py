"""GatewayConnection over real loopback WebSockets against a scripted gateway."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from openclaw_desktop.errors import (
    AuthError,
    ConnectionClosed,
    PayloadTooLarge,
    ReconnectPaused,
    RequestTimeout,
)
from openclaw_desktop.identity import CredentialStore, DeviceIdentity, MemorySecretStore
from openclaw_desktop.identity.credentials import StoredDeviceToken
from openclaw_desktop.identity.gateway_id import gateway_key
from openclaw_desktop.protocol import ClientId, ClientInfo, ClientMode, Role
from openclaw_desktop.session import ErrorCategory, SequenceGap
from openclaw_desktop.transport import (
    ConnectionOptions,
    ConnectionState,
    ConnectionStatus,
    GatewayConnection,
    RetryPolicy,
)
from tests.helpers.scripted_gateway import (
    ScriptedGateway,
    ScriptedPeer,
    connect_signature_valid,
)

pytestmark = pytest.mark.timeout(30)

FAST = RetryPolicy(base_ms=20, early_ceiling_ms=100, pairing_poll_ms=50)


def options(url: str, **overrides: Any) -> ConnectionOptions:
    """Operator options with a fresh identity, in-memory credentials and fast retries."""
    base: dict[str, Any] = {
        "url": url,
        "role": Role.OPERATOR,
        "client": ClientInfo(id=ClientId.CLI, version="t", platform="linux", mode=ClientMode.CLI),
        "signer": DeviceIdentity.generate(),
        "credentials": CredentialStore(MemorySecretStore()),
        "scopes": ("operator.read",),
        "shared_token": "shared-1",
        "retry": FAST,
    }
    base.update(overrides)
    return ConnectionOptions(**base)


async def wait_state(conn: GatewayConnection, state: ConnectionState, timeout: float = 5) -> None:
    """Wait until the connection reports ``state``."""
    async with asyncio.timeout(timeout):
        while conn.status.state is not state:
            await asyncio.sleep(0.01)


async def test_handshake_request_and_device_token_storage() -> None:
    """A signed handshake, a request round trip, and the issued device token is stored."""
    seen: dict[str, Any] = {}

    async def script(peer: ScriptedPeer) -> None:
        seen["connect"] = await peer.accept(scopes=["operator.read"], device_token="dev-tok-1")
        await peer.serve_requests()

    gw = ScriptedGateway(script)
    async with gw.running():
        opts = options(gw.url)
        async with GatewayConnection(opts) as conn:
            hello = await conn.wait_ready(5)
            assert hello.auth.role == "operator"
            assert await conn.request("health", {"x": 1}) == {"echo": {"x": 1}}
    connect = seen["connect"]
    assert connect_signature_valid(connect)
    assert connect["params"]["auth"] == {"token": "shared-1"}
    assert opts.credentials is not None and opts.signer is not None
    stored = opts.credentials.device_token(gateway_key(gw.url), opts.signer.device_id, "operator")
    assert stored is not None and stored.token == "dev-tok-1"


async def test_request_timeout_sends_cancel() -> None:
    """A request nobody answers times out and the gateway receives a cancel frame."""
    cancel_seen = asyncio.Event()

    async def script(peer: ScriptedPeer) -> None:
        await peer.accept()
        while True:
            frame = await peer.recv(timeout=10)
            if frame.get("type") == "cancel":
                cancel_seen.set()

    gw = ScriptedGateway(script)
    async with gw.running(), GatewayConnection(options(gw.url)) as conn:
        await conn.wait_ready(5)
        with pytest.raises(RequestTimeout):
            await conn.request("slow.method", timeout_s=0.2)
        await asyncio.wait_for(cancel_seen.wait(), 5)


async def test_late_answers_after_a_timeout_are_not_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Like the real gateway: the cancel is answered with INVALID_REQUEST under the same id and
    the original request is answered late. Both are dropped at debug level; the session goes
    on."""
    answered = asyncio.Event()

    async def script(peer: ScriptedPeer) -> None:
        await peer.accept()
        slow = await peer.recv(timeout=10)
        cancel = await peer.recv(timeout=10)
        assert cancel == {"type": "cancel", "id": slow["id"]}
        invalid = {"code": "INVALID_REQUEST", "message": "invalid request frame"}
        await peer.send({"type": "res", "id": slow["id"], "ok": False, "error": invalid})
        await peer.send({"type": "res", "id": slow["id"], "ok": True, "payload": {"late": 1}})
        answered.set()
        await peer.serve_requests()

    gw = ScriptedGateway(script)
    with caplog.at_level(logging.DEBUG, logger="openclaw.transport"):
        async with gw.running(), GatewayConnection(options(gw.url)) as conn:
            await conn.wait_ready(5)
            with pytest.raises(RequestTimeout):
                await conn.request("slow.method", timeout_s=0.2)
            await asyncio.wait_for(answered.wait(), 5)
            assert await conn.request("health") == {"echo": None}
            assert conn.status.state is ConnectionState.CONNECTED
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    late = [r.getMessage() for r in caplog.records if "late answer" in r.getMessage()]
    assert len(late) == 2 and all("slow.method" in m for m in late)


async def test_tick_watchdog_closes_with_4000_and_reconnects() -> None:
    """A gateway silent for two tick intervals is dropped (4000) and reconnected."""
    close_codes: list[int | None] = []

    async def silent(peer: ScriptedPeer) -> None:
        await peer.accept(tick_interval_ms=150)
        await peer.ws.wait_closed()
        close_codes.append(peer.ws.close_code)

    async def healthy(peer: ScriptedPeer) -> None:
        await peer.accept()
        await peer.serve_requests()

    gw = ScriptedGateway(silent, healthy)
    async with gw.running(), GatewayConnection(options(gw.url)) as conn:
        await gw.wait_for_peers(2)
        await conn.wait_ready(5)
        assert await conn.request("health") == {"echo": None}
    assert close_codes == [4000]


async def test_sequence_gap_is_signalled() -> None:
    """A jump in event seq calls the gap listener with the missing range."""
    gaps: list[SequenceGap] = []
    events: list[str] = []

    async def script(peer: ScriptedPeer) -> None:
        await peer.accept()
        for seq in (1, 2, 5):
            await peer.send({"type": "event", "event": "presence", "payload": {}, "seq": seq})
        await peer.serve_requests()

    gw = ScriptedGateway(script)
    async with gw.running(), GatewayConnection(options(gw.url)) as conn:
        conn.on_gap(gaps.append)
        conn.on_event(lambda e: events.append(e.event))
        await conn.wait_ready(5)
        async with asyncio.timeout(5):
            while len(events) < 3:
                await asyncio.sleep(0.01)
    assert gaps == [SequenceGap(expected=3, received=5)]


async def test_garbage_frames_are_dropped_and_session_survives() -> None:
    """Garbage, non-UTF-8, unknown types and stray responses do not break the session."""

    async def script(peer: ScriptedPeer) -> None:
        await peer.accept()
        await peer.send("{not json")
        await peer.send(b"\xff\xfe\x00binary")
        await peer.send({"type": "bogus"})
        await peer.send({"type": "res", "id": "nobody", "ok": True})
        await peer.send({"type": "req", "id": "x", "method": "evil"})
        await peer.send("[1, 2, 3]")
        await peer.serve_requests()

    gw = ScriptedGateway(script)
    async with gw.running(), GatewayConnection(options(gw.url)) as conn:
        await conn.wait_ready(5)
        await asyncio.sleep(0.1)
        assert await conn.request("health", {"still": "alive"}) == {"echo": {"still": "alive"}}
        assert conn.status.state is ConnectionState.CONNECTED
    assert len(gw.peers) == 1


async def test_oversized_inbound_frame_closes_and_reconnects() -> None:
    """A frame over the inbound cap closes the connection (1009); the client reconnects."""

    async def flood(peer: ScriptedPeer) -> None:
        await peer.accept()
        await peer.send({"type": "event", "event": "big", "payload": "x" * 300_000})
        await peer.ws.wait_closed()

    async def healthy(peer: ScriptedPeer) -> None:
        await peer.accept()
        await peer.serve_requests()

    gw = ScriptedGateway(flood, healthy)
    async with gw.running(), GatewayConnection(options(gw.url, max_inbound_bytes=100_000)) as conn:
        await gw.wait_for_peers(2)
        await conn.wait_ready(5)
        assert await conn.request("health") == {"echo": None}
    assert gw.peers[0].ws.close_code == 1009


async def test_payload_limit_is_enforced_on_send() -> None:
    """A request bigger than policy.maxPayload is refused locally."""

    async def script(peer: ScriptedPeer) -> None:
        await peer.accept(max_payload=1024)
        await peer.serve_requests()

    gw = ScriptedGateway(script)
    async with gw.running(), GatewayConnection(options(gw.url)) as conn:
        await conn.wait_ready(5)
        with pytest.raises(PayloadTooLarge):
            await conn.request("chat.send", {"message": "x" * 2048})
        assert await conn.request("health") == {"echo": None}


async def test_auth_failure_pauses_until_resume() -> None:
    """AUTH_TOKEN_MISSING pauses reconnects; resume() tries again."""
    missing = {
        "code": "INVALID_REQUEST",
        "message": "unauthorized: gateway token missing",
        "details": {
            "code": "AUTH_TOKEN_MISSING",
            "recommendedNextStep": "update_auth_configuration",
        },
    }

    async def reject(peer: ScriptedPeer) -> None:
        await peer.reject(missing)

    async def accept(peer: ScriptedPeer) -> None:
        await peer.accept()
        await peer.serve_requests()

    gw = ScriptedGateway(reject, accept)
    async with gw.running(), GatewayConnection(options(gw.url)) as conn:
        with pytest.raises(ReconnectPaused) as info:
            await conn.wait_ready(5)
        assert isinstance(info.value.cause, AuthError)
        assert info.value.cause.detail_code == "AUTH_TOKEN_MISSING"
        await asyncio.sleep(0.3)
        assert len(gw.peers) == 1, "a paused connection must not retry by itself"
        conn.resume()
        await conn.wait_ready(5)
    assert len(gw.peers) == 2


async def test_unavailable_with_retry_after_backs_off_without_pausing() -> None:
    """UNAVAILABLE startup-sidecars is retried after retryAfterMs, not paused."""
    unavailable = {
        "code": "UNAVAILABLE",
        "message": "gateway starting",
        "retryable": True,
        "retryAfterMs": 300,
    }

    async def reject(peer: ScriptedPeer) -> None:
        await peer.reject(unavailable, close_code=1013)

    async def accept(peer: ScriptedPeer) -> None:
        await peer.accept()
        await peer.serve_requests()

    gw = ScriptedGateway(reject, accept)
    async with gw.running(), GatewayConnection(options(gw.url)) as conn:
        loop = asyncio.get_running_loop()
        started = loop.time()
        await conn.wait_ready(5)
        assert loop.time() - started >= 0.3


def retries(statuses: list[ConnectionStatus]) -> list[ConnectionStatus]:
    """The statuses announcing a scheduled retry."""
    return [
        s for s in statuses if s.state is ConnectionState.RECONNECTING and s.retry_in_s is not None
    ]


@pytest.mark.parametrize("code", [1012, 1013])
async def test_server_restart_close_reconnects(code: int) -> None:
    """A 1012/1013 close of a live session is a service restart: the reconnect waits at
    least the 1 s floor (not the 20 ms first step of this policy), then resumes."""

    async def restart(peer: ScriptedPeer) -> None:
        await peer.accept()
        await asyncio.sleep(0.05)
        await peer.ws.close(code, "service restart")

    async def accept(peer: ScriptedPeer) -> None:
        await peer.accept()
        await peer.serve_requests()

    statuses: list[ConnectionStatus] = []
    times: list[float] = []
    gw = ScriptedGateway(restart, accept)
    async with gw.running():
        loop = asyncio.get_running_loop()
        conn = GatewayConnection(options(gw.url))
        conn.on_status(lambda s: (statuses.append(s), times.append(loop.time())))
        async with conn:
            await gw.wait_for_peers(2)
            await wait_state(conn, ConnectionState.CONNECTED)
            assert await conn.request("health") == {"echo": None}
    (retry,) = retries(statuses)
    connected_at = [
        t for s, t in zip(statuses, times, strict=True) if s.state is ConnectionState.CONNECTED
    ]
    assert len(connected_at) == 2
    assert connected_at[1] - times[statuses.index(retry)] >= 0.9
    assert retry.category is ErrorCategory.SERVER_RESTART
    assert retry.retry_in_s is not None and retry.retry_in_s >= 1.0
    assert isinstance(retry.error, ConnectionClosed) and retry.error.code == code


async def test_backoff_grows_then_resets_after_hello_ok() -> None:
    """Each failed attempt waits longer (base x factor^n); a successful hello-ok resets the
    schedule, so the next failure waits the first step again."""

    async def drop(peer: ScriptedPeer) -> None:
        await peer.ws.close(1011, "internal error")

    async def accept_then_drop(peer: ScriptedPeer) -> None:
        await peer.accept()
        await asyncio.sleep(0.05)
        await peer.ws.close(1011, "internal error")

    async def accept(peer: ScriptedPeer) -> None:
        await peer.accept()
        await peer.serve_requests()

    policy = RetryPolicy(base_ms=40, factor=2.0, early_ceiling_ms=10_000)
    statuses: list[ConnectionStatus] = []
    gw = ScriptedGateway(drop, drop, drop, accept_then_drop, drop, accept)
    async with gw.running():
        conn = GatewayConnection(options(gw.url, retry=policy))
        conn.on_status(statuses.append)
        async with conn:
            await gw.wait_for_peers(6)
            await wait_state(conn, ConnectionState.CONNECTED)
            assert await conn.request("health") == {"echo": None}
    scheduled = retries(statuses)
    assert [s.retry_in_s for s in scheduled] == pytest.approx([0.04, 0.08, 0.16, 0.04, 0.08])
    assert [s.attempt for s in scheduled] == [1, 2, 3, 1, 2]
    assert all(s.category is ErrorCategory.NETWORK for s in scheduled)
    connected = [i for i, s in enumerate(statuses) if s.state is ConnectionState.CONNECTED]
    assert len(connected) == 2


async def test_dead_device_token_is_cleared_and_shared_token_used() -> None:
    """AUTH_DEVICE_TOKEN_MISMATCH removes the stored token and retries with the shared one."""
    mismatch = {
        "code": "INVALID_REQUEST",
        "message": "unauthorized: device token mismatch",
        "details": {"code": "AUTH_DEVICE_TOKEN_MISMATCH"},
    }
    connects: list[dict[str, Any]] = []

    async def reject(peer: ScriptedPeer) -> None:
        connects.append(await peer.reject(mismatch))

    async def accept(peer: ScriptedPeer) -> None:
        connects.append(await peer.accept())
        await peer.serve_requests()

    gw = ScriptedGateway(reject, accept)
    async with gw.running():
        opts = options(gw.url)
        assert opts.credentials is not None and opts.signer is not None
        key = gateway_key(gw.url)
        opts.credentials.save_device_token(
            key,
            opts.signer.device_id,
            StoredDeviceToken("old-device-token", "operator", ("operator.read",), 1),
        )
        async with GatewayConnection(opts) as conn:
            await conn.wait_ready(5)
        assert opts.credentials.device_token(key, opts.signer.device_id, "operator") is None
    assert connects[0]["params"]["auth"]["deviceToken"] == "old-device-token"
    assert connects[1]["params"]["auth"]["token"] == "shared-1"


async def test_pairing_wait_continues_once_approved() -> None:
    """With wait_for_pairing, PAIRING_REQUIRED retries quietly and connects when approved."""
    pairing = {
        "code": "NOT_PAIRED",
        "message": "pairing required: device is not approved yet",
        "details": {"code": "PAIRING_REQUIRED", "reason": "not-paired", "requestId": "req-42"},
    }
    states: list[ConnectionState] = []

    async def reject(peer: ScriptedPeer) -> None:
        await peer.reject(pairing)

    async def accept(peer: ScriptedPeer) -> None:
        await peer.accept(role="node")
        await peer.serve_requests()

    gw = ScriptedGateway(reject, reject, accept)
    async with gw.running():
        opts = options(gw.url, role=Role.NODE, wait_for_pairing=True)
        conn = GatewayConnection(opts)
        conn.on_status(lambda s: states.append(s.state))
        conn.start()
        await conn.wait_ready(5)
        assert conn.status.state is ConnectionState.CONNECTED
        await conn.aclose()
    assert ConnectionState.AWAITING_APPROVAL in states
    assert ConnectionState.PAUSED not in states


async def test_pairing_without_wait_pauses_with_request_id() -> None:
    """Without wait_for_pairing, PAIRING_REQUIRED pauses and exposes the request id."""
    pairing = {
        "code": "NOT_PAIRED",
        "message": "pairing required",
        "details": {"code": "PAIRING_REQUIRED", "requestId": "req-7"},
    }

    async def reject(peer: ScriptedPeer) -> None:
        await peer.reject(pairing)

    gw = ScriptedGateway(reject)
    async with gw.running(), GatewayConnection(options(gw.url)) as conn:
        with pytest.raises(ReconnectPaused):
            await conn.wait_ready(5)
        pending = conn.status.pairing
        assert pending is not None and pending.request_id == "req-7"
        assert pending.approve_command == "openclaw devices approve req-7"


async def test_challenge_timeout_retries() -> None:
    """A gateway that never sends connect.challenge fails the attempt and is retried."""

    async def mute(peer: ScriptedPeer) -> None:
        await peer.ws.wait_closed()

    async def accept(peer: ScriptedPeer) -> None:
        await peer.accept()
        await peer.serve_requests()

    gw = ScriptedGateway(mute, accept)
    async with gw.running():
        conn = GatewayConnection(options(gw.url, challenge_timeout_s=0.2))
        async with conn:
            await conn.wait_ready(5)
    assert len(gw.peers) == 2


async def test_reconnect_re_sends_connect_with_the_new_options_at_once() -> None:
    """reconnect() closes the live socket and connects again without backoff, carrying the
    options as they are now (how a node re-advertises a changed command surface)."""
    connects: list[dict[str, Any]] = []
    closes: list[int | None] = []

    async def record(peer: ScriptedPeer) -> None:
        connect = await peer.accept()
        connects.append(connect["params"])
        try:
            await peer.serve_requests()
        finally:
            closes.append(peer.ws.close_code)

    slow = RetryPolicy(base_ms=5_000, early_ceiling_ms=5_000, pairing_poll_ms=5_000)
    node_options = options(
        "",
        role=Role.NODE,
        client=ClientInfo(
            id=ClientId.NODE_HOST, version="t", platform="linux", mode=ClientMode.NODE
        ),
        scopes=(),
        commands=("device.info",),
        caps=("device",),
        retry=slow,
    )
    gw = ScriptedGateway(record, record, record)
    async with gw.running():
        node_options.url = gw.url
        async with GatewayConnection(node_options) as conn:
            await conn.wait_ready(5)
            conn.options.commands = ("device.info", "camera.snap")
            conn.options.caps = ("device", "camera")
            loop = asyncio.get_running_loop()
            started = loop.time()
            await conn.reconnect("node surface changed")
            await gw.wait_for_peers(2)
            async with asyncio.timeout(5):
                while len(connects) < 2 or conn.status.state is not ConnectionState.CONNECTED:
                    await asyncio.sleep(0.01)
            assert loop.time() - started < 4, "reconnect() must not wait for the backoff"
    assert connects[0]["commands"] == ["device.info"]
    assert connects[1]["commands"] == ["device.info", "camera.snap"]
    assert connects[1]["caps"] == ["device", "camera"]
    assert closes[0] == 1000


#: The real gateway's answer to a wrong shared token from a device (real-gateway-observed.md).
TOKEN_MISMATCH = {
    "code": "INVALID_REQUEST",
    "message": "unauthorized: gateway token mismatch (use this gateway's gateway.auth.token or "
    "pair the device)",
    "details": {
        "code": "AUTH_TOKEN_MISMATCH",
        "authReason": "token_mismatch",
        "canRetryWithDeviceToken": True,
        "recommendedNextStep": "retry_with_device_token",
    },
}


def with_stored_token(opts: ConnectionOptions, url: str) -> None:
    """Store a device token (with its scopes) for ``opts``' identity at ``url``."""
    assert opts.credentials is not None and opts.signer is not None
    opts.credentials.save_device_token(
        gateway_key(url),
        opts.signer.device_id,
        StoredDeviceToken("stored-device-token", "operator", ("operator.read",), 1),
    )


async def test_explicit_token_goes_first_then_one_retry_with_the_stored_device_token() -> None:
    """An explicit --token is sent ahead of the stored device token; refused with
    canRetryWithDeviceToken on a trusted (loopback) endpoint, it is retried once at once with
    the stored device token alongside, and that connects."""
    connects: list[dict[str, Any]] = []

    async def reject(peer: ScriptedPeer) -> None:
        connects.append(await peer.reject(TOKEN_MISMATCH))

    async def accept(peer: ScriptedPeer) -> None:
        connects.append(await peer.accept(scopes=["operator.read"]))
        await peer.serve_requests()

    gw = ScriptedGateway(reject, accept)
    async with gw.running():
        opts = options(gw.url, shared_token_first=True, scopes=("operator.admin",))
        with_stored_token(opts, gw.url)
        statuses: list[ConnectionStatus] = []
        conn = GatewayConnection(opts)
        conn.on_status(statuses.append)
        async with conn:
            await conn.wait_ready(5)
    assert connects[0]["params"]["auth"] == {"token": "shared-1"}
    assert connects[0]["params"]["scopes"] == ["operator.admin"]
    assert connects[1]["params"]["auth"] == {
        "token": "shared-1",
        "deviceToken": "stored-device-token",
    }
    assert connects[1]["params"]["scopes"] == ["operator.read"]
    assert all(connect_signature_valid(c) for c in connects)
    assert ConnectionState.PAUSED not in {s.state for s in statuses}
    assert not retries(statuses), "the device-token retry is immediate, not backed off"


async def test_failed_device_token_retry_pauses_after_one_try() -> None:
    """If the stored-device-token retry is refused too, reconnecting pauses: one retry only."""
    connects: list[dict[str, Any]] = []

    async def reject(peer: ScriptedPeer) -> None:
        connects.append(await peer.reject(TOKEN_MISMATCH))

    gw = ScriptedGateway(reject, reject, reject)
    async with gw.running():
        opts = options(gw.url, shared_token_first=True)
        with_stored_token(opts, gw.url)
        async with GatewayConnection(opts) as conn:
            with pytest.raises(ReconnectPaused) as info:
                await conn.wait_ready(5)
            await asyncio.sleep(0.3)
    assert isinstance(info.value.cause, AuthError)
    assert [c["params"]["auth"].get("deviceToken") for c in connects] == [
        None,
        "stored-device-token",
    ]


async def test_default_order_sends_the_stored_device_token_first() -> None:
    """Without an explicit token the documented order holds: the stored device token first
    (the same shared token from settings or the store does not jump ahead)."""
    connects: list[dict[str, Any]] = []

    async def accept(peer: ScriptedPeer) -> None:
        connects.append(await peer.accept(scopes=["operator.read"]))
        await peer.serve_requests()

    gw = ScriptedGateway(accept)
    async with gw.running():
        opts = options(gw.url)
        with_stored_token(opts, gw.url)
        async with GatewayConnection(opts) as conn:
            await conn.wait_ready(5)
    assert connects[0]["params"]["auth"] == {"deviceToken": "stored-device-token"}
