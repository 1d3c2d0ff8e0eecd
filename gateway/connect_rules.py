"""Rules of a ``connect`` shared by admission and the pairing gate: what a setup code's
profile allows, device metadata normalization, how a device token covers scopes, and the
outcome of authentication."""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gateway.core import GatewayCore
from gateway.scopes import scope_satisfied
from gateway.state import BootstrapRecord
from openclaw_desktop.protocol import ConnectParams

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

_ANDROID_PLATFORM = re.compile(r"android(?:\s|$)")
_IOS_PLATFORM = re.compile(r"(?:ios|ipados)(?:\s|$)")
_IOS_FAMILY = re.compile(r"(?:iphone|ipad|ios)")
_ESP32_PLATFORM = re.compile(r"esp32(?:\s|$)")


@dataclass(frozen=True)
class _BootstrapProfile:
    """The roles and operator scopes a setup code lets its device ask for."""

    roles: tuple[str, ...]
    scopes: tuple[str, ...]
    #: ``full``, ``limited``, ``node`` or ``voice-node`` (full downgraded is ``limited``).
    name: str = "limited"

    def allows(self, role: str, scopes: Sequence[str]) -> bool:
        """``bootstrapProfileAllowsRequest``: the role is in the profile and its scopes are
        covered (with the operator implications: admin covers every operator scope)."""
        return role in self.roles and _token_covers(role, scopes, self.scopes)

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
            if role == "operator" and not _token_covers(role, self.scopes, scopes):
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
        platform = _metadata(client.platform)
        family = _metadata(client.device_family)
        client_id = client.id.value
        if self.name in ("full", "limited"):
            if client_id == "openclaw-android":
                return bool(_ANDROID_PLATFORM.match(platform)) and family == "android"
            if client_id == "openclaw-ios":
                return bool(_IOS_PLATFORM.match(platform) and _IOS_FAMILY.fullmatch(family))
            return False
        if self.name == "node":
            return client_id == "node-host"
        if self.name == "voice-node":
            esp32 = bool(_ESP32_PLATFORM.match(platform)) and family == "esp32"
            return client_id == "node-host" and esp32
        return False


def _metadata(value: str | None) -> str:
    """``normalizeDeviceMetadataForAuth``: trimmed, ASCII letters lowercased."""
    text = (value or "").strip()
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


def _bootstrap_profile(
    core: GatewayCore, record: BootstrapRecord, local: bool, *, profile: str | None = None
) -> _BootstrapProfile:
    """The profile of a setup code as presented on this connection.

    ``profile`` is the code's profile name (``core.state.bootstrap.profile_of(record)``;
    ``record.access`` when omitted). ``node`` codes carry the node role only, ``voice-node``
    codes node plus operator.read/operator.talk. Full access needs TLS or this machine: a
    full code presented over plaintext from another host gets the limited profile, as the
    docs say ("plaintext LAN ``ws://`` setup automatically uses the same limited profile";
    the real gateway already downgrades such a code when it mints it).
    """
    name = record.access if profile is None else profile
    if name == "node":
        return _BootstrapProfile(("node",), (), "node")
    if name == "voice-node":
        return _BootstrapProfile(("node", "operator"), BOOTSTRAP_VOICE_NODE_OPERATOR_SCOPES, name)
    if name == "full" and (local or core.config.tls):
        return _BootstrapProfile(("node", "operator"), BOOTSTRAP_FULL_OPERATOR_SCOPES, "full")
    return _BootstrapProfile(("node", "operator"), BOOTSTRAP_LIMITED_OPERATOR_SCOPES, "limited")


def _code_profile(core: GatewayCore, record: BootstrapRecord, local: bool) -> _BootstrapProfile:
    return _bootstrap_profile(core, record, local, profile=core.state.bootstrap.profile_of(record))


@dataclass(frozen=True)
class _Auth:
    method: str
    token_scopes: list[str] | None = None
    bootstrap: BootstrapRecord | None = None
    #: The device token the client authenticated with (handed back in hello-ok).
    presented: str | None = None
    #: When that token was issued or last rotated (``hello-ok.auth.issuedAtMs``).
    presented_issued_at_ms: int | None = None


def _token_covers(role: str, requested: Sequence[str], granted: Sequence[str]) -> bool:
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
