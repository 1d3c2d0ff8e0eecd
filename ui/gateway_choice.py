"""Which gateway the window talks to, and what it shows when it cannot: the connect screen,
switching gateways (both sessions move; history, models, sessions and docks start over; unsent
messages are sent on or discarded only after asking; the choice is remembered for the next
launch), the error card's actions, the changed-certificate warning and the session states that
change what the window shows.

A mixin of :class:`ui.app.DesktopApp` (Qt wiring only; the rules are in the runtime and the
presenters)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QMessageBox

from openclaw_desktop.chat.attachments import Attachment
from openclaw_desktop.config import SettingsStore
from openclaw_desktop.errors import ConnectionClosed, OpenClawError, ReconnectPaused, TrustError
from openclaw_desktop.interruption import CutCause
from openclaw_desktop.known_gateways import SavedGateways
from openclaw_desktop.links import PairLink
from openclaw_desktop.supervisor import SupervisorStatus
from openclaw_desktop.transport import ConnectionState, ConnectionStatus
from openclaw_desktop.trust import TrustPrompt
from ui.dialogs import PairingWaitPanel, ask_trust
from ui.presenters.discovery import BrowserFactory, configured_browsers
from ui.presenters.failure import card_for_error, card_for_gateway
from ui.runtime import DesktopRuntime, RuntimeTarget
from ui.widgets.connect import ConnectScreen

if TYPE_CHECKING:
    from openclaw_desktop.node.host import NodeHost
    from ui.main_window import MainWindow
    from ui.presenters.chat import ChatPresenter
    from ui.presenters.sessions import SessionsPresenter
    from ui.tasks import TaskSet
    from ui.widgets.activity import ActivityView
    from ui.widgets.connection_status import ConnectionStatusView
    from ui.widgets.sessions import SessionsPanel

__all__ = [
    "GatewayChoice",
    "pin_mismatch",
    "unsent_count",
]

log = logging.getLogger("openclaw.ui")


class GatewayChoice:
    """The gateway part of the desktop app (see the module docstring)."""

    if TYPE_CHECKING:  # provided by DesktopApp
        runtime: DesktopRuntime
        window: MainWindow
        tasks: TaskSet
        presenters: dict[str, ChatPresenter]
        presenter: ChatPresenter | None
        sessions: SessionsPresenter | None
        panel: SessionsPanel | None
        activity: ActivityView | None
        connect_screen: ConnectScreen | None
        browser_factory: BrowserFactory | None
        wait_panel: PairingWaitPanel | None
        connection_view: ConnectionStatusView
        bundled_port: int
        _pin_dialog_open: bool
        _wired: DesktopRuntime | None
        _carry: list[tuple[str, str, list[Attachment]]]

        async def start(self) -> None: ...
        async def open_session(self, key: str) -> ChatPresenter: ...
        def _spawn(self, coro: Any) -> None: ...
        def _raise(self) -> None: ...
        def _wire_node(self, node: NodeHost) -> None: ...

    async def retry(self) -> None:
        """The card's Retry: try the same gateway again now (a runtime that could not even
        start its gateway is made anew)."""
        if self.runtime.client is None:
            await self.runtime.aclose()
            self.runtime = self._fresh_runtime(self.runtime.target)
        else:
            await self.runtime.reconnect_now()
        self.connection_view.refresh()
        await self.start()

    def _token_entered(self, token: str) -> None:
        """The card's Edit token: both sessions use the new token from now on."""
        self.runtime.set_token(token)
        self._spawn(self.retry())

    def _could_not_connect(self, exc: BaseException) -> None:
        """A card in plain words with the actions that fit (the raw text under details)."""
        log.error("could not connect: %s", exc)
        client = self.runtime.client
        where = client.connection.endpoint.display if client is not None else ""
        self.connection_view.show_failure(
            card_for_error(exc, bundled=self.runtime.bundled, where=where)
        )
        self.connection_view.refresh()

    def _fresh_runtime(self, target: RuntimeTarget) -> DesktopRuntime:
        """A new runtime for ``target`` with this window's listeners."""
        runtime = DesktopRuntime(self.runtime.paths, target, self.runtime.trust_callback)
        runtime.node_status_listeners.append(self._node_status)
        runtime.operator_status_listeners.append(self._operator_status)
        runtime.gateway_status_listeners.append(self._gateway_status)
        runtime.node_started_listeners.append(self._wire_node)
        return runtime

    async def _ask_pin_changed(self, error: TrustError) -> bool:
        """The distinct warning for a changed certificate (old and new fingerprints); the
        new pin is stored only when the user explicitly replaces it."""
        if self._pin_dialog_open or error.actual is None or error.expected is None:
            return False
        host, _, port = error.endpoint.rpartition(":")
        prompt = TrustPrompt(
            endpoint=error.endpoint,
            host=host.strip("[]"),
            port=int(port) if port.isdigit() else 0,
            fingerprint=error.actual,
            previous_pin=error.expected,
        )
        self._pin_dialog_open = True
        try:
            name = getattr(self.runtime.target, "name", None)
            replaced = await ask_trust(prompt, self.window, gateway_name=name)
        finally:
            self._pin_dialog_open = False
        if replaced:
            self.runtime.replace_pin(error.actual)
        return replaced

    # ------------------------------------------------------------------ gateways
    def open_pair_link(self, link: PairLink) -> None:
        """An ``openclaw://pair`` link from another launch: show its code on the connect
        screen. Never connects by itself: any web page can open such a link."""
        self._raise()
        if self.connect_screen is not None:
            self.connect_screen.setup_code.setText(link.code)
            self.connect_screen.connect_code.setFocus()
        else:
            self._spawn(self.choose_gateway(link))

    async def choose_gateway(self, pair_link: PairLink | None = None) -> None:
        """The connect screen (first run, “Connect to another gateway…”, or a pairing link):
        this computer's bundled gateway, one found on the LAN, a URL or a setup code."""
        paths = self.runtime.paths
        try:
            camera = SettingsStore(paths.settings_file).load().node.camera_source or ""
        except OpenClawError:
            camera = ""
        saved = SavedGateways.of(paths)
        screen = ConnectScreen(
            saved,
            browser_factory=self.browser_factory or configured_browsers(paths.settings_file),
            parent=self.window,
            camera_source=camera,
            bundled_port=self.bundled_port,
        )
        self.window.stack.addWidget(screen)
        self.window.stack.setCurrentWidget(screen)
        chosen: asyncio.Future[RuntimeTarget] = asyncio.get_running_loop().create_future()

        def pick(target: RuntimeTarget) -> None:
            if not chosen.done():
                chosen.set_result(target)

        screen.chosen.connect(pick)
        screen.forgotten.connect(self._forget_gateway)
        self.connect_screen = screen
        log.info("connect screen shown")
        if pair_link is not None:
            screen.setup_code.setText(pair_link.code)  # decoded and checked by the screen
            screen.connect_code.setFocus()
        await screen.start()
        try:
            target = await chosen
        finally:
            self.connect_screen = None
            await screen.aclose()
        self.window.stack.removeWidget(screen)
        screen.deleteLater()
        if target.url is None:
            saved.remember(target)
        await self.switch_gateway(target)

    async def switch_gateway(self, target: RuntimeTarget) -> None:
        """Close the current connection (if any) and connect to ``target``: both sessions
        move, and history, models, sessions and docks start over from the new gateway.
        Messages the old gateway has not got are sent to the new one or discarded only
        after asking (Cancel stays where it is)."""
        unsent = [
            (key, text, files)
            for key, presenter in self.presenters.items()
            for text, files in presenter.unsent()
        ]
        if unsent:
            decision = await self._ask_unsent(len(unsent), target)
            if decision is None:
                if self.window.chat is not None:
                    self.window.stack.setCurrentWidget(self.window.chat)
                return
            self._carry = unsent if decision == "send" else []
        await self.tasks.cancel()
        for presenter in self.presenters.values():
            await presenter.aclose()
        self.presenters.clear()
        self.presenter = None
        if self.sessions is not None:
            await self.sessions.aclose()
            self.sessions = None
        await self.runtime.aclose(CutCause.GATEWAY_SWITCHED)
        self.window.forget_chats()  # the previous gateway's chats (presenters closed)
        self._forget_docks()
        # The old gateway's notes ("the chat resumes when back") are no longer true.
        self.window.statusBar().clearMessage()
        self.connection_view.hide_failure(None)
        self.runtime = self._fresh_runtime(target)
        self.connection_view.refresh()
        self.window.show_message("Connecting…")
        await self.start()

    def _forget_docks(self) -> None:
        """Empty the sessions sidebar and the Activity dock of the gateway being left now,
        not only once the next one answers (a refused token would leave them showing the
        old gateway's sessions and events beside the new one's error card)."""
        from ui.widgets.activity import ActivityView

        if self.panel is not None:
            self.panel.setParent(None)
            self.panel.deleteLater()
            self.panel = None
        dock = getattr(self.window, "activity_dock", None)
        if self.activity is not None and dock is not None:
            old, self.activity = self.activity, ActivityView()
            dock.setWidget(self.activity)
            old.deleteLater()

    async def _ask_unsent(self, count: int, target: RuntimeTarget) -> str | None:
        """ "send", "discard", or None (Cancel: stay on this gateway). Never a nested loop."""
        new = getattr(target, "name", None) or target.url or "this computer's gateway"
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Messages not sent yet",
            f"{unsent_count(count)} not reached the current gateway yet. Send "
            f"{'it' if count == 1 else 'them'} to {new} once connected, or discard "
            f"{'it' if count == 1 else 'them'}?",
            QMessageBox.StandardButton.NoButton,
            self.window,
        )
        box.setObjectName("unsentMessages")
        send = box.addButton("Send them there", QMessageBox.ButtonRole.AcceptRole)
        discard = box.addButton("Discard them", QMessageBox.ButtonRole.DestructiveRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.setEscapeButton(cancel)
        answer: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()

        def done(_result: int) -> None:
            clicked = box.clickedButton()
            choice = "send" if clicked is send else "discard" if clicked is discard else None
            if not answer.done():
                answer.set_result(choice)

        box.finished.connect(done)
        box.open()
        try:
            return await answer
        finally:
            box.deleteLater()

    async def _send_carried(self) -> None:
        """Send the messages carried over from the previous gateway (once)."""
        carry, self._carry = self._carry, []
        for key, text, files in carry:
            presenter = await self.open_session(key)
            await presenter.send(text, files)

    def _forget_gateway(self, url: str) -> None:
        """The connect screen forgot a gateway (its TLS pin and tokens went with it)."""
        self.window.statusBar().showMessage(f"forgot {url}")

    # ------------------------------------------------------------------ session states
    def _operator_status(self, status: ConnectionStatus) -> None:
        self.connection_view.refresh()
        mismatch = pin_mismatch(status.error)
        if status.state is ConnectionState.PAUSED and mismatch is not None:
            if self._wired is self.runtime:  # connected before: ask here
                self._spawn(self._ask_pin_changed_or_card(mismatch))
            return
        if status.state is ConnectionState.PAUSED and self._wired is self.runtime:
            # Paused after it was connected (start() shows the card for a first failure).
            self._could_not_connect(status.error or ReconnectPaused(OpenClawError("paused")))
        if (
            status.state is ConnectionState.RECONNECTING
            and status.attempt >= 2
            and self._wired is not self.runtime
            and self.connection_view.card is None
        ):
            # Not connected yet and the gateway does not answer: say so, with the ways out
            # (it keeps trying meanwhile; the card goes when it connects).
            client = self.runtime.client
            where = client.connection.endpoint.display if client is not None else ""
            error = status.error or ConnectionClosed(None, "")
            self.connection_view.show_failure(card_for_error(error, bundled=False, where=where))
        if status.state is ConnectionState.AWAITING_APPROVAL and status.pairing is not None:
            rid = status.pairing.request_id or "?"
            command = status.pairing.approve_command or f"openclaw devices approve {rid}"
            if self.wait_panel is None:
                self.wait_panel = PairingWaitPanel(rid, command, self.window)
                self.window.stack.addWidget(self.wait_panel)
            self.window.stack.setCurrentWidget(self.wait_panel)
        elif status.state is ConnectionState.CONNECTED:
            self.connection_view.hide_failure(self.window.chat or self.window.placeholder)
            if self.wait_panel is not None:
                self.wait_panel.stop("Approved")
                if self.window.chat is not None:
                    self.window.stack.setCurrentWidget(self.window.chat)

    async def _ask_pin_changed_or_card(self, mismatch: TrustError) -> None:
        if not await self._ask_pin_changed(mismatch):
            self._could_not_connect(mismatch)

    def _gateway_status(self, status: SupervisorStatus) -> None:
        """The bundled gateway stopped, restarts, or keeps stopping (then a card)."""
        self.connection_view.gateway_changed(status)
        card = card_for_gateway(status)
        if card is not None:
            self.connection_view.show_failure(card)

    def _node_status(self, status: ConnectionStatus) -> None:
        self.connection_view.refresh()


def unsent_count(count: int) -> str:
    """ "1 message has" / "3 messages have": the subject of the unsent-messages question."""
    return "1 message has" if count == 1 else f"{count} messages have"


def pin_mismatch(error: BaseException | None) -> TrustError | None:
    """The error when it says a pinned gateway shows another certificate."""
    if isinstance(error, TrustError) and error.kind == "mismatch":
        return error
    return None
