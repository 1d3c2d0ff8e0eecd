"""Our client (operator and node sessions) against the real OpenClaw gateway 2026.9.6."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.config import NodeSettings
from openclaw_desktop.config.client_profile import cli_client, node_client
from openclaw_desktop.errors import (
    AuthError,
    GatewayError,
    PairingRequired,
    ReconnectPaused,
    TrustError,
)
from openclaw_desktop.identity import (
    CredentialStore,
    DeviceIdentity,
    MemorySecretStore,
    gateway_key,
)
from openclaw_desktop.node import NodeContext, NodeSession, Surface, build_dispatcher
from openclaw_desktop.protocol import MIN_NODE_PROTOCOL_VERSION, Role
from openclaw_desktop.transport import (
    ConnectionOptions,
    ConnectionState,
    GatewayConnection,
    RetryPolicy,
)
from openclaw_desktop.trust import TrustPrompt
from tests.helpers.real_openclaw import GatewayFactory, OpenClawInstall, RealGateway

pytestmark = pytest.mark.timeout(240)

FAST = RetryPolicy(base_ms=100, early_ceiling_ms=1000, pairing_poll_ms=500)
OPERATOR_SCOPES = ("operator.read", "operator.write", "operator.admin", "operator.pairing")
SETTINGS = NodeSettings()
CTX = NodeContext(settings=lambda: SETTINGS)


async def default_surface() -> Surface:
    """What this machine advertises with the default settings."""
    return await build_dispatcher(CTX).registry.surface(SETTINGS.toggles())


def operator_options(
    gw: RealGateway, creds: CredentialStore, ident: DeviceIdentity, **kw: Any
) -> ConnectionOptions:
    """Operator options for a real gateway."""
    base: dict[str, Any] = {
        "url": gw.url,
        "role": Role.OPERATOR,
        "client": cli_client(),
        "signer": ident,
        "credentials": creds,
        "scopes": OPERATOR_SCOPES,
        "shared_token": gw.token,
        "retry": FAST,
    }
    base.update(kw)
    return ConnectionOptions(**base)


async def node_options(
    gw: RealGateway, creds: CredentialStore, ident: DeviceIdentity
) -> ConnectionOptions:
    """Node options advertising the default surface."""
    surface = await default_surface()
    return ConnectionOptions(
        url=gw.url,
        role=Role.NODE,
        client=node_client("interop-node"),
        signer=ident,
        credentials=creds,
        shared_token=gw.token,
        commands=surface.commands,
        caps=surface.caps,
        min_protocol=MIN_NODE_PROTOCOL_VERSION,
        wait_for_pairing=True,
        retry=FAST,
    )


@pytest.fixture(scope="module")
def plain_gateway(openclaw_install: OpenClawInstall) -> Iterator[RealGateway]:
    """One real gateway with token auth and the default (auto-approve loopback) pairing."""
    factory = GatewayFactory(openclaw_install)
    try:
        yield factory()
    finally:
        factory.close()


async def wait_for(predicate: Any, timeout: float = 30.0) -> None:
    """Poll ``predicate()`` until true."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.05)


async def test_operator_connect_stores_device_token_and_reconnects_with_it(
    plain_gateway: RealGateway,
) -> None:
    """Token + v3 signature gets hello-ok; the stored device token alone reconnects."""
    creds, ident = CredentialStore(MemorySecretStore()), DeviceIdentity.generate()
    async with GatewayConnection(operator_options(plain_gateway, creds, ident)) as conn:
        hello = await conn.wait_ready(30)
        assert hello.protocol == 4
        assert hello.auth.role == "operator"
        assert "node.invoke" in hello.features.methods
        health = await conn.request("health")
        assert health["ok"] is True
    stored = creds.device_token(gateway_key(plain_gateway.url), ident.device_id, "operator")
    assert stored is not None and stored.scopes
    opts = operator_options(plain_gateway, creds, ident, shared_token=None)
    async with GatewayConnection(opts) as conn:
        hello = await conn.wait_ready(30)
        assert hello.auth.role == "operator"
        assert await conn.request("status")


async def test_wrong_token_is_typed_and_pauses(plain_gateway: RealGateway) -> None:
    """A wrong shared token gives AUTH_TOKEN_MISMATCH and reconnects pause."""
    creds, ident = CredentialStore(MemorySecretStore()), DeviceIdentity.generate()
    opts = operator_options(plain_gateway, creds, ident, shared_token="definitely-wrong")
    async with GatewayConnection(opts) as conn:
        with pytest.raises(ReconnectPaused) as info:
            await conn.wait_ready(30)
        cause = info.value.cause
        assert isinstance(cause, AuthError)
        assert cause.code == "INVALID_REQUEST"
        assert cause.detail_code == "AUTH_TOKEN_MISMATCH"
        assert cause.detail("canRetryWithDeviceToken") is True
        assert conn.status.state is ConnectionState.PAUSED


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``openclaw-desktop`` in a subprocess with its own state folder."""
    env = {**os.environ, "OPENCLAW_DESKTOP_HOME": str(home)}
    env.pop("OPENCLAW_GATEWAY_TOKEN", None)
    return subprocess.run(
        [sys.executable, "-m", "openclaw_desktop.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def test_cli_call_and_exit_codes(plain_gateway: RealGateway, tmp_path: Path) -> None:
    """`openclaw-desktop call` prints JSON, and exits 3 on a bad token."""
    ok = run_cli(
        tmp_path, "call", "health", "--url", plain_gateway.url, "--token", plain_gateway.token
    )
    assert ok.returncode == 0, ok.stderr
    assert '"ok": true' in ok.stdout
    bad = run_cli(
        tmp_path / "other", "call", "health", "--url", plain_gateway.url, "--token", "nope"
    )
    assert bad.returncode == 3
    assert "AUTH_TOKEN_MISMATCH" in bad.stderr
    assert "nope" not in bad.stderr


async def test_gateway_restart_reconnects_and_resumes(real_gateway: GatewayFactory) -> None:
    """After the real gateway restarts, the session reconnects by itself and works again."""
    gw = real_gateway()
    creds, ident = CredentialStore(MemorySecretStore()), DeviceIdentity.generate()
    async with GatewayConnection(operator_options(gw, creds, ident)) as conn:
        first = await conn.wait_ready(30)
        states: list[ConnectionState] = []
        conn.on_status(lambda s: states.append(s.state))
        await asyncio.to_thread(gw.restart)
        await wait_for(
            lambda: conn.status.state is ConnectionState.CONNECTED and conn.hello is not first, 60
        )
        assert ConnectionState.RECONNECTING in states
        assert (await conn.request("health"))["ok"] is True


@pytest.fixture
async def approving_operator(
    real_gateway: GatewayFactory,
) -> AsyncIterator[tuple[RealGateway, GatewayConnection]]:
    """A manual-pairing gateway allowing device.* commands, and our operator approved on it."""
    gw = real_gateway(manual_pairing=True, allow=["device.info", "device.status"])
    creds, ident = CredentialStore(MemorySecretStore()), DeviceIdentity.generate()
    conn = GatewayConnection(
        operator_options(gw, creds, ident, reconnect=True, wait_for_pairing=True)
    )
    conn.start()
    try:
        await wait_for(lambda: conn.status.pairing is not None, 30)
        pairing = conn.status.pairing
        assert pairing is not None and pairing.request_id
        await asyncio.to_thread(gw.cli, "devices", "approve", pairing.request_id)
        await conn.wait_ready(30)
        yield gw, conn
    finally:
        await conn.aclose()


async def test_node_pairing_and_invoke(
    approving_operator: tuple[RealGateway, GatewayConnection],
) -> None:
    """A new node waits on PAIRING_REQUIRED, continues after approval, and is invoked."""
    gw, operator = approving_operator
    creds, ident = CredentialStore(MemorySecretStore()), DeviceIdentity.generate()
    node_conn = GatewayConnection(await node_options(gw, creds, ident))
    dispatcher = build_dispatcher(CTX)
    node = NodeSession(node_conn, dispatcher)
    node_conn.start()
    try:
        await wait_for(lambda: node_conn.status.pairing is not None, 30)
        pairing = node_conn.status.pairing
        assert isinstance(pairing, PairingRequired)
        assert pairing.code == "NOT_PAIRED"
        assert pairing.request_id
        assert pairing.approve_command == f"openclaw devices approve {pairing.request_id}"
        assert node_conn.status.state is ConnectionState.AWAITING_APPROVAL
        # Approve the device; our node goes on by itself, without a restart.
        await asyncio.to_thread(gw.cli, "devices", "approve", pairing.request_id)
        await node_conn.wait_ready(30)
        await wait_for(lambda: node.surface == "pending", 30)
        # Approve the node's command surface; it becomes active without a reconnect.
        pending = await asyncio.to_thread(gw.cli_json, "nodes", "pending")
        mine = [p for p in pending if p["nodeId"] == ident.device_id]
        assert mine, pending
        assert sorted(mine[0]["commands"]) == sorted(node_conn.options.commands or ())
        assert {"device.info", "device.status"} <= set(mine[0]["commands"])
        await asyncio.to_thread(gw.cli_json, "nodes", "approve", mine[0]["requestId"])
        await wait_for(lambda: node.surface == "approved", 30)

        # Invoked through the real CLI.
        info = await asyncio.to_thread(
            gw.cli_json,
            "nodes",
            "invoke",
            "--node",
            ident.device_id,
            "--command",
            "device.info",
            "--params",
            "{}",
        )
        assert info["ok"] is True
        assert info["payload"]["systemName"]
        # Invoked through our own operator session.
        result = await operator.request(
            "node.invoke",
            {
                "nodeId": ident.device_id,
                "command": "device.status",
                "params": {"sections": ["uptime"]},
                "idempotencyKey": uuid.uuid4().hex,
            },
        )
        assert result["ok"] is True
        assert result["payload"]["uptimeSeconds"] > 0
        # A node error comes back as UNAVAILABLE with the node's code.
        with pytest.raises(GatewayError) as info_err:
            await operator.request(
                "node.invoke",
                {
                    "nodeId": ident.device_id,
                    "command": "device.status",
                    "params": {"sections": ["bogus"]},
                    "idempotencyKey": uuid.uuid4().hex,
                },
            )
        assert info_err.value.code == "UNAVAILABLE"
        assert info_err.value.detail("nodeError")["code"] == "INVALID_REQUEST"
        # The gateway adds the code prefix itself: our node sends the bare message.
        assert str(info_err.value.message).startswith("INVALID_REQUEST: unknown sections bogus")
        assert node.handled >= 3
    finally:
        await node.aclose()
        await node_conn.aclose()


async def test_tls_trust_and_pinning(real_gateway: GatewayFactory) -> None:
    """No pin fails closed unless trusted; the right pin connects; a wrong pin is refused."""
    gw = real_gateway(tls=True)
    assert gw.url.startswith("wss://") and gw.tls_sha256
    ident = DeviceIdentity.generate()

    # No pin, no callback: refused, nothing stored.
    creds = CredentialStore(MemorySecretStore())
    async with GatewayConnection(operator_options(gw, creds, ident)) as conn:
        with pytest.raises(ReconnectPaused) as info:
            await conn.wait_ready(30)
        assert isinstance(info.value.cause, TrustError)
        assert info.value.cause.kind == "untrusted"
        assert info.value.cause.actual == gw.tls_sha256
    assert creds.tls_pin(gw.url) is None

    # The callback declines: refused, nothing stored.
    prompts: list[TrustPrompt] = []

    async def decline(prompt: TrustPrompt) -> bool:
        prompts.append(prompt)
        return False

    async with GatewayConnection(
        operator_options(gw, creds, ident, trust_callback=decline)
    ) as conn:
        with pytest.raises(ReconnectPaused):
            await conn.wait_ready(30)
    assert prompts and prompts[0].fingerprint == gw.tls_sha256
    assert creds.tls_pin(gw.url) is None

    # The callback accepts: pinned and connected.
    async def accept(prompt: TrustPrompt) -> bool:
        return True

    async with GatewayConnection(operator_options(gw, creds, ident, trust_callback=accept)) as conn:
        await conn.wait_ready(30)
    assert creds.tls_pin(gw.url) == gw.tls_sha256

    # With the stored pin and no callback at all: connects.
    async with GatewayConnection(operator_options(gw, creds, ident)) as conn:
        await conn.wait_ready(30)
        assert (await conn.request("health"))["ok"] is True

    # A wrong pin: refused with both fingerprints in the error.
    wrong = "ab" * 32
    fresh = CredentialStore(MemorySecretStore())
    async with GatewayConnection(operator_options(gw, fresh, ident, tls_fingerprint=wrong)) as conn:
        with pytest.raises(ReconnectPaused) as info:
            await conn.wait_ready(30)
        err = info.value.cause
        assert isinstance(err, TrustError) and err.kind == "mismatch"
        assert wrong in str(err) and gw.tls_sha256 in str(err)
