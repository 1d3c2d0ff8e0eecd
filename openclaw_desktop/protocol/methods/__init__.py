"""Every method's params as a model (the one source of truth for both sides), and the
reference-shaped JSON schema derived from a model (:func:`params_schema`)."""

from openclaw_desktop.protocol.base import ClosedModel
from openclaw_desktop.protocol.methods.chat import (
    ChatAbortParams,
    ChatHistoryParams,
    ChatInjectParams,
    ChatMessageGetParams,
    ChatSendParams,
)
from openclaw_desktop.protocol.methods.ops import (
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

#: The params model of each method declared here, by method name.
PARAMS: dict[str, type[ClosedModel]] = {
    "chat.send": ChatSendParams,
    "chat.abort": ChatAbortParams,
    "chat.history": ChatHistoryParams,
    "chat.message.get": ChatMessageGetParams,
    "chat.inject": ChatInjectParams,
    "sessions.list": SessionsListParams,
    "sessions.subscribe": SessionsListParams,
    "sessions.describe": SessionsDescribeParams,
    "commands.list": CommandsListParams,
    "sessions.create": SessionsCreateParams,
    "sessions.patch": SessionsPatchParams,
    "sessions.reset": SessionsResetParams,
    "sessions.delete": SessionsDeleteParams,
    "models.list": ModelsListParams,
    "cron.list": CronListParams,
    "exec.approvals.node.get": ExecApprovalsNodeGetParams,
    "exec.approvals.node.set": ExecApprovalsNodeSetParams,
    "logs.tail": LogsTailParams,
    "agents.list": EmptyParams,
    "config.get": EmptyParams,
    "cron.status": EmptyParams,
    "exec.approvals.get": EmptyParams,
}
