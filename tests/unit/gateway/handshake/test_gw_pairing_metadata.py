"""Which client details of a paired device count (``metadata-upgrade``), as observed on the
real gateway 2026.9.6 and in its ``resolvePinnedClientMetadata``: only the platform and the
device family, compared trimmed and ASCII-lowercased, with a few tolerated renames."""

from __future__ import annotations

import pytest

from gateway.handshake.client_metadata import node_host_client, pin_metadata
from openclaw_desktop.protocol import ClientInfo


@pytest.mark.parametrize(
    ("client", "claimed", "paired", "mismatch", "pinned"),
    [
        # the CLI: any platform change counts, case and spaces do not
        ("cli", ("linux", None), ("linux", None), False, ("linux", None)),
        ("cli", (" LINUX ", None), ("linux", None), False, ("linux", None)),
        ("cli", ("darwin", None), ("linux", None), True, None),
        ("cli", ("linux x64", None), ("linux", None), True, None),
        # a family on record must be sent again, in any case
        ("cli", ("linux", None), ("linux", "Linux"), True, None),
        ("cli", ("linux", "linux"), ("linux", "Linux"), False, ("linux", "Linux")),
        ("cli", ("linux", "Mac"), ("linux", "Linux"), True, None),
        # nothing on record, nothing pinned
        ("cli", ("darwin", "Mac"), (None, None), False, (None, None)),
        ("cli", ("linux", "Linux"), ("linux", None), False, ("linux", None)),
        # node-host naming the same OS by its runtime name
        ("node-host", ("darwin", "Mac"), ("macos", "Mac"), False, ("macos", "Mac")),
        ("node-host", ("win32", None), ("windows", None), False, ("windows", None)),
        ("node-host", ("darwin", None), ("linux", None), True, None),
        ("node-host", ("macos", None), ("macOS 15.1", None), False, ("macOS 15.1", None)),
        # a legacy runtime name on record, answered by the modern name and family
        ("cli", ("macos", "Mac"), ("darwin", None), False, ("macos", None)),
        ("cli", ("macos", None), ("darwin", None), True, None),
        # an official app's other OS version is a refresh, not a change
        ("openclaw-android", ("Android 15", "Android"), ("Android 14", "Android"), False, None),
        ("openclaw-ios", ("iPadOS 18", "iPad"), ("iOS 18.1", "iPad"), False, None),
        ("openclaw-macos", ("macos 15.2", None), ("darwin", None), False, None),
        ("openclaw-android", ("linux", "Android"), ("Android 14", "Android"), True, None),
    ],
)
def test_pinned_metadata(
    client: str,
    claimed: tuple[str, str | None],
    paired: tuple[str | None, str | None],
    mismatch: bool,
    pinned: tuple[str | None, str | None] | None,
) -> None:
    """Mismatch or not, and (without one) the platform and family the connection keeps."""
    mode = "node" if client in ("node-host", "openclaw-android") else "cli"
    pin = pin_metadata(client, mode, *claimed, *paired)
    assert pin.mismatch is mismatch
    if pinned is not None:
        assert (pin.platform, pin.device_family) == pinned
        assert pin.refresh_platform is None


def test_an_apps_new_os_version_is_stored() -> None:
    """The refresh case names the claimed platform to store and keeps the connection's."""
    pin = pin_metadata("openclaw-android", "node", "Android 15", "Android", "Android 14", "Android")
    assert (pin.mismatch, pin.platform, pin.refresh_platform) == (False, "Android 15", "Android 15")


@pytest.mark.parametrize(
    ("client_id", "mode", "platform", "family", "expected"),
    [
        ("node-host", "node", "linux", None, ("linux", "Linux")),
        ("node-host", "node", "darwin", None, ("macos", "Mac")),
        ("node-host", "node", "win32", "Windows", ("windows", "Windows")),
        ("node-host", "node", "darwin", "Linux", ("darwin", "Linux")),  # another OS's family
        ("node-host", "node", "freebsd", None, ("freebsd", None)),
        ("node-host", "cli", "linux", None, ("linux", None)),  # node mode only
        ("cli", "cli", "darwin", None, ("darwin", None)),
    ],
)
def test_node_host_metadata_is_filled_in(
    client_id: str, mode: str, platform: str, family: str | None, expected: tuple[str, str | None]
) -> None:
    """``node-host`` in node mode gets the modern platform and its family before pairing."""
    client = ClientInfo.model_validate(
        {
            "id": client_id,
            "mode": mode,
            "version": "1",
            "platform": platform,
            **({"deviceFamily": family} if family else {}),
        }
    )
    normalized = node_host_client(client)
    assert (normalized.platform, normalized.device_family) == expected
