"""Integration tests: a real mDNS round trip on loopback, advertiser to browser and back.

Both sides run real python-zeroconf on ``127.0.0.1``. Linux loops multicast sent with
``IP_MULTICAST_IF=127.0.0.1`` back to local members even though ``lo`` has no MULTICAST
flag, so this normally needs no setup (verified in a fresh network namespace holding only
``lo``). The ``loopback_multicast`` fixture checks that with a raw UDP probe first; if the
probe fails and we are root, it runs ``ip link set lo multicast on`` (undone afterwards) and
probes again; otherwise the tests skip, saying what failed.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import socket
import struct
import subprocess
from collections.abc import AsyncIterator, Iterator

import pytest

from gateway.advertise import GatewayAdvertiser
from openclaw_desktop.discovery import ChangeKind, GatewayBrowser, GatewayEndpoint
from tests.helpers.ports import free_port

pytestmark = pytest.mark.integration

LOOPBACK = ["127.0.0.1"]
FOUND_WITHIN = 15.0
GONE_WITHIN = 10.0
FP = "7270b9b1eec5fe809163ace8c347501d3c6ee850aeb91b4d4e56c03eb4f1fd6b"


def _probe_loopback_multicast(timeout: float = 1.0) -> str | None:
    """Send one datagram to an mDNS-style group on 127.0.0.1; None if it comes back."""
    group = "224.0.0.251"
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    try:
        receiver.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        receiver.bind(("", 0))
        port = receiver.getsockname()[1]
        membership = socket.inet_aton(group) + socket.inet_aton("127.0.0.1")
        receiver.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, membership)
        sender.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
        sender.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
        sender.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, struct.pack("b", 1))
        token = secrets.token_bytes(8)
        sender.sendto(token, (group, port))
        receiver.settimeout(timeout)
        while True:
            data, _ = receiver.recvfrom(64)
            if data == token:
                return None
    except TimeoutError:
        return "a multicast datagram sent on 127.0.0.1 did not come back"
    except OSError as exc:
        return f"multicast on 127.0.0.1 failed: {exc}"
    finally:
        receiver.close()
        sender.close()


def _lo_multicast_flag(on: bool) -> None:
    subprocess.run(
        ["ip", "link", "set", "lo", "multicast", "on" if on else "off"],
        check=True,
        capture_output=True,
        timeout=10,
    )


def _lo_state() -> str:
    """``lo``'s UP/MULTICAST flags in this network namespace, for the skip message."""
    try:
        import fcntl  # POSIX only

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            request = struct.pack("16sH", b"lo", 0)
            flags = struct.unpack("16sH", fcntl.ioctl(sock, 0x8913, request))[1]  # SIOCGIFFLAGS
    except (ImportError, OSError):
        return "lo flags unknown"
    up = "yes" if flags & 0x1 else "no"
    multicast = "yes" if flags & 0x1000 else "no"
    return f"lo UP={up} MULTICAST={multicast}"


@pytest.fixture(scope="module")
def loopback_multicast() -> Iterator[None]:
    """Make sure multicast works on loopback, or skip saying exactly what failed."""
    problem = _probe_loopback_multicast()
    changed = False
    if problem is not None:
        if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("ip"):
            _lo_multicast_flag(True)
            changed = True
            problem = _probe_loopback_multicast()
            attempt = "even after `ip link set lo multicast on`"
        else:
            attempt = "not root (or no `ip`), so `ip link set lo multicast on` was not tried"
    if problem is not None:
        state = _lo_state()
        if changed:
            _lo_multicast_flag(False)
        pytest.skip(f"mDNS on loopback unavailable: {problem}; {attempt}; {state}")
    try:
        yield
    finally:
        if changed:
            _lo_multicast_flag(False)


class Recorder:
    """Collects browser changes and waits for a specific one."""

    def __init__(self) -> None:
        self.events: list[tuple[ChangeKind, GatewayEndpoint]] = []
        self._changed = asyncio.Event()

    def __call__(self, kind: ChangeKind, endpoint: GatewayEndpoint) -> None:
        self.events.append((kind, endpoint))
        self._changed.set()

    async def wait_for(self, kind: ChangeKind, name: str, within: float) -> GatewayEndpoint:
        async with asyncio.timeout(within):
            while True:
                for seen_kind, endpoint in self.events:
                    if seen_kind == kind and endpoint.name == name:
                        return endpoint
                self._changed.clear()
                await self._changed.wait()


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
    _, recorder = browser
    display = _unique_name()
    first, second = GatewayAdvertiser(), GatewayAdvertiser()
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
