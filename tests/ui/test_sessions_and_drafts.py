"""What a daily user expects of the window, against our bundled gateway (a real subprocess on
loopback) with the fake model: sessions by readable titles (never ``dashboard:<uuid>``),
rename from that title, delete only after asking (Cancel the default); drafts, the model and
the thinking level kept per session across a restart; sending scrolls to the newest message;
an image to a text-only model is warned about; a model error is shown on the reply, and the
message it answers stays sent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox

from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.qt import run_in_qt, screenshot_folder, shot, window_home  # noqa: F401 (autouse)
from tests.ui.test_chat_window import assistant, until
from tests.ui.test_chat_window_more import new_app
from ui.app import DesktopApp
from ui.widgets.chat_model import item_text
from ui.widgets.sessions import KEY_ROLE

pytestmark = pytest.mark.timeout(150)

TEXT_MODEL = "fake/fake-model"
VISION_MODEL = "fake/fake-vision"


def write_two_models(state_dir: Path, llm_port: int) -> None:
    """Two models of the fake server: one reads text only (the default), one images too."""
    state_dir.mkdir(parents=True, exist_ok=True)
    model = {"contextWindow": 128000, "maxTokens": 4096}
    config = {
        "defaultModel": TEXT_MODEL,
        "providers": {
            "fake": {
                "api": "openai-completions",
                "baseUrl": f"http://127.0.0.1:{llm_port}/v1",
                "models": [
                    {"id": "fake-model", "name": "Fake Text Model", **model},
                    {"id": "fake-vision", "name": "Fake Vision", "vision": True, **model},
                ],
            }
        },
    }
    (state_dir / "providers.json").write_text(json.dumps(config), "utf-8")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[BundledGateway, FakeLLM]]:
    """A gateway of its own with the two fake models."""
    with FakeLLM() as llm:
        write_two_models(tmp_path / "gw" / "state", llm.port)
        gw = BundledGateway.start(root=tmp_path / "gw")
        try:
            yield gw, llm
        finally:
            gw.cleanup()


def titles(app: DesktopApp) -> dict[str, str]:
    """The sidebar's rows: key -> the text shown."""
    assert app.panel is not None
    rows = app.panel.list
    return {str(rows.item(i).data(KEY_ROLE)): rows.item(i).text() for i in range(rows.count())}


def test_sessions_are_titled_renamed_and_deleted_only_after_asking(
    qapp: QApplication,
    served: tuple[BundledGateway, FakeLLM],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A new session is never shown by its key; its first message names it (in the sidebar
    and in Activity); rename starts from that title; Delete asks, and Enter on the question
    (Cancel) keeps the session."""
    gw, _llm = served
    screens = screenshot_folder(tmp_path_factory, "sessions")
    app = new_app(gw)
    app.window.show()

    async def scenario() -> None:
        await app.start()
        panel = app.panel
        assert panel is not None and app.sessions is not None
        panel.new_button.click()
        await until(lambda: len(titles(app)) == 2 and app.presenter, "the new session")
        key = next(k for k in titles(app) if k != "agent:main:main")
        assert "dashboard" in key  # the gateway's key for it ...
        await until(lambda: app.presenter and app.presenter.session_key != "main", "its chat")
        shown = titles(app)[key]
        assert "dashboard" not in shown and shown.startswith("New session"), shown
        chat = app.window.chat
        assert chat is not None
        chat.composer.setPlainText("Plan the garden party for Saturday afternoon")
        QTest.keyClick(chat.composer, Qt.Key.Key_Return)
        await until(lambda: assistant(app, "done"), "the reply")
        await until(
            lambda: titles(app).get(key) == "Plan the garden party for Saturday afternoon",
            "the session named by its first message",
        )
        assert titles(app)["agent:main:main"] == "Main"
        # The Activity dock names the session the same way.
        assert app.presenter is not None and app.activity is not None
        await app.presenter.send("CALLTOOL:nodes_list:{}")
        activity = app.activity
        await until(lambda: activity.list.count() >= 1, "the tool call in Activity")
        started = activity.list.item(activity.list.count() - 1).text()
        assert started.endswith("in Plan the garden party for Saturday afternoon"), started
        await until(lambda: len(assistant(app, "done")) == 2, "the tool's reply")
        shot(app.window, screens / "01-titled.png")

        rename = panel.ask_rename(key)
        assert rename.textValue() == "Plan the garden party for Saturday afternoon"
        rename.setTextValue("Garden party")
        rename.accept()
        await until(lambda: titles(app).get(key) == "Garden party", "the new label")

        ask = panel.ask_delete(key)
        cancel = ask.button(QMessageBox.StandardButton.Cancel)
        assert ask.defaultButton() is cancel and ask.escapeButton() is cancel
        assert "Garden party" in ask.text()
        shot(ask, screens / "02-delete-asks.png")
        QTest.keyClick(ask, Qt.Key.Key_Return)  # Enter answers the default: Cancel
        await until(lambda: panel.dialog is None, "the question closed")
        await app.sessions.refresh()
        assert key in titles(app), "Cancel deleted nothing"

        ask = panel.ask_delete(key)
        delete = next(b for b in ask.buttons() if b.text() == "Delete")
        delete.click()
        await until(lambda: key not in titles(app), "the session deleted")
        await app.aclose()

    run_in_qt(qapp, scenario)


def test_draft_model_and_thinking_survive_a_restart(
    qapp: QApplication, served: tuple[BundledGateway, FakeLLM]
) -> None:
    """A half-written message, the model and the thinking level chosen for a session are
    there again when the window is opened anew."""
    gw, _llm = served
    first = new_app(gw)
    first.window.show()

    async def before() -> None:
        await first.start()
        chat = first.window.chat
        assert chat is not None
        await until(lambda: chat.model_picker.count() == 2, "the models")
        assert chat.model_picker.currentText() == TEXT_MODEL
        index = chat.model_picker.findText(VISION_MODEL)
        chat.model_picker.setCurrentIndex(index)
        chat.model_picker.activated.emit(index)
        level = chat.thinking_picker.findText("high")
        chat.thinking_picker.setCurrentIndex(level)
        chat.thinking_picker.activated.emit(level)
        client = first.runtime.client
        assert client is not None

        async def kept() -> bool:
            row = await client.sessions.get("main")
            return bool(row and row.get("thinkingLevel") == "high" and row.get("model"))

        for _ in range(100):
            if await kept():
                break
            await asyncio.sleep(0.05)
        assert await kept()
        chat.composer.setPlainText("a half-written thought about")
        # Another session keeps its own choice: the text model, thinking low.
        other = await first.open_session("other")
        other_view = first.window.chat
        assert other_view is not None and other_view.presenter is other
        await until(lambda: other_view.model_picker.count() == 2, "the other's models")
        await other.send("hello from the other session")
        await until(lambda: assistant(first, "done"), "the other session's reply")
        low = other_view.thinking_picker.findText("low")
        other_view.thinking_picker.setCurrentIndex(low)
        other_view.thinking_picker.activated.emit(low)

        async def other_kept() -> bool:
            row = await client.sessions.get("other")
            return bool(row and row.get("thinkingLevel") == "low")

        for _ in range(100):
            if await other_kept():
                break
            await asyncio.sleep(0.05)
        assert await other_kept()
        await first.open_session("main")
        await first.aclose()

    run_in_qt(qapp, before)
    first.window.close()
    second = new_app(gw)
    second.window.show()

    async def after() -> None:
        await second.start()
        chat = second.window.chat
        assert chat is not None
        assert chat.composer.toPlainText() == "a half-written thought about"
        await until(lambda: chat.model_picker.count() == 2, "the models")
        assert chat.model_picker.currentText() == VISION_MODEL
        assert chat.thinking_picker.currentText() == "high"
        await second.open_session("other")
        other_view = second.window.chat
        assert other_view is not None and other_view is not chat
        await until(lambda: other_view.model_picker.count() == 2, "the other's models")
        assert other_view.model_picker.currentText() == TEXT_MODEL
        await until(lambda: other_view.thinking_picker.currentText() == "low", "its level")
        await second.open_session("main")
        assert second.window.chat is chat
        # Sent, the draft is forgotten.
        QTest.keyClick(chat.composer, Qt.Key.Key_Return)
        await until(lambda: assistant(second, "done"), "the reply")
        await second.aclose()

    run_in_qt(qapp, after)
    second.window.close()
    third = new_app(gw)

    async def sent() -> None:
        await third.start()
        assert third.window.chat is not None
        assert third.window.chat.composer.toPlainText() == ""
        await third.aclose()

    run_in_qt(qapp, sent)


def test_sending_scrolls_warns_about_images_and_keeps_a_failed_reply_apart(
    qapp: QApplication,
    served: tuple[BundledGateway, FakeLLM],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Sending scrolls to the newest message even when the reader scrolled up; an image for
    the text-only model asks first (Cancel keeps everything); a model error is the reply's,
    the message it answers is not "(not sent)"."""
    gw, _llm = served
    screens = screenshot_folder(tmp_path_factory, "sending")
    app = new_app(gw)
    app.window.resize(900, 560)
    app.window.show()

    async def scenario() -> None:
        await app.start()
        chat = app.window.chat
        assert chat is not None
        long_prompt = "\n".join(f"line {n} of a long message" for n in range(40))
        for n in range(2):
            chat.composer.setPlainText(long_prompt)
            QTest.keyClick(chat.composer, Qt.Key.Key_Return)
            await until(lambda n=n: len(assistant(app, "done")) == n + 1, "a reply")
        chat.flush()
        bar = chat.messages.verticalScrollBar()
        assert bar.maximum() > 0
        bar.setValue(bar.maximum() // 3)  # scrolled up to read
        chat.flush()
        assert bar.value() < bar.maximum()
        chat.composer.setPlainText("the newest message")
        QTest.keyClick(chat.composer, Qt.Key.Key_Return)
        await until(lambda: len(assistant(app, "done")) == 3, "the third reply")
        chat.flush()
        assert bar.value() == bar.maximum(), "sending scrolled to the newest message"

        # An image for a model that reads text only: warned first.
        picture = QImage(40, 30, QImage.Format.Format_RGB32)
        picture.fill(QColor("#e76f51"))
        assert chat.attachments.add_image(picture)
        chat.composer.setPlainText("what colour is this?")
        chat.send_button.click()
        warning = chat.image_warning
        assert warning is not None and warning.isVisible()
        assert "Fake Text Model" in warning.text() and "text only" in warning.text()
        cancel = warning.button(QMessageBox.StandardButton.Cancel)
        assert warning.defaultButton() is cancel
        shot(app.window, screens / "01-image-warning.png")
        shot(warning, screens / "02-image-warning-box.png")
        cancel.click()
        assert chat.composer.toPlainText() == "what colour is this?"
        assert len(chat.attachments.items) == 1, "nothing lost on Cancel"
        chat.send_button.click()
        warning = chat.image_warning
        assert warning is not None
        next(b for b in warning.buttons() if b.text() == "Send anyway").click()
        await until(lambda: len(assistant(app, "done")) == 4, "the reply to the image")
        assert chat.composer.toPlainText() == "" and not chat.attachments.items

        # A model error after the gateway took the message.
        presenter = app.presenter
        assert presenter is not None
        run_id = await presenter.send("FAIL:500")
        assert run_id is not None
        await until(lambda: presenter.timeline.get(f"{run_id}:error"), "the error")
        mine = presenter.timeline.get(f"{run_id}:user")
        assert mine is not None and mine.status != "failed", mine.status
        assert "(not sent)" not in item_text(mine)
        chat.flush()
        shot(app.window, screens / "03-model-error.png")
        await app.aclose()

    run_in_qt(qapp, scenario)
