"""The connect screen: this computer's bundled gateway (the default), a gateway found on the
LAN, a known one, a typed URL or a pasted setup code. It only decides *where*; the app
connects to the :class:`~openclaw_desktop.known_gateways.ConnectTarget` it emits."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from openclaw_desktop.discovery import (
    GatewayBrowser,
    GatewayEndpoint,
    SetupCode,
    SetupCodeError,
    decode_setup_code,
)
from openclaw_desktop.errors import ConfigError, OpenClawError
from openclaw_desktop.known_gateways import ConnectTarget, SavedGateways
from openclaw_desktop.protocol import DEFAULT_GATEWAY_PORT
from ui.presenters.discovery import (
    BrowserFactory,
    DiscoveryPresenter,
    short_fingerprint,
    typed_gateway,
)
from ui.runtime import RuntimeTarget
from ui.widgets.qr_scanner import QrScanner

__all__ = ["ConnectScreen"]

_COLUMNS = ("Name", "Host", "Port", "TLS", "Fingerprint hint")
_ERROR_STYLE = "color: #b3261e;"


class _MessageLabel(QLabel):
    """A message line that is there only while it says something: empty, Qt's bridge named
    it after its group for a screen reader ("Or connect to another gateway", once more)."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setVisible(False)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        super().setText(text)
        self.setVisible(bool(text))

    def clear(self) -> None:
        super().clear()
        self.setVisible(False)


class ConnectScreen(QWidget):
    """Choose a gateway.

    Signals:
        chosen: a :class:`RuntimeTarget` — ``RuntimeTarget(port=bundled_port)`` for the
            bundled gateway, else a :class:`ConnectTarget` (url, token, name, tls_hint, and for a
            setup code its bootstrap token).
        forgotten: the URL of a known gateway the user forgot (drop its pin and tokens).

    Args:
        known: The saved gateways (read now, written on choose/forget: a forgotten one's
            pin and tokens go too when they know the secret store), or just the known
            gateways JSON file.
        browser_factory: Makes the LAN browser; :meth:`start` starts it, :meth:`aclose`
            (or closing the widget) stops it.
        bundled_port: where *Use this computer* runs the bundled gateway (the app's
            ``--gateway-port``).
    """

    chosen = Signal(object)
    forgotten = Signal(str)

    def __init__(
        self,
        known: SavedGateways | Path,
        browser_factory: BrowserFactory = GatewayBrowser,
        parent: QWidget | None = None,
        camera_source: str = "",
        bundled_port: int = DEFAULT_GATEWAY_PORT,
    ) -> None:
        super().__init__(parent)
        #: The bundled gateway's port (``--gateway-port``) for *Use this computer*.
        self.bundled_port = bundled_port
        self.setWindowTitle("Connect to OpenClaw")
        self.known = known if isinstance(known, SavedGateways) else SavedGateways(known)
        self.discovery = DiscoveryPresenter(browser_factory, self)
        self.discovery.changed.connect(self._refresh_discovered)
        self.discovery.failed.connect(self._discovery_failed)
        self._closing: asyncio.Task[None] | None = None
        layout = QVBoxLayout(self)

        self.local_button = QPushButton("Use this computer (bundled gateway, offline)", self)
        self.local_button.setObjectName("useLocal")
        self.local_button.setDefault(True)
        self.local_button.setMinimumHeight(56)
        font = self.local_button.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.local_button.setFont(font)
        self.local_button.clicked.connect(
            lambda: self.chosen.emit(RuntimeTarget(port=self.bundled_port))
        )
        layout.addWidget(self.local_button)

        other = QGroupBox("Or connect to another gateway", self)
        form = QVBoxLayout(other)
        token_row = QFormLayout()
        self.token = QLineEdit(other)
        self.token.setObjectName("token")
        self.token.setAccessibleName("Gateway token or password")
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.token.setPlaceholderText("gateway token or password (if it asks for one)")
        token_row.addRow("Token / password:", self.token)
        form.addLayout(token_row)

        form.addWidget(QLabel("<b>On your network</b>", other))
        self.discovered = QTableWidget(0, len(_COLUMNS), other)
        self.discovered.setObjectName("discovered")
        self.discovered.setAccessibleName("Gateways on your network")
        self.discovered.setHorizontalHeaderLabels(list(_COLUMNS))
        self.discovered.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.discovered.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.discovered.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.discovered.verticalHeader().setVisible(False)
        header = self.discovered.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(_COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.discovered.itemSelectionChanged.connect(self._update_buttons)
        self.discovered.itemDoubleClicked.connect(lambda _item: self._connect_discovered())
        form.addWidget(self.discovered)
        self.discovery_status = QLabel("Searching the local network…", other)
        self.discovery_status.setObjectName("discoveryStatus")
        discovered_row = QHBoxLayout()
        discovered_row.addWidget(self.discovery_status, 1)
        self.connect_discovered = QPushButton("Connect", other)
        self.connect_discovered.setObjectName("connectDiscovered")
        self.connect_discovered.setAccessibleName("Connect to the gateway found on the network")
        self.connect_discovered.clicked.connect(self._connect_discovered)
        discovered_row.addWidget(self.connect_discovered)
        form.addLayout(discovered_row)

        form.addWidget(QLabel("<b>Known gateways</b>", other))
        self.known_list = QListWidget(other)
        self.known_list.setObjectName("known")
        self.known_list.setAccessibleName("Known gateways")
        self.known_list.setMaximumHeight(110)
        self.known_list.itemSelectionChanged.connect(self._update_buttons)
        self.known_list.itemDoubleClicked.connect(lambda _item: self._connect_known())
        form.addWidget(self.known_list)
        known_row = QHBoxLayout()
        known_row.addStretch(1)
        self.forget_button = QPushButton("Forget gateway", other)
        self.forget_button.setObjectName("forget")
        self.forget_button.clicked.connect(self._forget)
        known_row.addWidget(self.forget_button)
        self.connect_known = QPushButton("Connect", other)
        self.connect_known.setObjectName("connectKnown")
        self.connect_known.setAccessibleName("Connect to the known gateway")
        self.connect_known.clicked.connect(self._connect_known)
        known_row.addWidget(self.connect_known)
        form.addLayout(known_row)

        self.url = QLineEdit(other)
        self.url.setObjectName("url")
        self.url.setAccessibleName("Gateway URL")
        self.url.setPlaceholderText(f"wss://gateway.example:{DEFAULT_GATEWAY_PORT}")
        self.url_error = self._error_label("urlError", other)
        self.url.returnPressed.connect(self._connect_url)
        self.url.textChanged.connect(lambda _text: self.url_error.clear())
        self.connect_url = QPushButton("Connect", other)
        self.connect_url.setObjectName("connectUrl")
        self.connect_url.setAccessibleName("Connect to the URL")
        self.connect_url.clicked.connect(self._connect_url)
        form.addWidget(QLabel("<b>Enter a URL</b>", other))
        form.addLayout(self._row(self.url, self.connect_url))
        form.addWidget(self.url_error)

        self.setup_code = QLineEdit(other)
        self.setup_code.setObjectName("setupCode")
        self.setup_code.setAccessibleName("Setup code")
        self.setup_code.setPlaceholderText("paste the code from “Pair a phone” / openclaw qr")
        self.setup_code.textChanged.connect(self._decode_setup_code)
        self.connect_code = QPushButton("Connect", other)
        self.connect_code.setObjectName("connectCode")
        self.connect_code.setAccessibleName("Connect with the setup code")
        self.connect_code.clicked.connect(self._connect_setup_code)
        self.setup_result = _MessageLabel(other)
        self.setup_result.setObjectName("setupResult")
        self.setup_result.setWordWrap(True)
        self.setup_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._decoded: SetupCode | None = None
        self.camera_source = camera_source
        self.scanner = QrScanner()
        self.scan_button = QPushButton("Scan with camera…", other)
        self.scan_button.setObjectName("scanCode")
        self.scan_button.setToolTip("Hold the setup code's QR in front of this computer's camera")
        self.scan_button.clicked.connect(self._toggle_scan)
        self.scanner.found.connect(self._scanned)
        self.scanner.failed.connect(self._scan_failed)
        self.scanner.running.connect(self._scanning)
        form.addWidget(QLabel("<b>Paste or scan a setup code</b>", other))
        code_row = self._row(self.setup_code, self.connect_code)
        code_row.addWidget(self.scan_button)
        form.addLayout(code_row)
        form.addWidget(self.setup_result)
        layout.addWidget(other, 1)

        self._reload_known()
        self._decode_setup_code("")
        self._update_buttons()

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Start LAN discovery (failures are shown on the screen, not raised)."""
        self.discovery_status.setText("Searching the local network…")
        await self.discovery.start()

    async def aclose(self) -> None:
        """Stop LAN discovery and a running QR scan. Idempotent."""
        self.scanner.stop()
        await self.discovery.stop()
        if self.scanner.task is not None:
            await asyncio.wait([self.scanner.task], timeout=5)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        """Stop discovery in the background when the screen is closed."""
        with contextlib.suppress(RuntimeError):  # no running loop: nothing was started
            loop = asyncio.get_running_loop()
            if self.discovery.running and self._closing is None:
                self._closing = loop.create_task(self.aclose())
        super().closeEvent(event)

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _row(edit: QLineEdit, button: QPushButton) -> QHBoxLayout:
        row = QHBoxLayout()
        row.addWidget(edit, 1)
        row.addWidget(button)
        return row

    @staticmethod
    def _error_label(name: str, parent: QWidget) -> QLabel:
        label = _MessageLabel(parent)
        label.setObjectName(name)
        label.setWordWrap(True)
        label.setStyleSheet(_ERROR_STYLE)
        return label

    def _token(self) -> str | None:
        return self.token.text().strip() or None

    def _choose(self, target: ConnectTarget) -> None:
        """Remember a remote gateway and emit it."""
        assert target.url is not None
        self.known.remember(target)
        self._reload_known()
        self.chosen.emit(target)

    def _update_buttons(self) -> None:
        self.connect_discovered.setEnabled(self._selected_endpoint() is not None)
        has_known = bool(self.known_list.selectedItems())
        self.connect_known.setEnabled(has_known)
        self.forget_button.setEnabled(has_known)

    # ------------------------------------------------------------------ discovered
    def _refresh_discovered(self, _kind: str, _endpoint: object) -> None:
        """Rebuild the table from the presenter, keeping the selection."""
        selected = self._selected_endpoint()
        keep = selected.stable_id if selected is not None else None
        gateways = sorted(
            self.discovery.gateways.values(),
            key=lambda e: (e.display_name.casefold(), e.stable_id),
        )
        self.discovered.setRowCount(len(gateways))
        for row, endpoint in enumerate(gateways):
            cells = (
                endpoint.display_name,
                endpoint.host,
                str(endpoint.port),
                "yes" if endpoint.tls else "no",
                short_fingerprint(endpoint.tls_fingerprint_hint),
            )
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, endpoint.stable_id)
                if column == 4 and endpoint.tls_fingerprint_hint:
                    item.setToolTip(f"advertised (unverified): {endpoint.tls_fingerprint_hint}")
                self.discovered.setItem(row, column, item)
            if endpoint.stable_id == keep:
                self.discovered.selectRow(row)
        count = len(gateways)
        self.discovery_status.setText(
            "Searching the local network…" if count == 0 else f"{count} gateway(s) found"
        )
        self._update_buttons()

    def _discovery_failed(self, message: str) -> None:
        self.discovery_status.setText(message)

    def _selected_endpoint(self) -> GatewayEndpoint | None:
        rows = self.discovered.selectionModel().selectedRows()
        if not rows:
            return None
        item = self.discovered.item(rows[0].row(), 0)
        if item is None:
            return None
        return self.discovery.gateways.get(str(item.data(Qt.ItemDataRole.UserRole)))

    def select_discovered(self, stable_id: str) -> bool:
        """Select the discovered gateway ``stable_id``; False if it is not listed."""
        for row in range(self.discovered.rowCount()):
            item = self.discovered.item(row, 0)
            if item is not None and item.data(Qt.ItemDataRole.UserRole) == stable_id:
                self.discovered.selectRow(row)
                return True
        return False

    def _connect_discovered(self) -> None:
        endpoint = self._selected_endpoint()
        if endpoint is None:
            return
        self._choose(
            ConnectTarget(
                url=endpoint.url,
                token=self._token(),
                name=endpoint.display_name,
                tls_hint=endpoint.tls_fingerprint_hint,
            )
        )

    # ------------------------------------------------------------------ known
    def _reload_known(self) -> None:
        self.known_list.clear()
        for entry in self.known.load():
            item = QListWidgetItem(f"{entry.name} — {entry.url}", self.known_list)
            item.setData(Qt.ItemDataRole.UserRole, entry.url)
            item.setData(Qt.ItemDataRole.UserRole + 1, entry.name)
        self._update_buttons()

    def _selected_known(self) -> tuple[str, str] | None:
        items = self.known_list.selectedItems()
        if not items:
            return None
        item = items[0]
        return (
            str(item.data(Qt.ItemDataRole.UserRole + 1)),
            str(item.data(Qt.ItemDataRole.UserRole)),
        )

    def _connect_known(self) -> None:
        known = self._selected_known()
        if known is not None:
            name, url = known
            self._choose(ConnectTarget(url=url, token=self._token(), name=name))

    def _forget(self) -> None:
        known = self._selected_known()
        if known is None:
            return
        url = known[1]
        try:
            self.known.forget(url)
        except OpenClawError as exc:  # off the list, but its pin or tokens are still stored
            self._reload_known()
            self.url_error.setText(f"{url} is off the list, but its credentials stay: {exc}")
            return
        self._reload_known()
        self.forgotten.emit(url)

    # ------------------------------------------------------------------ URL
    def _connect_url(self) -> None:
        try:
            url, name = typed_gateway(self.url.text())
        except ConfigError as exc:
            self.url_error.setText(str(exc))
            return
        self.url_error.clear()
        self._choose(ConnectTarget(url=url, token=self._token(), name=name))

    # ------------------------------------------------------------------ setup code
    def _decode_setup_code(self, text: str) -> None:
        """Decode as the user types; show the gateway URL or why not (never the code)."""
        self._decoded = None
        self.setup_result.setStyleSheet("")
        if not text.strip():
            self.setup_result.clear()
        else:
            try:
                code = decode_setup_code(text)
                problem = self._setup_code_problem(code)
            except SetupCodeError as exc:
                problem = str(exc)
            if problem is not None:
                self.setup_result.setStyleSheet(_ERROR_STYLE)
                self.setup_result.setText(problem)
            else:
                self._decoded = code
                self.setup_result.setText(f"Gateway: {code.candidate_urls[0]}")
        self.connect_code.setEnabled(self._decoded is not None)

    def _toggle_scan(self) -> None:
        if self.scanner.active:
            self.scanner.stop()
        else:
            self.scanner.start(self.camera_source)

    def _scanning(self, running: bool) -> None:
        self.scan_button.setText("Stop scanning" if running else "Scan with camera…")
        if running:
            self.setup_result.setStyleSheet("")
            self.setup_result.setText("Looking for a setup code QR…")

    def _scanned(self, text: str) -> None:
        self.setup_code.setText(text)  # decoded and shown like a pasted code

    def _scan_failed(self, reason: str) -> None:
        self.setup_result.setStyleSheet(_ERROR_STYLE)
        self.setup_result.setText(f"No setup code scanned: {reason}")

    @staticmethod
    def _setup_code_problem(code: SetupCode) -> str | None:
        if not code.candidate_urls:
            return "this setup code has no gateway URL: enter the URL above instead"
        try:
            typed_gateway(code.candidate_urls[0])
        except ConfigError as exc:
            return str(exc)
        if code.is_expired(int(time.time() * 1000)):
            return "this setup code has expired: ask the gateway for a new one"
        return None

    def _connect_setup_code(self) -> None:
        code = self._decoded
        if code is None:
            return
        url = code.candidate_urls[0]
        self._choose(
            ConnectTarget(
                url=url,
                token=self._token(),
                name=url,
                tls_hint=code.tls_fingerprint,
                bootstrap_token=code.bootstrap_token,
            )
        )
