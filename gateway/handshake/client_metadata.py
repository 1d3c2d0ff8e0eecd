"""A connecting client's platform and device family: how they are normalized, which
changes a paired device may make without re-approval (``resolvePinnedClientMetadata``), and
the metadata the real gateway fills in for ``node-host``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gateway.nodes.policy import node_host_platform_metadata
from openclaw_desktop.protocol import ClientInfo

__all__ = [
    "ANDROID_PLATFORM",
    "ESP32_PLATFORM",
    "IOS_FAMILY",
    "IOS_PLATFORM",
    "NATIVE_APP_IDS",
    "Pin",
    "native_app_platform",
    "node_host_client",
    "normalize_metadata",
    "pin_metadata",
]

ANDROID_PLATFORM = re.compile(r"android(?:\s|$)")
IOS_PLATFORM = re.compile(r"(?:ios|ipados)(?:\s|$)")
IOS_FAMILY = re.compile(r"(?:iphone|ipad|ios)")
ESP32_PLATFORM = re.compile(r"esp32(?:\s|$)")


def normalize_metadata(value: str | None) -> str:
    """``normalizeDeviceMetadataForAuth``: trimmed, ASCII letters lowercased."""
    text = (value or "").strip()
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


@dataclass(frozen=True)
class Pin:
    """``resolvePinnedClientMetadata``: a paired device's platform and device family checked
    against what its connect claims.

    Attributes:
        mismatch: The claimed platform or device family differs from the paired one (the
            connect needs re-approval: ``metadata-upgrade``).
        platform: The platform the connection is known by when there is no mismatch (the
            paired spelling), or None to keep the claimed one.
        device_family: Likewise for the device family.
        refresh_platform: A newer OS version of the same native app to store, or None.
    """

    mismatch: bool
    platform: str | None = None
    device_family: str | None = None
    refresh_platform: str | None = None


#: ``resolveGatewayClientPlatformIdentity`` on normalized platforms: legacy runtime names.
_RUNTIME_PLATFORMS = {
    "darwin": ("macos", "mac"),
    "win32": ("windows", "windows"),
    "linux": ("linux", "linux"),
}
_MACOS_VERSION = re.compile(r"macos \d+(?:\.\d+){0,2}")
_WATCHOS_VERSION = re.compile(r"watchos \d+(?:\.\d+){0,2}")
#: Clients whose ``ui`` mode is an official app's window (``isNativeAppUiClient``).
NATIVE_APP_IDS = frozenset({"openclaw-macos", "openclaw-linux", "openclaw-ios", "openclaw-android"})


def native_app_platform(client_id: str, platform: str) -> str | None:
    """The OS an official app's platform label names, if it is that app's own OS."""
    if client_id == "openclaw-ios" and IOS_PLATFORM.match(platform):
        return "ios-family"
    if client_id == "openclaw-android" and ANDROID_PLATFORM.match(platform):
        return "android"
    if client_id == "openclaw-watchos" and _WATCHOS_VERSION.fullmatch(platform):
        return "watchos"
    if client_id == "openclaw-macos" and _MACOS_VERSION.fullmatch(platform):
        return "macos"
    return None


def pin_metadata(
    client_id: str,
    mode: str,
    claimed_platform: str | None,
    claimed_family: str | None,
    paired_platform: str | None,
    paired_family: str | None,
) -> Pin:
    """Compare a connect's platform and device family with the paired device's (both
    trimmed and ASCII-lowercased). Only these two fields count: client id, mode and display
    name may change freely. A field the paired record lacks is not pinned.

    Tolerated platform changes, as on the real gateway: ``node-host`` (node mode) naming the
    same OS by its runtime name (``darwin`` for ``macos``...), or a Mac app's ``macos N``
    label; a legacy runtime name on record answered by its modern name and family; an
    official app reporting another version of its own OS (which is then stored).
    """
    claimed, claimed_fam = normalize_metadata(claimed_platform), normalize_metadata(claimed_family)
    paired, paired_fam = normalize_metadata(paired_platform), normalize_metadata(paired_family)
    has_platform, has_family = paired != "", paired_fam != ""
    runtime, runtime_family = _RUNTIME_PLATFORMS.get(paired, (paired, ""))
    node_host = client_id == "node-host" and mode == "node"
    claimed_runtime = _RUNTIME_PLATFORMS.get(claimed, (claimed, ""))[0]
    runtime_pin = (node_host and has_platform and claimed != "" and claimed_runtime == runtime) or (
        not has_family
        and runtime != paired
        and claimed == runtime
        and claimed_fam == runtime_family
    )
    mac_app_pin = (
        node_host and claimed in ("darwin", "macos") and bool(_MACOS_VERSION.fullmatch(paired))
    )
    claimed_native = native_app_platform(client_id, claimed)
    refresh = (
        has_platform
        and claimed != ""
        and claimed != paired
        and (
            (
                claimed_native is not None
                and claimed_native == native_app_platform(client_id, paired)
            )
            or (
                client_id == "openclaw-macos"
                and claimed_native == "macos"
                and paired in ("darwin", "macos")
            )
        )
    )
    platform_mismatch = (
        has_platform and claimed != paired and not (runtime_pin or mac_app_pin or refresh)
    )
    family_mismatch = has_family and claimed_fam != paired_fam
    pinned: str | None = None
    if has_platform:
        if runtime_pin:
            pinned = runtime
        elif claimed == paired or mac_app_pin:
            pinned = paired_platform
        elif refresh:
            pinned = claimed_platform
    return Pin(
        mismatch=platform_mismatch or family_mismatch,
        platform=pinned,
        device_family=paired_family if has_family else None,
        refresh_platform=claimed_platform if refresh else None,
    )


def node_host_client(client: ClientInfo) -> ClientInfo:
    """``normalizeNodeHostCompatibilityMetadata``: a ``node-host`` in node mode that names a
    desktop OS by a legacy or bare platform gets the modern platform and its device family
    (``linux`` -> ``linux``/``Linux``, ``darwin`` -> ``macos``/``Mac``), as on the real
    gateway, which then stores and pins those."""
    if client.id.value != "node-host" or client.mode.value != "node":
        return client
    platform, family = node_host_platform_metadata(client.platform, client.device_family)
    if (platform, family) == (client.platform, client.device_family):
        return client
    return client.model_copy(update={"platform": platform, "device_family": family})
