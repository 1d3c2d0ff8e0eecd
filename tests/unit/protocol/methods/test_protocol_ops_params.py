"""The operations family's params models (:mod:`openclaw_desktop.protocol.methods.ops`):
the methods that declare them on the table (``logs.tail``, ``cron.*``, ``config.get``,
``exec.approvals.get``/``node.get``) refuse bad params in the reference's words through a
real dispatch; the open models of the methods the reference serves whatever their params
hold (``health``, ``status``, ``system-presence``, ``models.authStatus``) derive a schema
without ``additionalProperties``, and those methods still serve params that are not an
object (they are declared with ``check=False``)."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.app import GatewayApp
from gateway.methods import TABLE
from gateway.methods.closed import derived_schema
from openclaw_desktop.protocol.methods import PARAMS
from openclaw_desktop.protocol.methods.ops import (
    ExecApprovalsNodeGetParams,
    HealthParams,
    ModelsAuthStatusParams,
    StatusParams,
    SystemPresenceParams,
)
from tests.helpers.method_dispatch import answer

#: Declared on the table with their model.
DECLARED = [
    "logs.tail",
    "cron.list",
    "cron.status",
    "config.get",
    "exec.approvals.get",
    "exec.approvals.node.get",
]
#: Open: any params served; what each reads, in the reference handler's order.
OPEN: dict[str, tuple[type[Any], list[str]]] = {
    "health": (HealthParams, ["probe"]),
    "status": (StatusParams, ["includeChannelSummary", "includeCliProjection"]),
    "system-presence": (SystemPresenceParams, []),
    "models.authStatus": (ModelsAuthStatusParams, ["refresh", "agentId"]),
}


def test_the_declared_methods_use_their_models() -> None:
    for name in DECLARED:
        assert TABLE[name].params is PARAMS[name], name


def test_exec_approvals_node_get_is_the_reference_schema() -> None:
    assert derived_schema(ExecApprovalsNodeGetParams) == {
        "type": "object",
        "additionalProperties": False,
        "required": ["nodeId"],
        "properties": {"nodeId": {"type": "string", "minLength": 1}},
    }


@pytest.mark.parametrize("method", sorted(OPEN))
def test_an_open_model_lists_what_its_method_reads(method: str) -> None:
    model, reads = OPEN[method]
    assert PARAMS[method] is model
    assert derived_schema(model) == {
        "type": "object",
        "properties": {key: {} for key in reads},
    }
    # Declared, but not checked by the dispatcher: non-object params are served too.
    assert TABLE[method].params is model
    assert not TABLE[method].check


#: (method, params, the reference's text after ``invalid <method> params: ``).
REFUSED: list[tuple[str, Any, str]] = [
    ("logs.tail", {"limit": 0}, "at /limit: must be >= 1"),
    ("logs.tail", {"cursor": "a"}, "at /cursor: must be integer"),
    (
        "cron.list",
        {"enabled": "maybe"},
        "at /enabled: must be equal to constant; at /enabled: must match a schema in anyOf",
    ),
    ("cron.status", {"x": 1}, "at root: unexpected property 'x'"),
    ("config.get", {"x": 1}, "at root: unexpected property 'x'"),
    ("exec.approvals.get", [], "must be object"),
    ("exec.approvals.node.get", {}, "must have required property 'nodeId'"),
    (
        "exec.approvals.node.get",
        {"nodeId": ""},
        "at /nodeId: must not have fewer than 1 characters",
    ),
]


@pytest.mark.parametrize(
    ("method", "params", "text"), REFUSED, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(REFUSED)]
)
async def test_bad_params_get_the_reference_text(
    app: GatewayApp, method: str, params: Any, text: str
) -> None:
    frame = await answer(app, method, params)
    assert frame["ok"] is False
    assert frame["error"]["code"] == "INVALID_REQUEST"
    assert frame["error"]["message"] == f"invalid {method} params: {text}"


async def test_a_declared_method_gets_only_the_checked_params(app: GatewayApp) -> None:
    frame = await answer(app, "cron.list", {"limit": 7.0, "offset": 2})
    assert frame["ok"] is True
    assert (frame["payload"]["limit"], frame["payload"]["offset"]) == (7, 2)


@pytest.mark.parametrize("params", [[["x"]], "x", 5, {"probe": "yes", "other": 1}])
async def test_the_open_methods_serve_any_params(app: GatewayApp, params: Any) -> None:
    for method in ("health", "status", "system-presence"):
        assert (await answer(app, method, params))["ok"] is True, method
    status = await answer(app, "status", {"includeCliProjection": "yes"})
    assert "cliProjection" not in status["payload"]  # only ``true`` asks for it
