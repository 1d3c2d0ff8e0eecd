"""Auth modes, device tokens (issue, reconnect, rotate, revoke) and auth rate limiting of the
bundled gateway, over real loopback WebSockets."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gateway.config import GatewayConfig
from gateway.server import GatewayServer
from gateway.state import SHARED_TOKEN_FILENAME
from openclaw_desktop.errors import AuthError, ReconnectPaused
from openclaw_desktop.identity import CredentialStore, DeviceIdentity, MemorySecretStore
from openclaw_desktop.identity.gateway_id import gateway_key
from openclaw_desktop.transport import ConnectionState, GatewayConnection
from tests.helpers.bundled_gateway import (
    TOKEN,
    RawClient,
    bundled_gateway,
    operator_options,
    raw_operator,
    run_gateway_cli,
    wait_for,
)

pytestmark = pytest.mark.timeout(60)


# ---------------------------------------------------------------- shared token


async def test_shared_token_is_generated_once_in_a_0600_file_and_reused(tmp_path: Path) -> None:
    """Without a configured token one is generated in a 0600 file, reused on the next start
    and printed by `python -m gateway token`."""
    async with bundled_gateway(tmp_path, token=None) as gw:
        token = gw.config.token
        assert token
        path = tmp_path / SHARED_TOKEN_FILENAME
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert path.read_text().strip() == token
        async with raw_operator(gw.url, auth={"token": token}) as op:
            assert (await op.ok("health"))["ok"] is True
    async with bundled_gateway(tmp_path, token=None) as again:
        assert again.config.token == token
    printed = run_gateway_cli("--state-dir", str(tmp_path), "token")
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.strip() == token


async def test_wrong_shared_token_is_refused_like_the_real_gateway(tmp_path: Path) -> None:
    """A wrong token gets INVALID_REQUEST AUTH_TOKEN_MISMATCH and close 1008."""
    async with bundled_gateway(tmp_path) as gw:
        client = await RawClient.open(gw.url)
        res = await client.connect(DeviceIdentity.generate(), auth={"token": "nope"})
        assert res["ok"] is False
        assert res["error"]["code"] == "INVALID_REQUEST"
        assert res["error"]["details"]["code"] == "AUTH_TOKEN_MISMATCH"
        assert res["error"]["message"].startswith("unauthorized: gateway token mismatch")
        code, _ = await client.wait_closed()
        assert code == 1008


async def test_password_mode(tmp_path: Path) -> None:
    """auth password: the password admits, a wrong one is AUTH_PASSWORD_MISMATCH."""
    async with bundled_gateway(tmp_path, auth_mode="password", password="s3cret") as gw:
        async with raw_operator(gw.url, auth={"password": "s3cret"}) as op:
            assert op.hello is not None
            assert op.hello["snapshot"]["authMode"] == "password"
            assert op.hello["auth"]["method"] == "password"
        bad = await RawClient.open(gw.url)
        res = await bad.connect(DeviceIdentity.generate(), auth={"password": "wrong"})
        assert res["error"]["details"]["code"] == "AUTH_PASSWORD_MISMATCH"
        await bad.close()
        none = await RawClient.open(gw.url)
        res = await none.connect(DeviceIdentity.generate(), auth={"token": TOKEN})
        assert res["ok"] is False
        await none.close()


def test_password_mode_without_a_password_is_refused(tmp_path: Path) -> None:
    """GatewayServer will not start in password mode with no password."""
    config = GatewayConfig(state_dir=tmp_path, port=0, hosts=["127.0.0.1"], auth_mode="password")
    with pytest.raises(ValueError, match="password"):
        GatewayServer(config)


async def test_auth_none_on_loopback_admits_without_credentials(tmp_path: Path) -> None:
    """auth none on loopback: a device connects with no auth at all."""
    async with bundled_gateway(tmp_path, auth_mode="none") as gw:
        client = await RawClient.open(gw.url)
        res = await client.connect(DeviceIdentity.generate(), auth=None)
        assert res["ok"] is True, res
        assert res["payload"]["auth"]["method"] == "none"
        await client.close()


@pytest.mark.parametrize(
    "overrides",
    [
        {"bind": "lan"},
        {"bind": "loopback", "hosts": ["0.0.0.0"]},
        {"bind": "lan", "hosts": ["127.0.0.1", "0.0.0.0"]},
    ],
)
def test_auth_none_off_loopback_is_refused(tmp_path: Path, overrides: dict[str, object]) -> None:
    """GatewayServer refuses auth none unless every listen address is loopback."""
    base: dict[str, object] = {"state_dir": tmp_path, "port": 0, "auth_mode": "none"}
    base.update(overrides)
    if "hosts" not in overrides:
        base["hosts"] = None
    with pytest.raises(ValueError, match="loopback"):
        GatewayServer(GatewayConfig(**base))  # type: ignore[arg-type]


def test_cli_refuses_auth_none_on_lan(tmp_path: Path) -> None:
    """`python -m gateway run --auth none --bind lan` exits 2 without serving."""
    out = run_gateway_cli(
        "--state-dir", str(tmp_path), "run", "--auth", "none", "--bind", "lan", "--port", "0"
    )
    assert out.returncode == 2
    assert "only allowed with --bind loopback" in out.stderr


# ---------------------------------------------------------------- device tokens


async def test_device_token_issued_and_accepted_alone_on_reconnect(tmp_path: Path) -> None:
    """hello-ok.auth.deviceToken is stored by our client; it reconnects with only that token."""
    async with bundled_gateway(tmp_path) as gw:
        creds, ident = CredentialStore(MemorySecretStore()), DeviceIdentity.generate()
        async with GatewayConnection(
            operator_options(gw.url, identity=ident, credentials=creds)
        ) as conn:
            hello = await conn.wait_ready(5)
            assert hello.auth.device_token
            assert hello.auth.method == "token"
        stored = creds.device_token(gateway_key(gw.url), ident.device_id, "operator")
        assert stored is not None and stored.token == hello.auth.device_token
        opts = operator_options(gw.url, identity=ident, credentials=creds, shared_token=None)
        async with GatewayConnection(opts) as conn:
            again = await conn.wait_ready(5)
            assert again.auth.method == "device-token"
            assert again.auth.device_token == stored.token
            assert (await conn.request("health"))["ok"] is True


async def test_device_token_rotate_refuses_old_and_accepts_new(tmp_path: Path) -> None:
    """device.token.rotate by the device itself (on its device token): the new token comes
    back in-band, the old one is refused, the new one works."""
    async with bundled_gateway(tmp_path) as gw:
        ident = DeviceIdentity.generate()
        async with raw_operator(gw.url, ident) as op:
            assert op.hello is not None
            old = op.hello["auth"]["deviceToken"]
        async with raw_operator(gw.url, ident, auth={"deviceToken": old}) as op:
            rotated = await op.ok(
                "device.token.rotate", {"deviceId": ident.device_id, "role": "operator"}
            )
            assert rotated["tokenDelivery"] == "in-band"
        new = rotated["token"]
        assert new and new != old
        assert rotated["deviceId"] == ident.device_id
        refused = await RawClient.open(gw.url)
        res = await refused.connect(ident, auth={"deviceToken": old}, scopes=["operator.read"])
        assert res["ok"] is False
        assert res["error"]["details"]["code"] == "AUTH_DEVICE_TOKEN_MISMATCH"
        await refused.close()
        async with raw_operator(
            gw.url, ident, auth={"deviceToken": new}, scopes=["operator.read"]
        ) as op:
            assert op.hello is not None
            assert op.hello["auth"]["method"] == "device-token"
            assert op.hello["auth"]["deviceToken"] == new


async def test_device_token_revoke_refuses_the_token(tmp_path: Path) -> None:
    """device.token.revoke: the caller gets its answer, then its session (which used the
    token) is closed, and the token is refused (AUTH_DEVICE_TOKEN_MISMATCH)."""
    async with bundled_gateway(tmp_path) as gw:
        ident = DeviceIdentity.generate()
        async with raw_operator(gw.url, ident) as op:
            assert op.hello is not None
            token = op.hello["auth"]["deviceToken"]
            revoked = await op.ok(
                "device.token.revoke", {"deviceId": ident.device_id, "role": "operator"}
            )
            assert revoked["deviceId"] == ident.device_id
            code, _ = await op.wait_closed(5)
            assert code == 4001
        client = await RawClient.open(gw.url)
        res = await client.connect(ident, auth={"deviceToken": token}, scopes=["operator.read"])
        assert res["error"]["details"]["code"] == "AUTH_DEVICE_TOKEN_MISMATCH"
        await client.close()


async def test_revoke_closes_only_that_role_of_that_device(tmp_path: Path) -> None:
    """An admin revoking a device's node token closes its node session, not its operator
    session nor the admin's. (The node connects first: the node role of an already paired
    operator device needs the owner's approval, as on the real gateway, while a paired node
    becomes an operator silently on loopback.)"""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as admin:
        ident = DeviceIdentity.generate()
        node = await RawClient.open(gw.url)
        res = await node.connect(
            ident, role="node", scopes=[], client_id="node-host", client_mode="node"
        )
        assert res["ok"] is True, res
        async with raw_operator(gw.url, ident, scopes=["operator.read"]) as same_device:
            await admin.ok("device.token.revoke", {"deviceId": ident.device_id, "role": "node"})
            code, _ = await node.wait_closed(5)
            assert code == 4001
            await node.close()
            assert (await same_device.ok("health"))["ok"] is True
            assert (await admin.ok("health"))["ok"] is True


async def test_rotate_for_another_device_withholds_the_token(tmp_path: Path) -> None:
    """Rotating another device's token: the token is not returned (withheld-cross-device),
    the device's session is closed and its old token refused."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as admin:
        ident = DeviceIdentity.generate()
        other = await RawClient.open(gw.url)
        hello = await other.connect(ident, scopes=["operator.read"])
        old = hello["payload"]["auth"]["deviceToken"]
        rotated = await admin.ok(
            "device.token.rotate", {"deviceId": ident.device_id, "role": "operator"}
        )
        assert "token" not in rotated
        assert rotated["tokenDelivery"] == "withheld-cross-device"
        assert rotated["scopes"] == ["operator.read"]
        code, _ = await other.wait_closed(5)
        assert code == 4001
        await other.close()
        again = await RawClient.open(gw.url)
        res = await again.connect(ident, auth={"deviceToken": old}, scopes=["operator.read"])
        await again.close()
        assert res["error"]["details"]["code"] == "AUTH_DEVICE_TOKEN_MISMATCH"


async def test_rotate_to_unapproved_scopes_is_denied(tmp_path: Path) -> None:
    """A rotation asking for scopes the device was never approved for is refused."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as admin:
        ident = DeviceIdentity.generate()
        async with raw_operator(gw.url, ident, scopes=["operator.read"]):
            error = await admin.error(
                "device.token.rotate",
                {"deviceId": ident.device_id, "role": "operator", "scopes": ["operator.admin"]},
            )
        assert error == {"code": "INVALID_REQUEST", "message": "device token rotation denied"}


async def test_revoked_device_token_is_cleared_by_our_client(tmp_path: Path) -> None:
    """Our client, reconnecting with only a revoked stored token, is refused and clears it."""
    async with bundled_gateway(tmp_path) as gw:
        creds, ident = CredentialStore(MemorySecretStore()), DeviceIdentity.generate()
        async with GatewayConnection(
            operator_options(gw.url, identity=ident, credentials=creds)
        ) as conn:
            await conn.wait_ready(5)
            await conn.request(
                "device.token.revoke", {"deviceId": ident.device_id, "role": "operator"}
            )
        key = gateway_key(gw.url)
        assert creds.device_token(key, ident.device_id, "operator") is not None
        opts = operator_options(gw.url, identity=ident, credentials=creds, shared_token=None)
        async with GatewayConnection(opts) as conn:
            with pytest.raises(ReconnectPaused) as info:
                await conn.wait_ready(5)
            assert isinstance(info.value.cause, AuthError)
            assert conn.status.state is ConnectionState.PAUSED
        assert creds.device_token(key, ident.device_id, "operator") is None


async def test_device_token_scopes_bound_the_session(tmp_path: Path) -> None:
    """A device token cannot widen the scopes it was issued with (AUTH_SCOPE_MISMATCH);
    within them the session gets exactly what it asks for."""
    async with bundled_gateway(tmp_path) as gw:
        ident = DeviceIdentity.generate()
        async with raw_operator(gw.url, ident, scopes=["operator.read"]) as op:
            assert op.hello is not None
            token = op.hello["auth"]["deviceToken"]
        wider = await RawClient.open(gw.url)
        res = await wider.connect(
            ident, auth={"deviceToken": token}, scopes=["operator.read", "operator.admin"]
        )
        await wider.close()
        assert res["error"]["details"]["code"] == "AUTH_SCOPE_MISMATCH"
        async with raw_operator(
            gw.url, ident, auth={"deviceToken": token}, scopes=["operator.read"]
        ) as op:
            assert op.hello is not None
            assert op.hello["auth"]["scopes"] == ["operator.read"]
            error = await op.error("device.pair.setupCode")
            assert error["code"] == "FORBIDDEN"


# ---------------------------------------------------------------- rate limiting


async def test_repeated_wrong_tokens_are_rate_limited(tmp_path: Path) -> None:
    """After N wrong tokens from one address: AUTH_RATE_LIMITED with retryAfterMs, even for
    the right token, until the lockout ends."""
    async with bundled_gateway(
        tmp_path,
        auth_rate_limit_loopback=True,
        auth_rate_limit_attempts=3,
        auth_rate_limit_lockout_ms=60_000,
    ) as gw:
        ident = DeviceIdentity.generate()
        codes = []
        for _ in range(3):
            client = await RawClient.open(gw.url)
            res = await client.connect(ident, auth={"token": "wrong"})
            codes.append(res["error"]["details"]["code"])
            await client.close()
        assert codes == ["AUTH_TOKEN_MISMATCH"] * 3
        client = await RawClient.open(gw.url)
        res = await client.connect(ident, auth={"token": TOKEN})
        await client.close()
        error = res["error"]
        assert error["details"]["code"] == "AUTH_RATE_LIMITED"
        assert 0 < error["retryAfterMs"] <= 60_000
        assert error["retryable"] is True


async def test_rate_limit_also_covers_connects_without_a_device(tmp_path: Path) -> None:
    """Guessing the shared token without a device identity is rate limited too."""
    async with bundled_gateway(
        tmp_path, auth_rate_limit_loopback=True, auth_rate_limit_attempts=2
    ) as gw:
        details = []
        for _ in range(3):
            client = await RawClient.open(gw.url)
            res = await client.connect(None, auth={"token": "guess"})
            details.append(res["error"]["details"]["code"])
            await client.close()
        assert details[:2] == ["AUTH_TOKEN_MISMATCH"] * 2
        assert details[2] == "AUTH_RATE_LIMITED"


async def test_loopback_is_exempt_from_rate_limiting_by_default(tmp_path: Path) -> None:
    """Without auth_rate_limit_loopback, local clients are never locked out."""
    async with bundled_gateway(tmp_path, auth_rate_limit_attempts=1) as gw:
        ident = DeviceIdentity.generate()
        for _ in range(3):
            client = await RawClient.open(gw.url)
            res = await client.connect(ident, auth={"token": "wrong"})
            assert res["error"]["details"]["code"] == "AUTH_TOKEN_MISMATCH"
            await client.close()
        async with raw_operator(gw.url, ident) as op:
            assert (await op.ok("health"))["ok"] is True


async def test_our_client_pauses_on_rate_limit(tmp_path: Path) -> None:
    """Our client reports AUTH_RATE_LIMITED as a pause with the retry delay."""
    async with bundled_gateway(
        tmp_path, auth_rate_limit_loopback=True, auth_rate_limit_attempts=1
    ) as gw:
        bad = await RawClient.open(gw.url)
        await bad.connect(DeviceIdentity.generate(), auth={"token": "wrong"})
        await bad.close()
        async with GatewayConnection(operator_options(gw.url)) as conn:
            await wait_for(lambda: conn.status.state is ConnectionState.PAUSED, 5)
            error = conn.status.error
            assert isinstance(error, AuthError)
            assert error.detail_code == "AUTH_RATE_LIMITED"


async def test_device_management_needs_admin_beyond_own_operator_tokens(tmp_path: Path) -> None:
    """Without operator.admin: approving a node-role pairing request is denied, and a session
    on its device token cannot revoke another device's token nor a node token."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        pairer = await RawClient.open(gw.url)
        assert (await pairer.connect(None, scopes=["operator.pairing"]))["ok"]
        node = await RawClient.open(gw.url)
        res = await node.connect(
            DeviceIdentity.generate(),
            role="node",
            scopes=[],
            client_id="node-host",
            client_mode="node",
        )
        await node.close()
        request_id = res["error"]["details"]["requestId"]
        error = await pairer.error("device.pair.approve", {"requestId": request_id})
        assert error == {"code": "INVALID_REQUEST", "message": "device pairing approval denied"}
        admin = await RawClient.open(gw.url)
        assert (await admin.connect(None, scopes=["operator.admin"]))["ok"]
        await admin.ok("device.pair.approve", {"requestId": request_id})
        # A paired, non-admin device on its own device token.
        ident, victim = DeviceIdentity.generate(), DeviceIdentity.generate()
        for device in (ident, victim):
            probe = await RawClient.open(gw.url)
            refused = await probe.connect(device, scopes=["operator.pairing"])
            await probe.close()
            rid = refused["error"]["details"]["requestId"]
            await admin.ok("device.pair.approve", {"requestId": rid})
        first = await RawClient.open(gw.url)
        token = (await first.connect(ident, scopes=["operator.pairing"]))["payload"]["auth"]
        await first.close()
        async with raw_operator(
            gw.url, ident, scopes=["operator.pairing"], auth={"deviceToken": token["deviceToken"]}
        ) as own:
            error = await own.error(
                "device.token.revoke", {"deviceId": victim.device_id, "role": "operator"}
            )
            assert error["message"] == "device token revocation denied"
            error = await own.error(
                "device.token.rotate", {"deviceId": ident.device_id, "role": "node"}
            )
            assert error["message"] == "device token rotation denied"
        await admin.close()
        await pairer.close()
