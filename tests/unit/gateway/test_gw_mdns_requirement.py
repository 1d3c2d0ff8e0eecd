"""Unit tests: without loopback multicast the mDNS tests skip locally but fail under CI.

The probe, the root check and the ``lo`` flags of :mod:`tests.helpers.mdns` are replaced, so
nothing touches the network here.
"""

from __future__ import annotations

import os

import pytest

from tests.helpers import mdns


@pytest.fixture
def no_multicast(monkeypatch: pytest.MonkeyPatch) -> None:
    """The loopback probe fails and we are not root."""
    monkeypatch.setattr(mdns, "_probe_loopback_multicast", lambda: "no datagram came back")
    monkeypatch.setattr(mdns, "_lo_state", lambda: "lo UP=yes MULTICAST=no")
    monkeypatch.setattr(os, "geteuid", lambda: 1000, raising=False)


@pytest.mark.parametrize("value", ["true", "1", "yes", "GitLab"])
def test_fails_under_ci(no_multicast: None, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CI", value)
    with (
        pytest.raises(pytest.fail.Exception, match="CI is set") as failed,
        mdns.loopback_multicast(),
    ):
        pytest.fail("the body must not run")  # pragma: no cover
    assert "no datagram came back" in str(failed.value)
    assert "lo UP=yes MULTICAST=no" in str(failed.value)


@pytest.mark.parametrize("value", [None, "", "0", "false", "no"])
def test_skips_outside_ci(
    no_multicast: None, monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    with (
        pytest.raises(pytest.skip.Exception, match="mDNS on loopback unavailable"),
        mdns.loopback_multicast(),
    ):
        pytest.fail("the body must not run")  # pragma: no cover


def test_working_multicast_runs_the_body_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(mdns, "_probe_loopback_multicast", lambda: None)
    ran = []
    with mdns.loopback_multicast():
        ran.append(True)
    assert ran == [True]
