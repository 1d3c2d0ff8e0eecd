"""``openclaw-desktop`` with a display: the window shows at once, the runtime starts after
the first frame (PySide6 + qasync: one asyncio loop on Qt's)."""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtWidgets import QApplication

from openclaw_desktop.chat.attachments import Attachment
from openclaw_desktop.config import AppPaths, Settings, SettingsStore, WindowStateStore
from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.notify import Notice, Notifier
from openclaw_desktop.errors import GatewayError, OpenClawError, ReconnectPaused
from openclaw_desktop.known_gateways import SavedGateways, first_run, launch_target
from openclaw_desktop.log import log_to_folder
from openclaw_desktop.node.exec.access import node_approvals
from openclaw_desktop.protocol import Method
from openclaw_desktop.protocol.session_keys import canonical_session_key, short_session_key
from openclaw_desktop.sdk import Approval
from openclaw_desktop.sdk.resources import PairingKind
from openclaw_desktop.session import EventReceived
from ui.dialogs import PairingWaitPanel, ask_approval, ask_exec, ask_pairing, ask_trust
from ui.dialogs.settings import SettingsDialog, unavailable_capabilities
from ui.gateway_choice import GatewayChoice, pin_mismatch
from ui.main_window import MainWindow
from ui.menus import MenuActions, build_menus, run_doctor, show_report
from ui.presenters.chat import ChatPresenter
from ui.presenters.discovery import BrowserFactory
from ui.presenters.sessions import SessionsPresenter, session_title
from ui.presenters.voice import VoicePresenter
from ui.quitting import QuitFlow
from ui.runtime import DesktopRuntime, RuntimeTarget
from ui.tasks import TaskSet, after_first_paint
from ui.theme import follow_system
from ui.tray import Tray
from ui.widgets.activity import ActivityView
from ui.widgets.capture import CaptureIndicator
from ui.widgets.composer import DraftKeeper
from ui.widgets.connect import ConnectScreen
from ui.widgets.connection_status import ConnectionStatusView
from ui.widgets.pair_phone import PairPhoneDialog, setup_code_refused
from ui.widgets.sessions import SessionsPanel

__all__ = ["DesktopApp", "run"]

_T = TypeVar("_T")

if TYPE_CHECKING:
    from openclaw_desktop.node.host import NodeHost

log = logging.getLogger("openclaw.ui")


class DesktopApp(GatewayChoice):
    """The window plus the runtime behind it."""

    def __init__(self, runtime: DesktopRuntime) -> None:
        self.runtime = runtime
        self.window = MainWindow()
        if runtime.trust_callback is None:
            runtime.trust_callback = functools.partial(ask_trust, parent=self.window)
        runtime.operator_status_listeners.append(self._operator_status)
        runtime.gateway_status_listeners.append(self._gateway_status)
        #: The bundled gateway's port (``--gateway-port``): *Use this computer* runs it there.
        self.bundled_port = runtime.target.port
        self._wired: DesktopRuntime | None = None
        #: Messages carried over to the next gateway (session, text, attachments).
        self._carry: list[tuple[str, str, list[Attachment]]] = []
        self.wait_panel: PairingWaitPanel | None = None
        self._pin_dialog_open = False
        self.notifier = Notifier()
        self.connect_screen: ConnectScreen | None = None
        #: How the connect screen browses the LAN (tests bind it to loopback).
        self.browser_factory: BrowserFactory | None = None
        self.presenter: ChatPresenter | None = None
        self.presenters: dict[str, ChatPresenter] = {}
        self.sessions: SessionsPresenter | None = None
        self.tasks = TaskSet()
        self.panel: SessionsPanel | None = None
        self.capture: CaptureIndicator | None = None
        self.activity: ActivityView | None = None
        runtime.node_status_listeners.append(self._node_status)
        #: ``settings.json``: read again at each use (Settings, the tray or the CLI may have
        #: changed it since).
        self.settings = SettingsStore(runtime.paths.settings_file)
        self.tray = Tray(
            self.settings,
            open_chat=self._raise,
            pair_phone=lambda: self._spawn(self.pair_phone()),
            quit_app=lambda: self.quitter.request_quit(),
            open_settings=lambda: (self.open_settings(), None)[1],
            pause_node=lambda paused: self._spawn(self.pause_node(paused)),
        )
        self.quitter = QuitFlow(
            self.window,
            has_tray=lambda: self.tray.available() and self.tray.icon.isVisible(),
            timelines=lambda: [p.timeline for p in self.presenters.values()],
            notify=self.tray.notify,
            marker=runtime.paths.state_dir / "closed-to-tray-notice",
            spawn=self._spawn,
        )
        self.menus = build_menus(self.window, self._menu_actions())
        self.tray.show()
        self.apply_theme()
        runtime.node_started_listeners.append(self._wire_node)
        self._wire_status()

    async def start(self) -> None:
        """Connect and show the chat (errors are shown on a card in the window, not
        raised). A changed TLS certificate asks the user, and connects only if they
        replace the pin. Called again by the card's Retry / Edit token on the same
        runtime: the chat is wired once per runtime."""
        while True:
            try:
                client = await self.runtime.start()
                break
            except ReconnectPaused as exc:
                mismatch = pin_mismatch(exc.cause)
                if mismatch is not None and await self._ask_pin_changed(mismatch):
                    continue  # the pin was replaced and the sessions resumed: wait again
                self._could_not_connect(exc)
                return
            except (OpenClawError, OSError, TimeoutError) as exc:
                self._could_not_connect(exc)
                return
        self.connection_view.hide_failure(self.window.chat or self.window.placeholder)
        self.connection_view.refresh()
        if self._wired is self.runtime:
            return
        self._wired = self.runtime
        SavedGateways.of(self.runtime.paths).remember_connected(self.runtime.target)
        client.connection.on_event(self._gateway_event)
        self._spawn(self._follow_approvals())
        activity = ActivityView()
        dock = getattr(self.window, "activity_dock", None)
        if dock is not None and self.activity is not None:  # the previous gateway's dock
            old, self.activity = self.activity, activity
            dock.setWidget(activity)
            old.deleteLater()
        else:
            self.activity = activity
            self.window.show_activity(activity)
        self._spawn(self._follow_activity())
        if self.runtime.node is not None:
            self._wire_node(self.runtime.node)
        self.sessions = SessionsPresenter(client)
        self.sessions.failed.connect(self.window.statusBar().showMessage)
        activity.session_name = self._session_name
        if self.panel is not None:  # a previous gateway's sidebar
            self.panel.setParent(None)
            self.panel.deleteLater()
        self.panel = SessionsPanel(self.sessions, self._switch)
        self.window.show_sessions(self.panel)
        await self.open_session("main")
        await self.sessions.start()
        await self._send_carried()

    def _wire_status(self) -> None:
        """The status bar, the tray and the error card follow the runtime's sessions."""
        view = ConnectionStatusView(self.window, self.tray, lambda: self.runtime)
        view.reconnect_requested.connect(lambda: self._spawn(self.runtime.reconnect_now()))
        view.retry_requested.connect(lambda: self._spawn(self.retry()))
        view.choose_requested.connect(lambda: self._spawn(self.choose_gateway()))
        view.token_entered.connect(self._token_entered)
        self.connection_view = view

    def _wire_node(self, node: NodeHost) -> None:
        """Show this node's captures (with Cancel) and its invokes in the activity view; ask
        here when its exec policy asks the user."""
        if self.capture is None:
            self.capture = CaptureIndicator(self._cancel_captures, self.window)
            self.window.statusBar().addWidget(self.capture)
        if self.capture.report not in node.ctx.activity.listeners:
            node.ctx.activity.listeners.append(self.capture.report)
        if node.ctx.exec_prompt is None:  # "Allow command?" when the exec policy asks
            node.ctx.exec_prompt = functools.partial(ask_exec, parent=self.window)
        if self.activity is not None:
            node.session.invoke_listeners.append(self.activity.on_node_invoke)
            # Every exec decision of the node, as it decides (a previous gateway's dock
            # stops hearing them).
            decisions = node.ctx.exec_decision_listeners
            decisions[:] = [
                known
                for known in decisions
                if not isinstance(getattr(known, "__self__", None), ActivityView)
            ]
            decisions.append(self.activity.on_exec_decision)
        self._capabilities_changed(node)
        listener = functools.partial(self._capabilities_changed, node)
        if not any(
            getattr(known, "func", None) == listener.func for known in node.change_listeners
        ):
            node.change_listeners.append(listener)

    def _capabilities_changed(self, node: NodeHost, _change: object = None) -> None:
        """The tray shows a capability that cannot work here as unavailable."""
        self.tray.set_unavailable(unavailable_capabilities(list(node.entries)))

    def _cancel_captures(self, prefix: str) -> int:
        node = self.runtime.node
        return node.session.cancel_running(prefix) if node is not None else 0

    async def pause_node(self, paused: bool) -> None:
        """Tray “Pause node”: disconnect the node (the chat stays) or bring it back."""
        if paused:
            await self.runtime.pause_node()
            self.connection_view.refresh()
        else:
            await self.runtime.resume_node()
        if self.tray.pause_action.isChecked() != paused:
            self.tray.pause_action.blockSignals(True)
            self.tray.pause_action.setChecked(paused)
            self.tray.pause_action.blockSignals(False)

    def _spawn(self, coro: Any) -> None:
        self.tasks.spawn(coro)

    def _menu_actions(self) -> MenuActions:
        def new_session() -> None:
            if self.panel is not None:
                self.panel.new_button.click()  # the sidebar's own New session

        async def doctor() -> None:
            show_report(self.window, "Doctor: what works here", await run_doctor())

        return MenuActions(
            new_session=new_session,
            connect_gateway=lambda: self._spawn(self.choose_gateway()),
            pair_phone=lambda: self._spawn(self.pair_phone()),
            settings=lambda: (self.open_settings(), None)[1],
            quit=lambda: self.quitter.request_quit(),
            doctor=lambda: self._spawn(doctor()),
            theme=self._theme,
            set_theme=self.set_theme,
            logs=self.runtime.paths.log_dir,
        )

    def _session_name(self, key: str) -> str:
        """A session's readable title (as the sidebar shows it), for the Activity dock."""
        row = (self.sessions.row(key) if self.sessions is not None else None) or {"key": key}
        return self.sessions.title(row) if self.sessions is not None else session_title(row)

    def _switch(self, key: str) -> None:
        self._spawn(self.open_session(key))

    def _raise(self) -> None:
        self.window.showNormal()
        self.window.raise_()
        self.window.activateWindow()

    async def pair_phone(self) -> PairPhoneDialog | None:
        """Show a fresh setup code of the gateway as a QR code."""
        client = self.runtime.client
        if client is None:
            return None
        try:
            setup = await client.pairing.setup_code()
        except OpenClawError as exc:
            reason = exc.message if isinstance(exc, GatewayError) else str(exc)
            self.window.statusBar().showMessage(f"no setup code: {reason}")
            setup_code_refused(reason, self.window)
            return None
        dialog = PairPhoneDialog(setup, self.window)
        dialog.open()
        return dialog

    def _busy(self, busy: bool) -> None:
        self.tray.set_busy(busy)

    def open_settings(self) -> SettingsDialog:
        """The settings dialog (capabilities with their availability here)."""
        node = self.runtime.node
        entries = list(node.entries) if node else []
        dialog = SettingsDialog(self.settings, entries, self.window, node_approvals(node))
        dialog.accepted.connect(self.tray.sync_capabilities)
        dialog.accepted.connect(self.apply_theme)
        dialog.open()
        return dialog

    def _read_setting(self, read: Callable[[Settings], _T], default: _T) -> _T:
        """One setting as the file says now (``default`` when it cannot be read)."""
        try:
            return read(self.settings.load())
        except OpenClawError:
            return default

    def _microphone_setting(self) -> str | None:
        return self._read_setting(lambda s: s.node.microphone_device, None)

    def _theme(self) -> str:
        return self._read_setting(lambda s: s.ui.theme, "system")

    def set_theme(self, choice: str) -> None:
        """View > Theme: keep the choice in the settings and apply it."""
        try:
            self.settings.set("ui.theme", choice)
        except OpenClawError as exc:
            self.window.statusBar().showMessage(f"theme not saved: {exc}")
        self.apply_theme()

    def apply_theme(self) -> None:
        """Colours as ``ui.theme`` says (``system`` follows the desktop)."""
        app = QApplication.instance()
        if isinstance(app, QApplication):
            follow_system(app, self._theme())

    def _replied(self) -> None:
        """A reply finished: notify when the window is hidden (``ui.notify_replies``)."""
        wanted = self._read_setting(lambda s: s.ui.notify_replies, True)
        if not wanted or (self.window.isVisible() and not self.window.isMinimized()):
            return
        title = "OpenClaw: the reply is ready"
        body = self._last_reply_preview()
        if self.tray.available():
            self.tray.notify(title, body)
        else:  # no tray (GNOME without extensions, tiling WMs): the notification service
            self._spawn(self._notify_desktop(title, body))

    def _last_reply_preview(self) -> str:
        presenter = self.presenter
        replies = (
            [i for i in presenter.timeline.items if i.role == "assistant"] if presenter else []
        )
        text = " ".join(replies[-1].text.split()) if replies else ""
        return text if len(text) <= 120 else text[:119] + "…"

    async def _notify_desktop(self, title: str, body: str) -> None:
        try:
            await self.notifier.send(Notice(title, body))
        except DeviceError as exc:
            log.info("no reply notification: %s", exc)

    async def open_session(self, key: str) -> ChatPresenter:
        """Show a session's chat (its presenter is created once and kept)."""
        assert self.runtime.client is not None
        short = short_session_key(key)
        presenter = self.presenters.get(short)
        if presenter is None:
            presenter = ChatPresenter(self.runtime.client, short)
            presenter.voice = VoicePresenter(presenter, self._microphone_setting)
            presenter.busy.connect(self._busy)
            presenter.busy.connect(lambda busy: None if busy else self._replied())
            self.presenters[short] = presenter
            view = self.window.show_chat(presenter)
            store = WindowStateStore(self.runtime.paths.window_state_file)
            DraftKeeper(view.composer, store, self.runtime.url, short)  # a child of the composer
            await presenter.start()
        else:
            self.window.show_chat(presenter)
        self.presenter = presenter
        if self.panel is not None:
            self.panel.select(canonical_session_key(key))
        return presenter

    # ------------------------------------------------------------------ pairing and approvals
    def _gateway_event(self, event: EventReceived) -> None:
        """Another device asks to pair with a gateway this app operates (the runtime says
        which requests are the user's to decide)."""
        asked = self.runtime.pairing_to_ask(event)
        if asked is not None:
            self._spawn(self._ask_pairing(*asked))

    async def _ask_pairing(self, kind: PairingKind, request: dict[str, Any]) -> None:
        client = self.runtime.client
        decision = await ask_pairing(request, self.window)
        if client is None or decision is None:
            return
        answer = client.pairing.approve if decision == "approve" else client.pairing.reject
        try:
            await answer(kind, str(request.get("requestId", "")))
        except OpenClawError as exc:
            self.window.statusBar().showMessage(f"pairing {decision} failed: {exc}")

    async def _follow_approvals(self) -> None:
        """Exec approvals: the pending ones, then ask as they come (where the gateway lists
        them)."""
        client = self.runtime.client
        if client is None or not client.supports(Method.EXEC_APPROVAL_LIST):
            return
        async for approval in client.approvals.follow():
            self._spawn(self._ask_approval(approval))

    async def _follow_activity(self) -> None:
        client = self.runtime.client
        if client is None or self.activity is None:
            return
        async for event in client.events():
            self.activity.on_event(event)

    async def _ask_approval(self, approval: Approval) -> None:
        client = self.runtime.client
        decision = await ask_approval(approval, self.window)
        if self.activity is not None:
            self.activity.on_approval_decision(approval, decision)
        if client is not None and decision is not None:
            try:
                await client.approvals.respond(approval.id, decision, kind=approval.kind)
            except OpenClawError as exc:
                self.window.statusBar().showMessage(f"approval not sent: {exc}")

    async def aclose(self) -> None:
        """Stop following events, cancel what the window started, close the runtime."""
        for keeper in self.window.findChildren(DraftKeeper):
            keeper.save()  # what was typed last, before the quiet period
        await self.tasks.cancel()
        for presenter in self.presenters.values():
            await presenter.aclose()
        if self.sessions is not None:
            await self.sessions.aclose()
        await self.runtime.aclose()


def run(argv: Sequence[str], target: RuntimeTarget) -> int:
    """Run the desktop app until its window closes. An ``openclaw://pair`` link in
    ``target`` opens the connect screen with its code filled in; a later launch's link (or
    plain launch) is handed to this window over a user-only local socket."""
    from ui.collector import MainThreadCollector
    from ui.event_loop import qt_event_loop
    from ui.icons import app_icon
    from ui.instance import InstanceServer

    app = QApplication.instance() or QApplication(list(argv))
    assert isinstance(app, QApplication)
    app.setApplicationName("OpenClaw Desktop")
    app.setDesktopFileName("openclaw-desktop")
    app.setWindowIcon(app_icon())
    # Audio and capture threads must never free Qt objects: collect on this thread only.
    collector = MainThreadCollector(app)
    loop = qt_event_loop(app)
    asyncio.set_event_loop(loop)
    paths = AppPaths.default()
    log_to_folder(paths.log_dir)
    desktop = DesktopApp(DesktopRuntime(paths, launch_target(target, paths)))
    desktop.window.show()
    closed = asyncio.Event()
    desktop.quitter.on_quit.append(closed.set)
    # The loop must outlive the last window: closing it starts an orderly shutdown
    # (connections, discovery, the gateway we started), which then ends the loop.
    app.setQuitOnLastWindowClosed(False)
    app.lastWindowClosed.connect(closed.set)
    instance = InstanceServer(paths, app)
    if instance.listen():
        instance.show_requested.connect(desktop._raise)
        instance.link_received.connect(desktop.open_pair_link)
    pair_link = getattr(target, "pair_link", None)
    asks = first_run(target, paths) or pair_link is not None
    start = desktop.choose_gateway(pair_link) if asks else desktop.start()
    after_first_paint(desktop.window, lambda: desktop._spawn(start))

    async def until_closed() -> None:
        await closed.wait()
        await desktop.aclose()

    try:
        with loop:
            loop.run_until_complete(until_closed())
    finally:
        instance.close()
        collector.stop()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run(sys.argv, RuntimeTarget()))
