"""Fixtures the integration tests share: the bundled gateway in-process, the one way a test
asks for a plain one (:func:`tests.helpers.bundled_gateway.bundled_gateway` when it needs
options)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from gateway.server import GatewayServer
from tests.helpers.bundled_gateway import bundled_gateway


@pytest.fixture
async def gw(tmp_path: Path) -> AsyncIterator[GatewayServer]:
    """Our gateway in-process on loopback with its state in ``tmp_path / "state"`` (the
    default config of :func:`~tests.helpers.bundled_gateway.gateway_config`)."""
    async with bundled_gateway(tmp_path / "state") as server:
        yield server
