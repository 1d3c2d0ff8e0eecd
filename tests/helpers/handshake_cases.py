"""Bad first frames for the gateway handshake, and how to judge a gateway's answer to them.

Each :class:`HandshakeCase` builds the raw first message of a connection from a fresh
:class:`DeviceIdentity`, the ``connect.challenge`` and the gateway's shared token. The same
table runs against the real gateway (``tests/interop/test_gw_handshake_probe.py``) and can
run against our bundled gateway over a socket with :func:`run_over_socket`, or through our
validator functions directly with :func:`predict`.

The gateway under test uses token auth with that token, loopback only, and manual pairing
(``autoApproveLocal: false``), so an unpaired device gets ``NOT_PAIRED`` every time.
An :class:`Outcome` hides what differs per run: ``details.requestId`` and the id inside the
close reason become ``<requestId>``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from gateway.handshake import (
    ConnectRejection,
    admit_connect,
    parse_first_frame,
    validate_connect_params,
    verify_device_proof,
)
from openclaw_desktop.identity import DeviceIdentity, build_payload_v2, build_payload_v3

__all__ = [
    "CASES",
    "CaseContext",
    "Challenge",
    "HandshakeCase",
    "Outcome",
    "predict",
    "run_over_socket",
]

REQUEST_ID_PLACEHOLDER = "<requestId>"
_CLOSE_REQUEST_ID = re.compile(r"\(requestId: [^)]*\)")


@dataclass(frozen=True)
class Challenge:
    """The ``connect.challenge`` payload."""

    nonce: str
    ts: int


@dataclass(frozen=True)
class CaseContext:
    """What a case builds its frame from."""

    challenge: Challenge
    identity: DeviceIdentity
    token: str


@dataclass(frozen=True)
class HandshakeCase:
    """One bad (or telling) first frame."""

    name: str
    build: Callable[[CaseContext], str | bytes]
    note: str = ""


@dataclass(frozen=True)
class Outcome:
    """What a gateway answered: the ``res`` error (if any) and the close."""

    error: dict[str, Any] | None
    close_code: int | None
    close_reason: str | None
    accepted: bool = False
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


def _normalize(
    error: dict[str, Any] | None, code: int | None, reason: str | None, accepted: bool = False
) -> Outcome:
    if error is not None:
        error = json.loads(json.dumps(error))
        details = error.get("details")
        if isinstance(details, dict) and "requestId" in details:
            details["requestId"] = REQUEST_ID_PLACEHOLDER
    if reason is not None:
        reason = _CLOSE_REQUEST_ID.sub(f"(requestId: {REQUEST_ID_PLACEHOLDER})", reason)
    return Outcome(error, code, reason, accepted)


# ------------------------------------------------------------------ frame builders
def connect_frame(params: Any, **extra: Any) -> str:
    """A ``connect`` request frame with these params."""
    return json.dumps({"type": "req", "id": "hs-1", "method": "connect", "params": params, **extra})


def signed_params(
    ctx: CaseContext,
    *,
    role: str | None = "operator",
    scopes: list[str] | None = None,
    token: str | None = "<gateway>",
    client_id: str = "cli",
    mode: str = "cli",
    platform: str = "linux",
    version: str = "v3",
    min_protocol: int = 4,
    max_protocol: int = 4,
    signed_at: int | None = None,
    nonce: str | None = None,
    device: bool = True,
) -> dict[str, Any]:
    """Connect params with a correctly signed device proof (unless told otherwise)."""
    the_token = ctx.token if token == "<gateway>" else token
    scope_list = ["operator.read"] if scopes is None else scopes
    params: dict[str, Any] = {
        "minProtocol": min_protocol,
        "maxProtocol": max_protocol,
        "client": {"id": client_id, "version": "1.0", "platform": platform, "mode": mode},
        "scopes": scope_list,
    }
    if role is not None:
        params["role"] = role
    if the_token is not None:
        params["auth"] = {"token": the_token}
    if device:
        signed = ctx.challenge.ts if signed_at is None else signed_at
        sent_nonce = ctx.challenge.nonce if nonce is None else nonce
        common: dict[str, Any] = {
            "device_id": ctx.identity.device_id,
            "client_id": client_id,
            "client_mode": mode,
            "role": role or "operator",
            "scopes": scope_list,
            "signed_at_ms": signed,
            "token": the_token or "",
            "nonce": sent_nonce.strip(),
        }
        if version == "v3":
            payload = build_payload_v3(**common, platform=platform, device_family=None)
        else:
            payload = build_payload_v2(**common)
        params["device"] = {
            "id": ctx.identity.device_id,
            "publicKey": ctx.identity.public_key,
            "signature": ctx.identity.sign(payload),
            "signedAt": signed,
            "nonce": sent_nonce,
        }
    return params


def _node(ctx: CaseContext, **kw: Any) -> dict[str, Any]:
    return signed_params(ctx, role="node", scopes=[], client_id="node-host", mode="node", **kw)


def _edit(
    build: Callable[[CaseContext], dict[str, Any]], edit: Callable[[dict[str, Any]], Any]
) -> Callable[[CaseContext], str]:
    def run(ctx: CaseContext) -> str:
        params = build(ctx)
        edit(params)
        return connect_frame(params)

    return run


def _params(**kw: Any) -> Callable[[CaseContext], str]:
    return lambda ctx: connect_frame(signed_params(ctx, **kw))


def _with_key(
    key: Callable[[DeviceIdentity], str], device_id: str | None = None
) -> Callable[[CaseContext], str]:
    def edit(ctx: CaseContext) -> str:
        params = signed_params(ctx)
        params["device"]["publicKey"] = key(ctx.identity)
        if device_id is not None:
            params["device"]["id"] = device_id
        return connect_frame(params)

    return edit


_SHORT_KEY = b"0123456789abcdef"


def _pem(identity: DeviceIdentity) -> str:
    public = identity.private_key.public_key()
    return public.public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo).decode("ascii")


CASES: list[HandshakeCase] = [
    # first frame
    HandshakeCase("not json", lambda ctx: "not json{"),
    HandshakeCase(
        "json NaN", lambda ctx: '{"type":"req","id":"a","method":"connect","params":NaN}'
    ),
    HandshakeCase("event frame", lambda ctx: json.dumps({"type": "event", "event": "x"})),
    HandshakeCase("json array", lambda ctx: "[1,2]"),
    # nested past Python's recursion limit (JSON.parse has none): answered like any other
    HandshakeCase(
        "health nested 3000 deep",
        lambda ctx: (
            '{"type":"req","id":"a","method":"health","params":' + "[" * 3000 + "]" * 3000 + "}"
        ),
    ),
    HandshakeCase(
        "connect params nested 3000 deep",
        lambda ctx: (
            '{"type":"req","id":"a","method":"connect","params":{"x":'
            + "[" * 3000
            + "]" * 3000
            + "}}"
        ),
    ),
    HandshakeCase("req with extra property", lambda ctx: connect_frame({}, bogus=1)),
    HandshakeCase(
        "req with empty id", lambda ctx: json.dumps({"type": "req", "id": "", "method": "connect"})
    ),
    HandshakeCase(
        "traceparent too long", lambda ctx: connect_frame(signed_params(ctx), traceparent="x" * 129)
    ),
    HandshakeCase(
        "first request health",
        lambda ctx: json.dumps({"type": "req", "id": "h", "method": "health"}),
    ),
    HandshakeCase("worker role", lambda ctx: connect_frame({"role": "worker"})),
    HandshakeCase(
        "worker mode in event",
        lambda ctx: json.dumps({"type": "event", "params": {"client": {"mode": "worker"}}}),
    ),
    HandshakeCase("frame over 64 KiB", lambda ctx: connect_frame({"x": "a" * 70_000})),
    # schema
    HandshakeCase(
        "connect without params",
        lambda ctx: json.dumps({"type": "req", "id": "a", "method": "connect"}),
    ),
    HandshakeCase("empty params", lambda ctx: connect_frame({})),
    HandshakeCase(
        "unknown client.id", _edit(signed_params, lambda p: p["client"].update(id="nope"))
    ),
    HandshakeCase("client.id upper case", _params(client_id="CLI"), "case-sensitive"),
    HandshakeCase(
        "unknown client.mode", _edit(signed_params, lambda p: p["client"].update(mode="nope"))
    ),
    HandshakeCase("extra root property", _edit(signed_params, lambda p: p.update(bogus=1))),
    HandshakeCase("extra nested property", _edit(signed_params, lambda p: p["client"].update(x=1))),
    HandshakeCase(
        "several errors",
        _edit(
            signed_params,
            lambda p: (
                p.update(minProtocol="4", maxProtocol=0, bogus=1),
                p["client"].pop("version"),
                p["client"].update(platform=""),
            ),
        ),
        "all errors joined with '; ', close reason cut to 120 bytes",
    ),
    HandshakeCase("null role", _edit(signed_params, lambda p: p.update(role=None))),
    HandshakeCase(
        "nine extra properties",
        _edit(signed_params, lambda p: p.update({f"x{i}": i for i in range(9)})),
        "TypeBox keeps 8 errors: the per-key 'schema is false' ones fill them",
    ),
    HandshakeCase(
        "negative signedAt", _edit(signed_params, lambda p: p["device"].update(signedAt=-1))
    ),
    HandshakeCase(
        "protocol 4.0 is an integer",
        lambda ctx: connect_frame(signed_params(ctx)).replace(
            '"minProtocol": 4', '"minProtocol": 4.0'
        ),
    ),
    # admission
    HandshakeCase("protocol 3 operator", _params(min_protocol=3, max_protocol=3)),
    HandshakeCase("protocol 5", _params(min_protocol=5, max_protocol=5)),
    HandshakeCase(
        "protocol 5 and role admin",
        _params(min_protocol=5, max_protocol=5, role="admin"),
        "protocol first",
    ),
    HandshakeCase("protocol 3 probe", _params(min_protocol=3, max_protocol=3, mode="probe")),
    HandshakeCase("role admin", _params(role="admin")),
    HandshakeCase(
        "browser copilot without caps",
        _params(client_id="openclaw-browser-copilot", mode="ui", device=False),
    ),
    HandshakeCase(
        "browser copilot without origin",
        _edit(
            lambda ctx: signed_params(
                ctx, client_id="openclaw-browser-copilot", mode="ui", device=False
            ),
            lambda p: p.update(caps=["run-tool-bindings", "session-scoped-events"]),
        ),
    ),
    HandshakeCase(
        "webchat without origin", _params(client_id="webchat", mode="webchat", device=False)
    ),
    # missing device identity
    HandshakeCase("tui without device", _params(client_id="openclaw-tui", mode="ui", device=False)),
    HandshakeCase("no token, no device", _params(token=None, device=False)),
    HandshakeCase("wrong token, no device", _params(token="wrong", device=False)),
    HandshakeCase(
        "node-host wrong token, no device",
        lambda ctx: connect_frame(_node(ctx, token="wrong", device=False)),
    ),
    HandshakeCase("node without device", lambda ctx: connect_frame(_node(ctx, device=False))),
    HandshakeCase(
        "operator without device", _params(device=False), "accepted: shared token on loopback"
    ),
    # device proof, in the gateway's order
    HandshakeCase(
        "device id wrong", _edit(signed_params, lambda p: p["device"].update(id="0" * 64))
    ),
    HandshakeCase(
        "device id upper case",
        _edit(signed_params, lambda p: p["device"].update(id=p["device"]["id"].upper())),
    ),
    HandshakeCase("undecodable key", _with_key(lambda i: "!!!!")),
    HandshakeCase(
        "short key with its own id",
        _with_key(
            lambda i: base64.urlsafe_b64encode(_SHORT_KEY).decode(),
            hashlib.sha256(_SHORT_KEY).hexdigest(),
        ),
        "gets an id, then fails the signature",
    ),
    HandshakeCase("signedAt 1", _params(signed_at=1)),
    HandshakeCase(
        "signedAt 1 and wrong nonce", _params(signed_at=1, nonce="wrong"), "expiry before nonce"
    ),
    HandshakeCase("wrong nonce", _params(nonce="wrong")),
    HandshakeCase("blank nonce", _params(nonce="   ")),
    HandshakeCase(
        "platform changed after signing",
        _edit(signed_params, lambda p: p["client"].update(platform="darwin")),
    ),
    HandshakeCase(
        "wrong token and bad signature",
        _edit(signed_params, lambda p: p["auth"].update(token="wrong")),
        "device proof before credentials",
    ),
    # credentials
    HandshakeCase("wrong token", _params(token="wrong")),
    HandshakeCase("no token", _params(token=None)),
    HandshakeCase(
        "device token and wrong token",
        _edit(
            lambda ctx: signed_params(ctx, token="wrong"),
            lambda p: p["auth"].update(deviceToken="nope"),
        ),
    ),
    # pairing (accepted proofs)
    HandshakeCase("unpaired operator", _params()),
    HandshakeCase("unpaired operator, role omitted", _params(role=None), "default role operator"),
    HandshakeCase("unpaired node, payload v2", lambda ctx: connect_frame(_node(ctx, version="v2"))),
    HandshakeCase(
        "padded nonce",
        lambda ctx: connect_frame(signed_params(ctx, nonce=f" {ctx.challenge.nonce} ")),
    ),
    HandshakeCase(
        "padded standard base64 key",
        _with_key(lambda i: base64.b64encode(i.public_key_raw).decode()),
    ),
    HandshakeCase("PEM key", _with_key(_pem)),
    HandshakeCase(
        "key with junk characters",
        _with_key(lambda i: f"*{i.public_key[:9]}!!{i.public_key[9:]}==junk"),
    ),
]
"""The probe table."""


# ------------------------------------------------------------------ judging
async def run_over_socket(
    url: str, case: HandshakeCase, *, token: str, timeout: float = 15
) -> tuple[Outcome, CaseContext, str | bytes]:
    """Send the case's first frame to a gateway and record its answer.

    Returns:
        The outcome, and the context and data sent (to feed :func:`predict`).
    """
    async with connect(url, open_timeout=timeout, max_size=None) as ws:
        challenge = json.loads(await asyncio.wait_for(ws.recv(), timeout))["payload"]
        ctx = CaseContext(
            Challenge(challenge["nonce"], challenge["ts"]), DeviceIdentity.generate(), token
        )
        data = case.build(ctx)
        await ws.send(data)
        res: dict[str, Any] | None = None
        try:
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), timeout))
                if frame.get("type") == "res":
                    res = frame
                    if frame.get("ok"):
                        return _normalize(None, None, None, accepted=True), ctx, data
        except ConnectionClosed:
            pass
        received = ws.protocol.close_rcvd
    error = res.get("error") if res else None
    code = received.code if received else None
    reason = received.reason if received else None
    return _normalize(error, code, reason), ctx, data


def predict(ctx: CaseContext, data: str | bytes, *, now_ms: int | None = None) -> Outcome:
    """What our handshake functions answer to ``data``, playing the server's part.

    The server's part follows the real gateway's order and rules for this setup (token auth,
    loopback, manual pairing, nothing paired): missing device identity, then the device proof,
    then the shared token, then pairing.
    """
    now = now_ms if now_ms is not None else time.time_ns() // 1_000_000
    try:
        _request_id, raw = parse_first_frame(data)
        params = validate_connect_params(raw)
        admission = admit_connect(params, origin=None)
        auth = params.auth.model_dump(by_alias=True, exclude_none=True) if params.auth else {}
        sent = (auth.get("token") or "").strip()
        token_ok = bool(sent) and sent == ctx.token
        reason = "token_mismatch" if sent or auth.get("password") else "token_missing"
        client = (str(params.client.id), str(params.client.mode))
        if params.device is None:
            if admission.is_control_ui:
                raise ConnectRejection.control_ui_device_identity_required()
            if admission.role == "operator" and token_ok:
                return _normalize(None, None, None, accepted=True)
            if not token_ok and (auth.get("token") or auth.get("password")):
                raise _auth_failure(reason, client, auth, has_device=False)
            raise ConnectRejection.device_identity_required()
        device = verify_device_proof(params, nonce=ctx.challenge.nonce, now_ms=now)
        if auth.get("deviceToken"):
            raise _auth_failure("device_token_mismatch", client, auth, has_device=True)
        if not token_ok:
            raise _auth_failure(reason, client, auth, has_device=True)
        raise ConnectRejection.pairing_required(
            request_id=REQUEST_ID_PLACEHOLDER.strip("<>"),
            device_id=device.device_id,
            role=admission.role,
            scopes=admission.scopes,
        )
    except ConnectRejection as rejection:
        frame = rejection.response_frame(request_id="probe")
        error = frame["error"] if frame else None
        return _normalize(error, rejection.close_code, rejection.close_reason)


def _auth_failure(
    reason: str, client: tuple[str, str], auth: dict[str, Any], *, has_device: bool
) -> ConnectRejection:
    return ConnectRejection.auth_failed(
        reason,
        client_id=client[0],
        client_mode=client[1],
        auth=auth,
        has_device_identity=has_device,
    )
