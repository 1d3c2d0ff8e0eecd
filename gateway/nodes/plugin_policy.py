"""The node-invoke policies the real gateway's default plugins put in front of some commands.

npm ``openclaw`` 2026.9.6 loads the ``cua-computer`` plugin's policy for ``computer.act`` on
every platform (``dangerous``; its computer driver only where the plugin is enabled). Before
anything is sent to the node, the policy classifies the arguments by the v2 computer-use
schema (:func:`openclaw_desktop.protocol.computer_use_schema.classify_act_risk`). Arguments it
cannot classify are refused by the gateway itself: ``INVALID_REQUEST`` "node.invoke
computer.act arguments could not be classified by plugin cua-computer", details
``{nodeCommandDispatched: false, code: PLUGIN_POLICY_RISK_CLASSIFICATION_FAILED}``, and the
node never sees them. This gateway asks for no approvals, so a classified invoke (ordinary or
high risk) goes on to the node; the node's failure then comes back the policy's way
(:func:`dispatched_failure`), not as a plain invoke's ``UNAVAILABLE``. Pure.
"""

from __future__ import annotations

from typing import Any, Final

from gateway.errors import invalid_request
from openclaw_desktop.protocol import ErrorCode, error_shape
from openclaw_desktop.protocol.computer_use import ComputerParamsError
from openclaw_desktop.protocol.computer_use_schema import ComputerActRisk, classify_act_risk

__all__ = ["CLASSIFICATION_FAILED", "POLICY_PLUGINS", "check_plugin_policy", "dispatched_failure"]

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


def dispatched_failure(error: Any) -> dict[str, Any]:
    """The answer when the node fails (or times out on) a command a plugin policy dispatched,
    as the real gateway relays it through the policy: ``INVALID_REQUEST`` with the node's own
    message (``node command failed`` when it gave none), details ``{nodeError,
    nodeCommandDispatched: true, code}`` (``code`` the node's, when it gave one)."""
    node_error = error if isinstance(error, dict) else None
    code = str(node_error.get("code") or "") if node_error else ""
    message = str(node_error.get("message") or "") if node_error else ""
    details: dict[str, Any] = {"nodeError": node_error, "nodeCommandDispatched": True}
    if code:
        details["code"] = code
    return error_shape(ErrorCode.INVALID_REQUEST, message or "node command failed", details)
