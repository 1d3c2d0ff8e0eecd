"""Unit tests: the scopes a device-less connect keeps (``gateway.handshake.deviceless``), the
real gateway's rule: scope-limited with a shared secret but for the local CLI and backend."""

from __future__ import annotations

import pytest

from gateway.handshake.deviceless import deviceless_scopes

ASKED = ("operator.read", "operator.admin")


@pytest.mark.parametrize(
    ("client_id", "client_mode", "auth", "local", "origin", "kept"),
    [
        ("cli", "cli", "token", True, False, True),
        ("gateway-client", "backend", "password", True, False, True),
        ("cli", "probe", "token", True, False, False),
        ("gateway-client", "ui", "token", True, False, False),
        ("cli", "cli", "token", False, False, False),
        ("cli", "cli", "token", True, True, False),
        ("gateway-client", "backend", "token", True, True, False),
        ("cli", "probe", "none", True, False, True),
        ("openclaw-android", "ui", "none", False, False, True),
    ],
)
def test_deviceless_scopes(
    client_id: str, client_mode: str, auth: str, local: bool, origin: bool, kept: bool
) -> None:
    """Kept as asked, or dropped to none."""
    granted = deviceless_scopes(
        ASKED,
        client_id=client_id,
        client_mode=client_mode,
        auth_method=auth,
        local=local,
        has_origin=origin,
    )
    assert granted == (list(ASKED) if kept else [])
