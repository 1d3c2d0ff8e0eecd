"""What a daily user expects of the window, on the REAL OpenClaw gateway with the fake model:
a new session is shown by the title the gateway derives from its first message (never
``dashboard:<uuid>``), the thinking picker offers the session's own levels, and a model error
is the reply's: the message it answers stays sent, not "(not sent)". Screenshots go to the
folder the test prints."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tests.helpers.fake_llm import FakeLLM
from tests.helpers.qt import run_in_qt, screenshot_folder, shot, window_home  # noqa: F401 (autouse)
from tests.helpers.real_openclaw import GatewayFactory
from tests.ui.test_chat_window import assistant, until
from ui.app import DesktopApp
from ui.presenters.sessions import short_title
from ui.runtime import DesktopRuntime, RuntimeTarget
from ui.widgets.chat_model import item_text
from ui.widgets.sessions import KEY_ROLE

pytestmark = [pytest.mark.ui, pytest.mark.timeout(300)]

FIRST = "Plan the garden party for Saturday"


def titles(app: DesktopApp) -> dict[str, str]:
    """The sidebar's rows: key -> the text shown."""
    assert app.panel is not None
    rows = app.panel.list
    return {str(rows.item(i).data(KEY_ROLE)): rows.item(i).text() for i in range(rows.count())}


def test_sessions_thinking_and_model_errors_on_the_real_gateway(
    qapp: QApplication, real_gateway: GatewayFactory, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """New session -> the gateway's title; the session's thinking levels; FAIL:500 -> an
    error on the reply, the message sent."""
    from openclaw_desktop.config import AppPaths

    screens = screenshot_folder(tmp_path_factory, "window-real-gateway-sessions")
    with FakeLLM(chunk_delay_s=0.01) as llm:
        gateway = real_gateway(fake_llm_port=llm.port, provider_retries=0)
        target = RuntimeTarget(url=gateway.url, token=gateway.token, node=False)
        app = DesktopApp(DesktopRuntime(AppPaths.default(), target))
        app.window.show()

        async def scenario() -> None:
            await app.start()
            panel, chat = app.panel, app.window.chat
            assert panel is not None and chat is not None, app.window.placeholder.text()
            panel.new_button.click()
            await until(
                lambda: app.presenter is not None and app.presenter.session_key != "main",
                "the new session's chat",
                timeout=60,
            )
            key = app.presenter.session_key if app.presenter else ""
            full = key if key.startswith("agent:") else f"agent:main:{key}"
            await until(lambda: full in titles(app), "the new session listed", timeout=60)
            assert "dashboard" not in titles(app)[full] and len(titles(app)[full]) < 60
            chat = app.window.chat
            assert chat is not None
            chat.composer.setPlainText(FIRST)
            QTest.keyClick(chat.composer, Qt.Key.Key_Return)
            await until(lambda: assistant(app, "done"), "the reply", timeout=120)
            assert app.sessions is not None
            client = app.runtime.client
            assert client is not None

            # The real gateway names the session itself (derivedTitle, displayName, from
            # the first message by its utility model: here the fake model's echo of it).
            async def named() -> dict[str, object]:
                assert app.sessions is not None
                await app.sessions.refresh()
                row = app.sessions.row(full) or {}
                return row if row.get("derivedTitle") or row.get("displayName") else {}

            row: dict[str, object] = {}
            for _ in range(100):
                row = await named()
                if row:
                    break
                await asyncio.sleep(0.2)
            gateway_title = str(row.get("derivedTitle") or row.get("displayName"))
            assert FIRST in gateway_title, row
            await until(lambda: titles(app).get(full) == short_title(gateway_title), "the title")
            assert "dashboard" not in titles(app)[full]
            shot(app.window, screens / "01-titled.png")
            # The thinking levels offered are the session's own (thinkingOptions).
            assert app.presenter is not None
            await app.presenter.load_models()
            options = [
                chat.thinking_picker.itemText(i) for i in range(chat.thinking_picker.count())
            ]
            assert options == row.get("thinkingOptions"), (options, row.get("thinkingOptions"))

            presenter = app.presenter
            assert presenter is not None
            run_id = await presenter.send("FAIL:500")
            assert run_id is not None
            await until(
                lambda: (
                    presenter.timeline.get(f"{run_id}:error") is not None
                    or any(i.role == "error" for i in presenter.timeline.of_run(run_id))
                ),
                "the model error",
                timeout=120,
            )
            mine = presenter.timeline.get(f"{run_id}:user")
            assert mine is not None and mine.status != "failed", mine.status
            assert "(not sent)" not in item_text(mine)
            chat.flush()
            shot(app.window, screens / "02-model-error.png")
            await app.aclose()

        run_in_qt(qapp, scenario, timeout=280)
