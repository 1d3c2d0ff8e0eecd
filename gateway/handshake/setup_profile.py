"""What a setup code (bootstrap token) lets its device ask for, and how a device token's
scopes cover a connect's: the profile of a code, its hand-off client, when it is used up."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gateway.handshake.client_metadata import (
    ANDROID_PLATFORM,
    ESP32_PLATFORM,
    IOS_FAMILY,
    IOS_PLATFORM,
    normalize_metadata,
)
from gateway.scopes import scope_satisfied
from openclaw_desktop.protocol import ConnectParams

__all__ = [
    "BOOTSTRAP_FULL_OPERATOR_SCOPES",
    "BOOTSTRAP_LIMITED_OPERATOR_SCOPES",
    "BOOTSTRAP_VOICE_NODE_OPERATOR_SCOPES",
    "SetupCodeProfile",
    "setup_profile",
    "token_covers",
]

#: Operator scopes a setup code may carry, as the real gateway's
#: ``BOOTSTRAP_HANDOFF_OPERATOR_SCOPES`` (``src/shared/device-bootstrap-profile.ts``): the
#: limited profile, and what a phone's hand-off operator token gets with limited access
#: (observed in ``hello-ok.auth.deviceTokens`` of 2026.9.6; the docs omit operator.questions).
#: Never operator.pairing.
BOOTSTRAP_LIMITED_OPERATOR_SCOPES = (
    "operator.approvals",
    "operator.questions",
    "operator.read",
    "operator.talk.secrets",
    "operator.write",
)
#: Full access adds operator.admin (``MOBILE_FULL_ACCESS_OPERATOR_SCOPES``).
BOOTSTRAP_FULL_OPERATOR_SCOPES = ("operator.admin", *BOOTSTRAP_LIMITED_OPERATOR_SCOPES)
#: A voice-node code's operator scopes (``VOICE_NODE_PAIRING_SETUP_BOOTSTRAP_PROFILE``).
BOOTSTRAP_VOICE_NODE_OPERATOR_SCOPES = ("operator.read", "operator.talk")


def token_covers(role: str, requested: Sequence[str], granted: Sequence[str]) -> bool:
    """Whether a device token's scopes allow the requested ones (``roleScopesAllow``):
    operator scopes with their implications (admin covers all, write covers read and talk),
    other roles' scopes only as ``<role>.*`` and listed."""
    for raw in requested:
        scope = raw.strip()
        if not scope:
            continue
        if role == "operator":
            if not scope_satisfied(scope, granted):
                return False
        elif not (scope.startswith(f"{role}.") and scope in granted):
            return False
    return True


@dataclass(frozen=True)
class SetupCodeProfile:
    """The roles and operator scopes a setup code lets its device ask for."""

    roles: tuple[str, ...]
    scopes: tuple[str, ...]
    #: ``full``, ``limited``, ``node`` or ``voice-node`` (full downgraded is ``limited``).
    name: str = "limited"

    def allows(self, role: str, scopes: Sequence[str]) -> bool:
        """``bootstrapProfileAllowsRequest``: the role is in the profile and its scopes are
        covered (with the operator implications: admin covers every operator scope)."""
        return role in self.roles and token_covers(role, scopes, self.scopes)

    def bounded(self, role: str, scopes: Sequence[str]) -> list[str]:
        """``resolveBootstrapProfileScopesForRole``: the requested operator scopes that are
        in the profile's list (none for other roles), sorted."""
        if role != "operator":
            return []
        return sorted({s.strip() for s in scopes} & set(self.scopes))

    def covered_by(self, roles: Iterable[str], scopes: Sequence[str]) -> bool:
        """``bootstrapProfileSatisfiesProfile``: redeemed ``roles`` and ``scopes`` cover
        every role of the profile, and its operator scopes (with the implications)."""
        redeemed = set(roles)
        for role in self.roles:
            if role not in redeemed:
                return False
            if role == "operator" and not token_covers(role, self.scopes, scopes):
                return False
        return True

    def hands_off_to(self, params: ConnectParams, role: str) -> bool:
        """``isSetupCodeHandoffBootstrapClient`` for a node connect with no scopes in node
        mode: a full or limited code only to the official Android/iOS app (id, platform and
        device family must agree), a node code only to ``node-host``, a voice-node code
        only to ``node-host`` on an ESP32. Everyone else goes through normal pairing."""
        client = params.client
        if role != "node" or params.scopes or client.mode.value != "node":
            return False
        platform = normalize_metadata(client.platform)
        family = normalize_metadata(client.device_family)
        client_id = client.id.value
        if self.name in ("full", "limited"):
            if client_id == "openclaw-android":
                return bool(ANDROID_PLATFORM.match(platform)) and family == "android"
            if client_id == "openclaw-ios":
                return bool(IOS_PLATFORM.match(platform) and IOS_FAMILY.fullmatch(family))
            return False
        if self.name == "node":
            return client_id == "node-host"
        if self.name == "voice-node":
            esp32 = bool(ESP32_PLATFORM.match(platform)) and family == "esp32"
            return client_id == "node-host" and esp32
        return False


def setup_profile(name: str, *, local: bool, tls: bool) -> SetupCodeProfile:
    """The profile of a setup code as presented on this connection.

    ``name`` is the code's profile name (``GatewayState.bootstrap.profile_of``). ``node``
    codes carry the node role only, ``voice-node`` codes node plus
    operator.read/operator.talk. Full access needs TLS or this machine: a full code
    presented over plaintext from another host gets the limited profile, as the docs say
    ("plaintext LAN ``ws://`` setup automatically uses the same limited profile"; the real
    gateway already downgrades such a code when it mints it).
    """
    if name == "node":
        return SetupCodeProfile(("node",), (), "node")
    if name == "voice-node":
        return SetupCodeProfile(("node", "operator"), BOOTSTRAP_VOICE_NODE_OPERATOR_SCOPES, name)
    if name == "full" and (local or tls):
        return SetupCodeProfile(("node", "operator"), BOOTSTRAP_FULL_OPERATOR_SCOPES, "full")
    return SetupCodeProfile(("node", "operator"), BOOTSTRAP_LIMITED_OPERATOR_SCOPES, "limited")
