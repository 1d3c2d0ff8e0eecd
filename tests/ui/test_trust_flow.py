"""The TLS trust path end to end in the window: a gateway advertised over loopback mDNS by
the test appears on the connect screen; choosing it asks "Trust this gateway?" with its
fingerprint (Cancel refuses, Trust pins it and the chat opens); when the gateway's
certificate later changes, the distinct warning appears, "Keep refusing" keeps the
connection off, and only an explicit replacement connects again."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from PySide6.QtWidgets import QApplication, QDialog
from zeroconf.asyncio import AsyncZeroconf

from gateway.advertise import GatewayAdvertiser
from openclaw_desktop.config import AppPaths
from openclaw_desktop.discovery import GatewayBrowser
from openclaw_desktop.identity import CredentialStore, gateway_key, open_secret_store
from openclaw_desktop.transport import ConnectionState
from tests.helpers import mdns
from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.chat_trace import write_fake_providers
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.mdns import LOOPBACK
from tests.helpers.qt import run_in_qt, screenshot_folder, shot, window_home  # noqa: F401 (autouse)
from tests.ui.test_chat_window import assistant, until
from ui.app import DesktopApp
from ui.dialogs.trust import PinChangedDialog, TrustDialog
from ui.runtime import DesktopRuntime, RuntimeTarget
from ui.widgets.connect import ConnectScreen

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def tls_gateway(tmp_path: Path) -> Iterator[BundledGateway]:
    """Our gateway over TLS with the fake model."""
    with FakeLLM() as llm:
        write_fake_providers(tmp_path / "gw" / "state", llm.port)
        gw = BundledGateway.start(root=tmp_path / "gw", args=["--tls"])
        try:
            yield gw
        finally:
            gw.cleanup()


def fingerprint(gw: BundledGateway) -> str:
    """SHA-256 of the gateway certificate's DER, as read from its state dir."""
    (pem,) = gw.state_dir.rglob("gateway-cert.pem")
    cert = x509.load_pem_x509_certificate(pem.read_bytes())
    return hashlib.sha256(cert.public_bytes(Encoding.DER)).hexdigest()


def has_chat(app: DesktopApp) -> bool:
    """Whether the window shows a chat (a function, so checks before and after differ)."""
    return app.window.chat is not None


def visible(kind: type[QDialog]) -> QDialog | None:
    """The visible dialog of ``kind``, if any."""
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, kind) and widget.isVisible():
            return widget
    return None


def test_discover_trust_and_changed_pin(
    qapp: QApplication,
    tls_gateway: BundledGateway,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Discovery -> trust Cancel / Trust -> chat; a new certificate -> keep refusing ->
    explicit replacement -> chat again."""
    gw = tls_gateway
    screens = screenshot_folder(tmp_path_factory, "trust-flow")
    first_fp = fingerprint(gw)
    display = f"pytest-{secrets.token_hex(4)}"
    paths = AppPaths.default()
    app = DesktopApp(DesktopRuntime(paths, RuntimeTarget(node=False)))
    app.window.show()
    pins = CredentialStore(open_secret_store(paths.secrets_file))

    async def choose_advertised(zc: AsyncZeroconf) -> asyncio.Future[None]:
        """Open the connect screen, wait for the advertised gateway and connect to it."""
        app.browser_factory = lambda: GatewayBrowser(zeroconf=zc)
        choosing = asyncio.ensure_future(app.choose_gateway())
        await until(lambda: isinstance(app.window.stack.currentWidget(), ConnectScreen), "screen")
        screen = app.window.stack.currentWidget()
        assert isinstance(screen, ConnectScreen)
        stable_id = f"_openclaw-gw._tcp.|local.|{display} (OpenClaw)"
        await until(lambda: screen.select_discovered(stable_id), "the advertised gateway", 20)
        screen.token.setText(gw.token)
        QApplication.processEvents()
        shot(app.window, screens / "01-discovered.png")
        screen.connect_discovered.click()
        return choosing

    async def scenario() -> None:
        zc = AsyncZeroconf(interfaces=LOOPBACK)
        advertiser = GatewayAdvertiser()
        await advertiser.start(
            port=gw.port,
            display_name=display,
            tls_fingerprint=first_fp,
            interfaces=LOOPBACK,
            hostname="pytest-host",
        )
        try:
            # 1. Cancel: nothing is trusted, the window says it could not connect.
            choosing = await choose_advertised(zc)
            await until(lambda: visible(TrustDialog) is not None, "Trust this gateway?")
            dialog = visible(TrustDialog)
            assert isinstance(dialog, TrustDialog)
            assert dialog.cancel_button.isDefault(), "nothing is trusted by default"
            dialog.grab().save(str(screens / "02-trust.png"))
            dialog.cancel_button.click()
            await asyncio.wait_for(choosing, 30)
            assert not has_chat(app)
            card = app.connection_view.card
            assert card is not None and app.window.stack.currentWidget() is card
            assert card.title.text() == "You did not trust the gateway's certificate"
            assert "was not trusted" in card.details.toPlainText()  # only under details
            assert pins.tls_pin(gateway_key(gw.url)) is None

            # 2. Trust: the pin is stored and the chat opens.
            choosing = await choose_advertised(zc)
            await until(lambda: visible(TrustDialog) is not None, "Trust this gateway?")
            dialog = visible(TrustDialog)
            assert isinstance(dialog, TrustDialog)
            dialog.trust_button.click()
            await asyncio.wait_for(choosing, 30)
            assert app.window.chat is not None
            assert pins.tls_pin(gateway_key(gw.url)) == first_fp
            presenter = app.presenter
            assert presenter is not None
            await presenter.send("over TLS")
            await until(lambda: assistant(app, "done"), "the reply over TLS")
        finally:
            await advertiser.stop()
            await zc.async_close()

        # 3. The certificate changes: a distinct warning; Keep refusing stays off.
        await asyncio.to_thread(gw.stop)
        for part in gw.state_dir.rglob("gateway-*.pem"):
            part.unlink()
        await asyncio.to_thread(gw.restart)
        assert fingerprint(gw) != first_fp
        await until(lambda: visible(PinChangedDialog) is not None, "the changed-pin warning", 60)
        warning = visible(PinChangedDialog)
        assert isinstance(warning, PinChangedDialog)
        assert warning.keep_button.isDefault()
        warning.grab().save(str(screens / "03-pin-changed.png"))
        warning.keep_button.click()
        client = app.runtime.client
        assert client is not None
        await asyncio.sleep(1)
        assert client.connection.status.state is ConnectionState.PAUSED
        assert pins.tls_pin(gateway_key(gw.url)) == first_fp
        assert "certificate changed" in app.tray.icon.toolTip()

        # 4. Connecting again asks again; an explicit replacement connects.
        target = app.runtime.target
        switching = asyncio.ensure_future(app.switch_gateway(target))
        await until(lambda: visible(PinChangedDialog) is not None, "the warning again", 60)
        warning = visible(PinChangedDialog)
        assert isinstance(warning, PinChangedDialog)
        assert not warning.replace_button.isEnabled(), "replacing needs the checkbox"
        warning.verified_box.setChecked(True)
        warning.replace_button.click()
        await asyncio.wait_for(switching, 60)
        assert app.window.chat is not None
        assert pins.tls_pin(gateway_key(gw.url)) == fingerprint(gw)
        presenter = app.presenter
        assert presenter is not None
        await presenter.send("after the new certificate")
        await until(lambda: assistant(app, "done"), "the reply after re-pinning")
        await app.aclose()

    with mdns.loopback_multicast():
        run_in_qt(qapp, scenario, timeout=170)
