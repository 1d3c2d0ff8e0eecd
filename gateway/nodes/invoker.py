"""Invoking a command on a connected node with the gateway's checks (:class:`NodeInvoker`):
the one path of an operator's ``node.invoke`` and of the agent's node tools."""

from __future__ import annotations

from typing import Any

from gateway.errors import MethodError, invalid_request, pairing_changed
from gateway.hub import Hub
from gateway.nodes.invoke import InvokeRouter
from gateway.nodes.plugin_policy import check_plugin_policy
from gateway.nodes.policy import CommandPolicy
from gateway.scopes import BROWSER_PROXY_COMMANDS, is_forbidden_browser_proxy_mutation
from gateway.state import GatewayState
from openclaw_desktop.protocol import ErrorCode, error_shape

__all__ = ["NodeInvoker"]

_PENDING_APPROVAL = (
    "node command not allowed: the node's declared command surface is pending "
    "approval; run `openclaw nodes pending`, then `openclaw nodes approve <requestId>`"
)


def _not_connected() -> MethodError:
    return MethodError(
        error_shape(
            ErrorCode.UNAVAILABLE,
            "node not connected",
            {
                "code": "NOT_CONNECTED",
                "nodeError": {"code": "NOT_CONNECTED", "message": "node not connected"},
                "nodeCommandDispatched": False,
            },
        )
    )


class NodeInvoker:
    """Checks one invoke as the real gateway does (the commands ``node.invoke`` never runs,
    the node being connected, the platform policy, the node's approved commands, the plugin
    policy) and hands it to the :class:`~gateway.nodes.invoke.InvokeRouter`; every refusal
    is a :class:`~gateway.errors.MethodError` in the reference's words."""

    def __init__(
        self, state: GatewayState, hub: Hub, policy: CommandPolicy, router: InvokeRouter
    ) -> None:
        self._state = state
        self._hub = hub
        self._policy = policy
        self._router = router

    async def invoke(
        self,
        node_id: str,
        command: str,
        params: Any,
        *,
        timeout_ms: int | None,
        idempotency_key: str,
        cancel_on_abandon: bool = False,
    ) -> dict[str, Any]:
        """Run ``command`` on ``node_id`` and return the operator result; with
        ``cancel_on_abandon`` (the agent's tool call) a caller that stops waiting stops the
        node too."""
        if not node_id.strip() or not command.strip():
            raise invalid_request("nodeId and command required")
        self._check_command(command, params)
        target = self._hub.nodes.get(node_id)
        if target is None:
            if (
                self._state.nodes.approved(node_id) is None
                and self._state.devices.get(node_id) is None
            ):
                raise pairing_changed()
            raise _not_connected()
        denial = self._policy.check_invoke(
            target.platform, target.device_family, target.caps, command
        )
        if denial is not None:
            raise MethodError(
                error_shape(ErrorCode.INVALID_REQUEST, denial.message, denial.details)
            )
        if command not in target.commands:
            if command in target.declared_commands:
                message, reason = _PENDING_APPROVAL, "command pending approval"
            else:
                message = (
                    f"node command not allowed: the node (platform: {target.platform}) "
                    f'does not support "{command}"'
                )
                reason = "command not declared by node"
            raise invalid_request(message, {"reason": reason, "command": command})
        check_plugin_policy(command, params)  # refuses what it cannot classify
        return await self._router.invoke(
            target,
            command,
            params,
            timeout_ms=timeout_ms,
            idempotency_key=idempotency_key,
            cancel_on_abandon=cancel_on_abandon,
        )

    @staticmethod
    def _check_command(command: str, params: Any) -> None:
        """The commands ``node.invoke`` refuses whatever the node: exec approvals (they have
        their own methods) and browser-proxy calls that would change a persistent profile."""
        if command.startswith("system.execApprovals."):
            raise invalid_request(
                "node.invoke does not allow system.execApprovals.*; use exec.approvals.node.*",
                {"command": command},
            )
        if command in BROWSER_PROXY_COMMANDS and is_forbidden_browser_proxy_mutation(params):
            raise invalid_request(
                f"node.invoke cannot mutate persistent browser profiles via {command}",
                {"command": command},
            )
