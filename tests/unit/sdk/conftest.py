"""What the SDK's unit tests share: a client that is never connected."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from openclaw_desktop.sdk import OpenClaw


@pytest.fixture
async def oc() -> AsyncIterator[OpenClaw]:
    """A client that is never connected (its calls and events are driven by the test)."""
    client = OpenClaw.connect("ws://127.0.0.1:9", token="t", identity="ephemeral")
    try:
        yield client
    finally:
        await client.aclose()
