"""Integration tests: a real mDNS round trip on loopback, advertiser to browser and back.

Both sides run real python-zeroconf on ``127.0.0.1``. Linux loops multicast sent with
``IP_MULTICAST_IF=127.0.0.1`` back to local members even though ``lo`` has no MULTICAST
flag, so this normally needs no setup (verified in a fresh network namespace holding only
``lo``). The ``loopback_multicast`` fixture checks that with a raw UDP probe first; if the
probe fails and we are root, it runs ``ip link set lo multicast on`` (undone afterwards) and
probes again; otherwise the tests skip, saying what failed.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from gateway.advertise import GatewayAdvertiser, _open_zeroconf
from openclaw_desktop.config import SettingsStore
from openclaw_desktop.config.discovery import DISCOVERY_INTERFACES_ENV
from openclaw_desktop.discovery import GatewayBrowser
from openclaw_desktop.errors import ConfigError
from tests.helpers import mdns
from tests.helpers.mdns import LOOPBACK, Recorder
from tests.helpers.ports import free_port
from ui.presenters.discovery import configured_browsers

FOUND_WITHIN = 15.0
GONE_WITHIN = 10.0
FP = "7270b9b1eec5fe809163ace8c347501d3c6ee850aeb91b4d4e56c03eb4f1fd6b"


@pytest.fixture(scope="module")
def loopback_multicast() -> Iterator[None]:
    """Multicast works on 127.0.0.1 for this module (or the tests skip, saying why)."""
    with mdns.loopback_multicast():
        yield


@pytest.fixture
async def browser(loopback_multicast: None) -> AsyncIterator[tuple[GatewayBrowser, Recorder]]:
    browser = GatewayBrowser()
    recorder = Recorder()
    browser.on_change(recorder)
    await browser.start(interfaces=LOOPBACK)
    try:
        yield browser, recorder
    finally:
        await browser.stop()


def _unique_name() -> str:
    return f"pytest-{secrets.token_hex(4)}"


async def test_advertise_discover_and_withdraw(browser: tuple[GatewayBrowser, Recorder]) -> None:
    found_by, recorder = browser
    display = _unique_name()
    port = free_port()
    advertiser = GatewayAdvertiser()
    await advertiser.start(
        port=port,
        display_name=display,
        tls_fingerprint=FP,
        interfaces=LOOPBACK,
        hostname="pytest-host",
    )
    try:
        assert advertiser.instance_name == f"{display} (OpenClaw)"
        endpoint = await recorder.wait_for("added", f"{display} (OpenClaw)", FOUND_WITHIN)
    finally:
        await advertiser.stop()

    assert endpoint.host == "127.0.0.1"
    assert endpoint.addresses == ("127.0.0.1",)
    assert endpoint.port == port
    assert endpoint.server == "pytest-host.local"
    assert endpoint.tls is True
    assert endpoint.tls_fingerprint_hint == FP
    assert endpoint.display_name == display
    assert endpoint.lan_host == "pytest-host.local"
    assert endpoint.url == f"wss://127.0.0.1:{port}"
    assert endpoint.stable_id == f"_openclaw-gw._tcp.|local.|{display} (OpenClaw)"
    assert dict(endpoint.txt) == {
        "role": "gateway",
        "gatewayPort": str(port),
        "lanHost": "pytest-host.local",
        "displayName": display,
        "gatewayTls": "1",
        "gatewayTlsSha256": FP,
        "transport": "gateway",
    }

    removed = await recorder.wait_for("removed", endpoint.name, GONE_WITHIN)
    assert removed.stable_id == endpoint.stable_id
    assert endpoint.stable_id not in {e.stable_id for e in found_by.endpoints()}


async def test_browser_started_late_finds_a_running_gateway(loopback_multicast: None) -> None:
    display = _unique_name()
    advertiser = GatewayAdvertiser()
    await advertiser.start(
        port=free_port(), display_name=display, tls_fingerprint=None, interfaces=LOOPBACK
    )
    late = GatewayBrowser()
    recorder = Recorder()
    late.on_change(recorder)
    try:
        await late.start(interfaces=LOOPBACK)
        endpoint = await recorder.wait_for("added", f"{display} (OpenClaw)", FOUND_WITHIN)
        assert endpoint.tls is False
        assert endpoint.url.startswith("ws://127.0.0.1:")
        assert "gatewayTls" not in endpoint.txt
        assert endpoint in late.endpoints()
    finally:
        await late.stop()
        await advertiser.stop()


async def test_name_conflict_renames_with_a_counter(
    browser: tuple[GatewayBrowser, Recorder],
) -> None:
    """A second gateway that finds its name taken on the network takes "(2)".

    The second gateway's responder is listening before the first announces itself, as a
    responder on another host of the LAN would be. (On one host both responders share port
    5353, and which of them the kernel hands a unicast reply to the second's probe is up to
    SO_REUSEPORT hashing, so a responder started only afterwards may never hear it.)"""
    _, recorder = browser
    display = _unique_name()
    listening = _open_zeroconf(LOOPBACK)
    first, second = GatewayAdvertiser(), GatewayAdvertiser(zeroconf=listening)
    await first.start(
        port=free_port(), display_name=display, tls_fingerprint=None, interfaces=LOOPBACK
    )
    try:
        await second.start(
            port=free_port(), display_name=display, tls_fingerprint=None, interfaces=LOOPBACK
        )
        try:
            assert first.instance_name == f"{display} (OpenClaw)"
            assert second.instance_name == f"{display} (OpenClaw) (2)"
            await recorder.wait_for("added", f"{display} (OpenClaw)", FOUND_WITHIN)
            renamed = await recorder.wait_for("added", f"{display} (OpenClaw) (2)", FOUND_WITHIN)
            assert renamed.display_name == display  # TXT keeps the machine's name
        finally:
            await second.stop()
    finally:
        await first.stop()
        await listening.async_close()


async def test_unsubscribed_listeners_hear_nothing(
    browser: tuple[GatewayBrowser, Recorder],
) -> None:
    found_by, recorder = browser
    silent = Recorder()
    unsubscribe = found_by.on_change(silent)
    unsubscribe()
    unsubscribe()  # idempotent
    display = _unique_name()
    advertiser = GatewayAdvertiser()
    await advertiser.start(
        port=free_port(), display_name=display, tls_fingerprint=None, interfaces=LOOPBACK
    )
    try:
        await recorder.wait_for("added", f"{display} (OpenClaw)", FOUND_WITHIN)
    finally:
        await advertiser.stop()
    assert silent.events == []


async def test_the_app_s_browser_keeps_to_the_interfaces_it_is_given(
    loopback_multicast: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the connect screen browses with: ``OPENCLAW_DISCOVERY_INTERFACES=127.0.0.1``
    overrides the setting and the browser finds a gateway advertised on loopback; a bad
    address list keeps discovery off (an error, not every interface)."""
    settings = SettingsStore(tmp_path / "settings.json")
    settings.set("discovery.interfaces", "192.0.2.1")  # not here: the variable must win
    monkeypatch.setenv(DISCOVERY_INTERFACES_ENV, "127.0.0.1")
    display = _unique_name()
    advertiser = GatewayAdvertiser()
    await advertiser.start(
        port=free_port(), display_name=display, tls_fingerprint=None, interfaces=LOOPBACK
    )
    browser = configured_browsers(settings.path)()
    assert isinstance(browser, GatewayBrowser)
    recorder = Recorder()
    browser.on_change(recorder)
    try:
        await browser.start()
        endpoint = await recorder.wait_for("added", f"{display} (OpenClaw)", FOUND_WITHIN)
        assert endpoint.addresses == ("127.0.0.1",)
    finally:
        await browser.stop()
        await advertiser.stop()

    monkeypatch.setenv(DISCOVERY_INTERFACES_ENV, "lo")
    with pytest.raises(ConfigError, match=f"{DISCOVERY_INTERFACES_ENV}: 'lo' is not"):
        configured_browsers(settings.path)()
