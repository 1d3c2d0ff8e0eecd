"""Journeys: the real app in a real X session, driven by keyboard and mouse, watched through
AT-SPI, against real gateway processes on loopback with the fake model.

Each journey runs the app as a child process (``python -m ui.launcher``) on its own Xvfb,
session bus and accessibility bus (:mod:`tests.helpers.xsession`), and saves screenshots to
the folder it prints (``$OPENCLAW_UI_ARTIFACTS/<journey>`` when set). A missing system binary
(Xvfb, dbus-daemon, at-spi2-core, xdotool: ``./dev test`` installs them) skips a journey on a
developer's machine and fails it under CI, where nothing may be skipped.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest

from tests.helpers.fake_llm import FakeLLM
from tests.helpers.journey_app import Journey, approve_own_node, journey
from tests.helpers.qt import screenshot_folder
from tests.helpers.real_openclaw import GatewayFactory, ensure_installed
from tests.helpers.xsession import MissingBinary

OpenJourney = Callable[..., AbstractAsyncContextManager[Journey]]
OpenRealJourney = Callable[[], AbstractAsyncContextManager[Journey]]


@pytest.fixture
def open_journey(
    request: pytest.FixtureRequest, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> OpenJourney:
    """``async with open_journey(model=llm, tray=True) as j:`` a journey desktop with the
    app launched; screenshots in a folder named after the test."""
    screens = screenshot_folder(tmp_path_factory, f"journey-{request.node.name}")

    def opener(
        *, model: FakeLLM, tray: bool = False, remote: tuple[str, str] | None = None
    ) -> AbstractAsyncContextManager[Journey]:
        home = tmp_path / "home"
        return _guarded(journey(screens, home, model=model, tray=tray, remote=remote))

    return opener


class _guarded:  # noqa: N801 - used like a function
    """Turns a missing system binary into a skip (a failure under CI)."""

    def __init__(self, inner: AbstractAsyncContextManager[Journey]) -> None:
        self.inner = inner

    async def __aenter__(self) -> Journey:
        try:
            return await self.inner.__aenter__()
        except MissingBinary as exc:
            if os.environ.get("CI"):
                raise
            pytest.skip(str(exc))

    async def __aexit__(self, *exc: object) -> bool | None:
        return await self.inner.__aexit__(*exc)  # type: ignore[arg-type]


@pytest.fixture
def model() -> Iterator[FakeLLM]:
    """The fake OpenAI-compatible model, streaming slowly enough to be seen streaming."""
    with FakeLLM(chunk_delay_s=0.08) as llm:
        yield llm


@pytest.fixture
def real_gateway() -> Iterator[GatewayFactory]:
    """Factory of REAL OpenClaw gateways (npm ``openclaw``), stopped at teardown."""
    factory = GatewayFactory(ensure_installed())
    yield factory
    factory.close()


@pytest.fixture
def open_on_real_gateway(
    open_journey: OpenJourney, model: FakeLLM, real_gateway: GatewayFactory
) -> OpenRealJourney:
    """``async with open_on_real_gateway() as j:`` the window on a fresh REAL gateway (with
    :func:`model`), this computer's node approved in its dialogs, the composer showing."""

    @contextlib.asynccontextmanager
    async def opener() -> AsyncIterator[Journey]:
        gateway = real_gateway(fake_llm_port=model.port)
        async with open_journey(model=model, remote=(gateway.url, gateway.token)) as j:
            await approve_own_node(j)
            await j.control("text", "Message")
            yield j

    return opener
