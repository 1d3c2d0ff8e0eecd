"""The setup-code (bootstrap) profile: which role and operator scopes a code lets its device
ask for, per access level and transport (real gateway 2026.9.6, docs/channels/pairing.md)."""

from __future__ import annotations

import pytest

from gateway.handshake.setup_profile import (
    BOOTSTRAP_FULL_OPERATOR_SCOPES,
    BOOTSTRAP_LIMITED_OPERATOR_SCOPES,
    setup_profile,
)


def test_hand_off_scope_lists() -> None:
    """Limited: approvals, questions, read, talk.secrets, write; full adds admin; neither
    has operator.pairing."""
    assert sorted(BOOTSTRAP_LIMITED_OPERATOR_SCOPES) == [
        "operator.approvals",
        "operator.questions",
        "operator.read",
        "operator.talk.secrets",
        "operator.write",
    ]
    assert set(BOOTSTRAP_FULL_OPERATOR_SCOPES) - set(BOOTSTRAP_LIMITED_OPERATOR_SCOPES) == {
        "operator.admin"
    }
    assert "operator.pairing" not in BOOTSTRAP_FULL_OPERATOR_SCOPES


@pytest.mark.parametrize(
    ("local", "tls", "full"),
    [(True, False, True), (False, True, True), (True, True, True), (False, False, False)],
    ids=["loopback", "remote-tls", "loopback-tls", "remote-plaintext"],
)
def test_full_code_is_limited_over_plaintext_from_another_host(
    local: bool, tls: bool, full: bool
) -> None:
    """A full code is full on loopback or TLS, limited over plaintext from another host."""
    profile = setup_profile("full", local=local, tls=tls)
    assert profile.roles == ("node", "operator")
    expected = BOOTSTRAP_FULL_OPERATOR_SCOPES if full else BOOTSTRAP_LIMITED_OPERATOR_SCOPES
    assert profile.scopes == expected
    assert profile.allows("operator", ["operator.admin"]) is full


@pytest.mark.parametrize("local", [True, False])
def test_limited_code_never_allows_admin_or_pairing(local: bool) -> None:
    """Limited: the hand-off scopes (and what they imply), nothing else."""
    profile = setup_profile("limited", local=local, tls=True)
    assert profile.scopes == BOOTSTRAP_LIMITED_OPERATOR_SCOPES
    allowed: list[list[str]] = [
        [],
        ["operator.read"],
        ["operator.talk"],  # implied by operator.write
        list(BOOTSTRAP_LIMITED_OPERATOR_SCOPES),
    ]
    for scopes in allowed:
        assert profile.allows("operator", scopes), scopes
    refused: list[list[str]] = [
        ["operator.admin"],
        ["operator.pairing"],
        ["operator.read", "operator.pairing"],
        ["operator.bogus"],
    ]
    for scopes in refused:
        assert not profile.allows("operator", scopes), scopes


def test_full_code_admin_covers_every_operator_scope() -> None:
    """As the real gateway's roleScopesAllow: operator.admin implies the other scopes."""
    profile = setup_profile("full", local=True, tls=False)
    assert profile.allows("operator", ["operator.admin", "operator.pairing"])


def test_node_roles_and_node_code() -> None:
    """A node asks for no scopes; a node code allows the node role only."""
    full = setup_profile("full", local=True, tls=False)
    assert full.allows("node", [])
    assert not full.allows("node", ["operator.read"])
    assert not full.allows("admin", [])
    node = setup_profile("node", local=True, tls=False)
    assert node.roles == ("node",)
    assert node.scopes == ()
    assert node.allows("node", [])
    assert not node.allows("operator", [])
