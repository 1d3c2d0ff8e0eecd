"""Records of node capability approval (``node.pair.*``) and their wire projections.

Shapes follow the real gateway 2026.9.6: ``node.pair.list`` returns ``pending`` entries like
:meth:`NodePairRequest.to_wire` (also the ``node.pair.requested`` payload) and ``paired``
entries like :meth:`NodeSurface.to_wire` (also ``node.pair.approve``'s ``node``). Fields the
node did not declare fall back to its paired-device record, as in the real gateway.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from gateway.state._codec import wire_dict

__all__ = ["NodePairRequest", "NodeSurface"]


def decode_host_stats(text: str | None) -> Mapping[str, Any] | None:
    """Saved host stats (a JSON object, read-only); an unreadable value counts as none (the
    stats are informational: a bad one must not hide the node)."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return MappingProxyType(value) if isinstance(value, dict) else None


@dataclass(frozen=True, slots=True)
class NodeSurface:
    """The approved command surface of a node (``nodeId`` is its device id)."""

    node_id: str
    commands: tuple[str, ...]
    caps: tuple[str, ...]
    #: Read-only (a ``MappingProxyType``); left out of ``hash()``.
    permissions: Mapping[str, bool] | None = field(hash=False)
    created_at_ms: int
    approved_at_ms: int
    display_name: str | None = None
    version: str | None = None
    client_id: str | None = None
    client_mode: str | None = None
    platform: str | None = None
    device_family: str | None = None
    remote_ip: str | None = None
    last_connected_at_ms: int | None = None
    last_disconnected_at_ms: int | None = None
    last_seen_at_ms: int | None = None
    last_seen_reason: str | None = None
    #: The last ``node.host.stats`` the node reported (with ``updatedAtMs``), shown as
    #: ``hostStats`` while it is offline; read-only, left out of ``hash()``.
    last_host_stats: Mapping[str, Any] | None = field(default=None, hash=False)

    def to_wire(self) -> dict[str, Any]:
        """A ``node.pair.list`` ``paired[]`` entry."""
        return wire_dict(
            [
                ("nodeId", self.node_id),
                ("clientId", self.client_id),
                ("clientMode", self.client_mode),
                ("displayName", self.display_name),
                ("platform", self.platform),
                ("version", self.version),
                ("deviceFamily", self.device_family),
                ("caps", list(self.caps)),
                ("commands", list(self.commands)),
                ("permissions", dict(self.permissions) if self.permissions is not None else None),
                ("remoteIp", self.remote_ip),
                ("createdAtMs", self.created_at_ms),
                ("approvedAtMs", self.approved_at_ms),
                ("lastConnectedAtMs", self.last_connected_at_ms),
                ("lastDisconnectedAtMs", self.last_disconnected_at_ms),
                ("lastSeenAtMs", self.last_seen_at_ms),
                ("lastSeenReason", self.last_seen_reason),
            ]
        )


@dataclass(frozen=True, slots=True)
class NodePairRequest:
    """A node's declared surface awaiting operator approval (one per node).

    ``ts_ms`` is the node's last (re)declaration; the request expires five minutes later.
    """

    request_id: str
    node_id: str
    commands: tuple[str, ...]
    caps: tuple[str, ...]
    #: Read-only (a ``MappingProxyType``); left out of ``hash()``.
    permissions: Mapping[str, bool] | None = field(hash=False)
    required_approve_scopes: tuple[str, ...]
    silent: bool
    ts_ms: int
    expires_at_ms: int
    client_id: str | None = None
    client_mode: str | None = None
    display_name: str | None = None
    platform: str | None = None
    version: str | None = None
    device_family: str | None = None
    remote_ip: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """A ``node.pair.list`` ``pending[]`` entry and the ``node.pair.requested`` payload."""
        return wire_dict(
            [
                ("requestId", self.request_id),
                ("nodeId", self.node_id),
                ("clientId", self.client_id),
                ("clientMode", self.client_mode),
                ("displayName", self.display_name),
                ("platform", self.platform),
                ("version", self.version),
                ("deviceFamily", self.device_family),
                ("caps", list(self.caps)),
                ("commands", list(self.commands)),
                ("requiredApproveScopes", list(self.required_approve_scopes)),
                ("permissions", dict(self.permissions) if self.permissions is not None else None),
                ("remoteIp", self.remote_ip),
                ("silent", self.silent),
                ("ts", self.ts_ms),
            ]
        )
