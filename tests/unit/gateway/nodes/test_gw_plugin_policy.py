"""The default plugins' node-invoke policy the bundled gateway mirrors: cua-computer's
classification of ``computer.act`` before dispatch, and how a dispatched failure is relayed."""

from __future__ import annotations

import pytest

from gateway.errors import MethodError
from gateway.nodes.plugin_policy import check_plugin_policy, dispatched_failure
from openclaw_desktop.protocol.computer_use_schema import ComputerActRisk


def test_only_computer_act_is_classified() -> None:
    assert check_plugin_policy("screen.snapshot", {"anything": 1}) is None
    assert check_plugin_policy("computer.act", {"action": "list_apps"}) == ComputerActRisk(
        "ordinary", "observation"
    )
    assert check_plugin_policy("computer.act", {"action": "__close_execution"}) == (
        ComputerActRisk("ordinary", "execution_lifecycle")
    )


@pytest.mark.parametrize("params", [None, {}, {"action": "left_click", "keys": "a"}, "x"])
def test_an_unclassifiable_computer_act_is_the_real_refusal(params: object) -> None:
    with pytest.raises(MethodError) as caught:
        check_plugin_policy("computer.act", params)
    assert caught.value.shape == {
        "code": "INVALID_REQUEST",
        "message": "node.invoke computer.act arguments could not be classified by plugin "
        "cua-computer",
        "details": {
            "nodeCommandDispatched": False,
            "code": "PLUGIN_POLICY_RISK_CLASSIFICATION_FAILED",
        },
    }


def test_a_dispatched_failure_keeps_the_nodes_words() -> None:
    timed_out = {"code": "TIMEOUT", "message": "node invoke timed out"}
    assert dispatched_failure(timed_out) == {
        "code": "INVALID_REQUEST",
        "message": "node invoke timed out",
        "details": {"nodeError": timed_out, "nodeCommandDispatched": True, "code": "TIMEOUT"},
    }
    assert dispatched_failure(None) == {
        "code": "INVALID_REQUEST",
        "message": "node command failed",
        "details": {"nodeError": None, "nodeCommandDispatched": True},
    }
