"""The connect screen (offscreen): the bundled default, a gateway advertised by the test over
real loopback mDNS appearing and disappearing, URL and setup code validation shown inline,
and the known gateways file. A screenshot with one discovered gateway is saved under the
folder the ``screens`` fixture prints."""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot
from zeroconf.asyncio import AsyncZeroconf

from gateway.advertise import GatewayAdvertiser
from openclaw_desktop.discovery import GatewayBrowser, encode_setup_code, endpoint_from_service
from openclaw_desktop.known_gateways import (
    ConnectTarget,
    KnownGateways,
    LastGateway,
    SavedGateways,
)
from tests.helpers import mdns
from tests.helpers.mdns import LOOPBACK
from tests.helpers.no_keyring import no_keyring
from tests.helpers.ports import free_port
from tests.helpers.qt import run_in_qt, screenshot_folder
from ui.presenters.discovery import DiscoveryPresenter
from ui.runtime import RuntimeTarget
from ui.widgets.connect import ConnectScreen

pytestmark = pytest.mark.timeout(90)

FP = "7270b9b1eec5fe809163ace8c347501d3c6ee850aeb91b4d4e56c03eb4f1fd6b"
FOUND_WITHIN = 15.0
GONE_WITHIN = 10.0


@pytest.fixture(scope="module")
def screens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go (printed, so a reviewer can look at them)."""
    return screenshot_folder(tmp_path_factory, "connect")


@pytest.fixture(scope="module")
def loopback_multicast() -> Iterator[None]:
    """Multicast works on 127.0.0.1 for this module (or the test skips, saying why)."""
    with mdns.loopback_multicast():
        yield


class NoBrowser:
    """A browser that finds nothing (for the tests that do not need the LAN)."""

    started = False

    async def start(self) -> None:
        NoBrowser.started = True

    async def stop(self) -> None:
        pass

    def on_change(self, listener: Any) -> Callable[[], None]:
        return lambda: None


@pytest.fixture
def screen(qtbot: QtBot, tmp_path: Path) -> ConnectScreen:
    widget = ConnectScreen(tmp_path / "known.json", browser_factory=NoBrowser)
    qtbot.addWidget(widget)
    widget.resize(720, 760)
    widget.show()
    return widget


def record(screen: ConnectScreen) -> tuple[list[RuntimeTarget], list[str]]:
    chosen: list[RuntimeTarget] = []
    forgotten: list[str] = []
    screen.chosen.connect(chosen.append)
    screen.forgotten.connect(forgotten.append)
    return chosen, forgotten


async def until(predicate: Callable[[], object], timeout: float) -> None:
    """Poll ``predicate`` while the Qt loop runs."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


def rows(screen: ConnectScreen) -> list[list[str]]:
    table = screen.discovered
    out = []
    for row in range(table.rowCount()):
        cells = [table.item(row, col) for col in range(table.columnCount())]
        out.append([c.text() if c is not None else "" for c in cells])
    return out


# ---------------------------------------------------------------------------- bundled
def test_default_choice_emits_the_bundled_target(screen: ConnectScreen) -> None:
    chosen, _ = record(screen)
    assert screen.local_button.isDefault()
    screen.token.setText("ignored-for-bundled")
    screen.local_button.click()
    assert len(chosen) == 1
    assert type(chosen[0]) is RuntimeTarget
    assert chosen[0] == RuntimeTarget()
    assert screen.known.load() == []  # the bundled gateway is not a "known gateway"


def test_use_this_computer_honours_the_gateway_port(qtbot: QtBot, tmp_path: Path) -> None:
    """*Use this computer* runs the bundled gateway on the app's ``--gateway-port``."""
    widget = ConnectScreen(tmp_path / "known.json", browser_factory=NoBrowser, bundled_port=28123)
    qtbot.addWidget(widget)
    chosen, _ = record(widget)
    widget.local_button.click()
    assert chosen == [RuntimeTarget(port=28123)]


def test_the_last_choice_is_remembered_without_its_token(tmp_path: Path) -> None:
    """The next launch's target: a remote gateway by URL and name, or this computer's
    gateway on the port of that launch; never a token; a broken file is no choice."""
    last = LastGateway(tmp_path / "last.json")
    assert last.target(18789) is None
    last.save(ConnectTarget(url="ws://127.0.0.1:9/", token="s3cret", name="Lab"))
    assert "s3cret" not in last.path.read_text()
    target = last.target(18789)
    assert isinstance(target, ConnectTarget)
    assert (target.url, target.name, target.token) == ("ws://127.0.0.1:9/", "Lab", None)
    last.save(RuntimeTarget(port=1234))
    assert last.target(28123) == RuntimeTarget(port=28123)
    last.path.write_text("{not json", encoding="utf-8")
    assert last.target(18789) is None


# ---------------------------------------------------------------------------- LAN
def test_advertised_gateway_appears_is_chosen_and_disappears(
    qapp: QApplication, tmp_path: Path, screens: Path, loopback_multicast: None
) -> None:
    display = f"pytest-{secrets.token_hex(4)}"
    port = free_port()
    chosen: list[RuntimeTarget] = []

    async def scenario() -> None:
        zc = AsyncZeroconf(interfaces=LOOPBACK)
        screen = ConnectScreen(
            tmp_path / "known.json", browser_factory=lambda: GatewayBrowser(zeroconf=zc)
        )
        screen.chosen.connect(chosen.append)
        screen.resize(720, 760)
        screen.show()
        advertiser = GatewayAdvertiser()
        try:
            await screen.start()
            assert screen.discovery.running
            await advertiser.start(
                port=port,
                display_name=display,
                tls_fingerprint=FP,
                interfaces=LOOPBACK,
                hostname="pytest-host",
            )
            await until(lambda: any(r[0] == display for r in rows(screen)), FOUND_WITHIN)
            row = next(r for r in rows(screen) if r[0] == display)
            assert row == [display, "127.0.0.1", str(port), "yes", "7270b9b1…fd6b"]
            assert "found" in screen.discovery_status.text()
            assert not screen.connect_discovered.isEnabled()  # nothing selected yet

            stable_id = f"_openclaw-gw._tcp.|local.|{display} (OpenClaw)"
            assert screen.select_discovered(stable_id)
            screen.token.setText("s3cret-token")
            QApplication.processEvents()
            screen.grab().save(str(screens / "connect-discovered.png"))
            assert screen.connect_discovered.isEnabled()
            screen.connect_discovered.click()
            assert len(chosen) == 1
            target = chosen[0]
            assert isinstance(target, ConnectTarget)
            assert target.url == f"wss://127.0.0.1:{port}"
            assert target.token == "s3cret-token"
            assert target.tls_hint == FP
            assert target.name == display
            assert "s3cret" not in repr(target.bootstrap_token)

            await advertiser.stop()
            await until(lambda: not any(r[0] == display for r in rows(screen)), GONE_WITHIN)
            assert stable_id not in screen.discovery.gateways
            assert not screen.connect_discovered.isEnabled()
        finally:
            await advertiser.stop()
            screen.close()  # closing the screen stops discovery in the background
            if screen._closing is not None:
                await asyncio.wait_for(screen._closing, 10)
            running = screen.discovery.running
            await screen.aclose()  # idempotent
            screen.deleteLater()
            await zc.async_close()
        assert not running

    run_in_qt(qapp, scenario)
    # choosing it remembered it
    assert KnownGateways(tmp_path / "known.json").load()[0].url == f"wss://127.0.0.1:{port}"


def test_browser_callbacks_from_another_thread_land_on_the_gui_thread(
    qtbot: QtBot, qapp: QApplication
) -> None:
    presenter = DiscoveryPresenter(NoBrowser)
    endpoint = endpoint_from_service(
        "Lab (OpenClaw)._openclaw-gw._tcp.local.",
        "_openclaw-gw._tcp.local.",
        ["192.168.1.20"],
        18789,
        {b"gatewayTls": b"1"},
        "lab.local.",
    )
    assert endpoint is not None
    seen_in: list[QThread] = []
    presenter.changed.connect(lambda *_: seen_in.append(QThread.currentThread()))
    worker = threading.Thread(target=presenter._listener, args=("added", endpoint))
    with qtbot.waitSignal(presenter.changed, timeout=5000):
        worker.start()
        worker.join(5)
    assert seen_in == [qapp.thread()]
    assert presenter.gateways == {endpoint.stable_id: endpoint}
    worker = threading.Thread(target=presenter._listener, args=("removed", endpoint))
    with qtbot.waitSignal(presenter.changed, timeout=5000):
        worker.start()
        worker.join(5)
    assert presenter.gateways == {}


class FailingBrowser(NoBrowser):
    async def start(self) -> None:
        raise OSError("no multicast interface")


def test_discovery_failure_is_shown_not_raised(qapp: QApplication, tmp_path: Path) -> None:
    async def scenario() -> None:
        screen = ConnectScreen(tmp_path / "known.json", browser_factory=FailingBrowser)
        await screen.start()
        assert not screen.discovery.running
        assert "no multicast interface" in screen.discovery_status.text()
        await screen.aclose()
        screen.deleteLater()

    run_in_qt(qapp, scenario)


# ---------------------------------------------------------------------------- URL
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://x", "must be ws://host:port or wss://host:port"),
        ("garbage", "must be ws://host:port or wss://host:port"),
        ("ws://example.com:18789", "refusing cleartext ws://"),
        ("wss://host:99999", "invalid gateway URL"),
    ],
)
def test_bad_urls_show_the_error_inline_and_emit_nothing(
    screen: ConnectScreen, text: str, expected: str
) -> None:
    chosen, _ = record(screen)
    screen.url.setText(text)
    screen.connect_url.click()
    assert expected in screen.url_error.text()
    assert screen.url_error.isVisible()
    assert chosen == []
    screen.url.setText(text + "x")
    assert screen.url_error.text() == ""  # editing clears the error


def test_a_valid_url_emits_the_target_with_the_token(screen: ConnectScreen) -> None:
    chosen, _ = record(screen)
    screen.token.setText("  pw  ")
    screen.url.setText(" wss://gw.example:8443 ")
    screen.connect_url.click()
    assert screen.url_error.text() == ""
    assert len(chosen) == 1
    target = chosen[0]
    assert isinstance(target, ConnectTarget)
    assert (target.url, target.token, target.tls_hint) == ("wss://gw.example:8443", "pw", None)
    assert [e.url for e in screen.known.load()] == ["wss://gw.example:8443"]


# ---------------------------------------------------------------------------- setup code
def test_setup_code_decodes_to_its_url(screen: ConnectScreen, caplog: Any) -> None:
    chosen, _ = record(screen)
    token = "bootstrap-" + secrets.token_hex(8)
    code = encode_setup_code(
        {"url": "wss://10.0.0.5:18789", "bootstrapToken": token, "tlsFingerprint": FP}
    )
    caplog.set_level("DEBUG")
    assert not screen.connect_code.isEnabled()
    screen.setup_code.setText(code)
    assert screen.setup_result.text() == "Gateway: wss://10.0.0.5:18789"
    assert screen.connect_code.isEnabled()
    screen.connect_code.click()
    assert len(chosen) == 1
    target = chosen[0]
    assert isinstance(target, ConnectTarget)
    assert target.url == "wss://10.0.0.5:18789"
    assert target.bootstrap_token == token
    assert target.tls_hint == FP
    assert token not in repr(target)
    assert code not in caplog.text and token not in caplog.text


@pytest.mark.parametrize(
    ("mangle", "expected"),
    [
        (lambda c: c[:-5] + "!!!!!", "not base64url"),
        (lambda c: c[:-3], "setup code"),
        (lambda c: "oc-pair://" + "A" * 5, "truncated"),
    ],
)
def test_a_corrupt_setup_code_shows_an_error(
    screen: ConnectScreen, mangle: Callable[[str], str], expected: str
) -> None:
    chosen, _ = record(screen)
    code = encode_setup_code({"url": "wss://10.0.0.5:18789", "bootstrapToken": "t" * 20})
    screen.setup_code.setText(mangle(code))
    assert expected in screen.setup_result.text()
    assert not screen.setup_result.text().startswith("Gateway:")
    assert not screen.connect_code.isEnabled()
    screen.connect_code.click()
    assert chosen == []


def test_expired_or_urlless_setup_codes_are_refused(screen: ConnectScreen) -> None:
    screen.setup_code.setText(
        encode_setup_code({"url": "wss://10.0.0.5:1", "bootstrapToken": "t", "expiresAtMs": 1})
    )
    assert "expired" in screen.setup_result.text()
    assert not screen.connect_code.isEnabled()
    screen.setup_code.setText(encode_setup_code({"bootstrapToken": "t"}))
    assert "no gateway URL" in screen.setup_result.text()
    screen.setup_code.setText("")
    assert screen.setup_result.text() == ""


# ---------------------------------------------------------------------------- known
def test_known_gateways_add_connect_and_forget(qtbot: QtBot, tmp_path: Path) -> None:
    known_file = tmp_path / "state" / "known.json"
    known_file.parent.mkdir()
    known_file.write_text(
        json.dumps(
            [
                {"name": "Studio", "url": "wss://10.0.0.7:18789"},
                {"name": "dup", "url": "wss://10.0.0.7:18789"},
                {"url": "ws://192.168.1.9:18789"},
                "junk",
                {"name": "no url"},
            ]
        )
    )
    screen = ConnectScreen(known_file, browser_factory=NoBrowser)
    qtbot.addWidget(screen)
    chosen, forgotten = record(screen)
    labels = [screen.known_list.item(i).text() for i in range(screen.known_list.count())]
    assert labels == [
        "Studio — wss://10.0.0.7:18789",
        "ws://192.168.1.9:18789 — ws://192.168.1.9:18789",
    ]
    assert not screen.forget_button.isEnabled()

    screen.known_list.setCurrentRow(0)
    screen.token.setText("tok")
    screen.connect_known.click()
    assert isinstance(chosen[0], ConnectTarget)
    assert (chosen[0].url, chosen[0].token, chosen[0].name) == (
        "wss://10.0.0.7:18789",
        "tok",
        "Studio",
    )

    screen.url.setText("ws://127.0.0.1:4000")
    screen.connect_url.click()
    assert [e.url for e in screen.known.load()] == [
        "ws://127.0.0.1:4000",
        "wss://10.0.0.7:18789",
        "ws://192.168.1.9:18789",
    ]

    screen.known_list.setCurrentRow(1)
    assert screen.forget_button.isEnabled()
    screen.forget_button.click()
    assert forgotten == ["wss://10.0.0.7:18789"]
    on_disk = json.loads(known_file.read_text())
    assert on_disk == [
        {"name": "127.0.0.1:4000", "url": "ws://127.0.0.1:4000"},
        {"name": "ws://192.168.1.9:18789", "url": "ws://192.168.1.9:18789"},
    ]
    assert screen.known_list.count() == 2
    assert not list(known_file.parent.glob("*.tmp"))


def test_forgetting_when_the_credentials_cannot_be_dropped(qtbot: QtBot, tmp_path: Path) -> None:
    """The gateway leaves the list, the screen says its pin and tokens stay (the secrets
    file is corrupt: it is never overwritten), and nothing is reported as forgotten."""
    known_file = tmp_path / "known.json"
    known_file.write_text(json.dumps([{"name": "Studio", "url": "wss://10.0.0.7:18789"}]))
    secrets_file = tmp_path / "secrets.json"
    secrets_file.write_text("[1]")
    with no_keyring():
        screen = ConnectScreen(
            SavedGateways(known_file, secrets_file=secrets_file), browser_factory=NoBrowser
        )
        qtbot.addWidget(screen)
        _, forgotten = record(screen)
        screen.known_list.setCurrentRow(0)
        screen.forget_button.click()
    assert forgotten == []
    assert screen.known_list.count() == 0
    assert json.loads(known_file.read_text()) == []
    assert "off the list, but its credentials stay" in screen.url_error.text()
    assert secrets_file.read_text() == "[1]"


def test_a_corrupt_known_file_is_an_empty_list(qtbot: QtBot, tmp_path: Path) -> None:
    known_file = tmp_path / "known.json"
    known_file.write_text("{not json")
    screen = ConnectScreen(known_file, browser_factory=NoBrowser)
    qtbot.addWidget(screen)
    assert screen.known_list.count() == 0
    screen.url.setText("wss://gw.example")
    screen.connect_url.click()
    assert json.loads(known_file.read_text()) == [
        {"name": "gw.example:18789", "url": "wss://gw.example:18789"}
    ]


# ---------------------------------------------------------------------------- QR scan
def test_scanning_a_setup_code_with_the_camera_fills_it_in(
    qapp: QApplication, tmp_path: Path, screens: Path
) -> None:
    """ "Scan with camera…" reads the QR from the camera (a video file stands in for the
    webcam) and the code is decoded like a pasted one; a camera that is missing says so."""
    from tests.integration.devices.test_qr_scan import video

    code = encode_setup_code({"url": "ws://192.168.1.20:18789", "bootstrapToken": "t" * 43})
    clip = video(tmp_path / "qr.mp4", code)

    async def scenario() -> None:
        screen = ConnectScreen(
            tmp_path / "known.json", browser_factory=NoBrowser, camera_source=str(clip)
        )
        screen.show()
        try:
            screen.scan_button.click()
            assert screen.scanner.active
            assert screen.scan_button.text() == "Stop scanning"
            await until(lambda: screen.setup_code.text() == code, 20)
            await until(lambda: not screen.scanner.active, 5)
            assert screen.setup_result.text() == "Gateway: ws://192.168.1.20:18789"
            assert screen.connect_code.isEnabled()
            screen.grab().save(str(screens / "connect-scanned.png"))

            screen.camera_source = str(tmp_path / "no-camera.mp4")
            screen.scan_button.click()
            await until(lambda: "No setup code scanned" in screen.setup_result.text(), 10)
            assert "not found" in screen.setup_result.text()
            assert screen.scan_button.text() == "Scan with camera…"
        finally:
            await screen.aclose()
            screen.close()
            screen.deleteLater()

    run_in_qt(qapp, scenario)


def test_stopping_a_scan(qapp: QApplication, tmp_path: Path) -> None:
    """Clicking again stops the scan; nothing is filled in."""
    from tests.integration.devices.test_qr_scan import video

    clip = video(tmp_path / "blank.mp4", None)

    async def scenario() -> None:
        screen = ConnectScreen(
            tmp_path / "known.json", browser_factory=NoBrowser, camera_source=str(clip)
        )
        try:
            screen.scan_button.click()
            await asyncio.sleep(0.3)
            screen.scan_button.click()
            await until(lambda: not screen.scanner.active, 5)
            assert "scanning stopped" in screen.setup_result.text()
            assert screen.setup_code.text() == ""
        finally:
            await screen.aclose()
            screen.deleteLater()

    run_in_qt(qapp, scenario)
