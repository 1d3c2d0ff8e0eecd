"""Bad handshakes side by side: the REAL gateway and OUR gateway must answer identically.

Every row of :data:`tests.helpers.handshake_cases.CASES`, plus the extra rows below (node
protocol ranges, the Android app's connect, other credentials, scope and timing edges), is
sent over a real socket to one real OpenClaw gateway (token auth, manual pairing) and to our
bundled gateway in a subprocess (token auth, ``--manual-pairing``). The normalized outcomes
must be equal: ``error.code``, ``error.message``, the full ``error.details`` (``code``,
``reason``, ``recommendedNextStep``, ``canRetryWithDeviceToken``, ...; a ``requestId`` is
compared for presence only), top-level ``retryable``/``retryAfterMs``, the close code and the
close reason, or both accepting the connection.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from openclaw_desktop.discovery import decode_setup_code
from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.handshake_cases import (
    CASES,
    CaseContext,
    Challenge,
    HandshakeCase,
    Outcome,
    connect_frame,
    run_over_socket,
    signed_params,
)
from tests.helpers.real_openclaw import GatewayFactory, OpenClawInstall, RealGateway

pytestmark = pytest.mark.timeout(300)


def _frame(
    build: Callable[[CaseContext], dict[str, Any]],
    edit: Callable[[dict[str, Any]], Any] | None = None,
) -> Callable[[CaseContext], str]:
    def run(ctx: CaseContext) -> str:
        params = build(ctx)
        if edit is not None:
            edit(params)
        return connect_frame(params)

    return run


def _node(**kw: Any) -> Callable[[CaseContext], dict[str, Any]]:
    base: dict[str, Any] = {"role": "node", "scopes": [], "client_id": "node-host", "mode": "node"}
    base.update(kw)
    return lambda ctx: signed_params(ctx, **base)


def _operator(**kw: Any) -> Callable[[CaseContext], dict[str, Any]]:
    return lambda ctx: signed_params(ctx, **kw)


def _set_auth(auth: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    return lambda params: params.update(auth=auth)


_ANDROID: dict[str, Any] = {
    "role": "node",
    "scopes": [],
    "client_id": "openclaw-android",
    "mode": "node",
    "platform": "android",
    "min_protocol": 3,
    "max_protocol": 4,
}

EXTRA_CASES: list[HandshakeCase] = [
    # protocol ranges for nodes (N-1 allowed) and probes
    HandshakeCase("node protocol 3 only", _frame(_node(min_protocol=3, max_protocol=3))),
    HandshakeCase("node protocol 3..4", _frame(_node(min_protocol=3, max_protocol=4))),
    HandshakeCase("node protocol 2", _frame(_node(min_protocol=2, max_protocol=2))),
    HandshakeCase("node protocol 5..6", _frame(_node(min_protocol=5, max_protocol=6))),
    HandshakeCase("node protocol 4..3", _frame(_node(min_protocol=4, max_protocol=3))),
    HandshakeCase(
        "node role, cli mode, protocol 3",
        _frame(_node(mode="cli", client_id="cli", min_protocol=3, max_protocol=3)),
    ),
    HandshakeCase(
        "operator role, node mode, protocol 3",
        _frame(_operator(mode="node", client_id="node-host", min_protocol=3, max_protocol=3)),
    ),
    HandshakeCase(
        "probe protocol 2",
        _frame(_operator(mode="probe", client_id="openclaw-probe", min_protocol=2, max_protocol=2)),
    ),
    # the Android app's connect, unpaired
    HandshakeCase("android node 3..4", _frame(lambda ctx: signed_params(ctx, **_ANDROID))),
    HandshakeCase(
        "android node, payload v2",
        _frame(lambda ctx: signed_params(ctx, **_ANDROID, version="v2")),
    ),
    HandshakeCase(
        "android node, platform changed after signing",
        _frame(
            lambda ctx: signed_params(ctx, **_ANDROID),
            lambda p: p["client"].update(platform="ios"),
        ),
    ),
    # other credentials
    HandshakeCase(
        "unknown device token only",
        _frame(_operator(token="nope"), _set_auth({"deviceToken": "nope"})),
    ),
    HandshakeCase(
        "bogus bootstrap token",
        _frame(_operator(token="nope"), _set_auth({"bootstrapToken": "nope"})),
    ),
    HandshakeCase(
        "password to a token gateway",
        _frame(_operator(token=None), _set_auth({"password": "pw"})),
    ),
    HandshakeCase("empty auth object", _frame(_operator(token=None), _set_auth({}))),
    HandshakeCase("empty token", _frame(_operator(token=""))),
    HandshakeCase(
        "node, wrong token, device",
        _frame(_node(token="wrong")),
    ),
    HandshakeCase(
        "node, no token, device",
        _frame(_node(token=None)),
    ),
    HandshakeCase(
        "bootstrap token and no device",
        _frame(_operator(token=None, device=False), _set_auth({"bootstrapToken": "nope"})),
    ),
    HandshakeCase(
        "password and no device",
        _frame(_operator(token=None, device=False), _set_auth({"password": "pw"})),
    ),
    # scopes
    HandshakeCase("unknown operator scope", _frame(_operator(scopes=["operator.bogus"]))),
    HandshakeCase("no scopes", _frame(_operator(scopes=[]))),
    HandshakeCase(
        "all operator scopes",
        _frame(
            _operator(
                scopes=[
                    "operator.read",
                    "operator.write",
                    "operator.admin",
                    "operator.approvals",
                    "operator.pairing",
                    "operator.talk",
                    "operator.talk.secrets",
                    "operator.questions",
                ]
            )
        ),
    ),
    HandshakeCase("node asking for operator scopes", _frame(_node(scopes=["operator.admin"]))),
    # device proof timing
    HandshakeCase(
        "signedAt 100 s in the future",
        lambda ctx: connect_frame(signed_params(ctx, signed_at=ctx.challenge.ts + 100_000)),
    ),
    HandshakeCase(
        "signedAt 200 s in the future",
        lambda ctx: connect_frame(signed_params(ctx, signed_at=ctx.challenge.ts + 200_000)),
    ),
    HandshakeCase(
        "signedAt 100 s ago",
        lambda ctx: connect_frame(signed_params(ctx, signed_at=ctx.challenge.ts - 100_000)),
    ),
    # clients without a device
    HandshakeCase(
        "gateway-client backend without device",
        _frame(_operator(client_id="gateway-client", mode="backend", device=False)),
    ),
    HandshakeCase(
        "node-host operator without device",
        _frame(_operator(client_id="node-host", mode="node", device=False)),
    ),
]
"""Rows beyond the shared table, judged side by side only."""

ALL_CASES = [*CASES, *EXTRA_CASES]


@pytest.fixture(scope="module")
def real(openclaw_install: OpenClawInstall) -> Iterator[RealGateway]:
    """One real gateway for every row: token auth, unpaired devices need approval."""
    factory = GatewayFactory(openclaw_install)
    try:
        yield factory(manual_pairing=True)
    finally:
        factory.close()


@pytest.fixture(scope="module")
def ours() -> Iterator[BundledGateway]:
    """Our gateway in a subprocess: token auth, ``--manual-pairing``."""
    with BundledGateway.start(args=["--manual-pairing"]) as gw:
        yield gw


def _own_device_masked(outcome: Outcome, ctx: CaseContext) -> Outcome:
    """``details.deviceId`` of the case's own fresh identity becomes ``<deviceId>``."""
    details = (outcome.error or {}).get("details")
    if isinstance(details, dict) and details.get("deviceId") == ctx.identity.device_id:
        error = {**(outcome.error or {}), "details": {**details, "deviceId": "<deviceId>"}}
        return replace(outcome, error=error)
    return outcome


def _show(outcome: Outcome) -> str:
    if outcome.accepted:
        return "accepted"
    return f"error={outcome.error!r} close={outcome.close_code} {outcome.close_reason!r}"


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.name for c in ALL_CASES])
async def test_same_answer_from_both_gateways(
    real: RealGateway, ours: BundledGateway, case: HandshakeCase
) -> None:
    """The real gateway and ours answer the same bad first frame identically."""
    theirs, real_ctx, _ = await run_over_socket(real.url, case, token=real.token)
    mine, our_ctx, _ = await run_over_socket(ours.url, case, token=ours.token)
    theirs, mine = _own_device_masked(theirs, real_ctx), _own_device_masked(mine, our_ctx)

    assert mine == theirs, (
        f"{case.name}: {case.note}\n  real: {_show(theirs)}\n  ours: {_show(mine)}"
        f"\n--- our gateway log ---\n{ours.log_tail(20)}"
    )


def test_every_row_ran_on_distinct_names() -> None:
    """Row names are the test ids: they must be unique."""
    names = [c.name for c in ALL_CASES]
    assert len(names) == len(set(names))


# ------------------------------------------------------------------ the pairing story
_VOLATILE = {"requestId": "<requestId>", "deviceToken": "<deviceToken>", "issuedAtMs": "<ms>"}
#: hello-ok.auth fields of the real gateway that ours does not implement (account recovery).
_NOT_IMPLEMENTED = ("recoveryScope", "recoveryMigrationAllowed")


class _AdminSocket:
    """Requests over one deviceless admin connection, each answered by id."""

    def __init__(self, ws: ClientConnection) -> None:
        self._ws = ws
        self._sent = 0

    async def call(self, method: str, params: Any, timeout: float = 15.0) -> dict[str, Any]:
        self._sent += 1
        request_id = f"admin-{self._sent}"
        request = {"type": "req", "id": request_id, "method": method, "params": params}
        await self._ws.send(json.dumps(request))
        while True:
            frame: dict[str, Any] = json.loads(await asyncio.wait_for(self._ws.recv(), timeout))
            if frame.get("type") == "res" and frame.get("id") == request_id:
                return frame


@contextlib.asynccontextmanager
async def _deviceless_admin(url: str, token: str) -> AsyncIterator[_AdminSocket]:
    """A loopback ``cli`` operator with the shared token and no device: admin on both
    gateways (a loopback cli needs no device identity)."""
    async with connect(url, open_timeout=15, max_size=None) as ws:
        await asyncio.wait_for(ws.recv(), 15)  # the challenge
        hello = {
            "minProtocol": 4,
            "maxProtocol": 4,
            "client": {"id": "cli", "version": "1.0", "platform": "linux", "mode": "cli"},
            "role": "operator",
            "scopes": ["operator.admin"],
            "auth": {"token": token},
        }
        await ws.send(connect_frame(hello))
        yield _AdminSocket(ws)


async def _approve_over_rpc(url: str, token: str, request_id: str) -> None:
    """``device.pair.approve`` from a deviceless loopback admin (the real CLI connects with
    narrower scopes and cannot approve a request for more than it holds)."""
    async with _deviceless_admin(url, token) as admin:
        frame = await admin.call("device.pair.approve", {"requestId": request_id})
    assert frame["ok"] is True, frame


def _rpc_approver(url: str, token: str) -> Callable[[str], object]:
    """An ``approve`` callback for the stories (they call it in a worker thread)."""
    return lambda request_id: asyncio.run(_approve_over_rpc(url, token, request_id))


async def _connect(
    url: str,
    identity: DeviceIdentity,
    token: str | None,
    edit: Callable[[dict[str, Any]], Any] | None = None,
    **kw: Any,
) -> dict[str, Any]:
    """One connect with a signed proof of ``identity``: the hello auth or the rejection."""
    async with connect(url, open_timeout=15, max_size=None) as ws:
        challenge = json.loads(await asyncio.wait_for(ws.recv(), 15))["payload"]
        ctx = CaseContext(Challenge(challenge["nonce"], challenge["ts"]), identity, token or "")
        params = signed_params(ctx, token=token, **kw)
        if edit is not None:
            edit(params)
        await ws.send(connect_frame(params))
        error: dict[str, Any] | None = None
        try:
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), 15))
                if frame.get("type") != "res":
                    continue
                if frame["ok"]:
                    return {"accepted": frame["payload"]["auth"]}
                error = frame["error"]
                await asyncio.wait_for(ws.recv(), 15)  # until the close
        except ConnectionClosed:
            pass
        received = ws.protocol.close_rcvd
    return {
        "error": error,
        "close": [received.code, received.reason] if received else None,
    }


def _normalized(outcome: dict[str, Any], identity: DeviceIdentity) -> dict[str, Any]:
    """Mask per-run values (request ids, tokens, times, the device id)."""
    text = json.dumps(outcome).replace(identity.device_id, "<deviceId>")
    result: dict[str, Any] = json.loads(re.sub(r"(?<=\(requestId: )[0-9A-Za-z._:-]+", "<id>", text))
    for part in (result.get("accepted"), (result.get("error") or {}).get("details")):
        if isinstance(part, dict):
            for key, mask in _VOLATILE.items():
                if key in part:
                    part[key] = mask
            for key in _NOT_IMPLEMENTED:
                part.pop(key, None)
    return result


async def _pairing_story(
    url: str, token: str, approve: Callable[[str], object]
) -> list[tuple[str, Any]]:
    """Pair an operator device, then probe upgrades and device-token auth."""
    identity = DeviceIdentity.generate()
    steps: list[tuple[str, Any]] = []
    # The device token each role got last: the real gateway hands a device its existing
    # token again, ours (keeping only hashes) a new one each time, as clients store.
    latest: dict[str, str] = {}

    async def step(name: str, token_: str | None = token, **kw: Any) -> dict[str, Any]:
        outcome = await _connect(url, identity, token_, **kw)
        steps.append((name, _normalized(outcome, identity)))
        accepted = outcome.get("accepted")
        if accepted and accepted.get("deviceToken"):
            latest[accepted["role"]] = accepted["deviceToken"]
        return outcome

    first = await step("unpaired")
    again = await step("unpaired, again")
    request_id = first["error"]["details"]["requestId"]
    steps.append(("same requestId", again["error"]["details"]["requestId"] == request_id))
    await asyncio.to_thread(approve, request_id)
    hello = await step("approved: shared token")
    device_token = hello["accepted"]["deviceToken"]
    await step("device token in auth.token", device_token)
    await step("device token only", device_token, edit=_set_auth({"deviceToken": device_token}))
    await step(
        "wrong shared token and good device token",
        "wrong",
        edit=lambda p: p["auth"].update(deviceToken=device_token),
    )
    await step(
        "device token, wider scopes", device_token, scopes=["operator.read", "operator.admin"]
    )
    await step("device token as node", device_token, **_NODE_KW)
    await step("bogus device token only", "bogus", edit=_set_auth({"deviceToken": "bogus"}))
    await step("bogus shared token", "bogus")
    await step("no token", None)
    await step("scope upgrade", scopes=["operator.read", "operator.write"])
    await step("role upgrade to node", **_NODE_KW)
    await step("shared token, fewer scopes", scopes=[])
    await _metadata_steps(step, steps, approve, latest)
    return steps


Step = Callable[..., Awaitable[dict[str, Any]]]


async def _metadata_steps(
    step: Step,
    steps: list[tuple[str, Any]],
    approve: Callable[[str], object],
    latest: dict[str, str],
) -> None:
    """The paired operator becomes the node host too, then comes back as the CLI: which
    client details count (platform and device family, not client id, mode or name), and
    what a ``metadata-upgrade`` answers, whatever the credential.

    Device tokens are the ones each role got last (``latest``): the real gateway re-issues
    the tokens of every role an approved request names, ours issues one on every connect
    that does not present it (not compared here).
    """
    upgrade = await step("node: role upgrade", **_NODE_KW)
    await asyncio.to_thread(approve, upgrade["error"]["details"]["requestId"])
    await step("node: approved", **_NODE_KW)
    # node-host on linux was recorded as deviceFamily Linux; the CLI sends none
    first = await step("operator after node-host: metadata upgrade")
    again = await step("metadata upgrade, again")
    same = again["error"]["details"]["requestId"] == first["error"]["details"]["requestId"]
    steps.append(("metadata upgrade: same requestId", same))
    await step("metadata upgrade: node-host still fine", **_NODE_KW)
    await asyncio.to_thread(approve, first["error"]["details"]["requestId"])
    await step("metadata upgrade approved")
    await step("node-host after the CLI's details were approved", **_NODE_KW)
    for name, kw in (
        ("other client id", {"client_id": "openclaw-tui"}),
        ("other mode", {"mode": "ui"}),
        ("probe client", {"client_id": "openclaw-probe", "mode": "probe"}),
        ("platform in capitals", {"platform": " LINUX "}),
        ("device family added", {"version": "v2", "edit": _family("Linux")}),
        ("platform changed", {"platform": "darwin"}),
        ("platform with a version", {"platform": "linux 6.1"}),
    ):
        await step(f"details: {name}", **kw)
    operator_token = latest["operator"]
    await step(
        "details: device token, platform changed",
        operator_token,
        platform="darwin",
        edit=_set_auth({"deviceToken": operator_token}),
    )
    node_token = latest["node"]
    await step("details: node's device token, node-host", node_token, **_NODE_KW)
    await step(
        "details: node's device token, node-host on darwin",
        node_token,
        **{**_NODE_KW, "platform": "darwin"},
        edit=_set_auth({"deviceToken": node_token}),
    )


_NODE_KW: dict[str, Any] = {"role": "node", "scopes": [], "client_id": "node-host", "mode": "node"}


async def test_pairing_story_side_by_side(real: RealGateway, ours: BundledGateway) -> None:
    """Pairing, upgrades (scopes, the node role, changed client details) and device-token
    auth of one device answer alike on both gateways."""
    theirs = await _pairing_story(real.url, real.token, _rpc_approver(real.url, real.token))
    mine = await _pairing_story(ours.url, ours.token, _rpc_approver(ours.url, ours.token))

    assert [name for name, _ in mine] == [name for name, _ in theirs]
    for (name, real_step), (_, our_step) in zip(theirs, mine, strict=True):
        assert our_step == real_step, f"{name}\n  real: {real_step}\n  ours: {our_step}"


@pytest.fixture(scope="module")
def real_auto(openclaw_install: OpenClawInstall) -> Iterator[RealGateway]:
    """A real gateway with its default: loopback devices are approved silently (the
    module's own ``real`` pairs by hand, so the conftest pair cannot serve here)."""
    with GatewayFactory(openclaw_install) as factory:
        yield factory()


@pytest.fixture(scope="module")
def ours_auto() -> Iterator[BundledGateway]:
    """Our gateway with its default: loopback devices are approved silently."""
    with BundledGateway.start() as gw:
        yield gw


async def _local_approval_story(
    url: str, token: str, approve: Callable[[str], object]
) -> list[tuple[str, Any]]:
    """What a loopback device gets without asking when local auto-approval is on."""
    steps: list[tuple[str, Any]] = []

    def stepper(identity: DeviceIdentity) -> Step:
        async def step(name: str, token_: str | None = token, **kw: Any) -> dict[str, Any]:
            outcome = await _connect(url, identity, token_, **kw)
            steps.append((name, _normalized(outcome, identity)))
            return outcome

        return step

    step = stepper(DeviceIdentity.generate())
    hello = await step("operator: approved silently")
    device_token = hello["accepted"]["deviceToken"]
    await step("scope upgrade on the shared token: silent", scopes=["operator.admin"])
    await step(
        "scope upgrade on a device token", device_token, scopes=["operator.admin", "operator.talk"]
    )
    upgrade = await step("node-host with the operator's identity: asks", **_NODE_KW)
    await step("node-host again: same answer", **_NODE_KW)
    await asyncio.to_thread(approve, upgrade["error"]["details"]["requestId"])
    await step("node-host approved", **_NODE_KW)
    metadata = await step("operator after node-host: metadata upgrade asks")
    await asyncio.to_thread(approve, metadata["error"]["details"]["requestId"])
    await step("operator after approval")
    await step("operator, other platform: asks", platform="darwin")

    step = stepper(DeviceIdentity.generate())
    await step("node first: approved silently", **_NODE_KW)
    await step("then operator with the node's details: silent", version="v2", edit=_family("Linux"))
    await step("then operator without a family: asks")

    step = stepper(DeviceIdentity.generate())
    window = {"client_id": "openclaw-linux", "mode": "ui", "version": "v2"}
    await step("app window: approved silently", **window, edit=_family("Linux"))
    await step("app window, other family: silent", **window, edit=_family("Mac"))
    await step("app window, back again: silent", **window, edit=_family("Linux"))
    return steps


async def test_local_auto_approval_side_by_side(
    real_auto: RealGateway, ours_auto: BundledGateway
) -> None:
    """With loopback auto-approval on, both gateways approve the same connects silently
    (new devices, an operator role or shared-token scopes of a paired one, an app window's
    changed details) and ask for the same ones (a device token's wider scopes, the node
    role of a paired operator device, a command-line client's changed details)."""
    theirs = await _local_approval_story(
        real_auto.url, real_auto.token, _rpc_approver(real_auto.url, real_auto.token)
    )
    mine = await _local_approval_story(
        ours_auto.url, ours_auto.token, _rpc_approver(ours_auto.url, ours_auto.token)
    )

    assert [name for name, _ in mine] == [name for name, _ in theirs]
    for (name, real_step), (_, our_step) in zip(theirs, mine, strict=True):
        assert our_step == real_step, f"{name}\n  real: {real_step}\n  ours: {our_step}"


async def test_desktop_node_after_its_window_differs_on_purpose(
    real_auto: RealGateway, ours_auto: BundledGateway
) -> None:
    """The one deliberate difference in local approval (see ``_Gate._own_desktop_node`` in
    gateway/connect.py): the desktop app's window (cli) and then this computer's node
    (openclaw-linux, same identity) on loopback. The real gateway asks the owner for the
    node role; ours approves it so the app works on its own gateway. If the real gateway
    changes its answer, or the app connects its node first, this test says so."""
    node = {"role": "node", "scopes": [], "client_id": "openclaw-linux", "mode": "node"}
    answers = []
    for url, token in ((real_auto.url, real_auto.token), (ours_auto.url, ours_auto.token)):
        identity = DeviceIdentity.generate()
        window = await _connect(url, identity, token, version="v2", edit=_family("Linux"))
        assert "accepted" in window, window
        answers.append(
            await _connect(url, identity, token, version="v2", edit=_family("Linux"), **node)
        )
    theirs, mine = answers
    assert theirs["error"]["details"]["reason"] == "role-upgrade", theirs
    assert mine["accepted"]["role"] == "node", mine


async def test_shared_token_connect_replaces_the_device_token_keeping_its_scopes(
    ours: BundledGateway,
) -> None:
    """The one deliberate difference in device tokens: the real gateway hands a paired device
    its existing token again on a shared-token connect; ours keeps only token hashes, so it
    issues a new token each time, with the old token's scopes while they cover the connect
    (a narrower connect does not narrow it), and the old token stops working. Presenting the
    current token gets that token back."""
    identity = DeviceIdentity.generate()
    first = await _connect(ours.url, identity, ours.token)
    await asyncio.to_thread(ours.cli, "devices", "approve", first["error"]["details"]["requestId"])
    one = await _connect(ours.url, identity, ours.token)
    narrower = await _connect(ours.url, identity, ours.token, scopes=[])

    old, token = one["accepted"]["deviceToken"], narrower["accepted"]["deviceToken"]
    assert old != token
    assert narrower["accepted"]["scopes"] == []
    stale = await _connect(ours.url, identity, old, edit=_set_auth({"deviceToken": old}))
    assert stale["error"]["details"]["code"] == "AUTH_DEVICE_TOKEN_MISMATCH", stale
    wide = await _connect(ours.url, identity, token, scopes=one["accepted"]["scopes"])
    assert wide["accepted"]["deviceToken"] == token, "the replacement kept the wider scopes"
    assert wide["accepted"]["scopes"] == one["accepted"]["scopes"]


# ------------------------------------------------------------ setup-code profiles
def _bootstrap(token: str, **kw: Any) -> dict[str, Any]:
    """``_connect`` keywords for a setup-code connect (the code is the signed token)."""
    extra = kw.pop("edit", None)

    def edit(params: dict[str, Any]) -> None:
        params["auth"] = {"bootstrapToken": token}
        if extra is not None:
            extra(params)

    return {"token": token, "edit": edit, **kw}


#: The Android app's node connect. Signed as v2 so that ``deviceFamily`` can be added after
#: signing (v2 does not cover it); the real gateway hands off silently only to an official
#: app whose platform and device family match.
_PHONE_KW: dict[str, Any] = {
    "role": "node",
    "scopes": [],
    "client_id": "openclaw-android",
    "mode": "node",
    "platform": "android",
    "version": "v2",
    "min_protocol": 3,
    "edit": lambda p: p["client"].update(deviceFamily="Android"),
}


def _handoff_masked(outcome: dict[str, Any]) -> dict[str, Any]:
    for grant in (outcome.get("accepted") or {}).get("deviceTokens") or []:
        grant.update(deviceToken="<deviceToken>", issuedAtMs="<ms>")
    return outcome


async def _setup_code_story(
    url: str, token: str, mint_params: dict[str, Any]
) -> list[tuple[str, Any]]:
    """A limited setup code: requests outside its profile, then a phone redeeming it."""
    async with _deviceless_admin(url, token) as admin:
        frame = await admin.call("device.pair.setupCode", mint_params)
    assert frame["ok"] is True, frame
    assert frame["payload"]["access"] == "limited"
    code = decode_setup_code(frame["payload"]["setupCode"]).bootstrap_token
    assert code is not None
    greedy, phone = DeviceIdentity.generate(), DeviceIdentity.generate()
    steps: list[tuple[str, Any]] = []

    async def step(name: str, identity: DeviceIdentity, **kw: Any) -> None:
        outcome = await _connect(url, identity, **_bootstrap(code, **kw))
        steps.append((name, _handoff_masked(_normalized(outcome, identity))))

    await step("operator asks admin+pairing", greedy, scopes=["operator.admin", "operator.pairing"])
    await step("operator asks pairing", greedy, scopes=["operator.pairing"])
    await step("operator asks admin", greedy, scopes=["operator.admin"])
    await step("node asks operator.admin", greedy, **{**_PHONE_KW, "scopes": ["operator.admin"]})
    await step("phone redeems it", phone, **_PHONE_KW)
    await step("phone again (used up)", phone, **_PHONE_KW)
    return steps


async def test_limited_setup_code_side_by_side(real: RealGateway, ours: BundledGateway) -> None:
    """A limited setup code refuses operator.admin/operator.pairing requests alike on both
    gateways without being used up, and hands the phone the same limited operator scopes."""
    theirs = await _setup_code_story(
        real.url,
        real.token,
        {"bootstrapProfile": "limited", "includeQr": False, "publicUrl": real.url},
    )
    mine = await _setup_code_story(
        ours.url,
        ours.token,
        {"bootstrapProfile": "limited", "includeQr": False, "publicUrl": ours.url},
    )

    assert [name for name, _ in mine] == [name for name, _ in theirs]
    for (name, real_step), (_, our_step) in zip(theirs, mine, strict=True):
        assert our_step == real_step, f"{name}\n  real: {real_step}\n  ours: {our_step}"


# ------------------------------------------------------------ device.pair.setupCode params
_LOOPBACK_URL = "ws://127.0.0.1:1"

#: Params sent to both gateways. Every accepted row names a ``publicUrl``: without one the
#: real gateway refuses to mint on a loopback-only bind ("Gateway is only bound to
#: loopback..."), while ours mints a loopback code (deliberately: the desktop app asks with
#: ``{}``). ``joinUrl`` links are not offered by ours, so only refused join rows are here.
SETUP_CODE_PARAMS: list[Any] = [
    # the closed schema
    [],
    "x",
    {"access": "full"},
    {"access": "limited"},
    {"bootstrapProfile": "full"},
    {"bootstrapProfile": "bogus"},
    {"bootstrapProfile": "Node"},
    {"bootstrapProfile": ""},
    {"bootstrapProfile": 5},
    {"bootstrapProfile": None},
    {"bootstrapProfile": ["node"]},
    {"includeQr": "no"},
    {"includeQr": None},
    {"preferRemoteUrl": 1},
    {"publicUrl": ""},
    {"publicUrl": 5},
    {"joinUrl": False},
    {"joinUrl": "yes"},
    {"joinUrl": 1},
    {"extra": 1},
    {"a": 1, "b": 2},
    {"extra": 1, "publicUrl": 5},
    {"bootstrapProfile": "bogus", "extra": 1},
    {"bootstrapProfile": "bogus", "includeQr": "x"},
    # join links and URLs refused by the handler
    {"joinUrl": True, "bootstrapProfile": "limited"},
    {"joinUrl": True, "bootstrapProfile": "voice-node", "publicUrl": _LOOPBACK_URL},
    {"publicUrl": "ws://192.168.1.5:1", "joinUrl": True},
    {"publicUrl": "not a url"},
    {"publicUrl": "ws://user:pw@gw.example"},
    {"publicUrl": "ws:x"},
    {"publicUrl": "ftp://x"},
    {"publicUrl": "xxx"},
    {"publicUrl": "http://x"},
    {"publicUrl": "ws://8.8.8.8:1"},
    {"publicUrl": "ws://100.64.1.1:1"},
    {"publicUrl": "ws://gw.example:18789?x=1#f"},
    # accepted: profiles
    {"publicUrl": _LOOPBACK_URL},
    {"publicUrl": _LOOPBACK_URL, "bootstrapProfile": "limited"},
    {"publicUrl": _LOOPBACK_URL, "bootstrapProfile": "node"},
    {"publicUrl": _LOOPBACK_URL, "bootstrapProfile": "voice-node"},
    {"publicUrl": _LOOPBACK_URL, "includeQr": False},
    {"publicUrl": _LOOPBACK_URL, "includeQr": True, "preferRemoteUrl": False},
    # accepted: URLs (plaintext LAN downgrades full access)
    {"publicUrl": "ws://192.168.1.5:18789"},
    {"publicUrl": "ws://192.168.1.5:18789", "bootstrapProfile": "limited"},
    {"publicUrl": "ws://192.168.1.5:18789", "bootstrapProfile": "node"},
    {"publicUrl": "ws://192.168.1.5:18789", "bootstrapProfile": "voice-node"},
    {"publicUrl": "http://192.168.1.5"},
    {"publicUrl": "ws://192.168.1.5:80"},
    {"publicUrl": "192.168.1.9:18789/x/y"},
    {"publicUrl": "ws://10.1.2.3:18789"},
    {"publicUrl": "ws://10.0.2.2:1"},
    {"publicUrl": "ws://169.254.1.1:1"},
    {"publicUrl": "ws://host.local"},
    {"publicUrl": "ws://[fe80::1]:1"},
    {"publicUrl": "ws://[::1]:5"},
    {"publicUrl": "ws://LOCALHOST:18789"},
    {"publicUrl": "wss://gw.example:443"},
    {"publicUrl": "https://gw.example"},
    {"publicUrl": "wss://gw.example:8443/"},
    {"publicUrl": "wss://x.example/path/"},
]


async def _setup_code_answers(url: str, token: str) -> list[Any]:
    """Every :data:`SETUP_CODE_PARAMS` row on one loopback admin connection: the error, or
    the result with per-run values masked and the code's payload keys and URL."""
    answers: list[Any] = []
    async with _deviceless_admin(url, token) as admin:
        for params in SETUP_CODE_PARAMS:
            frame = await admin.call("device.pair.setupCode", params, timeout=30)
            if not frame["ok"]:
                answers.append({"error": frame["error"]})
                continue
            result = dict(frame["payload"])
            code = decode_setup_code(result["setupCode"])
            raw = result["setupCode"] + "=" * (-len(result["setupCode"]) % 4)
            keys = list(json.loads(base64.urlsafe_b64decode(raw)))
            for key in ("setupId", "expiresAtMs", "setupCode", "qrDataUrl"):
                if key in result:
                    result[key] = f"<{key}>"
            answers.append({"ok": result, "code": {"keys": keys, "url": code.url}})
    return answers


async def test_setup_code_params_side_by_side(real: RealGateway, ours: BundledGateway) -> None:
    """``device.pair.setupCode`` takes the same params on both gateways: the same validation
    errors (closed schema, ``bootstrapProfile`` limited/node/voice-node, ``publicUrl``
    checks), and for good params the same result (``access``, ``accessDowngraded``,
    ``gatewayUrl``, ``urlSource``, ``auth``, ``qrDataUrl`` only with ``includeQr``) and the
    same setup-code payload."""
    theirs = await _setup_code_answers(real.url, real.token)
    mine = await _setup_code_answers(ours.url, ours.token)
    for params, real_answer, our_answer in zip(SETUP_CODE_PARAMS, theirs, mine, strict=True):
        assert our_answer == real_answer, f"{params!r}\n  real: {real_answer}\n  ours: {our_answer}"


# ------------------------------------------------------------ who a setup code approves
def _family(family: str) -> Callable[[dict[str, Any]], None]:
    return lambda params: params["client"].update(deviceFamily=family)


#: Node connects of the clients a code may be meant for (v2 proofs, so that ``deviceFamily``
#: can be set after signing).
_NODE_HOST_KW: dict[str, Any] = {**_NODE_KW}
_IPHONE_KW: dict[str, Any] = {
    **_PHONE_KW,
    "client_id": "openclaw-ios",
    "platform": "iOS 18.1",
    "edit": _family("iPhone"),
}
_ESP32_KW: dict[str, Any] = {
    **_NODE_KW,
    "platform": "esp32",
    "version": "v2",
    "edit": _family("esp32"),
}
_PHONE_WITHOUT_FAMILY_KW: dict[str, Any] = {k: v for k, v in _PHONE_KW.items() if k != "edit"}


async def _setup_code_profiles_story(
    url: str, token: str, approve: Callable[[str], object]
) -> list[tuple[str, Any]]:
    """Codes of each profile redeemed by the client they are meant for (silent hand-off)
    and by others (normal pairing), and what uses a code up."""
    steps: list[tuple[str, Any]] = []

    async def mint(**params: Any) -> tuple[str, str]:
        async with _deviceless_admin(url, token) as admin:
            mint_params = {"includeQr": False, "publicUrl": url, **params}
            frame = await admin.call("device.pair.setupCode", mint_params)
        assert frame["ok"] is True, frame
        code = decode_setup_code(frame["payload"]["setupCode"]).bootstrap_token
        assert code is not None
        return code, frame["payload"]["setupId"]

    async def status(name: str, setup_id: str) -> None:
        async with _deviceless_admin(url, token) as admin:
            frame = await admin.call("device.pair.setupStatus", {"setupId": setup_id})
        payload = frame["payload"]
        steps.append((name, sorted(payload)))  # completion / deliveryUncertain, or nothing

    async def step(name: str, code: str, identity: DeviceIdentity, **kw: Any) -> dict[str, Any]:
        outcome = await _connect(url, identity, **_bootstrap(code, **kw))
        steps.append((name, _handoff_masked(_normalized(outcome, identity))))
        return outcome

    # silent hand-off to the client a profile is meant for; used up by it
    for profile, kw in (
        (None, _PHONE_KW),
        (None, _IPHONE_KW),
        ("limited", _IPHONE_KW),
        ("node", _NODE_HOST_KW),
        ("voice-node", _ESP32_KW),
    ):
        code, setup_id = await mint(**({} if profile is None else {"bootstrapProfile": profile}))
        device = DeviceIdentity.generate()
        await step(f"{profile or 'full'}: its client", code, device, **kw)
        await status(f"{profile or 'full'}: status after the hand-off", setup_id)
        await step(f"{profile or 'full'}: its client again", code, device, **kw)
    # everyone else goes through pairing
    for profile, name, kw in (
        (None, "android app without deviceFamily", _PHONE_WITHOUT_FAMILY_KW),
        (None, "node-host", _NODE_HOST_KW),
        ("node", "android app", _PHONE_KW),
        ("voice-node", "node-host on linux", _NODE_HOST_KW),
        ("voice-node", "android app", _PHONE_KW),
    ):
        code, _ = await mint(**({} if profile is None else {"bootstrapProfile": profile}))
        await step(f"{profile or 'full'}: {name}", code, DeviceIdentity.generate(), **kw)
    code, _ = await mint(bootstrapProfile="node")
    await step("node: operator", code, DeviceIdentity.generate(), scopes=["operator.read"])
    code, _ = await mint(bootstrapProfile="voice-node")
    voice = DeviceIdentity.generate()
    for scopes in (
        ["operator.write"],
        ["operator.talk.secrets"],
        ["operator.read", "operator.talk"],
    ):
        await step(f"voice-node: operator {scopes}", code, voice, scopes=scopes)
    # an operator redeeming a full code: pairing, the pending request, no use-up
    code, setup_id = await mint()
    operator = DeviceIdentity.generate()
    pending = await step("full: operator.read", code, operator, scopes=["operator.read"])
    await step("full: operator.read again", code, operator, scopes=["operator.read"])
    await step("full: node while the operator request is pending", code, operator, **_NODE_KW)
    await asyncio.to_thread(approve, pending["error"]["details"]["requestId"])
    await step("full: operator.read approved", code, operator, scopes=["operator.read"])
    await step("full: operator.read once more", code, operator, scopes=["operator.read"])
    await status("full: status after operator connects", setup_id)
    await step("full: another device", code, DeviceIdentity.generate(), scopes=["operator.read"])
    upgrade = await step("full: node after operator.read", code, operator, **_NODE_KW)
    await asyncio.to_thread(approve, upgrade["error"]["details"]["requestId"])
    await step("full: node approved", code, operator, **_NODE_KW)
    await status("full: status after operator.read and node", setup_id)
    # operator.admin covers the profile: with a node connect the code is used up
    code, setup_id = await mint()
    admin = DeviceIdentity.generate()
    pending = await step("full: operator.admin", code, admin, scopes=["operator.admin"])
    await asyncio.to_thread(approve, pending["error"]["details"]["requestId"])
    await step("full: operator.admin approved", code, admin, scopes=["operator.admin"])
    upgrade = await step("full: node after operator.admin", code, admin, **_NODE_KW)
    await asyncio.to_thread(approve, upgrade["error"]["details"]["requestId"])
    await step("full: node after operator.admin approved", code, admin, **_NODE_KW)
    await status("full: status after operator.admin and node", setup_id)
    await step("full: operator.admin after both", code, admin, scopes=["operator.admin"])
    return steps


async def test_setup_code_profiles_side_by_side(real: RealGateway, ours: BundledGateway) -> None:
    """Under manual pairing both gateways approve a setup-code connect silently only for the
    client its profile is meant for (Android/iOS app with matching platform and device
    family for full/limited codes, node-host for node codes, node-host on an ESP32 for
    voice-node codes), hand off the same tokens, send every other client through pairing
    with the same answers, and use a code up at the same point (not on operator-only
    connects)."""
    theirs = await _setup_code_profiles_story(
        real.url, real.token, lambda rid: real.cli("devices", "approve", rid)
    )
    mine = await _setup_code_profiles_story(
        ours.url, ours.token, lambda rid: ours.cli("devices", "approve", rid)
    )

    assert [name for name, _ in mine] == [name for name, _ in theirs]
    for (name, real_step), (_, our_step) in zip(theirs, mine, strict=True):
        assert our_step == real_step, f"{name}\n  real: {real_step}\n  ours: {our_step}"
