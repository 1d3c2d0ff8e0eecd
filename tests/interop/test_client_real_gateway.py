"""Our client (operator and node sessions) against the real OpenClaw gateway 2026.9.6."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import subprocess
import sys
import time
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
    RequestTimeout,
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
from openclaw_desktop.trust import TrustPrompt, format_fingerprint
from tests.helpers.processes import stop_group, wait_for_log
from tests.helpers.real_openclaw import (
    GatewayFactory,
    OpenClawInstall,
    RealGateway,
    parse_json_output,
)

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


def module_gateway(install: OpenClawInstall, **kwargs: Any) -> Iterator[RealGateway]:
    """One real gateway for the whole module (each start costs about 15 s)."""
    factory = GatewayFactory(install)
    try:
        yield factory(**kwargs)
    finally:
        factory.close()


@pytest.fixture(scope="module")
def plain_gateway(openclaw_install: OpenClawInstall) -> Iterator[RealGateway]:
    """One real gateway with token auth and the default (auto-approve loopback) pairing."""
    yield from module_gateway(openclaw_install)


@pytest.fixture(scope="module")
def pairing_gateway(openclaw_install: OpenClawInstall) -> Iterator[RealGateway]:
    """A manual-pairing gateway (loopback not auto-approved) allowing device.* commands."""
    yield from module_gateway(
        openclaw_install, manual_pairing=True, allow=["device.info", "device.status"]
    )


@pytest.fixture(scope="module")
def tls_gateway(openclaw_install: OpenClawInstall) -> Iterator[RealGateway]:
    """A wss:// gateway with its self-signed certificate."""
    yield from module_gateway(openclaw_install, tls=True)


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
    pairing_gateway: RealGateway,
) -> AsyncIterator[tuple[RealGateway, GatewayConnection]]:
    """A manual-pairing gateway allowing device.* commands, and our operator approved on it."""
    gw = pairing_gateway
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


async def test_tls_trust_and_pinning(tls_gateway: RealGateway) -> None:
    """No pin fails closed unless trusted; the right pin connects; a wrong pin is refused."""
    gw = tls_gateway
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


# ------------------------------------------------------------ timeouts and late answers


def late_answers(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The transport's debug lines for dropped answers to given-up requests."""
    return [r.getMessage() for r in caplog.records if "late answer" in r.getMessage()]


async def test_timed_out_request_is_typed_and_late_answers_are_dropped_quietly(
    plain_gateway: RealGateway, caplog: pytest.LogCaptureFixture
) -> None:
    """A node.invoke to a node that never answers times out on our side (RequestTimeout) and
    a cancel goes out. The real gateway has no cancel frame: it answers it at once with
    INVALID_REQUEST under the same id, and answers the invoke itself when its own timeoutMs
    ends. Both are dropped at debug level (no warning), and the session stays usable."""
    gw = plain_gateway
    node_creds, node_ident = CredentialStore(MemorySecretStore()), DeviceIdentity.generate()
    node_opts = await node_options(gw, node_creds, node_ident)
    # system.notify is on the real gateway's default allowlist for linux; no NodeSession is
    # attached, so nobody answers the invoke.
    node_opts.commands, node_opts.caps = ("system.notify",), ("system",)
    creds, ident = CredentialStore(MemorySecretStore()), DeviceIdentity.generate()
    with caplog.at_level(logging.DEBUG, logger="openclaw"):
        async with (
            GatewayConnection(node_opts) as node,
            GatewayConnection(operator_options(gw, creds, ident)) as operator,
        ):
            await node.wait_ready(30)
            await operator.wait_ready(30)
            pairs = await operator.request("node.pair.list", {})
            (mine,) = [p for p in pairs["pending"] if p["nodeId"] == node_ident.device_id]
            await operator.request("node.pair.approve", {"requestId": mine["requestId"]})
            started = time.monotonic()
            with pytest.raises(RequestTimeout) as info:
                await operator.request(
                    "node.invoke",
                    {
                        "nodeId": node_ident.device_id,
                        "command": "system.notify",
                        "params": {"title": "t", "body": "b"},
                        "timeoutMs": 2000,
                        "idempotencyKey": uuid.uuid4().hex,
                    },
                    timeout_s=0.5,
                )
            assert info.value.method == "node.invoke"
            assert time.monotonic() - started < 1.5
            await wait_for(lambda: len(late_answers(caplog)) >= 2, 15)
            assert operator.status.state is ConnectionState.CONNECTED
            assert (await operator.request("health"))["ok"] is True
    warnings = [
        f"{r.name}: {r.getMessage()}"
        for r in caplog.records
        if r.levelno >= logging.WARNING and r.name.startswith("openclaw")
    ]
    assert warnings == []
    cancel_answer, invoke_answer = late_answers(caplog)
    assert "node.invoke" in cancel_answer and "ok=False, INVALID_REQUEST" in cancel_answer
    assert "node.invoke" in invoke_answer and "ok=False, UNAVAILABLE" in invoke_answer


# ------------------------------------------------------------ explicit token, device retry


async def test_wrong_explicit_token_is_retried_once_with_the_stored_device_token(
    plain_gateway: RealGateway, caplog: pytest.LogCaptureFixture
) -> None:
    """An explicit (typed) token goes first; when the real gateway refuses it with
    canRetryWithDeviceToken on this trusted loopback endpoint, one retry with the stored
    device token alongside (auth.token wrong + auth.deviceToken) is accepted by the real
    gateway, and the session works."""
    creds, ident = CredentialStore(MemorySecretStore()), DeviceIdentity.generate()
    async with GatewayConnection(operator_options(plain_gateway, creds, ident)) as conn:
        await conn.wait_ready(30)
    key = gateway_key(plain_gateway.url)
    stored = creds.device_token(key, ident.device_id, "operator")
    assert stored is not None
    opts = operator_options(
        plain_gateway, creds, ident, shared_token="typed-but-wrong", shared_token_first=True
    )
    statuses: list[ConnectionState] = []
    conn = GatewayConnection(opts)
    conn.on_status(lambda s: statuses.append(s.state))
    with caplog.at_level(logging.INFO, logger="openclaw.transport"):
        async with conn:
            hello = await conn.wait_ready(30)
            assert hello.auth.role == "operator"
            assert set(stored.scopes) <= set(hello.auth.scopes)
            assert (await conn.request("health"))["ok"] is True
    refused = [r.getMessage() for r in caplog.records if "handshake failed" in r.getMessage()]
    assert len(refused) == 1 and "AUTH_TOKEN_MISMATCH" in refused[0]
    # Two attempts, the second at once (no backoff, no pause), then connected.
    first_connected = statuses.index(ConnectionState.CONNECTED)
    assert statuses[:first_connected] == [ConnectionState.CONNECTING] * 2
    assert creds.device_token(key, ident.device_id, "operator") is not None


# ------------------------------------------------------------ the CLI against the real gateway


def test_cli_wrong_tls_pin_exits_4_and_is_not_stored(
    tls_gateway: RealGateway, tmp_path: Path
) -> None:
    """`call` with a wrong --tls-fingerprint exits 4 naming both fingerprints, and the wrong
    pin is not kept; the right pin (any accepted spelling) connects and is kept only then."""
    gw = tls_gateway
    assert gw.tls_sha256
    base = ("call", "health", "--url", gw.url, "--token", gw.token)
    wrong = "ab" * 32
    bad = run_cli(tmp_path, *base, "--tls-fingerprint", wrong)
    assert bad.returncode == 4, bad.stderr
    assert wrong in bad.stderr and gw.tls_sha256 in bad.stderr
    assert "mismatch" in bad.stderr
    # Not stored: without the flag the gateway is untrusted (no pin), not a mismatch.
    unpinned = run_cli(tmp_path, *base)
    assert unpinned.returncode == 4, unpinned.stderr
    assert "no pin is stored" in unpinned.stderr and wrong not in unpinned.stderr
    # The right pin, colon-separated and upper case with a sha256: prefix: connects...
    typed = "sha256:" + format_fingerprint(gw.tls_sha256).upper()
    good = run_cli(tmp_path, *base, "--tls-fingerprint", typed)
    assert good.returncode == 0, good.stderr
    assert '"ok": true' in good.stdout
    # ...and is kept once it worked.
    pinned = run_cli(tmp_path, *base)
    assert pinned.returncode == 0, pinned.stderr


def test_cli_node_with_a_wrong_token_exits_3(plain_gateway: RealGateway, tmp_path: Path) -> None:
    """The headless node stops with exit 3 on AUTH_TOKEN_MISMATCH (reconnects pause)."""
    bad = run_cli(tmp_path, "node", "--url", plain_gateway.url, "--token", "wrong-node-token")
    assert bad.returncode == 3, bad.stderr
    assert "AUTH_TOKEN_MISMATCH" in bad.stderr
    assert "wrong-node-token" not in bad.stderr


def test_cli_broken_identity_exits_3_with_the_reset_hint(
    plain_gateway: RealGateway, tmp_path: Path
) -> None:
    """A device.json that cannot be parsed fails closed (exit 3) for `call` and `node`,
    naming `identity reset`; the file is left as it is."""
    path = tmp_path / "data" / "identity" / "device.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not an identity", encoding="utf-8")
    path.chmod(0o600)
    for args in (("call", "health"), ("node",)):
        result = run_cli(
            tmp_path, *args, "--url", plain_gateway.url, "--token", plain_gateway.token
        )
        assert result.returncode == 3, result.stderr
        assert "openclaw-desktop identity reset" in result.stderr
        assert str(path) in result.stderr
    assert path.read_text(encoding="utf-8") == "{not an identity"


def count_in(log: Path, text: str) -> int:
    """How often ``text`` occurs in ``log``."""
    return log.read_text(errors="replace").count(text)


def test_cli_node_waits_for_pairing_then_carries_on(
    pairing_gateway: RealGateway, tmp_path: Path
) -> None:
    """`openclaw-desktop node` on a manual-pairing gateway prints the requestId and approve
    command once, keeps retrying quietly with the same requestId, connects by itself once
    approved (no restart), and a node error comes back through the real `nodes invoke`."""
    gw = pairing_gateway
    log = tmp_path / "node.log"
    env = {**os.environ, "OPENCLAW_DESKTOP_HOME": str(tmp_path / "home")}
    env.pop("OPENCLAW_GATEWAY_TOKEN", None)
    argv = [sys.executable, "-m", "openclaw_desktop.cli", "-v", "node"]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*argv, "--url", gw.url, "--token", gw.token],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        wait_for_log(log, "Waiting; this node continues by itself once approved.", proc, 30)
        banner = re.search(
            r"pairing required: this device waits for approval \(requestId (\S+)\)\.",
            log.read_text(),
        )
        assert banner, log.read_text()
        rid = banner.group(1)
        deadline = time.monotonic() + 30
        while count_in(log, f"pairing request {rid} still waits for approval") < 3:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        gw.cli("devices", "approve", rid)
        wait_for_log(log, "waiting for invokes", proc, 30)
        connected = re.search(r"as node (\w+) \(", log.read_text())
        assert connected, log.read_text()
        device_id = connected.group(1)
        wait_for_log(log, "commands wait for operator approval", proc, 30)
        pending = gw.cli_json("nodes", "pending")
        (mine,) = [p for p in pending if p["nodeId"] == device_id]
        gw.cli_json("nodes", "approve", mine["requestId"])
        wait_for_log(log, "node commands approved and active", proc, 30)
        # A node error through the real CLI: the code leads the message, once.
        result = gw.cli(
            "nodes",
            "invoke",
            "--node",
            device_id,
            "--command",
            "device.status",
            "--params",
            '{"sections":["bogus"]}',
            "--json",
            check=False,
        )
        assert result.returncode == 1, result.stdout
        message = parse_json_output(result.stdout)["error"]["message"]
        assert message.startswith("INVALID_REQUEST: unknown sections bogus")
        assert "INVALID_REQUEST: INVALID_REQUEST" not in message
        assert proc.poll() is None, "the node carries on without a restart"
    finally:
        stop_group(proc)
    text = log.read_text()
    assert proc.returncode == 0, text
    assert text.count("pairing required: this device waits for approval") == 1
    assert text.count("Approve it on the gateway host with:") == 1
    assert text.count("pairing required (requestId") == 1  # the transport's line, at INFO
    assert set(re.findall(r"requestId ([\w.:-]+)\b", text)) == {rid}
    assert "WARNING openclaw.transport" not in text
