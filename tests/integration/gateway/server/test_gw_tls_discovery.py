"""Our gateway over TLS on the LAN: discovered over mDNS, trusted only after the user says so.

Our gateway runs as a subprocess with ``--tls --bind lan --mdns minimal`` (and
``--mdns-interfaces 127.0.0.1`` so the advertisement stays on loopback). With ``--bind lan`` it
listens on every interface; the test connects over 127.0.0.1 only.

* :class:`~openclaw_desktop.discovery.GatewayBrowser` finds ``_openclaw-gw._tcp`` with
  ``gatewayTls=1`` and ``gatewayTlsSha256`` = the SHA-256 of our certificate's DER, and the
  minimal TXT set (no ``sshPort``/``cliPath``/``tailnetDns``).
* Our client, given the discovered endpoint and the TXT fingerprint as ``tls_hint``, pins
  nothing by itself: no trust callback gives ``TrustError("untrusted")``, a callback saying
  no gives ``"declined"``; only a callback saying yes pins the probed fingerprint (the prompt
  shows the TXT value as its hint), and then the session runs over ``wss://``.

Advertising follows ``bind`` unless ``--mdns`` says otherwise:

* a plain ``--bind lan`` gateway (no ``--mdns``) is advertised, with the minimal TXT set, and a
  browser sees the service removed once the process stops (SIGTERM: goodbye packets);
* gateways bound to loopback only, or with ``mdns_mode: off``, are never advertised (checked
  in-process next to an advertised control gateway, and by asking for their names directly).

Loopback multicast is checked first, as in ``tests/integration/discovery``; without it the
discovery tests skip, saying why (and fail under CI, see :mod:`tests.helpers.mdns`).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import secrets
import ssl
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import websockets
from websockets.asyncio.client import connect
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

from gateway.advertise import SERVICE_TYPE
from gateway.tls import CERT_FILENAME
from openclaw_desktop.config.client_profile import cli_client
from openclaw_desktop.discovery import GatewayBrowser, GatewayEndpoint
from openclaw_desktop.errors import ReconnectPaused, TrustError
from openclaw_desktop.identity import (
    CredentialStore,
    DeviceIdentity,
    MemorySecretStore,
    gateway_key,
)
from openclaw_desktop.protocol import Role
from openclaw_desktop.transport import ConnectionOptions, GatewayConnection, RetryPolicy
from openclaw_desktop.trust import TrustPrompt
from tests.helpers import mdns
from tests.helpers.bundled_gateway import BundledGateway, bundled_gateway
from tests.helpers.mdns import LOOPBACK, Recorder

pytestmark = pytest.mark.timeout(120)

FOUND_WITHIN = 20.0
GONE_WITHIN = 10.0
HOSTNAME = "pytest-tls-host"
FAST = RetryPolicy(base_ms=100, early_ceiling_ms=1000)


@pytest.fixture(scope="module")
def loopback_multicast() -> Iterator[None]:
    """Multicast works on 127.0.0.1 for this module (or the tests skip, saying why)."""
    with mdns.loopback_multicast():
        yield


@pytest.fixture
def display_name() -> str:
    """A unique machine display name, so parallel runs do not see each other."""
    return f"pytest-tls-{secrets.token_hex(4)}"


@pytest.fixture
def lan_tls_gateway(display_name: str) -> Iterator[BundledGateway]:
    """Our gateway: ``--tls --bind lan --mdns minimal``, advertising on 127.0.0.1 only."""
    args = ["--tls", "--bind", "lan", "--mdns", "minimal", "--mdns-interfaces", "127.0.0.1"]
    args += ["--display-name", display_name]
    with BundledGateway.start(args=args, env={"OPENCLAW_MDNS_HOSTNAME": HOSTNAME}) as gw:
        yield gw


@pytest.fixture
async def browser(loopback_multicast: None) -> AsyncIterator[Recorder]:
    """A gateway browser on 127.0.0.1 and what it saw."""
    found_by = GatewayBrowser()
    recorder = Recorder()
    found_by.on_change(recorder)
    await found_by.start(interfaces=LOOPBACK)
    try:
        yield recorder
    finally:
        await found_by.stop()


def certificate_fingerprint(gw: BundledGateway) -> str:
    """Lowercase hex SHA-256 of our gateway certificate's DER, read from its state dir."""
    pem = (gw.state_dir / "tls" / CERT_FILENAME).read_text("ascii")
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem)).hexdigest()


def operator_options(
    endpoint: GatewayEndpoint, gw: BundledGateway, creds: CredentialStore, **kw: object
) -> ConnectionOptions:
    """An operator session to the discovered endpoint, with the TXT fingerprint as hint."""
    base: dict[str, object] = {
        "url": endpoint.url,
        "role": Role.OPERATOR,
        "client": cli_client(),
        "signer": DeviceIdentity.generate(),
        "credentials": creds,
        "scopes": ("operator.read",),
        "shared_token": gw.token,
        "tls_hint": endpoint.tls_fingerprint_hint,
        "retry": FAST,
    }
    base.update(kw)
    return ConnectionOptions(**base)  # type: ignore[arg-type]


async def test_discovered_tls_gateway_is_pinned_only_after_the_user_accepts(
    lan_tls_gateway: BundledGateway, browser: Recorder, display_name: str
) -> None:
    """Discovery shows TLS and the fingerprint; trust needs the callback; then wss works."""
    gw = lan_tls_gateway
    fingerprint = certificate_fingerprint(gw)
    logged = re.search(r"TLS fingerprint \(SHA-256\): ([0-9a-f]{64})", gw.log())
    assert logged is not None and logged.group(1) == fingerprint

    # Discovery: the minimal TXT set, with TLS and our certificate's fingerprint.
    endpoint = await browser.wait_for("added", f"{display_name} (OpenClaw)", FOUND_WITHIN)
    assert endpoint.host == "127.0.0.1"
    assert endpoint.port == gw.port
    assert endpoint.tls is True
    assert endpoint.url == f"wss://127.0.0.1:{gw.port}"
    assert endpoint.tls_fingerprint_hint == fingerprint
    assert endpoint.display_name == display_name
    assert endpoint.lan_host == f"{HOSTNAME}.local"
    assert dict(endpoint.txt) == {
        "role": "gateway",
        "gatewayPort": str(gw.port),
        "lanHost": f"{HOSTNAME}.local",
        "displayName": display_name,
        "gatewayTls": "1",
        "gatewayTlsSha256": fingerprint,
        "transport": "gateway",
    }
    hint = endpoint.txt["gatewayTlsSha256"]
    key = gateway_key(endpoint.url)
    creds = CredentialStore(MemorySecretStore())

    # No trust callback: refused, nothing pinned (the TXT hint alone trusts nothing).
    async with GatewayConnection(operator_options(endpoint, gw, creds)) as conn:
        with pytest.raises(ReconnectPaused) as refused:
            await conn.wait_ready(30)
    error = refused.value.cause
    assert isinstance(error, TrustError)
    assert error.kind == "untrusted"
    assert error.actual == fingerprint
    assert creds.tls_pin(key) is None

    # The callback says no: refused, nothing pinned.
    prompts: list[TrustPrompt] = []

    async def decline(prompt: TrustPrompt) -> bool:
        prompts.append(prompt)
        return False

    opts = operator_options(endpoint, gw, creds, trust_callback=decline)
    async with GatewayConnection(opts) as conn:
        with pytest.raises(ReconnectPaused) as declined:
            await conn.wait_ready(30)
    error = declined.value.cause
    assert isinstance(error, TrustError)
    assert error.kind == "declined"
    assert error.actual == fingerprint
    assert len(prompts) == 1
    assert prompts[0].fingerprint == fingerprint
    assert prompts[0].hint == hint
    assert creds.tls_pin(key) is None

    # The callback says yes: the probed fingerprint is pinned and the session runs over wss.
    accepted: list[TrustPrompt] = []

    async def accept(prompt: TrustPrompt) -> bool:
        accepted.append(prompt)
        return True

    opts = operator_options(endpoint, gw, creds, trust_callback=accept)
    async with GatewayConnection(opts) as conn:
        hello = await conn.wait_ready(30)
        assert conn.endpoint.tls is True
        assert hello.protocol == 4
        assert hello.auth.role == "operator"
        assert (await conn.request("health"))["ok"] is True
    assert len(accepted) == 1
    assert accepted[0].fingerprint == fingerprint
    assert accepted[0].hint == hint
    assert accepted[0].hint_matches is True
    assert accepted[0].endpoint == f"127.0.0.1:{gw.port}"
    assert creds.tls_pin(key) == fingerprint

    # From now on the stored pin is enough: no callback needed.
    async with GatewayConnection(operator_options(endpoint, gw, creds)) as conn:
        await conn.wait_ready(30)
        assert (await conn.request("health"))["ok"] is True


async def test_the_lan_tls_port_speaks_tls_only(lan_tls_gateway: BundledGateway) -> None:
    """Plain ``ws://`` to the TLS port fails; ``wss://`` with the pinned context gets the
    challenge (over 127.0.0.1, although the gateway listens on every interface)."""
    gw = lan_tls_gateway
    with pytest.raises((websockets.InvalidHandshake, websockets.InvalidMessage, OSError)):
        async with connect(f"ws://127.0.0.1:{gw.port}", open_timeout=5):
            pass
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    async with connect(f"wss://127.0.0.1:{gw.port}", ssl=context, open_timeout=5) as ws:
        der = ws.transport.get_extra_info("ssl_object").getpeercert(binary_form=True)
        assert hashlib.sha256(der).hexdigest() == certificate_fingerprint(gw)
        first = await asyncio.wait_for(ws.recv(), 5)
        assert '"connect.challenge"' in str(first)


# ------------------------------------------------------------------ advertising follows bind
@pytest.fixture
def default_lan_gateway(display_name: str) -> Iterator[BundledGateway]:
    """Our gateway with ``--bind lan`` and no ``--mdns`` (advertising on 127.0.0.1 only)."""
    args = ["--bind", "lan", "--mdns-interfaces", "127.0.0.1", "--display-name", display_name]
    with BundledGateway.start(args=args, env={"OPENCLAW_MDNS_HOSTNAME": HOSTNAME}) as gw:
        yield gw


async def test_a_lan_gateway_is_advertised_by_default_and_withdrawn_when_it_stops(
    default_lan_gateway: BundledGateway, browser: Recorder, display_name: str
) -> None:
    """``--bind lan`` alone advertises (minimal TXT, plain ws); after SIGTERM the browser
    sees the service removed (goodbye packets, not a TTL expiry)."""
    gw = default_lan_gateway
    name = f"{display_name} (OpenClaw)"
    endpoint = await browser.wait_for("added", name, FOUND_WITHIN)
    assert endpoint.url == f"ws://127.0.0.1:{gw.port}"
    assert endpoint.tls is False
    assert dict(endpoint.txt) == {
        "role": "gateway",
        "gatewayPort": str(gw.port),
        "lanHost": f"{HOSTNAME}.local",
        "displayName": display_name,
        "transport": "gateway",
    }
    assert f"advertising {name!r} on mDNS" in gw.run_log()

    code = await asyncio.to_thread(gw.stop)
    assert code == 0, gw.log_tail()
    removed = await browser.wait_for("removed", name, GONE_WITHIN)
    assert removed.port == gw.port
    assert "stopped advertising on mDNS" in gw.log()


async def _answered(zc: AsyncZeroconf, instance: str, timeout_ms: int = 1500) -> bool:
    """Whether anyone answers a direct query for ``instance`` of our service type."""
    info = AsyncServiceInfo(SERVICE_TYPE, f"{instance}.{SERVICE_TYPE}")
    return bool(await info.async_request(zc.zeroconf, timeout_ms))


async def test_loopback_only_and_mdns_off_gateways_are_never_advertised(
    browser: Recorder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process, next to an advertised control: a loopback gateway (mDNS left at its
    default) and a ``bind: lan`` one with ``mdns_mode: off`` never show up, neither to the
    browser nor to a direct query for their names."""
    monkeypatch.setenv("OPENCLAW_MDNS_HOSTNAME", HOSTNAME)
    tag = secrets.token_hex(4)
    hidden, off, control = (f"pytest-{kind}-{tag}" for kind in ("loopback", "off", "lan"))
    common = {"mdns_interfaces": LOOPBACK, "hosts": ["127.0.0.1"]}
    async with (
        bundled_gateway(
            tmp_path / "lo", bind="loopback", mdns_mode=None, display_name=hidden, **common
        ) as lo,
        bundled_gateway(
            tmp_path / "off", bind="lan", mdns_mode="off", display_name=off, **common
        ) as quiet,
        bundled_gateway(
            tmp_path / "lan", bind="lan", mdns_mode=None, display_name=control, **common
        ) as lan,
    ):
        assert lo.config.mdns_mode is None and lo.config.advertise is False
        assert quiet.config.advertise is False
        assert lan.config.mdns_mode is None and lan.config.advertise is True

        # The control shows up, so the browser would have seen the others by now.
        endpoint = await browser.wait_for("added", f"{control} (OpenClaw)", FOUND_WITHIN)
        assert endpoint.port == lan.port
        zc = AsyncZeroconf(interfaces=LOOPBACK)
        try:
            assert await _answered(zc, f"{control} (OpenClaw)")
            assert not await _answered(zc, f"{hidden} (OpenClaw)")
            assert not await _answered(zc, f"{off} (OpenClaw)")
        finally:
            await zc.async_close()
        seen = {endpoint.name for _kind, endpoint in browser.events}
        assert f"{hidden} (OpenClaw)" not in seen
        assert f"{off} (OpenClaw)" not in seen
        ports = {endpoint.port for _kind, endpoint in browser.events}
        assert lo.port not in ports and quiet.port not in ports
