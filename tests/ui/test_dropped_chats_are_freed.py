"""A chat the window drops (switching gateways) is freed with its whole timeline: its
presenter and its voice presenter are collected, not kept alive by the Qt connections that
tied them to the deleted view (memory that grew with every gateway left)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from openclaw_desktop.config import AppPaths
from openclaw_desktop.known_gateways import ConnectTarget
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.qt import run_in_qt, window_home  # noqa: F401 (autouse)
from tests.ui.test_chat_window import until
from tests.ui.test_connection_status import gateway_with_model
from ui.app import DesktopApp
from ui.presenters.chat import ChatPresenter
from ui.runtime import DesktopRuntime


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as model:
        yield model


async def answered(presenter: ChatPresenter) -> None:
    await until(lambda: any(i.status == "done" for i in presenter.timeline.items), "a reply")


def test_the_chats_of_a_gateway_left_are_freed(
    qapp: QApplication, tmp_path: Path, llm: FakeLLM
) -> None:
    a = gateway_with_model(tmp_path / "a", llm)
    b = gateway_with_model(tmp_path / "b", llm)
    app = DesktopApp(
        DesktopRuntime(
            AppPaths.default(), ConnectTarget(url=a.url, token=a.token, node=False, name="A")
        )
    )
    app.window.show()
    left: list[weakref.ref[object]] = []

    async def scenario() -> list[str]:
        await app.start()
        presenter = app.presenter
        assert presenter is not None and presenter.voice is not None
        await presenter.send("something to remember")
        await answered(presenter)
        left.extend(weakref.ref(o) for o in (presenter, presenter.voice, presenter.timeline))
        del presenter
        await app.switch_gateway(ConnectTarget(url=b.url, token=b.token, node=False, name="B"))
        alive: list[str] = []
        for _ in range(50):  # the view's deleteLater runs on a later turn of the loop
            await asyncio.sleep(0.02)
            gc.collect()
            alive = [type(o).__name__ for ref in left if (o := ref()) is not None]
            if not alive:
                break
        await app.aclose()
        return alive

    try:
        assert run_in_qt(qapp, scenario, timeout=90) == []
    finally:
        a.cleanup()
        b.cleanup()
