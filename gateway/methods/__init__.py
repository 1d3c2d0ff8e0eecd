"""Method handlers, one module per family, each declaring its methods on a
:class:`~gateway.methods.table.MethodTable`; :data:`TABLE` is their union."""

from __future__ import annotations

from gateway.methods import (
    agent,
    approvals,
    chat,
    control_ui,
    devices,
    models,
    node_role,
    nodes,
    ops,
    sessions,
    subscriptions,
    system,
    talk,
)
from gateway.methods import config as config_methods
from gateway.methods.table import Handler, MethodTable

__all__ = ["TABLE", "Handler"]

TABLE = MethodTable.merge(
    system.table,
    nodes.table,
    node_role.table,
    devices.table,
    chat.table,
    sessions.table,
    subscriptions.table,
    talk.table,
    agent.table,
    models.table,
    ops.table,
    approvals.table,
    config_methods.table,
    control_ui.table,
)
"""Every method this gateway serves, with the role and scope it needs."""
