"""Integration tests: resolve_tls and verify_pin against a real TLS 1.3 server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import ssl

import pytest

from openclaw_desktop.errors import TrustError
from openclaw_desktop.trust import TlsPlan, TrustPrompt, resolve_tls, verify_pin
from tests.helpers.tls import (
    LoopbackServer,
    SelfSignedCert,
    make_self_signed_cert,
    tls_server,
    unused_port,
)

BOUND = 10.0
"""Upper limit for any test body."""


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> SelfSignedCert:
    return make_self_signed_cert(tmp_path_factory.mktemp("tls"))


class Answer:
    """A trust callback with a fixed answer, and a pin store."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.prompts: list[TrustPrompt] = []
        self.saved: list[str] = []

    async def ask(self, prompt: TrustPrompt) -> bool:
        self.prompts.append(prompt)
        return self.answer

    def save(self, fp: str) -> None:
        self.saved.append(fp)


async def connect_and_verify(server: LoopbackServer, plan: TlsPlan) -> str:
    """Open a real TLS connection with the plan, check the pin, close; return the fingerprint."""
    assert plan.pin is not None
    _reader, writer = await asyncio.open_connection(
        server.host, server.port, ssl=plan.context, server_hostname=plan.server_hostname
    )
    try:
        ssl_object = writer.get_extra_info("ssl_object")
        assert isinstance(ssl_object, ssl.SSLObject)
        return verify_pin(ssl_object, plan.pin, f"{server.host}:{server.port}")
    finally:
        writer.close()
        await writer.wait_closed()


async def test_callback_yes_stores_the_pin(cert: SelfSignedCert) -> None:
    """No pin + callback True: the prompt shows the real fingerprint, it is saved and pinned."""
    answer = Answer(True)
    async with asyncio.timeout(BOUND), tls_server(cert) as server:
        plan = await resolve_tls(
            server.host,
            server.port,
            pin=None,
            trust_callback=answer.ask,
            save_pin=answer.save,
            hint="00" * 32,
        )
        assert await connect_and_verify(server, plan) == cert.fingerprint
    assert answer.saved == [cert.fingerprint]
    assert plan.pin == cert.fingerprint
    [prompt] = answer.prompts
    assert prompt.fingerprint == cert.fingerprint
    assert prompt.endpoint == f"127.0.0.1:{server.port}"
    assert prompt.hint == "00" * 32
    assert prompt.hint_matches is False


async def test_callback_no_is_declined_and_saves_nothing(cert: SelfSignedCert) -> None:
    """No pin + callback False: TrustError('declined') with the fingerprint, nothing saved."""
    answer = Answer(False)
    async with asyncio.timeout(BOUND), tls_server(cert) as server:
        with pytest.raises(TrustError) as info:
            await resolve_tls(
                server.host, server.port, pin=None, trust_callback=answer.ask, save_pin=answer.save
            )
    assert info.value.kind == "declined"
    assert info.value.actual == cert.fingerprint
    assert answer.saved == []
    assert len(answer.prompts) == 1


async def test_no_callback_is_untrusted(cert: SelfSignedCert) -> None:
    """No pin and no callback: TrustError('untrusted'); a matching hint does not help."""
    async with asyncio.timeout(BOUND), tls_server(cert) as server:
        with pytest.raises(TrustError) as info:
            await resolve_tls(
                server.host,
                server.port,
                pin=None,
                trust_callback=None,
                save_pin=None,
                hint=cert.fingerprint,
            )
    assert info.value.kind == "untrusted"
    assert info.value.actual == cert.fingerprint
    assert cert.fingerprint in str(info.value)


async def test_right_pin_handshakes_and_verifies(cert: SelfSignedCert) -> None:
    """A stored pin (colon form) gives a pinned plan; a real handshake then passes verify_pin."""
    colon_pin = ":".join(cert.fingerprint[i : i + 2] for i in range(0, 64, 2)).upper()
    answer = Answer(True)
    async with asyncio.timeout(BOUND), tls_server(cert) as server:
        plan = await resolve_tls(
            server.host, server.port, pin=colon_pin, trust_callback=answer.ask, save_pin=answer.save
        )
        assert plan.pin == cert.fingerprint
        assert await connect_and_verify(server, plan) == cert.fingerprint
        assert server.connections == 1  # resolve_tls itself did not connect
    assert answer.prompts == []
    assert answer.saved == []


async def test_wrong_pin_is_a_mismatch(cert: SelfSignedCert) -> None:
    """A stored pin for another certificate: TrustError('mismatch') naming both fingerprints."""
    wrong = "5a" * 32
    async with asyncio.timeout(BOUND), tls_server(cert) as server:
        plan = await resolve_tls(
            server.host, server.port, pin=wrong, trust_callback=None, save_pin=None
        )
        with pytest.raises(TrustError) as info:
            await connect_and_verify(server, plan)
    error = info.value
    assert error.kind == "mismatch"
    assert error.expected == wrong
    assert error.actual == cert.fingerprint
    assert wrong in str(error)
    assert cert.fingerprint in str(error)


async def test_changed_certificate_after_trust_is_a_mismatch(
    cert: SelfSignedCert, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A pin accepted for one certificate refuses a gateway that now shows another."""
    answer = Answer(True)
    other = make_self_signed_cert(tmp_path_factory.mktemp("other"), key_type="ec")
    async with asyncio.timeout(BOUND):
        async with tls_server(cert) as server:
            await resolve_tls(
                server.host, server.port, pin=None, trust_callback=answer.ask, save_pin=answer.save
            )
        async with tls_server(other) as server:
            plan = await resolve_tls(
                server.host, server.port, pin=answer.saved[0], trust_callback=None, save_pin=None
            )
            with pytest.raises(TrustError, match="mismatch"):
                await connect_and_verify(server, plan)


async def test_unreachable_gateway_is_unavailable() -> None:
    """Without a pin, an unreachable gateway raises unavailable and never prompts."""
    answer = Answer(True)
    port = unused_port()
    with pytest.raises(TrustError) as info:
        async with asyncio.timeout(BOUND):
            await resolve_tls(
                "127.0.0.1", port, pin=None, trust_callback=answer.ask, save_pin=answer.save
            )
    assert info.value.kind == "unavailable"
    assert answer.prompts == []
