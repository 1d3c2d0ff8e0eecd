"""``device.*`` (pairing, tokens, setup codes) params, in the reference's property order.

Handler rules no schema here says (the gateway checks them after the declared check): a
blank ``label`` is ``label required``; ``device.token.rotate``'s ``scopes`` must hold strings
(the reference's ``items`` schema, which these models do not derive); ``device.pair.setupCode``'s
URL rules (a secure URL for a public host, no credentials or path).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from openclaw_desktop.protocol.base import ClosedModel, OpenModel, WireModel
from openclaw_desktop.protocol.methods.schema import AS_ENUM

__all__ = [
    "PARAMS",
    "DevicePairApproveParams",
    "DevicePairListParams",
    "DevicePairRejectParams",
    "DevicePairRemoveParams",
    "DevicePairRenameParams",
    "DevicePairSetupCodeParams",
    "DevicePairSetupStatusParams",
    "DeviceTokenRevokeParams",
    "DeviceTokenRotateParams",
]

NonEmpty = Annotated[str, Field(min_length=1)]


class DevicePairListParams(ClosedModel):
    """``device.pair.list``: no params."""


class DevicePairApproveParams(OpenModel):
    """``device.pair.approve``: a pending pairing request. Open, unlike the reference's
    closed schema: this gateway has always taken a refused connect's ``details`` (the
    request id beside ``code`` and ``reason``) as these params, and its tests hold it to
    that."""

    request_id: NonEmpty


class DevicePairRejectParams(ClosedModel):
    """``device.pair.reject``: a pending pairing request."""

    request_id: NonEmpty


class DevicePairRemoveParams(ClosedModel):
    """``device.pair.remove``: a paired device."""

    device_id: NonEmpty


class DevicePairRenameParams(ClosedModel):
    """``device.pair.rename``: a paired device's label (at most 64 characters)."""

    device_id: NonEmpty
    label: Annotated[str, Field(min_length=1, max_length=64)]


class DeviceTokenRotateParams(ClosedModel):
    """``device.token.rotate``: a new token for one role (its scopes, when given)."""

    device_id: NonEmpty
    role: NonEmpty
    scopes: list[NonEmpty] | None = None


class DeviceTokenRevokeParams(ClosedModel):
    """``device.token.revoke``: one role's token."""

    device_id: NonEmpty
    role: NonEmpty


class DevicePairSetupStatusParams(ClosedModel):
    """``device.pair.setupStatus``: one setup, by its id."""

    setup_id: Annotated[str, Field(min_length=1, max_length=128)]


#: The params model of each of these methods, by method name.
class DevicePairSetupCodeParams(ClosedModel):
    """``device.pair.setupCode``: a setup code for a phone (``joinUrl`` may only be ``true``:
    ask for the join URL form)."""

    public_url: NonEmpty | None = None
    prefer_remote_url: bool | None = None
    include_qr: bool | None = None
    bootstrap_profile: Annotated[Literal["limited", "node", "voice-node"] | None, AS_ENUM] = None
    join_url: Literal[True] | None = None


PARAMS: dict[str, type[WireModel]] = {
    "device.pair.list": DevicePairListParams,
    "device.pair.approve": DevicePairApproveParams,
    "device.pair.reject": DevicePairRejectParams,
    "device.pair.remove": DevicePairRemoveParams,
    "device.pair.rename": DevicePairRenameParams,
    "device.token.rotate": DeviceTokenRotateParams,
    "device.token.revoke": DeviceTokenRevokeParams,
    "device.pair.setupCode": DevicePairSetupCodeParams,
    "device.pair.setupStatus": DevicePairSetupStatusParams,
}
