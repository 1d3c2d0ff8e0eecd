"""A wrong token against the real bundled gateway process: the runtime's operator session
pauses with a typed reason (and stays open), the user's new token connects both sessions,
and the token is kept for the next launch (never in a file beside the URL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_desktop.config import AppPaths
from openclaw_desktop.errors import AuthError, ReconnectPaused
from openclaw_desktop.identity import CredentialStore, gateway_key, open_secret_store
from openclaw_desktop.runtime import DesktopRuntime, RuntimeTarget
from openclaw_desktop.sdk import OpenClaw
from openclaw_desktop.session import ErrorCategory
from openclaw_desktop.transport import ConnectionState
from tests.helpers.bundled_gateway import BundledGateway, wait_for

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[BundledGateway]:
    """Our gateway in its own process on loopback."""
    gw = BundledGateway.start(root=tmp_path / "gw")
    try:
        yield gw
    finally:
        gw.cleanup()


async def test_wrong_token_pauses_then_the_edited_token_connects(
    home: AppPaths,
    gateway: BundledGateway,
) -> None:
    """PAUSED / AUTH with AUTH_TOKEN_MISMATCH, the session kept; set_token -> connected."""
    runtime = DesktopRuntime(home, RuntimeTarget(url=gateway.url, token="wrong", node=True))
    try:
        with pytest.raises(ReconnectPaused) as paused:
            await runtime.start()
        cause = paused.value.cause
        assert isinstance(cause, AuthError) and cause.detail_code == "AUTH_TOKEN_MISMATCH"
        client = runtime.client
        assert client is not None, "the paused session stays for the user to act on"
        status = client.connection.status
        assert status.state is ConnectionState.PAUSED
        assert status.category is ErrorCategory.AUTH
        assert not runtime.connections[1:], "the node waits for the chat's session"

        runtime.set_token(gateway.token)
        assert await runtime.start() is client
        assert state(client) is ConnectionState.CONNECTED
        node = runtime.node
        assert node is not None
        await wait_for(lambda: node.connection.status.state is ConnectionState.CONNECTED, 30)
        stored = CredentialStore(open_secret_store(home.secrets_file))
        assert stored.shared_token(gateway_key(gateway.url)) == gateway.token
    finally:
        await runtime.aclose()
    assert state(client) is ConnectionState.CLOSED


def state(client: OpenClaw) -> ConnectionState:
    """The operator session's state now."""
    return client.connection.status.state
