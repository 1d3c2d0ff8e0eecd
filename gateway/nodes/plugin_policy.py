"""The node-invoke policies the real gateway's default plugins put in front of some commands.

npm ``openclaw`` 2026.9.6 loads the ``cua-computer`` plugin's policy for ``computer.act`` on
every platform (``dangerous``; its computer driver only where the plugin is enabled). Before
anything is sent to the node, the policy classifies the arguments by the v2 computer-use
schema (:func:`openclaw_desktop.protocol.computer_use_schema.classify_act_risk`). Arguments it
cannot classify are refused by the gateway itself: ``INVALID_REQUEST`` "node.invoke
computer.act arguments could not be classified by plugin cua-computer", details
``{nodeCommandDispatched: false, code: PLUGIN_POLICY_RISK_CLASSIFICATION_FAILED}``, and the
node never sees them. This gateway asks for no approvals, so a classified invoke (ordinary or
high risk) goes on to the node. Pure.
"""

from __future__ import annotations

from typing import Any, Final

from gateway.errors import invalid_request
from openclaw_desktop.protocol.computer_use import ComputerParamsError
from openclaw_desktop.protocol.computer_use_schema import ComputerActRisk, classify_act_risk

__all__ = ["CLASSIFICATION_FAILED", "POLICY_PLUGINS", "check_plugin_policy"]

CLASSIFICATION_FAILED: Final = "PLUGIN_POLICY_RISK_CLASSIFICATION_FAILED"
POLICY_PLUGINS: Final = {"computer.act": "cua-computer"}
"""Command -> the default plugin whose node-invoke policy classifies its arguments."""


def check_plugin_policy(command: str, params: Any) -> ComputerActRisk | None:
    """The plugin policy's classification of one ``node.invoke`` (None: no policy applies).

    Raises:
        MethodError: The arguments could not be classified: the real gateway's refusal.
    """
    plugin = POLICY_PLUGINS.get(command)
    if plugin is None:
        return None
    try:
        return classify_act_risk(params)
    except ComputerParamsError:
        raise invalid_request(
            f"node.invoke {command} arguments could not be classified by plugin {plugin}",
            {"nodeCommandDispatched": False, "code": CLASSIFICATION_FAILED},
        ) from None
