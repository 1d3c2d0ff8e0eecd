"""The params-model tests' gateway: a real app on a fresh state, answering through the real
dispatcher (:mod:`tests.helpers.method_dispatch`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.app import GatewayApp
from tests.helpers.method_dispatch import gateway_app


@pytest.fixture
def app(tmp_path: Path) -> Iterator[GatewayApp]:
    """A gateway app on a fresh state in ``tmp_path``."""
    with gateway_app(tmp_path) as gateway:
        yield gateway
