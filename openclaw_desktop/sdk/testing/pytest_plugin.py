"""pytest fixtures giving a test a running :class:`TestGateway`.

Opt in from the ``conftest.py`` at the root of your tests (it is deliberately not an
automatically loaded pytest entry point)::

    pytest_plugins = ["openclaw_desktop.sdk.testing.pytest_plugin"]

Fixtures:

* ``openclaw_gateway``: async (needs pytest-asyncio, any mode), a fresh gateway per test;
* ``openclaw_gateway_sync``: the same for plain (sync) tests, or without pytest-asyncio;
* ``openclaw_gateway_session``: one gateway shared by the whole session (faster; what the
  model recorded accumulates across tests).

A gateway object is not tied to an event loop, so any of them works in async tests. Options
of the per-test fixtures come from the ``openclaw_gateway`` marker, whose keyword arguments
are those of :class:`TestGateway`::

    @pytest.mark.openclaw_gateway(allow=["device.info"], env={"TZ": "UTC"})
    async def test_something(openclaw_gateway): ...

This module imports pytest (it is only ever imported by pytest); the rest of
:mod:`openclaw_desktop.sdk.testing` does not.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from openclaw_desktop.sdk.testing.gateway import TestGateway

__all__ = [
    "openclaw_gateway",
    "openclaw_gateway_session",
    "openclaw_gateway_sync",
    "pytest_configure",
]

MARKER = "openclaw_gateway"


def pytest_configure(config: pytest.Config) -> None:
    """Register the ``openclaw_gateway`` marker (so ``--strict-markers`` accepts it)."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}(**options): TestGateway options of the openclaw_gateway fixtures "
        "(state_dir, allow, env, api, args, startup_timeout_s...)",
    )


def _options(request: pytest.FixtureRequest) -> dict[str, Any]:
    marker = request.node.get_closest_marker(MARKER)
    if marker is None:
        return {}
    if marker.args:
        raise pytest.UsageError(f"@pytest.mark.{MARKER} takes keyword arguments only")
    return dict(marker.kwargs)


@pytest.fixture
def openclaw_gateway_sync(request: pytest.FixtureRequest) -> Iterator[TestGateway]:
    """A running :class:`TestGateway` for this test (options: the ``openclaw_gateway``
    marker); stopped afterwards."""
    with TestGateway(**_options(request)) as gateway:
        yield gateway


@pytest.fixture(scope="session")
def openclaw_gateway_session() -> Iterator[TestGateway]:
    """One running :class:`TestGateway` (default options) shared by the whole session."""
    with TestGateway() as gateway:
        yield gateway


try:
    import pytest_asyncio
except ImportError:  # pragma: no cover - pytest-asyncio is installed where this is tested

    @pytest.fixture(name="openclaw_gateway")
    def _openclaw_gateway_needs_pytest_asyncio() -> TestGateway:
        raise pytest.UsageError(
            "the openclaw_gateway fixture is async and needs pytest-asyncio; "
            "install it, or use openclaw_gateway_sync"
        )

else:

    @pytest_asyncio.fixture
    async def openclaw_gateway(request: pytest.FixtureRequest) -> AsyncIterator[TestGateway]:
        """A running :class:`TestGateway` for this test, started and stopped without
        blocking the event loop (options: the ``openclaw_gateway`` marker)."""
        async with TestGateway(**_options(request)) as gateway:
            yield gateway
