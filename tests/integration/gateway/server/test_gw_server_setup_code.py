"""Setup codes end to end: minted by device.pair.setupCode, decoded by our discovery code,
redeemed with auth.bootstrapToken, refused for a second device or when expired.

As on the real gateway 2026.9.6 (checked side by side in
``tests/interop/test_gw_rejections_side_by_side.py``): only the client a code's profile is
meant for is approved silently and handed the code's other roles (the official Android/iOS
app for full/limited codes, ``node-host`` for node codes, ``node-host`` on an ESP32 for
voice-node codes); any other client redeeming a code goes through normal pairing. A code is
used up by that hand-off, or once its connects covered every role of its profile.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from gateway.hub import now_ms
from gateway.server import GatewayServer
from openclaw_desktop.discovery import decode_setup_code
from openclaw_desktop.identity import CredentialStore, DeviceIdentity, MemorySecretStore
from openclaw_desktop.identity.gateway_id import gateway_key
from tests.helpers.bundled_gateway import (
    ANDROID_PHONE,
    RawClient,
    bundled_gateway,
    raw_operator,
    start_node,
    wait_for,
)

pytestmark = pytest.mark.timeout(60)

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
    """With manual pairing, the Android app's node presenting the bootstrap token is approved,
    gets a node deviceToken and one operator hand-off token with the full scope list; that
    works. (The phone sends ``deviceFamily: Android``: the real gateway hands off silently
    only when the app's platform and device family agree.)"""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        minted = await _mint_with_manual_pairing(gw.url)
        code = decode_setup_code(str(minted["setupCode"]))
        phone = DeviceIdentity.generate()
        node = await RawClient.open(gw.url)
        res = await node.connect(
            phone,
            auth={"bootstrapToken": code.bootstrap_token},
            **ANDROID_PHONE,
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
            device_family="Android",
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
    """After the phone hand-off, the code is used up: the same phone and a second device
    presenting it get AUTH_BOOTSTRAP_TOKEN_INVALID (close 1008). (A node-host redeeming a
    full code is no hand-off since the real gateway's rules: see the pairing tests below.)"""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        code = decode_setup_code(str((await _mint_with_manual_pairing(gw.url))["setupCode"]))
        assert code.bootstrap_token is not None
        phone = DeviceIdentity.generate()
        res, _ = await _bootstrap_connect(gw.url, phone, code.bootstrap_token, **_PHONE)
        assert res["ok"] is True, res
        for device in (phone, DeviceIdentity.generate()):
            res, closed = await _bootstrap_connect(gw.url, device, code.bootstrap_token, **_PHONE)
            assert res["ok"] is False
            assert res["error"]["details"]["code"] == "AUTH_BOOTSTRAP_TOKEN_INVALID"
            assert closed is not None and closed[0] == 1008


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


async def test_our_client_redeems_a_setup_code_through_pairing(tmp_path: Path) -> None:
    """Our node (client ``openclaw-linux``) connects with only the bootstrap token: as on the
    real gateway it is no hand-off client, so it waits for approval (NOT_PAIRED, wait and
    retry), then connects with the code, stores its node token and gets no operator token.
    A node connect alone does not use up a node + operator code."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        minted = await _mint_with_manual_pairing(gw.url)
        code = decode_setup_code(str(minted["setupCode"]))
        creds, ident = CredentialStore(MemorySecretStore()), DeviceIdentity.generate()
        node = start_node(
            gw.url,
            identity=ident,
            credentials=creds,
            shared_token=None,
            bootstrap_token=code.bootstrap_token,
        )
        try:
            await wait_for(lambda: gw.state.pairing.list_pending(now_ms()), 10)
            [request] = gw.state.pairing.list_pending(now_ms())
            assert (request.device_id, request.role) == (ident.device_id, "node")
            gw.app.pairing.approve(request.request_id, approved_via="owner")
            hello = await node.connection.wait_ready(15)
            assert hello.auth.method == "bootstrap-token"
            key = gateway_key(gw.url)
            await wait_for(lambda: creds.device_token(key, ident.device_id, "node"), 5)
            assert creds.device_token(key, ident.device_id, "operator") is None
            assert gw.state.tokens.get(ident.device_id, "operator") is None
        finally:
            await node.aclose()
        admin = await RawClient.open(gw.url)
        try:
            assert (await admin.connect(None, scopes=["operator.admin"]))["ok"]
            status = await admin.ok("device.pair.setupStatus", {"setupId": minted["setupId"]})
        finally:
            await admin.close()
        assert status == {}


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
        minted = await client.ok("device.pair.setupCode", {"bootstrapProfile": "limited"})
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


#: The Android app's connect without a command surface.
_PHONE: dict[str, Any] = {k: v for k, v in ANDROID_PHONE.items() if k != "commands"}


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
    """An operator redeeming a code goes through pairing; once approved, its setup-code
    connect gets exactly what it asked for, no hand-off tokens, and its token never covers
    more. The operator-only connects do not use the code up (as the real gateway): the
    device can present it again."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        token = await _limited_code(gw.url)
        operator = DeviceIdentity.generate()
        asked = ["operator.read", "operator.write"]
        res, _ = await _bootstrap_connect(gw.url, operator, token, scopes=asked)
        assert res["ok"] is False
        assert res["error"]["details"]["code"] == "PAIRING_REQUIRED"
        assert "recommendedNextStep" not in res["error"]["details"]
        gw.app.pairing.approve(res["error"]["details"]["requestId"], approved_via="owner")
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
        assert res["ok"] is True, res
        assert res["payload"]["auth"]["method"] == "bootstrap-token"


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


# ------------------------------------------------------------ profiles, approval, use-up
async def _mint_profile(url: str, **params: Any) -> tuple[str, dict[str, Any]]:
    """Mint over a deviceless loopback admin connection: the bootstrap token and result."""
    client = await RawClient.open(url)
    try:
        assert (await client.connect(None, scopes=["operator.admin"]))["ok"]
        minted: dict[str, Any] = await client.ok("device.pair.setupCode", params)
    finally:
        await client.close()
    token = decode_setup_code(str(minted["setupCode"])).bootstrap_token
    assert token is not None
    return token, minted


async def _setup_status(url: str, setup_id: str) -> dict[str, Any]:
    client = await RawClient.open(url)
    try:
        assert (await client.connect(None, scopes=["operator.admin"]))["ok"]
        status: dict[str, Any] = await client.ok("device.pair.setupStatus", {"setupId": setup_id})
        return status
    finally:
        await client.close()


_NODE_HOST: dict[str, Any] = {
    "role": "node",
    "scopes": [],
    "client_id": "node-host",
    "client_mode": "node",
}
_ESP32: dict[str, Any] = {**_NODE_HOST, "platform": "esp32", "device_family": "esp32"}
_IPHONE: dict[str, Any] = {
    **_PHONE,
    "client_id": "openclaw-ios",
    "platform": "iOS 18.1",
    "device_family": "iPhone",
}


async def test_setup_code_params_are_the_real_gateways(tmp_path: Path) -> None:
    """``bootstrapProfile`` limited/node/voice-node (access limited/node/limited), none for
    full access (what the desktop app sends: ``{}``); ``includeQr: false``; a closed schema:
    the old ``access`` param and unknown profiles are refused with the real texts."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        for params, access in (
            ({}, "full"),
            (None, "full"),
            ({"bootstrapProfile": "limited"}, "limited"),
            ({"bootstrapProfile": "node"}, "node"),
            ({"bootstrapProfile": "voice-node"}, "limited"),
        ):
            minted = await op.ok("device.pair.setupCode", params)
            assert (minted["access"], minted["auth"]) == (access, "token"), params
            assert minted["urlSource"] == "loopback"
            assert "accessDowngraded" not in minted
            assert minted["qrDataUrl"].startswith("data:image/png;base64,")
        minted = await op.ok("device.pair.setupCode", {"includeQr": False})
        assert "qrDataUrl" not in minted
        minted = await op.ok(
            "device.pair.setupCode", {"publicUrl": "http://192.168.1.5:18789", "includeQr": False}
        )
        assert (minted["gatewayUrl"], minted["urlSource"]) == (
            "ws://192.168.1.5:18789",
            "request.publicUrl",
        )
        assert (minted["access"], minted["accessDowngraded"]) == ("limited", True)
        assert decode_setup_code(minted["setupCode"]).url == "ws://192.168.1.5:18789"
        prefix = "invalid device.pair.setupCode params: "
        for params, message in (
            ({"access": "limited"}, prefix + "at root: unexpected property 'access'"),
            (
                {"bootstrapProfile": "full"},
                prefix + "at /bootstrapProfile: must be equal to one of the allowed values",
            ),
            (
                {"bootstrapProfile": 5},
                prefix + "at /bootstrapProfile: must be string; "
                "at /bootstrapProfile: must be equal to one of the allowed values",
            ),
            ([], prefix + "must be object"),
            (
                {"joinUrl": True, "bootstrapProfile": "limited"},
                "Join URLs require bootstrapProfile=node.",
            ),
            ({"publicUrl": "ws://user:pw@gw.example"}, "Configured publicUrl is invalid."),
        ):
            error = await op.error("device.pair.setupCode", params)
            assert (error["code"], error["message"]) == ("INVALID_REQUEST", message), params


@pytest.mark.parametrize(
    ("profile", "client", "handoff_scopes"),
    [
        (None, _PHONE, HANDOFF_SCOPES),
        (None, _IPHONE, HANDOFF_SCOPES),
        ("limited", _IPHONE, LIMITED_SCOPES),
        ("node", _NODE_HOST, None),
        ("voice-node", _ESP32, ["operator.read", "operator.talk"]),
    ],
    ids=["full-android", "full-ios", "limited-ios", "node-node-host", "voice-node-esp32"],
)
async def test_each_profile_hands_off_silently_to_its_client(
    tmp_path: Path, profile: str | None, client: dict[str, Any], handoff_scopes: list[str] | None
) -> None:
    """Under manual pairing, the client a profile is meant for is approved at once and
    handed the code's other roles; the code is then used up (setupStatus: completion)."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        params = {} if profile is None else {"bootstrapProfile": profile}
        token, minted = await _mint_profile(gw.url, **params)
        device = DeviceIdentity.generate()
        res, _ = await _bootstrap_connect(gw.url, device, token, **client)
        assert res["ok"] is True, res
        auth = res["payload"]["auth"]
        assert (auth["method"], auth["role"], auth["scopes"]) == ("bootstrap-token", "node", [])
        if handoff_scopes is None:
            assert "deviceTokens" not in auth
        else:
            [handoff] = auth["deviceTokens"]
            assert (handoff["role"], sorted(handoff["scopes"])) == ("operator", handoff_scopes)
        record = gw.state.devices.get(device.device_id)
        assert record is not None and "node" in record.roles
        status = await _setup_status(gw.url, str(minted["setupId"]))
        completion = status.get("completion") or status["deliveryUncertain"]
        assert completion["deviceId"] == device.device_id
        assert completion["access"] == minted["access"]
        res, _ = await _bootstrap_connect(gw.url, device, token, **client)
        assert res["error"]["details"] == SETUP_CODE_REJECTED_DETAILS


@pytest.mark.parametrize(
    ("profile", "client"),
    [
        (None, {**_PHONE, "device_family": None}),
        (None, {**_PHONE, "platform": "ios"}),
        (None, _NODE_HOST),
        (None, {**_PHONE, "client_id": "openclaw-linux", "platform": "linux"}),
        ("node", _PHONE),
        ("voice-node", _NODE_HOST),
        ("voice-node", _PHONE),
    ],
    ids=[
        "android-without-family",
        "android-claiming-ios",
        "node-host-full",
        "desktop-node-full",
        "phone-node-code",
        "node-host-voice-code",
        "phone-voice-code",
    ],
)
async def test_other_clients_go_through_pairing(
    tmp_path: Path, profile: str | None, client: dict[str, Any]
) -> None:
    """Any other client redeeming a code is not approved silently: NOT_PAIRED /
    PAIRING_REQUIRED, told to wait and retry (a new device's node connect); after approval
    it connects with the code and gets no hand-off tokens."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        params = {} if profile is None else {"bootstrapProfile": profile}
        token, _minted = await _mint_profile(gw.url, **params)
        device = DeviceIdentity.generate()
        res, closed = await _bootstrap_connect(gw.url, device, token, **client)
        assert res["ok"] is False, res
        assert res["error"]["code"] == "NOT_PAIRED"
        details = res["error"]["details"]
        assert (details["code"], details["reason"]) == ("PAIRING_REQUIRED", "not-paired")
        assert (details["recommendedNextStep"], details["retryable"]) == ("wait_then_retry", True)
        assert details["pauseReconnect"] is False
        assert closed is not None and closed[0] == 1008
        assert gw.state.devices.get(device.device_id) is None
        gw.app.pairing.approve(details["requestId"], approved_via="owner")
        res, _ = await _bootstrap_connect(gw.url, device, token, **client)
        assert res["ok"] is True, res
        assert res["payload"]["auth"]["method"] == "bootstrap-token"
        assert "deviceTokens" not in res["payload"]["auth"]
        assert gw.state.tokens.get(device.device_id, "operator") is None


async def test_loopback_auto_approval_still_applies_to_other_clients(tmp_path: Path) -> None:
    """With loopback auto-approval (the default), a non-hand-off client redeeming a code on
    this machine is approved like any local device (the real gateway does the same), but
    gets no hand-off tokens."""
    async with bundled_gateway(tmp_path) as gw:
        token, _minted = await _mint_profile(gw.url)
        device = DeviceIdentity.generate()
        res, _ = await _bootstrap_connect(gw.url, device, token, **_NODE_HOST)
        assert res["ok"] is True, res
        assert "deviceTokens" not in res["payload"]["auth"]
        record = gw.state.devices.get(device.device_id)
        assert record is not None and record.roles == ("node",)


async def _connect_approving(
    gw: GatewayServer, device: DeviceIdentity, token: str, **kw: Any
) -> dict[str, Any]:
    """A setup-code connect; if it needs approval, the owner approves and it is repeated."""
    res, _ = await _bootstrap_connect(gw.url, device, token, **kw)
    if not res["ok"]:
        request_id = res["error"]["details"]["requestId"]
        gw.app.pairing.approve(request_id, approved_via="owner")
        res, _ = await _bootstrap_connect(gw.url, device, token, **kw)
    assert res["ok"] is True, (kw, res)
    return res


async def test_operator_only_connects_do_not_use_up_a_code(tmp_path: Path) -> None:
    """As the real gateway: a node + operator code stays redeemable (by the device it is
    bound to) after operator connects; once the device also connected as a node and its
    operator connects covered the profile's scopes, it is used up.

    The widening steps need the owner even with loopback auto-approval (observed on the
    real gateway 2026.9.6): a scope upgrade on a setup code (only shared-secret connects are
    upgraded silently), and the node role of a paired operator device (never silent)."""
    async with bundled_gateway(tmp_path) as gw:
        token, minted = await _mint_profile(gw.url)
        setup_id = str(minted["setupId"])
        device = DeviceIdentity.generate()

        for scopes in (["operator.read"], ["operator.read"]):
            res, _ = await _bootstrap_connect(gw.url, device, token, scopes=scopes)
            assert res["ok"] is True, (scopes, res)
            assert res["payload"]["auth"]["method"] == "bootstrap-token"
            assert await _setup_status(gw.url, setup_id) == {}
        upgrade, _ = await _bootstrap_connect(gw.url, device, token, scopes=["operator.admin"])
        assert upgrade["error"]["details"]["reason"] == "scope-upgrade"
        res = await _connect_approving(gw, device, token, scopes=["operator.admin"])
        assert res["payload"]["auth"]["method"] == "bootstrap-token"
        assert await _setup_status(gw.url, setup_id) == {}
        other, _ = await _bootstrap_connect(gw.url, DeviceIdentity.generate(), token)
        assert other["error"]["details"] == SETUP_CODE_REJECTED_DETAILS  # bound to the first
        node, _ = await _bootstrap_connect(gw.url, device, token, **_NODE_HOST)
        assert node["error"]["details"]["reason"] == "role-upgrade"
        res = await _connect_approving(gw, device, token, **_NODE_HOST)
        assert "deviceTokens" not in res["payload"]["auth"]
        status = await _setup_status(gw.url, setup_id)
        assert (status.get("completion") or status["deliveryUncertain"])["access"] == "full"
        res, _ = await _bootstrap_connect(gw.url, device, token, scopes=["operator.read"])
        assert res["error"]["details"] == SETUP_CODE_REJECTED_DETAILS


async def test_operator_leg_below_the_profile_leaves_the_code_usable(tmp_path: Path) -> None:
    """Operator connects that asked for less than the profile's operator scopes plus a node
    connect do not cover the profile: the code is not used up. (The node role of the paired
    operator needs the owner, as on the real gateway, even with loopback auto-approval.)"""
    async with bundled_gateway(tmp_path) as gw:
        token, minted = await _mint_profile(gw.url, bootstrapProfile="limited")
        device = DeviceIdentity.generate()
        for kw in ({"scopes": ["operator.read"]}, _NODE_HOST, {"scopes": ["operator.read"]}):
            await _connect_approving(gw, device, token, **kw)
        assert await _setup_status(gw.url, str(minted["setupId"])) == {}


async def test_a_pending_redemption_must_ask_for_the_same_again(tmp_path: Path) -> None:
    """While the bound device awaits approval, a setup-code connect asking for another role
    or other scopes is refused like a bad code (the real gateway's pending profile); asking
    for the same again is not. After the approved connect it may ask for something else."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        token, _minted = await _mint_profile(gw.url)
        device = DeviceIdentity.generate()
        first, _ = await _bootstrap_connect(gw.url, device, token, scopes=["operator.read"])
        assert first["error"]["details"]["code"] == "PAIRING_REQUIRED"
        for kw in (_NODE_HOST, {"scopes": ["operator.write"]}, {"scopes": []}):
            res, _ = await _bootstrap_connect(gw.url, device, token, **kw)
            assert res["error"]["details"] == SETUP_CODE_REJECTED_DETAILS, kw
        again, _ = await _bootstrap_connect(gw.url, device, token, scopes=["operator.read"])
        assert again["error"]["details"]["requestId"] == first["error"]["details"]["requestId"]
        gw.app.pairing.approve(first["error"]["details"]["requestId"], approved_via="owner")
        res, _ = await _bootstrap_connect(gw.url, device, token, scopes=["operator.read"])
        assert res["ok"] is True, res
        res, _ = await _bootstrap_connect(gw.url, device, token, **_NODE_HOST)
        assert res["error"]["details"]["reason"] == "role-upgrade"  # now a pairing question


async def test_voice_node_code_allows_only_read_and_talk(tmp_path: Path) -> None:
    """A voice-node code refuses operator scopes beyond read and talk like a bad code."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        token, _minted = await _mint_profile(gw.url, bootstrapProfile="voice-node")
        device = DeviceIdentity.generate()
        for scopes in (["operator.write"], ["operator.talk.secrets"], ["operator.admin"]):
            res, _ = await _bootstrap_connect(gw.url, device, token, scopes=scopes)
            assert res["error"]["details"] == SETUP_CODE_REJECTED_DETAILS, scopes
        res, _ = await _bootstrap_connect(
            gw.url, device, token, scopes=["operator.read", "operator.talk"]
        )
        assert res["error"]["details"]["code"] == "PAIRING_REQUIRED"


# ------------------------------------------------------------ a restart mid-setup
async def test_voice_node_code_minted_before_a_restart_hands_off_after_it(
    tmp_path: Path,
) -> None:
    """The voice-node profile is stored: after a restart the ESP32 node still gets its
    operator.read/operator.talk token (it used to be narrowed to a plain node code), and
    setupStatus still reports the voice setup as limited access."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        token, minted = await _mint_profile(gw.url, bootstrapProfile="voice-node")
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        device = DeviceIdentity.generate()
        res, _ = await _bootstrap_connect(gw.url, device, token, **_ESP32)
        assert res["ok"] is True, res
        [handoff] = res["payload"]["auth"]["deviceTokens"]
        assert (handoff["role"], sorted(handoff["scopes"])) == (
            "operator",
            ["operator.read", "operator.talk"],
        )
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        status = await _setup_status(gw.url, str(minted["setupId"]))
        assert (status.get("completion") or status["deliveryUncertain"])["access"] == "limited"


async def test_pending_redemption_still_binds_the_device_after_a_restart(tmp_path: Path) -> None:
    """While its approval is pending the device must ask for the same again, before and
    after a restart (the pending request is stored with the code); once approved, the code
    still works for its other role."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        token, _minted = await _mint_profile(gw.url)
        device = DeviceIdentity.generate()
        first, _ = await _bootstrap_connect(gw.url, device, token, scopes=["operator.read"])
        request_id = first["error"]["details"]["requestId"]
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        node, _ = await _bootstrap_connect(gw.url, device, token, **_NODE_HOST)
        assert node["error"]["details"] == SETUP_CODE_REJECTED_DETAILS
        again, _ = await _bootstrap_connect(gw.url, device, token, scopes=["operator.read"])
        assert again["error"]["details"]["requestId"] == request_id
        gw.app.pairing.approve(request_id, approved_via="owner")
        res, _ = await _bootstrap_connect(gw.url, device, token, scopes=["operator.read"])
        assert res["ok"] is True, res
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        node, _ = await _bootstrap_connect(gw.url, device, token, **_NODE_HOST)
        assert node["error"]["details"]["reason"] == "role-upgrade"  # a pairing question now


async def test_redeemed_legs_survive_a_restart(tmp_path: Path) -> None:
    """The operator.admin leg redeemed before a restart counts after it: the node leg then
    covers the profile and uses the code up (it used to stay redeemable)."""
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        token, minted = await _mint_profile(gw.url)
        device = DeviceIdentity.generate()
        await _connect_approving(gw, device, token, scopes=["operator.admin"])
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        assert await _setup_status(gw.url, str(minted["setupId"])) == {}
        await _connect_approving(gw, device, token, **_NODE_HOST)
        status = await _setup_status(gw.url, str(minted["setupId"]))
        assert (status.get("completion") or status["deliveryUncertain"])["deviceId"] == (
            device.device_id
        )
        res, _ = await _bootstrap_connect(gw.url, device, token, scopes=["operator.admin"])
        assert res["error"]["details"] == SETUP_CODE_REJECTED_DETAILS
