"""The bundled gateway's restart policy and how a cut session is classified (pure)."""

from __future__ import annotations

import pytest

from openclaw_desktop.errors import ConnectionClosed
from openclaw_desktop.interruption import CutCause, classify_drop
from openclaw_desktop.supervisor import RestartPolicy


def test_backoff_grows_with_consecutive_exits() -> None:
    """Each exit in a row waits longer; the last step repeats."""
    policy = RestartPolicy(backoff_s=(0.5, 1.0, 2.0), max_per_minute=10)
    delays = [policy.delay_s([0.0] * n, n, 1.0) for n in range(1, 6)]
    assert delays == [0.5, 1.0, 2.0, 2.0, 2.0]


def test_gives_up_past_the_cap_per_minute() -> None:
    """The (cap + 1)-th exit within the window gives up; older exits do not count."""
    policy = RestartPolicy(max_per_minute=3, window_s=60.0)
    assert policy.delay_s([10.0, 20.0, 30.0], 3, 31.0) is not None
    assert policy.delay_s([10.0, 20.0, 30.0, 31.0], 4, 31.0) is None
    assert policy.delay_s([0.0, 1.0, 2.0, 100.0], 1, 100.0) is not None


def test_a_cut_to_the_bundled_gateway_is_a_gateway_stop() -> None:
    """On loopback to our own gateway there is no network: a drop is the process stopping."""
    lost = ConnectionClosed(1006, "")
    assert classify_drop(lost, bundled=True) is CutCause.GATEWAY_STOPPED
    assert classify_drop(lost, bundled=False, gateway_exited=True) is CutCause.GATEWAY_STOPPED


@pytest.mark.parametrize(
    ("code", "cause"),
    [
        (1001, CutCause.GATEWAY_STOPPED),
        (1012, CutCause.GATEWAY_STOPPED),
        (1006, CutCause.CONNECTION_LOST),
        (None, CutCause.CONNECTION_LOST),
    ],
)
def test_a_cut_to_a_remote_gateway_by_close_code(code: int | None, cause: CutCause) -> None:
    """A remote gateway going away on purpose says so in its close code; else the link broke."""
    assert classify_drop(ConnectionClosed(code, ""), bundled=False) is cause
