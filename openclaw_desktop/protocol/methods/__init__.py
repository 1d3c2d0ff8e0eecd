"""Every method's params as a model (the one source of truth for both sides), and the
reference-shaped JSON schema derived from a model (:func:`params_schema`)."""

from openclaw_desktop.protocol.base import WireModel
from openclaw_desktop.protocol.methods import (
    agent,
    chat,
    control_ui,
    devices,
    nodes,
    ops,
    sessions,
    talk,
)
from openclaw_desktop.protocol.methods.chat import (
    ChatAbortParams,
    ChatHistoryParams,
    ChatInjectParams,
    ChatMessageGetParams,
    ChatSendParams,
)
from openclaw_desktop.protocol.methods.ops import (
    ApprovalListParams,
    CronListParams,
    EmptyParams,
    ExecApprovalsNodeGetParams,
    ExecApprovalsNodeSetParams,
    LogsTailParams,
    ModelsListParams,
)
from openclaw_desktop.protocol.methods.schema import (
    AS_ENUM,
    NULLABLE,
    UNCHECKED,
    UNIQUE,
    params_schema,
    unchecked_fields,
)
from openclaw_desktop.protocol.methods.sessions import (
    CommandsListParams,
    SessionsCreateParams,
    SessionsDeleteParams,
    SessionsDescribeParams,
    SessionsListParams,
    SessionsPatchParams,
    SessionsResetParams,
)

__all__ = [
    "AS_ENUM",
    "NULLABLE",
    "PARAMS",
    "UNCHECKED",
    "UNIQUE",
    "ApprovalListParams",
    "ChatAbortParams",
    "ChatHistoryParams",
    "ChatInjectParams",
    "ChatMessageGetParams",
    "ChatSendParams",
    "CommandsListParams",
    "CronListParams",
    "EmptyParams",
    "ExecApprovalsNodeGetParams",
    "ExecApprovalsNodeSetParams",
    "LogsTailParams",
    "ModelsListParams",
    "SessionsCreateParams",
    "SessionsDeleteParams",
    "SessionsDescribeParams",
    "SessionsListParams",
    "SessionsPatchParams",
    "SessionsResetParams",
    "params_schema",
    "unchecked_fields",
]

#: The params model of every method, by method name (each family module declares its own).
PARAMS: dict[str, type[WireModel]] = {
    **chat.PARAMS,
    **sessions.PARAMS,
    **ops.PARAMS,
    **agent.PARAMS,
    **nodes.PARAMS,
    **devices.PARAMS,
    **talk.PARAMS,
    **control_ui.PARAMS,
}
