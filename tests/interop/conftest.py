"""Fixtures for interop tests against the REAL OpenClaw gateway and node host.

Every test under ``tests/interop`` is marked ``interop`` (deselect with ``-m "not interop"``).

The real ``openclaw`` npm package is installed once into ``~/.cache/openclaw-interop`` (see
:mod:`tests.helpers.real_openclaw`). The dev setup script pre-installs it; if it is missing,
the session fixture :func:`openclaw_install` installs it from PyPI and npm, which takes a
minute or more and may exceed the per-test timeout of whichever test happens to run first.
Pre-install with ``python -c "from tests.helpers.real_openclaw import ensure_installed as e; e()"``.

A gateway takes 5-20 s to become ready and each CLI call about 1.5-3 s, so interop tests should
carry a generous ``@pytest.mark.timeout(...)``. When a test fails, the log tail of every
gateway / node host it started is attached to the failure report.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from tests.helpers.bundled_gateway import BundledGateway, DesktopNode
from tests.helpers.real_openclaw import (
    GatewayFactory,
    NodeHostFactory,
    OpenClawInstall,
    RealGateway,
    ensure_installed,
)

_HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="session")
def openclaw_install() -> OpenClawInstall:
    """The verified real OpenClaw install (installs it on first use; normally pre-installed)."""
    return ensure_installed()


@pytest.fixture(scope="module")
def real(openclaw_install: OpenClawInstall) -> Iterator[RealGateway]:
    """One real gateway for a side-by-side module, in its default config (token auth,
    loopback devices approved silently, no trusted proxies). A module that needs another
    config declares its own ``real``."""
    with GatewayFactory(openclaw_install) as factory:
        yield factory()


@pytest.fixture(scope="module")
def ours() -> Iterator[BundledGateway]:
    """Our gateway in a subprocess beside :func:`real`, in the same default config."""
    with BundledGateway.start() as gw:
        yield gw


@pytest.fixture
def real_gateway(openclaw_install: OpenClawInstall) -> Iterator[GatewayFactory]:
    """Factory ``(**kwargs) -> RealGateway``; every gateway is stopped and removed at teardown."""
    factory = GatewayFactory(openclaw_install)
    yield factory
    factory.close()


@pytest.fixture
def real_node_host(
    openclaw_install: OpenClawInstall, real_gateway: GatewayFactory
) -> Iterator[NodeHostFactory]:
    """Factory ``(gateway=None, *, port, token, ...) -> RealNodeHost``; cleaned up at teardown.

    Depends on ``real_gateway`` only so that node hosts are torn down before the gateways.
    """
    factory = NodeHostFactory(openclaw_install)
    yield factory
    factory.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the log tails of this test's gateways / node hosts to its failure report."""
    report = yield
    if report.failed and report.when in ("setup", "call"):
        funcargs = getattr(item, "funcargs", {})
        for name in ("real_gateway", "real_node_host"):
            factory = funcargs.get(name)
            if isinstance(factory, GatewayFactory | NodeHostFactory):
                for proc in factory.started:
                    report.sections.append((f"{proc!r} log tail", proc.log_tail(60)))
        # Our own gateway / nodes in subprocesses (tests.helpers.bundled_gateway), and the
        # real gateways a module shares between its tests (their logs hold every test's).
        for value in funcargs.values():
            for proc in value if isinstance(value, list) else [value]:
                if isinstance(proc, BundledGateway | DesktopNode | RealGateway):
                    report.sections.append((f"{proc!r} log tail", proc.log_tail(60)))
    return report
