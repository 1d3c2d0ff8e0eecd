"""Setup-code profiles as on the real gateway 2026.9.6: who gets the silent hand-off, when a
code is used up, the pending request, voice-node codes, and ``publicUrl`` normalization.

The live behaviour is compared side by side in
``tests/interop/test_gw_rejections_side_by_side.py``; these pin the rules themselves.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.handshake import validate_connect_params
from gateway.handshake.setup_profile import BOOTSTRAP_VOICE_NODE_OPERATOR_SCOPES, setup_profile
from gateway.methods.devices import normalize_public_url
from gateway.state import BOOTSTRAP_TOKEN_TTL_MS, DB_FILENAME, BootstrapRecord, GatewayState
from gateway.state.bootstrap import SETUP_COMPLETION_RETENTION_MS, SetupProfile

KEY = "w1tF0k6A6Udo13b50tQToiyU74nTScuJShZTpxQthm4"
T0 = 1_796_023_931_000


def _profile(name: SetupProfile, local: bool = True) -> Any:
    return setup_profile(name, local=local, tls=False)


def _params(
    client_id: str,
    *,
    platform: str = "linux",
    family: str | None = None,
    role: str = "node",
    scopes: list[str] | None = None,
    mode: str | None = None,
) -> Any:
    client: dict[str, Any] = {
        "id": client_id,
        "version": "1.0",
        "platform": platform,
        "mode": mode or ("node" if role == "node" else "cli"),
    }
    if family is not None:
        client["deviceFamily"] = family
    return validate_connect_params(
        {
            "minProtocol": 3,
            "maxProtocol": 4,
            "client": client,
            "role": role,
            "scopes": scopes or [],
        }
    )


ANDROID = {"client_id": "openclaw-android", "platform": "android", "family": "Android"}
IOS = {"client_id": "openclaw-ios", "platform": "iOS 18.1", "family": "iPhone"}
ESP32 = {"client_id": "node-host", "platform": "esp32", "family": "esp32"}


@pytest.mark.parametrize(
    ("name", "client", "expected"),
    [
        ("full", ANDROID, True),
        ("full", {**ANDROID, "platform": " Android 15 "}, True),
        ("full", {**ANDROID, "family": None}, False),
        ("full", {**ANDROID, "platform": "androidx"}, False),
        ("full", {**ANDROID, "platform": "ios"}, False),
        ("full", IOS, True),
        ("full", {**IOS, "platform": "iPadOS 18", "family": "iPad"}, True),
        ("full", {**IOS, "family": "Mac"}, False),
        ("limited", ANDROID, True),
        ("limited", IOS, True),
        ("full", {"client_id": "node-host"}, False),
        ("full", {"client_id": "openclaw-linux"}, False),
        ("node", {"client_id": "node-host"}, True),
        ("node", ANDROID, False),
        ("voice-node", ESP32, True),
        ("voice-node", {**ESP32, "platform": "ESP32 S3"}, True),
        ("voice-node", {**ESP32, "family": None}, False),
        ("voice-node", {"client_id": "node-host"}, False),
        ("voice-node", ANDROID, False),
    ],
)
def test_who_gets_the_silent_hand_off(name: SetupProfile, client: Any, expected: bool) -> None:
    """``isSetupCodeHandoffBootstrapClient``: the official apps (id, platform and device
    family agreeing) for full/limited codes, node-host for node codes, node-host on an ESP32
    for voice-node codes."""
    params = _params(
        client["client_id"], platform=client.get("platform", "linux"), family=client.get("family")
    )
    assert _profile(name).hands_off_to(params, "node") is expected


def test_the_hand_off_is_a_node_connect_without_scopes() -> None:
    """An operator connect, a node asking for scopes, or a node in another mode is never
    the hand-off."""
    profile = _profile("full")
    android = ("openclaw-android",)
    assert not profile.hands_off_to(
        _params(*android, platform="android", family="Android", role="operator"), "operator"
    )
    asked = _params(*android, platform="android", family="Android", scopes=["operator.read"])
    assert not profile.hands_off_to(asked, "node")
    ui_mode = _params(*android, platform="android", family="Android", mode="ui")
    assert not profile.hands_off_to(ui_mode, "node")


def test_voice_node_profile() -> None:
    """Node plus operator.read/operator.talk; nothing else (talk.secrets, write) allowed."""
    profile = _profile("voice-node")
    assert profile.roles == ("node", "operator")
    assert profile.scopes == BOOTSTRAP_VOICE_NODE_OPERATOR_SCOPES
    assert profile.allows("operator", ["operator.read", "operator.talk"])
    for scopes in (["operator.write"], ["operator.talk.secrets"], ["operator.admin"]):
        assert not profile.allows("operator", scopes), scopes


def test_used_up_once_the_legs_cover_the_profile() -> None:
    """``bootstrapProfileSatisfiesProfile``: every role redeemed, operator scopes covered
    (operator.admin covers the rest)."""
    full = _profile("full")
    assert not full.covered_by(["operator"], ["operator.admin"])
    assert not full.covered_by(["node"], [])
    assert not full.covered_by(["node", "operator"], ["operator.read"])
    assert full.covered_by(["node", "operator"], ["operator.admin"])
    limited = _profile("limited")
    assert limited.covered_by(["node", "operator"], list(limited.scopes))
    assert _profile("node").covered_by(["node"], [])
    assert _profile("voice-node").covered_by(
        ["node", "operator"], ["operator.talk", "operator.read"]
    )


def test_legs_are_bounded_by_the_profile() -> None:
    """A leg records the requested operator scopes that are in the profile's list."""
    full = _profile("full")
    assert full.bounded("operator", ["operator.pairing", "operator.admin"]) == ["operator.admin"]
    assert full.bounded("node", ["operator.read"]) == []


# ------------------------------------------------------------------ state
@pytest.fixture
def state(tmp_path: Path) -> Iterator[GatewayState]:
    with GatewayState(tmp_path / "state" / DB_FILENAME) as opened:
        yield opened


def test_voice_node_codes_are_stored_as_node(state: GatewayState) -> None:
    """The table knows full/limited/node only: a voice-node code is stored as node (so it
    can never widen after a restart) and remembered as voice-node by this process."""
    token, record = state.bootstrap.mint(T0, access="voice-node")
    assert record.access == "node"
    assert state.bootstrap.profile_of(record) == "voice-node"
    assert state.bootstrap.profile_of(state.bootstrap.mint(T0, access="node")[1]) == "node"
    bound = state.bootstrap.redeem(token, "dev", KEY, T0)
    assert bound is not None and state.bootstrap.profile_of(bound) == "voice-node"
    state.bootstrap.consume(record.setup_id, T0)
    completed = state.bootstrap.status(record.setup_id, T0)
    assert completed is not None and state.bootstrap.profile_of(completed) == "voice-node"


def test_pending_request_and_legs(state: GatewayState) -> None:
    """The first request is pending; a different one from the bound device is refused until
    a leg was redeemed; legs accumulate."""
    token, _record = state.bootstrap.mint(T0)

    def ask(role: str, *scopes: str) -> BootstrapRecord | None:
        return state.bootstrap.redeem(token, "dev", KEY, T0, request=lambda _r: (role, scopes))

    first = ask("operator", "operator.read")
    assert first is not None
    assert ask("operator", " operator.read", "operator.read") is not None  # same, normalized
    assert ask("node") is None
    assert ask("operator", "operator.write") is None
    assert state.bootstrap.redeem_leg(first, "operator", ["operator.read"]) == (
        frozenset({"operator"}),
        frozenset({"operator.read"}),
    )
    assert ask("node") is not None
    roles, scopes = state.bootstrap.redeem_leg(first, "node", [])
    assert (roles, scopes) == (frozenset({"operator", "node"}), frozenset({"operator.read"}))


def test_memory_is_pruned_after_the_completion_retention(state: GatewayState) -> None:
    """What is kept in memory per code goes once the code could no longer be reported."""
    _token, record = state.bootstrap.mint(T0, access="voice-node")
    later = T0 + BOOTSTRAP_TOKEN_TTL_MS + SETUP_COMPLETION_RETENTION_MS + 1
    state.bootstrap.mint(later)
    assert state.bootstrap.profile_of(record) == "node"


# ------------------------------------------------------------------ publicUrl
@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ws://192.168.1.5:18789", "ws://192.168.1.5:18789"),
        ("http://192.168.1.5", "ws://192.168.1.5"),
        ("https://gw.example", "wss://gw.example"),
        ("wss://gw.example:443", "wss://gw.example"),
        ("ws://192.168.1.5:80", "ws://192.168.1.5"),
        ("wss://gw.example:8443/", "wss://gw.example:8443"),
        ("wss://x.example/path/", "wss://x.example/path/"),
        ("ws://LOCALHOST:18789", "ws://localhost:18789"),
        ("ws://[::1]:5", "ws://[::1]:5"),
        ("ws://gw.example:18789?x=1#f", "ws://gw.example:18789"),
        ("192.168.1.9:18789", "ws://192.168.1.9:18789"),
        ("192.168.1.9:18789/x/y", "ws://192.168.1.9:18789"),
        ("xxx", "ws://xxx"),
        ("ws://user:pw@x.example", None),
        ("ws:x", None),
        ("ftp://x", None),
        ("not a url", None),
        ("ws://x:abc", None),
        ("  ", None),
    ],
)
def test_public_url_is_normalized_like_the_real_gateway(raw: str, expected: str | None) -> None:
    """What the real gateway answered in ``gatewayUrl`` (or "Configured publicUrl is
    invalid." for None), observed on 2026.9.6."""
    assert normalize_public_url(raw, tls=False) == expected


def test_a_bare_host_takes_this_gateways_scheme() -> None:
    assert normalize_public_url("gw.example:18789", tls=True) == "wss://gw.example:18789"
