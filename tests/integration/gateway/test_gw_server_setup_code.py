"""Setup codes end to end: minted by device.pair.setupCode, decoded by our discovery code,
redeemed once by a node with auth.bootstrapToken, refused for a second device or when expired."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from gateway.hub import now_ms
from openclaw_desktop.discovery import decode_setup_code
from openclaw_desktop.identity import CredentialStore, DeviceIdentity, MemorySecretStore
from openclaw_desktop.identity.gateway_id import gateway_key
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.bundled_gateway import (
    RawClient,
    bundled_gateway,
    operator_options,
    raw_operator,
    start_node,
    wait_for,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

#: The full-access hand-off operator scopes (observed on the real gateway 2026.9.6).
HANDOFF_SCOPES = [
    "operator.admin",
    "operator.approvals",
    "operator.questions",
    "operator.read",
    "operator.talk.secrets",
    "operator.write",
]
#: Limited access: the same without operator.admin.
LIMITED_SCOPES = [scope for scope in HANDOFF_SCOPES if scope != "operator.admin"]


async def _mint(url: str, **params: object) -> dict[str, object]:
    async with raw_operator(url) as op:
        result: dict[str, object] = await op.ok("device.pair.setupCode", params or None)
        return result


async def test_setup_code_needs_operator_admin(tmp_path: Path) -> None:
    """Without operator.admin: FORBIDDEN MISSING_SCOPE operator.admin."""
    async with (
        bundled_gateway(tmp_path) as gw,
        raw_operator(gw.url, scopes=["operator.read", "operator.write", "operator.pairing"]) as op,
    ):
        error = await op.error("device.pair.setupCode")
        assert error["code"] == "FORBIDDEN"
        assert error["details"]["code"] == "MISSING_SCOPE"
        assert error["details"]["missingScope"] == "operator.admin"


async def test_setup_code_shape_and_decoding(tmp_path: Path) -> None:
    """setupCode/qrDataUrl/expiresAtMs come back and the code decodes to this gateway."""
    async with bundled_gateway(tmp_path) as gw:
        minted = await _mint(gw.url)
        assert isinstance(minted["setupCode"], str)
        assert isinstance(minted["qrDataUrl"], str)
        assert minted["qrDataUrl"].startswith("data:image/png;base64,")
        png = base64.b64decode(minted["qrDataUrl"].split(",", 1)[1])
        assert png.startswith(b"\x89PNG")
        expires = minted["expiresAtMs"]
        assert isinstance(expires, int)
        assert 9 * 60_000 < expires - now_ms() <= 10 * 60_000
        code = decode_setup_code(minted["setupCode"])
        assert code.url == gw.url
        assert code.bootstrap_token
        assert code.expires_at_ms == expires
        assert code.tls_fingerprint is None


async def test_bootstrap_node_gets_node_and_operator_tokens(tmp_path: Path) -> None:
    """With manual pairing, a node presenting the bootstrap token is approved, gets a node
    deviceToken and one operator hand-off token with the full scope list; that works."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        minted = await _mint_with_manual_pairing(gw.url)
        code = decode_setup_code(str(minted["setupCode"]))
        phone = DeviceIdentity.generate()
        node = await RawClient.open(gw.url)
        res = await node.connect(
            phone,
            role="node",
            scopes=[],
            client_id="openclaw-android",
            client_mode="node",
            platform="android",
            device_family=None,
            min_protocol=3,
            auth={"bootstrapToken": code.bootstrap_token},
            commands=["device.info"],
        )
        await node.close()
        assert res["ok"] is True, res
        auth = res["payload"]["auth"]
        assert auth["method"] == "bootstrap-token"
        assert auth["role"] == "node"
        assert auth["deviceToken"]
        assert len(auth["deviceTokens"]) == 1
        handoff = auth["deviceTokens"][0]
        assert handoff["role"] == "operator"
        assert sorted(handoff["scopes"]) == HANDOFF_SCOPES
        operator = await RawClient.open(gw.url)
        res = await operator.connect(
            phone,
            auth={"deviceToken": handoff["deviceToken"]},
            scopes=HANDOFF_SCOPES,
            client_id="openclaw-android",
            client_mode="ui",
            platform="android",
            device_family=None,
        )
        assert res["ok"] is True, res
        assert sorted(res["payload"]["auth"]["scopes"]) == HANDOFF_SCOPES
        assert (await operator.ok("node.list"))["nodes"][0]["nodeId"] == phone.device_id
        await operator.close()
        admin = await RawClient.open(gw.url)
        assert (await admin.connect(None, scopes=["operator.admin"]))["ok"]
        status = await admin.ok("device.pair.setupStatus", {"setupId": minted["setupId"]})
        await admin.close()
        completion = status["completion"]
        assert completion["setupId"] == minted["setupId"]
        assert completion["deviceId"] == phone.device_id
        assert completion["access"] == "full"


async def _mint_with_manual_pairing(url: str) -> dict[str, object]:
    """Mint on a manual-pairing gateway: the operator connects without a device (loopback
    shared token), which needs no pairing."""
    client = await RawClient.open(url)
    try:
        res = await client.connect(None, scopes=["operator.admin"])
        assert res["ok"] is True, res
        result: dict[str, object] = await client.ok("device.pair.setupCode")
        return result
    finally:
        await client.close()


async def test_bootstrap_token_is_single_use(tmp_path: Path) -> None:
    """A second device presenting the same bootstrap token gets AUTH_BOOTSTRAP_TOKEN_INVALID."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        code = decode_setup_code(str((await _mint_with_manual_pairing(gw.url))["setupCode"]))
        first = await RawClient.open(gw.url)
        res = await first.connect(
            DeviceIdentity.generate(),
            role="node",
            scopes=[],
            client_id="node-host",
            client_mode="node",
            auth={"bootstrapToken": code.bootstrap_token},
        )
        await first.close()
        assert res["ok"] is True, res
        second = await RawClient.open(gw.url)
        res = await second.connect(
            DeviceIdentity.generate(),
            role="node",
            scopes=[],
            client_id="node-host",
            client_mode="node",
            auth={"bootstrapToken": code.bootstrap_token},
        )
        assert res["ok"] is False
        assert res["error"]["details"]["code"] == "AUTH_BOOTSTRAP_TOKEN_INVALID"
        code_, _ = await second.wait_closed()
        assert code_ == 1008


async def test_expired_bootstrap_token_is_refused(tmp_path: Path) -> None:
    """A bootstrap token past its expiry is refused (AUTH_BOOTSTRAP_TOKEN_INVALID)."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        token, _record = gw.state.bootstrap.mint(now_ms() - 20 * 60_000)
        client = await RawClient.open(gw.url)
        res = await client.connect(
            DeviceIdentity.generate(),
            role="node",
            scopes=[],
            client_id="node-host",
            client_mode="node",
            auth={"bootstrapToken": token},
        )
        await client.close()
        assert res["ok"] is False
        assert res["error"]["details"]["code"] == "AUTH_BOOTSTRAP_TOKEN_INVALID"


async def test_our_client_redeems_a_setup_code_and_reuses_the_handoff_token(
    tmp_path: Path,
) -> None:
    """Our node connects with only the bootstrap token, stores both tokens, and our operator
    then connects with only the stored operator token."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        code = decode_setup_code(str((await _mint_with_manual_pairing(gw.url))["setupCode"]))
        creds, ident = CredentialStore(MemorySecretStore()), DeviceIdentity.generate()
        node = start_node(
            gw.url,
            identity=ident,
            credentials=creds,
            shared_token=None,
            bootstrap_token=code.bootstrap_token,
        )
        try:
            hello = await node.connection.wait_ready(10)
            assert hello.auth.method == "bootstrap-token"
            key = gateway_key(gw.url)
            await wait_for(lambda: creds.device_token(key, ident.device_id, "operator"), 5)
            assert creds.device_token(key, ident.device_id, "node") is not None
            opts = operator_options(
                gw.url,
                identity=ident,
                credentials=creds,
                shared_token=None,
                scopes=HANDOFF_SCOPES,
            )
            async with GatewayConnection(opts) as operator:
                op_hello = await operator.wait_ready(10)
                assert op_hello.auth.method == "device-token"
                nodes = await operator.request("node.list")
                assert [n["nodeId"] for n in nodes["nodes"]] == [ident.device_id]
        finally:
            await node.aclose()


# ------------------------------------------------------------ the bootstrap profile
#: What the real gateway (2026.9.6) answers a setup-code connect outside the code's profile.
SETUP_CODE_REJECTED = (
    "unauthorized: setup code invalid, expired, revoked, or already used "
    "(create a new code; review `openclaw devices list`)"
)
SETUP_CODE_REJECTED_DETAILS = {
    "code": "AUTH_BOOTSTRAP_TOKEN_INVALID",
    "authReason": "bootstrap_token_invalid",
    "canRetryWithDeviceToken": False,
    "recommendedNextStep": "review_auth_configuration",
}


async def _limited_code(url: str) -> str:
    client = await RawClient.open(url)
    try:
        assert (await client.connect(None, scopes=["operator.admin"]))["ok"]
        minted = await client.ok("device.pair.setupCode", {"access": "limited"})
        assert minted["access"] == "limited"
        token = decode_setup_code(str(minted["setupCode"])).bootstrap_token
        assert token is not None
        return token
    finally:
        await client.close()


async def _bootstrap_connect(
    url: str, identity: DeviceIdentity, token: str, **kw: Any
) -> tuple[dict[str, Any], tuple[int | None, str | None] | None]:
    """One setup-code connect: the ``res`` and, for a refusal, the close."""
    client = await RawClient.open(url)
    try:
        res = await client.connect(identity, auth={"bootstrapToken": token}, **kw)
        closed = None if res["ok"] else await client.wait_closed()
        return res, closed
    finally:
        await client.close()


_PHONE: dict[str, Any] = {
    "role": "node",
    "scopes": [],
    "client_id": "openclaw-android",
    "client_mode": "node",
    "platform": "android",
    "device_family": "Android",
    "min_protocol": 3,
}


async def test_limited_setup_code_never_grants_admin_or_pairing(tmp_path: Path) -> None:
    """A limited code hands off an operator token without operator.admin/operator.pairing,
    and that token cannot be used for them."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        token = await _limited_code(gw.url)
        phone = DeviceIdentity.generate()
        res, _ = await _bootstrap_connect(gw.url, phone, token, **_PHONE)
        assert res["ok"] is True, res
        auth = res["payload"]["auth"]
        assert (auth["role"], auth["scopes"]) == ("node", [])
        [handoff] = auth["deviceTokens"]
        assert handoff["role"] == "operator"
        assert sorted(handoff["scopes"]) == LIMITED_SCOPES
        record = gw.state.devices.get(phone.device_id)
        assert record is not None
        assert not {"operator.admin", "operator.pairing"} & set(record.scopes)
        for wider in (
            ["operator.admin"],
            ["operator.pairing"],
            ["operator.read", "operator.admin"],
        ):
            operator = await RawClient.open(gw.url)
            res = await operator.connect(
                phone,
                auth={"deviceToken": handoff["deviceToken"]},
                scopes=wider,
                client_id="openclaw-android",
                client_mode="ui",
                platform="android",
                device_family="Android",
            )
            await operator.close()
            assert res["ok"] is False, (wider, res)
            assert res["error"]["details"]["code"] == "AUTH_SCOPE_MISMATCH"


async def test_setup_code_connect_outside_its_profile_is_refused(tmp_path: Path) -> None:
    """Asking a limited code for operator.admin or operator.pairing (or a node for operator
    scopes) gets the real gateway's AUTH_BOOTSTRAP_TOKEN_INVALID, and does not use the code
    up: another device can still redeem it."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        token = await _limited_code(gw.url)
        greedy = DeviceIdentity.generate()
        asks: list[dict[str, Any]] = [
            {"scopes": ["operator.admin", "operator.pairing"]},
            {"scopes": ["operator.pairing"]},
            {"scopes": ["operator.admin"]},
            {"scopes": ["operator.read", "operator.pairing"]},
            {**_PHONE, "scopes": ["operator.admin"]},
        ]
        for ask in asks:
            res, closed = await _bootstrap_connect(gw.url, greedy, token, **ask)
            assert res["ok"] is False, (ask, res)
            error = res["error"]
            assert error["code"] == "INVALID_REQUEST"
            assert error["message"] == SETUP_CODE_REJECTED
            assert error["details"] == SETUP_CODE_REJECTED_DETAILS
            assert closed == (1008, SETUP_CODE_REJECTED)
        assert gw.state.devices.get(greedy.device_id) is None
        phone = DeviceIdentity.generate()
        res, _ = await _bootstrap_connect(gw.url, phone, token, **_PHONE)
        assert res["ok"] is True, res
        [handoff] = res["payload"]["auth"]["deviceTokens"]
        assert sorted(handoff["scopes"]) == LIMITED_SCOPES


async def test_setup_code_operator_connect_cannot_widen_scopes(tmp_path: Path) -> None:
    """An operator setup-code connect within the profile gets exactly what it asked for, no
    hand-off tokens, and its token never covers more; the code is then used up."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        token = await _limited_code(gw.url)
        operator = DeviceIdentity.generate()
        asked = ["operator.read", "operator.write"]
        res, _ = await _bootstrap_connect(gw.url, operator, token, scopes=asked)
        assert res["ok"] is True, res
        auth = res["payload"]["auth"]
        assert (auth["method"], auth["role"], auth["scopes"]) == (
            "bootstrap-token",
            "operator",
            asked,
        )
        assert "deviceTokens" not in auth
        assert gw.state.tokens.scopes(operator.device_id, "operator") == tuple(asked)
        client = await RawClient.open(gw.url)
        res = await client.connect(
            operator, auth={"token": auth["deviceToken"]}, scopes=[*asked, "operator.admin"]
        )
        await client.close()
        assert res["ok"] is False
        assert res["error"]["details"]["code"] == "AUTH_SCOPE_MISMATCH"
        res, _ = await _bootstrap_connect(gw.url, operator, token, scopes=asked)
        assert res["ok"] is False
        assert res["error"]["details"] == SETUP_CODE_REJECTED_DETAILS


async def test_node_setup_code_is_for_the_node_role_only(tmp_path: Path) -> None:
    """A node-only code refuses an operator connect and hands a node no operator token."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        token, _record = gw.state.bootstrap.mint(now_ms(), access="node")
        device = DeviceIdentity.generate()
        res, _ = await _bootstrap_connect(gw.url, device, token, scopes=["operator.read"])
        assert res["ok"] is False
        assert res["error"]["details"] == SETUP_CODE_REJECTED_DETAILS
        res, _ = await _bootstrap_connect(
            gw.url, device, token, role="node", scopes=[], client_id="node-host", client_mode="node"
        )
        assert res["ok"] is True, res
        assert "deviceTokens" not in res["payload"]["auth"]
        assert gw.state.tokens.get(device.device_id, "operator") is None
