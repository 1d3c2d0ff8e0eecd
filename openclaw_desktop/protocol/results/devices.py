"""Results of the device pairing and token methods (``device.pair.*``, ``device.token.*``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from openclaw_desktop.protocol.base import OpenModel

__all__ = [
    "RESULTS",
    "DevicePairApproveResult",
    "DevicePairListResult",
    "DevicePairRejectResult",
    "DevicePairRemoveResult",
    "DevicePairRenameResult",
    "DeviceSetupCodeResult",
    "DeviceSetupStatusResult",
    "DeviceTokenRevokeResult",
    "DeviceTokenRotateResult",
]


class DevicePairListResult(OpenModel):
    """``device.pair.list``: ``{pending, paired}`` (device rows)."""

    pending: list[dict[str, Any]]
    paired: list[dict[str, Any]]


class DevicePairApproveResult(OpenModel):
    """``device.pair.approve``: ``{requestId, device}``."""

    request_id: str
    device: dict[str, Any]


class DevicePairRejectResult(OpenModel):
    """``device.pair.reject``: ``{requestId, deviceId}``."""

    request_id: str
    device_id: str


class DevicePairRemoveResult(OpenModel):
    """``device.pair.remove``: ``{deviceId, removed}``."""

    device_id: str
    removed: bool


class DevicePairRenameResult(OpenModel):
    """``device.pair.rename``: ``{deviceId, label}``."""

    device_id: str
    label: str


class DeviceTokenRotateResult(OpenModel):
    """``device.token.rotate``: ``{deviceId, role, ...}``; the token itself only to the
    device's own connection (``tokenDelivery`` says which)."""

    device_id: str
    role: str
    token: str | None = None
    scopes: list[str] | None = None
    rotated_at_ms: int | None = None
    token_delivery: str | None = None


class DeviceTokenRevokeResult(OpenModel):
    """``device.token.revoke``: ``{deviceId, role, revokedAtMs}``."""

    device_id: str
    role: str
    revoked_at_ms: int


class DeviceSetupCodeResult(OpenModel):
    """``device.pair.setupCode``: a single-use setup code for a phone (older protocol-4
    gateways send no ``setupId`` and ``expiresAtMs``, the reference's docs say)."""

    setup_code: str
    setup_id: str | None = None
    expires_at_ms: int | None = None
    qr_data_url: str | None = None
    gateway_url: str | None = None
    gateway_urls: list[str] | None = None
    auth: str | None = None
    url_source: str | None = None
    access: str | None = None
    access_downgraded: bool | None = None


class DeviceSetupStatusResult(OpenModel):
    """``device.pair.setupStatus``: ``{}`` until the setup completes, then the completions
    by role; no field is always present."""


RESULTS: dict[str, type[BaseModel]] = {
    "device.pair.list": DevicePairListResult,
    "device.pair.approve": DevicePairApproveResult,
    "device.pair.reject": DevicePairRejectResult,
    "device.pair.remove": DevicePairRemoveResult,
    "device.pair.rename": DevicePairRenameResult,
    "device.token.rotate": DeviceTokenRotateResult,
    "device.token.revoke": DeviceTokenRevokeResult,
    "device.pair.setupCode": DeviceSetupCodeResult,
    "device.pair.setupStatus": DeviceSetupStatusResult,
}
"""Method name -> result model, for the devices family's methods."""
