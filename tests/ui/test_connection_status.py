"""Honest status, error cards and recovery, in the real window (offscreen) against real
gateway processes on loopback: a wrong token fixed from the card, the bundled gateway killed
and restarted by the app's supervisor, and a switch between two gateways (remembered for the
next launch, unsent messages asked about). At every step the status bar and the tray say
what the transport's state machines are in."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QDockWidget, QMessageBox

from openclaw_desktop.config import AppPaths
from openclaw_desktop.known_gateways import ConnectTarget, LastGateway
from openclaw_desktop.supervisor import RestartPolicy, SupervisorState
from openclaw_desktop.transport import ConnectionState, ConnectionStatus, RetryPolicy
from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.chat_trace import write_fake_providers
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.ports import free_port
from tests.helpers.qt import run_in_qt, screenshot_folder, shot, window_home  # noqa: F401 (autouse)
from tests.ui.test_chat_window import until
from ui.app import DesktopApp
from ui.presenters.failure import CardAction
from ui.runtime import DesktopRuntime, RuntimeTarget

pytestmark = pytest.mark.timeout(180)

#: The words each transport state must be shown with (independent of the presenter).
WORDS = {
    ConnectionState.IDLE: "connecting",
    ConnectionState.CONNECTING: "connecting",
    ConnectionState.CONNECTED: "connected to ",
    ConnectionState.RECONNECTING: "reconnecting",
    ConnectionState.AWAITING_APPROVAL: "waiting for approval",
    ConnectionState.PAUSED: "paused: needs action — ",
    ConnectionState.CLOSED: "stopped",
}


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    """The fake model."""
    with FakeLLM() as fake:
        yield fake


def gateway_with_model(root: Path, llm: FakeLLM) -> BundledGateway:
    """Our gateway in its own process, answering with the fake model."""
    write_fake_providers(root / "state", llm.port)
    return BundledGateway.start(root=root)


def assert_honest(app: DesktopApp) -> None:
    """The status bar and the tray show exactly the transport's states, now."""
    runtime = app.runtime
    shown = app.window.operator_status.text()
    tip = app.tray.icon.toolTip()
    client = runtime.client
    if client is not None:
        status = client.connection.status
        assert shown.startswith(f"chat: {WORDS[status.state]}"), (shown, status)
        if status.state is ConnectionState.CONNECTED:
            assert shown == f"chat: connected to {client.connection.endpoint.display}"
        assert f"chat: {shown.removeprefix('chat: ')}" in tip
    node = runtime.node
    node_shown = app.window.node_status.text()
    if node is not None:
        state = node.connection.status.state
        assert node_shown.startswith(f"node: {WORDS[state]}"), (node_shown, state)
        assert node_shown.removeprefix("node: ") in tip
    waiting = any(
        c.status.state in (ConnectionState.RECONNECTING, ConnectionState.AWAITING_APPROVAL)
        for c in runtime.connections
    )
    connected = all(c.status.state is ConnectionState.CONNECTED for c in runtime.connections)
    button = app.connection_view.reconnect_button.isVisibleTo(app.window)
    if waiting:
        assert button, "Reconnect now is offered wherever a wait is shown"
    elif connected and runtime.connections:
        assert not button


def record_states(app: DesktopApp) -> list[tuple[ConnectionState, str]]:
    """Every operator status change with the text shown right after it."""
    seen: list[tuple[ConnectionState, str]] = []

    def on_status(status: ConnectionStatus) -> None:
        seen.append((status.state, app.window.operator_status.text()))

    client = app.runtime.client
    assert client is not None
    client.connection.on_status(on_status)  # after the app's own listener: its text is shown
    return seen


def screen_width(app: DesktopApp) -> int:
    screen = app.window.screen()
    return screen.availableGeometry().width()


async def settle() -> None:
    """Let Qt lay the window out through the running qasync loop. ``processEvents()`` from
    inside a coroutine re-enters qasync's timer dispatch, which can leave a timer firing
    forever with a KeyError (every later Qt test then errors)."""
    for _ in range(3):
        await asyncio.sleep(0.02)


def test_wrong_token_card_then_edit_token_connects(
    qapp: QApplication, tmp_path: Path, llm: FakeLLM, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A wrong token: paused with the reason in words, a wrapped card with Edit token /
    Retry / Choose another gateway / Show details; the right token from the card connects."""
    screens = screenshot_folder(tmp_path_factory, "wrong-token")
    gw = gateway_with_model(tmp_path / "gw", llm)
    target = ConnectTarget(url=gw.url, token="not-the-token-" + "x" * 200, node=False, name="gw")
    app = DesktopApp(DesktopRuntime(AppPaths.default(), target))
    app.window.resize(700, 500)
    app.window.show()

    async def scenario() -> None:
        await app.start()
        client = app.runtime.client
        assert client is not None
        assert client.connection.status.state is ConnectionState.PAUSED
        assert app.window.operator_status.text() == (
            "chat: paused: needs action — the gateway refused this token"
        )
        assert_honest(app)
        card = app.connection_view.card
        assert card is not None and app.window.stack.currentWidget() is card
        assert card.title.text() == "The gateway refused this token"
        assert card.title.wordWrap() and card.body.wordWrap()
        assert "AUTH_TOKEN_MISMATCH" not in card.title.text() + card.body.text()
        assert list(card.buttons) == [
            CardAction.EDIT_TOKEN,
            CardAction.RETRY,
            CardAction.CHOOSE_GATEWAY,
            CardAction.SHOW_DETAILS,
        ]
        await settle()  # layout runs on the loop (a nested processEvents re-enters qasync)
        assert app.window.width() <= screen_width(app)
        assert app.window.width() <= 700, "the card does not widen the window"
        shot(app.window, screens / "01-card.png")

        # Show details: the raw text is there, wrapped, and hides again.
        card.buttons[CardAction.SHOW_DETAILS].click()
        assert card.details.isVisible() and "AUTH_TOKEN_MISMATCH" in card.details.toPlainText()
        await settle()  # layout runs on the loop (a nested processEvents re-enters qasync)
        assert app.window.width() <= 700
        shot(app.window, screens / "02-details.png")
        card.buttons[CardAction.SHOW_DETAILS].click()
        assert not card.details.isVisible()

        # Retry with the same wrong token: paused again, honestly.
        seen = record_states(app)
        card.buttons[CardAction.RETRY].click()
        await until(
            lambda: (
                (ConnectionState.PAUSED, app.window.operator_status.text()) in seen
                and len(seen) >= 2
            ),
            "paused again",
        )
        assert all(text.startswith(f"chat: {WORDS[state]}") for state, text in seen), seen

        # Edit token: the field appears; the right token connects; the card goes.
        card = app.connection_view.card
        assert card is not None
        card.buttons[CardAction.EDIT_TOKEN].click()
        assert card.token.isVisible()
        card.token.setText(gw.token)
        card.use_token.click()
        await until(lambda: app.window.chat is not None, "the chat", 30)
        assert client.connection.status.state.value == "connected"
        assert app.connection_view.card is None
        assert app.window.stack.currentWidget() is app.window.chat
        assert app.window.operator_status.text() == f"chat: connected to 127.0.0.1:{gw.port}"
        assert_honest(app)
        assert all(text.startswith(f"chat: {WORDS[state]}") for state, text in seen), seen
        shot(app.window, screens / "03-connected.png")
        await app.aclose()

    try:
        run_in_qt(qapp, scenario, timeout=120)
    finally:
        gw.cleanup()


def test_choose_another_gateway_from_the_card(
    qapp: QApplication, tmp_path: Path, llm: FakeLLM
) -> None:
    """The card's Choose another gateway opens the connect screen; a URL with the right
    token there connects, and the card and its paused session are gone."""
    gw = gateway_with_model(tmp_path / "gw", llm)
    target = ConnectTarget(url=gw.url, token="wrong", node=False, name="gw")
    app = DesktopApp(DesktopRuntime(AppPaths.default(), target))
    app.window.show()

    async def scenario() -> None:
        await app.start()
        card = app.connection_view.card
        assert card is not None
        card.buttons[CardAction.CHOOSE_GATEWAY].click()
        await until(lambda: app.connect_screen is not None, "the connect screen")
        screen = app.connect_screen
        assert screen is not None and app.window.stack.currentWidget() is screen
        screen.url.setText(gw.url)
        screen.token.setText(gw.token)
        screen.connect_url.click()
        await until(lambda: app.window.chat is not None, "the chat", 30)
        assert app.connection_view.card is None
        assert app.window.operator_status.text() == f"chat: connected to 127.0.0.1:{gw.port}"
        assert_honest(app)
        await app.aclose()

    try:
        run_in_qt(qapp, scenario, timeout=90)
    finally:
        gw.cleanup()


def test_reconnect_now_skips_the_wait(qapp: QApplication, tmp_path: Path, llm: FakeLLM) -> None:
    """A gateway gone: "reconnecting in N s" counts down with Reconnect now beside it; back
    again, Reconnect now connects at once instead of after the wait."""
    gw = gateway_with_model(tmp_path / "gw", llm)
    app = DesktopApp(
        DesktopRuntime(AppPaths.default(), RuntimeTarget(url=gw.url, token=gw.token, node=False))
    )
    app.window.show()

    async def scenario() -> None:
        await app.start()
        client = app.runtime.client
        assert client is not None
        # A long first wait, so that "at once" and "after the wait" differ.
        client.connection.options.retry = RetryPolicy(base_ms=60_000, early_ceiling_ms=60_000)
        await asyncio.to_thread(gw.stop)
        await until(lambda: client.connection.status.retry_at is not None, "the wait")
        status = client.connection.status
        assert status.state is ConnectionState.RECONNECTING
        assert app.window.operator_status.text().startswith("chat: reconnecting in ")
        assert_honest(app)
        button = app.connection_view.reconnect_button
        assert button.isVisibleTo(app.window)
        first = app.window.operator_status.text()
        assert app.connection_view.timer.isActive(), "a countdown is re-derived each second"
        await until(lambda: app.window.operator_status.text() != first, "the countdown", 5)
        assert_honest(app)
        await asyncio.to_thread(gw.restart)
        assert client.connection.status.state is ConnectionState.RECONNECTING
        button.click()
        await until(
            lambda: client.connection.status.state is ConnectionState.CONNECTED,
            "connected at once",
            20,  # the wait was 60 s
        )
        assert not button.isVisibleTo(app.window)
        assert_honest(app)
        await app.aclose()

    try:
        run_in_qt(qapp, scenario, timeout=90)
    finally:
        gw.cleanup()


def test_a_remembered_gateway_that_is_down_at_launch_says_so(
    qapp: QApplication, tmp_path: Path, llm: FakeLLM
) -> None:
    """Launched for a gateway that does not answer: a "Cannot reach" card with Reconnect now
    and Choose another gateway while it keeps trying; once it is up, Reconnect now connects."""
    gw = gateway_with_model(tmp_path / "gw", llm)
    gw.stop()
    app = DesktopApp(
        DesktopRuntime(AppPaths.default(), RuntimeTarget(url=gw.url, token=gw.token, node=False))
    )
    app.window.show()

    async def scenario() -> None:
        starting = asyncio.ensure_future(app.start())
        await until(lambda: app.connection_view.card is not None, "the card", 30)
        card = app.connection_view.card
        assert card is not None
        assert card.title.text() == f"Cannot reach 127.0.0.1:{gw.port}"
        assert list(card.buttons)[:2] == [CardAction.RECONNECT_NOW, CardAction.CHOOSE_GATEWAY]
        assert app.window.operator_status.text().startswith("chat: reconnecting")
        assert_honest(app)
        client = app.runtime.client
        assert client is not None
        # From the next failure on, a long wait: the gateway comes back within it.
        client.connection.options.retry = RetryPolicy(base_ms=60_000, early_ceiling_ms=60_000)

        def long_wait() -> bool:
            return (client.connection.status.retry_in_s or 0) >= 30

        await until(long_wait, "a long wait", 30)
        await asyncio.to_thread(gw.restart)
        assert client.connection.status.state is ConnectionState.RECONNECTING
        assert app.connection_view.card is card
        card.buttons[CardAction.RECONNECT_NOW].click()
        await asyncio.wait_for(starting, 30)
        assert app.window.chat is not None
        assert app.window.stack.currentWidget() is app.window.chat, "the card is gone"
        assert_honest(app)
        await app.aclose()

    try:
        run_in_qt(qapp, scenario, timeout=90)
    finally:
        gw.cleanup()


def test_bundled_gateway_killed_is_restarted_and_waiting_messages_go_once(
    qapp: QApplication, llm: FakeLLM, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """kill -9 of the bundled gateway: reconnecting is shown honestly with Reconnect now,
    the app restarts the gateway, both sessions come back, and a message sent meanwhile is
    delivered exactly once with its label updated."""
    screens = screenshot_folder(tmp_path_factory, "gateway-killed")
    paths = AppPaths.default()
    write_fake_providers(paths.gateway_state_dir, llm.port)
    port = free_port()
    app = DesktopApp(DesktopRuntime(paths, RuntimeTarget(port=port, node=True)))
    app.window.show()

    async def scenario() -> None:
        await app.start()
        runtime = app.runtime
        supervisor, node, client = runtime.supervisor, runtime.node, runtime.client
        assert supervisor is not None and node is not None and client is not None
        await until(lambda: node.connection.status.state is ConnectionState.CONNECTED, "node")
        assert_honest(app)
        assert app.window.operator_status.text() == f"chat: connected to 127.0.0.1:{port}"
        seen = record_states(app)

        pid = supervisor.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        await until(
            lambda: client.connection.status.state is not ConnectionState.CONNECTED, "the drop"
        )
        assert_honest(app)
        presenter = app.presenter
        assert presenter is not None
        run_id = await presenter.send("sent while the gateway was down")
        assert run_id is not None
        item = presenter.timeline.get(f"{run_id}:user")
        assert item is not None and item.status == "waiting"
        shot(app.window, screens / "01-down.png")
        await until(lambda: supervisor.status.restarts == 1, "the restart", 60)
        await until(
            lambda: all(c.status.state is ConnectionState.CONNECTED for c in runtime.connections),
            "both sessions back",
            60,
        )
        assert_honest(app)
        assert runtime.last_interruption is not None
        assert runtime.last_interruption.cause == "gateway-stopped"
        states = [state for state, _text in seen]
        assert ConnectionState.RECONNECTING in states and states[-1] is ConnectionState.CONNECTED
        assert all(text.startswith(f"chat: {WORDS[state]}") for state, text in seen), seen

        await until(lambda: item.status != "waiting", "the label updated", 30)

        def replied() -> bool:
            return any(
                i.run_id == run_id and i.role == "assistant" and i.status == "done"
                for i in presenter.timeline.items
            )

        await until(replied, "the reply to the waiting message", 60)
        history = await client.sessions.history("main", limit=50)
        users = [
            m
            for m in history
            if m.get("role") == "user" and "sent while the gateway was down" in json.dumps(m)
        ]
        assert len(users) == 1, "delivered exactly once"
        shot(app.window, screens / "02-back.png")
        await app.aclose()

    run_in_qt(qapp, scenario, timeout=150)


def test_a_gateway_that_keeps_stopping_gets_a_card_and_try_again_recovers(
    qapp: QApplication, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Killed past the cap per minute: no more restarts by itself, a "keeps stopping" card
    with its last log lines; the card's Retry starts it again and both sessions reconnect."""
    screens = screenshot_folder(tmp_path_factory, "gateway-keeps-stopping")
    paths = AppPaths.default()
    runtime = DesktopRuntime(paths, RuntimeTarget(port=free_port(), node=True))
    runtime.restart_policy = RestartPolicy(backoff_s=(0.1,), max_per_minute=1)
    app = DesktopApp(runtime)
    app.window.resize(700, 500)
    app.window.show()

    async def scenario() -> None:
        await app.start()
        supervisor = runtime.supervisor
        assert supervisor is not None
        for kill in range(2):
            await until(lambda: supervisor.status.state is SupervisorState.RUNNING, "running")
            pid = supervisor.pid
            assert pid is not None
            os.kill(pid, signal.SIGKILL)

            def replaced(old: int = pid) -> bool:
                return supervisor.pid != old

            await until(replaced, f"kill {kill + 1} seen")
        await until(lambda: supervisor.status.state is SupervisorState.FAILED, "giving up")
        card = app.connection_view.card
        assert card is not None and app.window.stack.currentWidget() is card
        assert card.title.text() == "The bundled gateway keeps stopping"
        assert card.details.toPlainText(), "its last log lines"
        assert set(card.buttons) >= {CardAction.RETRY, CardAction.SHOW_DETAILS}
        assert app.connection_view.reconnect_button.isVisibleTo(app.window)
        assert_honest(app)
        await asyncio.sleep(0.5)
        assert supervisor.status.state is SupervisorState.FAILED, "it stays stopped"
        await settle()  # layout runs on the loop (a nested processEvents re-enters qasync)
        assert app.window.width() <= 700
        shot(app.window, screens / "01-keeps-stopping.png")

        card.buttons[CardAction.RETRY].click()
        await until(
            lambda: (
                runtime.connections
                and all(c.status.state is ConnectionState.CONNECTED for c in runtime.connections)
            ),
            "both sessions back",
            60,
        )
        await until(lambda: app.connection_view.card is None, "the card gone")
        assert app.window.stack.currentWidget() is app.window.chat
        assert_honest(app)
        shot(app.window, screens / "02-back.png")
        await app.aclose()

    run_in_qt(qapp, scenario, timeout=150)


def test_switching_gateways_moves_everything_and_is_remembered(
    qapp: QApplication, tmp_path: Path, llm: FakeLLM, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """From gateway A to B: a live chat on B (not A's history), one Activity dock, the
    status names B, the choice is remembered; a message waiting for a stopped B is sent to
    A only after the user says so; a relaunch goes back to the gateway chosen last."""
    screens = screenshot_folder(tmp_path_factory, "switch-gateway")
    a = gateway_with_model(tmp_path / "a", llm)
    b = gateway_with_model(tmp_path / "b", llm)
    paths = AppPaths.default()
    app = DesktopApp(
        DesktopRuntime(paths, ConnectTarget(url=a.url, token=a.token, node=False, name="A"))
    )
    app.window.show()

    async def scenario() -> None:
        await app.start()
        assert app.presenter is not None
        await app.presenter.send("only on A")
        first = app.presenter
        await until(lambda: any(i.status == "done" for i in first.timeline.items), "A")

        await app.switch_gateway(ConnectTarget(url=b.url, token=b.token, node=False, name="B"))
        presenter = app.presenters["main"]
        assert presenter is not first and app.presenter is presenter
        assert app.window.chat is not None
        assert presenter.client.connection.endpoint.port == b.port
        assert app.window.chat.presenter is presenter, "the chat shown is the new gateway's"
        assert not any("only on A" in i.text for i in presenter.timeline.items)
        assert len(app.window.findChildren(QDockWidget, "activity-dock")) == 1
        assert app.window.operator_status.text() == f"chat: connected to 127.0.0.1:{b.port}"
        assert_honest(app)
        await presenter.send("hello B")
        await until(lambda: any(i.status == "done" for i in presenter.timeline.items), "B")
        shot(app.window, screens / "01-on-b.png")
        remembered = LastGateway(paths.last_gateway_file).target(18789)
        assert remembered is not None and remembered.url == b.url
        assert "token" not in paths.last_gateway_file.read_text()

        # B stops; a message waits; switching back to A asks, and "Send" sends it there.
        await asyncio.to_thread(b.stop)
        await until(
            lambda: presenter.client.connection.status.state is not ConnectionState.CONNECTED,
            "B gone",
        )
        assert_honest(app)
        await presenter.send("waiting for B")
        assert presenter.unsent()
        switching = asyncio.ensure_future(
            app.switch_gateway(ConnectTarget(url=a.url, token=a.token, node=False, name="A"))
        )
        await until(lambda: ask_box() is not None, "the question")
        box = ask_box()
        assert box is not None
        shot(app.window, screens / "02-asked.png")
        send = next(b for b in box.buttons() if b.text() == "Send them there")
        send.click()
        await asyncio.wait_for(switching, 60)
        assert app.presenter is not None
        assert app.presenter.client.connection.endpoint.port == a.port
        client = app.runtime.client
        assert client is not None

        async def on_a() -> int:
            history = await client.sessions.history("main", limit=50)
            return sum(
                1 for m in history if m.get("role") == "user" and "waiting for B" in json.dumps(m)
            )

        async with asyncio.timeout(30):
            while await on_a() != 1:
                await asyncio.sleep(0.1)
        assert_honest(app)
        await app.aclose()

        # The app restarted: it goes back to A (not the bundled gateway), with the token
        # the user gave kept in the keyring, and says so honestly.
        remembered = LastGateway(paths.last_gateway_file).target(18789)
        assert remembered is not None and remembered.url == a.url and remembered.token is None
        again = DesktopApp(DesktopRuntime(paths, remembered))
        again.window.show()
        assert again.window.operator_status.text() == "chat: starting…"
        await again.start()
        assert again.window.chat is not None
        assert again.window.operator_status.text() == f"chat: connected to 127.0.0.1:{a.port}"
        assert_honest(again)
        await again.aclose()

    try:
        run_in_qt(qapp, scenario, timeout=150)
    finally:
        a.cleanup()
        b.cleanup()


def ask_box() -> QMessageBox | None:
    """The visible "messages not sent yet" question, if any."""
    for widget in QApplication.topLevelWidgets():
        named = isinstance(widget, QMessageBox) and widget.objectName() == "unsentMessages"
        if named and widget.isVisible():
            assert isinstance(widget, QMessageBox)
            return widget
    return None


def test_switching_to_a_gateway_that_refuses_leaves_nothing_of_the_old_one(
    qapp: QApplication, tmp_path: Path, llm: FakeLLM
) -> None:
    """Switched to a gateway that refuses the token: its card shows, and the sidebar and the
    Activity dock no longer list the gateway left (its sessions, its events)."""
    from ui.widgets.activity import ActivityView
    from ui.widgets.sessions import SessionsPanel

    a = gateway_with_model(tmp_path / "a", llm)
    b = gateway_with_model(tmp_path / "b", llm)
    app = DesktopApp(
        DesktopRuntime(
            AppPaths.default(), ConnectTarget(url=a.url, token=a.token, node=False, name="A")
        )
    )
    app.window.show()

    def activity_rows() -> int:
        (dock,) = app.window.findChildren(QDockWidget, "activity-dock")
        view = dock.widget()
        assert isinstance(view, ActivityView)
        return view.list.count()

    async def scenario() -> None:
        await app.start()
        assert app.window.findChildren(SessionsPanel)
        assert app.activity is not None
        app.activity.on_node_invoke("device.info", "ok")  # something A's node did
        await until(lambda: activity_rows() == 1, "A's activity")

        await app.switch_gateway(ConnectTarget(url=b.url, token="wrong", node=False, name="B"))
        card = app.connection_view.card
        assert card is not None and card.title.text() == "The gateway refused this token"
        await settle()
        assert not [p for p in app.window.findChildren(SessionsPanel) if p.isVisibleTo(app.window)]
        assert app.panel is None
        assert activity_rows() == 0
        assert len(app.window.findChildren(QDockWidget, "activity-dock")) == 1
        assert_honest(app)
        await app.aclose()

    try:
        run_in_qt(qapp, scenario, timeout=90)
    finally:
        a.cleanup()
        b.cleanup()
