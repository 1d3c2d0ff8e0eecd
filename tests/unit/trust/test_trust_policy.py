"""Unit tests for openclaw_desktop.trust.policy (network checks are replaced by fakes)."""

from __future__ import annotations

import ssl

import pytest

from openclaw_desktop.errors import TrustError
from openclaw_desktop.trust import policy
from openclaw_desktop.trust.policy import TlsPlan, TrustPrompt, resolve_tls

FP = "7270b9b1eec5fe809163ace8c347501d3c6ee850aeb91b4d4e56c03eb4f1fd6b"
OTHER = "cd" * 32


class FakeNetwork:
    """Replaces system_trusts / probe_fingerprint and records the calls."""

    def __init__(self, *, trusted: bool, fingerprint: str = FP) -> None:
        self.trusted = trusted
        self.fingerprint = fingerprint
        self.calls: list[str] = []

    async def system_trusts(self, host: str, port: int, *, timeout: float = 3.0) -> bool:
        self.calls.append(f"system_trusts {host}:{port} {timeout}")
        return self.trusted

    async def probe_fingerprint(self, host: str, port: int, *, timeout: float = 3.0) -> str:
        self.calls.append(f"probe {host}:{port} {timeout}")
        return self.fingerprint


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch) -> FakeNetwork:
    fake = FakeNetwork(trusted=False)
    monkeypatch.setattr(policy, "system_trusts", fake.system_trusts)
    monkeypatch.setattr(policy, "probe_fingerprint", fake.probe_fingerprint)
    return fake


class Recorder:
    """A trust callback and pin saver that remember what they were given."""

    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.prompts: list[TrustPrompt] = []
        self.saved: list[str] = []

    async def ask(self, prompt: TrustPrompt) -> bool:
        self.prompts.append(prompt)
        return self.answer  # type: ignore[return-value]

    def save(self, fp: str) -> None:
        self.saved.append(fp)


async def test_stored_pin_gives_pinned_plan_without_network(network: FakeNetwork) -> None:
    """With a pin: pinned context, normalized pin, no hostname, no probe, no prompt."""
    rec = Recorder(True)
    plan = await resolve_tls(
        "10.0.0.5", 18789, pin=f"SHA256:{FP.upper()}", trust_callback=rec.ask, save_pin=rec.save
    )
    assert plan.pin == FP
    assert plan.pinned is True
    assert plan.server_hostname is None
    assert plan.context.verify_mode == ssl.CERT_NONE
    assert plan.context.check_hostname is False
    assert network.calls == []
    assert rec.prompts == []
    assert rec.saved == []


async def test_hint_never_replaces_a_pin(network: FakeNetwork) -> None:
    """A discovery hint that differs from the pin changes nothing."""
    plan = await resolve_tls(
        "gw.local", 18789, pin=FP, trust_callback=None, save_pin=None, hint=OTHER
    )
    assert plan.pin == FP
    assert network.calls == []


async def test_malformed_pin_is_refused(network: FakeNetwork) -> None:
    """A malformed stored pin raises ValueError rather than falling back to anything."""
    with pytest.raises(ValueError, match="invalid TLS fingerprint"):
        await resolve_tls("gw.local", 1, pin="nope", trust_callback=None, save_pin=None)
    assert network.calls == []


async def test_system_trusted_gives_verified_plan(network: FakeNetwork) -> None:
    """Without a pin, a system-trusted certificate needs no prompt and no pin."""
    network.trusted = True
    rec = Recorder(True)
    plan = await resolve_tls(
        "gw.example.com", 443, pin=None, trust_callback=rec.ask, save_pin=rec.save, timeout=1.5
    )
    assert plan == TlsPlan(context=plan.context, pin=None, server_hostname="gw.example.com")
    assert plan.pinned is False
    assert plan.context.verify_mode == ssl.CERT_REQUIRED
    assert plan.context.check_hostname is True
    assert network.calls == ["system_trusts gw.example.com:443 1.5"]
    assert rec.prompts == []
    assert rec.saved == []


async def test_accepted_prompt_saves_and_pins(network: FakeNetwork) -> None:
    """The callback sees the probed fingerprint and the hint; True saves and pins it."""
    rec = Recorder(True)
    plan = await resolve_tls(
        "::1",
        8443,
        pin=None,
        trust_callback=rec.ask,
        save_pin=rec.save,
        hint=f"sha256:{FP.upper()}",
        previous_pin=OTHER,
    )
    assert rec.prompts == [
        TrustPrompt(
            endpoint="[::1]:8443",
            host="::1",
            port=8443,
            fingerprint=FP,
            hint=FP,
            previous_pin=OTHER,
        )
    ]
    assert rec.prompts[0].hint_matches is True
    assert rec.saved == [FP]
    assert plan.pin == FP
    assert plan.context.verify_mode == ssl.CERT_NONE


async def test_accepted_without_saver_pins_for_this_plan_only(network: FakeNetwork) -> None:
    """With no saver, acceptance still yields a pinned plan, and nothing is stored."""
    rec = Recorder(True)
    plan = await resolve_tls("gw.local", 1, pin=None, trust_callback=rec.ask, save_pin=None)
    assert plan.pin == FP


async def test_declined_prompt_raises_and_saves_nothing(network: FakeNetwork) -> None:
    """False from the callback raises TrustError('declined') with the fingerprint."""
    rec = Recorder(False)
    with pytest.raises(TrustError) as info:
        await resolve_tls("gw.local", 1, pin=None, trust_callback=rec.ask, save_pin=rec.save)
    assert info.value.kind == "declined"
    assert info.value.actual == FP
    assert info.value.endpoint == "gw.local:1"
    assert rec.saved == []


@pytest.mark.parametrize("answer", [None, 1, "yes", object()])
async def test_only_true_counts_as_yes(network: FakeNetwork, answer: object) -> None:
    """A truthy non-True answer is a refusal (fail closed)."""
    rec = Recorder(answer)
    with pytest.raises(TrustError, match="was not trusted"):
        await resolve_tls("gw.local", 1, pin=None, trust_callback=rec.ask, save_pin=rec.save)
    assert rec.saved == []


async def test_no_callback_is_untrusted(network: FakeNetwork) -> None:
    """No callback means no TOFU: TrustError('untrusted') carrying the fingerprint."""
    with pytest.raises(TrustError) as info:
        await resolve_tls("gw.local", 1, pin=None, trust_callback=None, save_pin=None, hint=FP)
    assert info.value.kind == "untrusted"
    assert info.value.actual == FP
    assert FP in str(info.value)


async def test_malformed_hint_is_dropped(network: FakeNetwork) -> None:
    """A malformed hint is not shown; a mismatching one is flagged."""
    rec = Recorder(False)
    for hint, matches in (("garbage", None), (OTHER, False)):
        with pytest.raises(TrustError):
            await resolve_tls(
                "gw.local", 1, pin=None, trust_callback=rec.ask, save_pin=None, hint=hint
            )
        assert rec.prompts[-1].hint_matches is matches


async def test_system_plan_uses_the_bare_ipv6_host(network: FakeNetwork) -> None:
    """A bracketed IPv6 host becomes a bare server_hostname for the certificate check."""
    network.trusted = True
    plan = await resolve_tls("[fd00::1]", 443, pin=None, trust_callback=None, save_pin=None)
    assert plan.server_hostname == "fd00::1"
