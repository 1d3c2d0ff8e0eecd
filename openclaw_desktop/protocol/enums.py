"""Wire strings as enums: client ids and modes, roles, scopes, caps, error codes, names;
and the WebSocket close codes the gateways use."""

from __future__ import annotations

from enum import IntEnum, StrEnum

__all__ = [
    "GOING_AWAY_CLOSE_CODES",
    "ClientCap",
    "ClientId",
    "ClientMode",
    "CloseCode",
    "ConnectErrorCode",
    "ErrorCode",
    "EventName",
    "Method",
    "NextStep",
    "NodeErrorCode",
    "OperatorScope",
    "Role",
]


class CloseCode(IntEnum):
    """WebSocket close codes (RFC 6455 section 7.4.1) as both gateways use them."""

    NORMAL = 1000
    #: The gateway shuts down.
    GOING_AWAY = 1001
    #: No protocol version in common.
    PROTOCOL_ERROR = 1002
    #: Refused: a bad handshake, auth or pairing, a slow consumer, a handshake timeout.
    POLICY_VIOLATION = 1008
    #: A frame over the size limit.
    MESSAGE_TOO_BIG = 1009
    INTERNAL_ERROR = 1011
    #: The gateway restarts.
    SERVICE_RESTART = 1012
    #: Overloaded (too many pending handshakes): try again later.
    TRY_AGAIN_LATER = 1013


#: A gateway closing on purpose and meaning to come back (shutdown, restart, overload): a
#: client says "restarting", not "connection lost".
GOING_AWAY_CLOSE_CODES = frozenset(
    {CloseCode.GOING_AWAY, CloseCode.SERVICE_RESTART, CloseCode.TRY_AGAIN_LATER}
)


class ClientId(StrEnum):
    """``connect.params.client.id`` (closed set of the real gateway)."""

    WEBCHAT_UI = "webchat-ui"
    CONTROL_UI = "openclaw-control-ui"
    BROWSER_COPILOT = "openclaw-browser-copilot"
    TUI = "openclaw-tui"
    WEBCHAT = "webchat"
    CLI = "cli"
    GATEWAY_CLIENT = "gateway-client"
    MACOS = "openclaw-macos"
    LINUX = "openclaw-linux"
    IOS = "openclaw-ios"
    WATCHOS = "openclaw-watchos"
    ANDROID = "openclaw-android"
    NODE_HOST = "node-host"
    WORKER = "openclaw-worker"
    TEST = "test"
    FINGERPRINT = "fingerprint"
    PROBE = "openclaw-probe"


class ClientMode(StrEnum):
    """``connect.params.client.mode``."""

    WEBCHAT = "webchat"
    CLI = "cli"
    UI = "ui"
    BACKEND = "backend"
    NODE = "node"
    WORKER = "worker"
    PROBE = "probe"
    TEST = "test"


class Role(StrEnum):
    """``connect.params.role``."""

    OPERATOR = "operator"
    NODE = "node"


class OperatorScope(StrEnum):
    """Operator scopes (the real gateway's ten)."""

    READ = "operator.read"
    WRITE = "operator.write"
    ADMIN = "operator.admin"
    APPROVALS = "operator.approvals"
    PAIRING = "operator.pairing"
    TALK = "operator.talk"
    TALK_SECRETS = "operator.talk.secrets"
    QUESTIONS = "operator.questions"
    SESSIONS_READ = "operator.sessions.read"
    SESSIONS_WRITE = "operator.sessions.write"


class ClientCap(StrEnum):
    """Operator client capabilities (``connect.params.caps`` of an operator)."""

    AGENT_KIND = "agent-kind"
    APPROVALS = "approvals"
    CHAT_ONLY_ASSISTANT_TEXT = "chat-only-assistant-text"
    DEVICE_PAIRING_WAIT = "device-pairing-wait"
    EXEC_APPROVALS = "exec-approvals"
    INLINE_WIDGETS = "inline-widgets"
    MODEL_CATALOG_SNAPSHOT = "model-catalog-snapshot"
    MODEL_SELECTION_POLICY = "model-selection-policy"
    RUN_TOOL_BINDINGS = "run-tool-bindings"
    SESSION_SCOPED_EVENTS = "session-scoped-events"
    PLUGIN_APPROVALS = "plugin-approvals"
    TOOL_EVENTS = "tool-events"
    UI_COMMANDS = "ui-commands"


class ErrorCode(StrEnum):
    """Top-level ``error.code`` values."""

    NOT_LINKED = "NOT_LINKED"
    NOT_PAIRED = "NOT_PAIRED"
    AGENT_TIMEOUT = "AGENT_TIMEOUT"
    AGENT_RESULT_NOT_FOUND = "AGENT_RESULT_NOT_FOUND"
    INVALID_REQUEST = "INVALID_REQUEST"
    FORBIDDEN = "FORBIDDEN"
    APPROVAL_NOT_FOUND = "APPROVAL_NOT_FOUND"
    UNAVAILABLE = "UNAVAILABLE"


class ConnectErrorCode(StrEnum):
    """``error.details.code`` values of handshake failures (and MISSING_SCOPE)."""

    AUTH_REQUIRED = "AUTH_REQUIRED"
    AUTH_UNAUTHORIZED = "AUTH_UNAUTHORIZED"
    AUTH_TOKEN_MISSING = "AUTH_TOKEN_MISSING"
    AUTH_TOKEN_MISMATCH = "AUTH_TOKEN_MISMATCH"
    AUTH_TOKEN_NOT_CONFIGURED = "AUTH_TOKEN_NOT_CONFIGURED"
    AUTH_PASSWORD_MISSING = "AUTH_PASSWORD_MISSING"
    AUTH_PASSWORD_MISMATCH = "AUTH_PASSWORD_MISMATCH"
    AUTH_PASSWORD_NOT_CONFIGURED = "AUTH_PASSWORD_NOT_CONFIGURED"
    AUTH_BOOTSTRAP_TOKEN_INVALID = "AUTH_BOOTSTRAP_TOKEN_INVALID"
    AUTH_DEVICE_TOKEN_MISMATCH = "AUTH_DEVICE_TOKEN_MISMATCH"
    AUTH_SCOPE_MISMATCH = "AUTH_SCOPE_MISMATCH"
    AUTH_RATE_LIMITED = "AUTH_RATE_LIMITED"
    AUTH_TAILSCALE_IDENTITY_MISSING = "AUTH_TAILSCALE_IDENTITY_MISSING"
    AUTH_TAILSCALE_PROXY_MISSING = "AUTH_TAILSCALE_PROXY_MISSING"
    AUTH_TAILSCALE_WHOIS_FAILED = "AUTH_TAILSCALE_WHOIS_FAILED"
    AUTH_TAILSCALE_IDENTITY_MISMATCH = "AUTH_TAILSCALE_IDENTITY_MISMATCH"
    AUTH_IDENTITY_HEADER_REQUIRED = "AUTH_IDENTITY_HEADER_REQUIRED"
    AUTH_VERIFIED_USER_REQUIRED = "AUTH_VERIFIED_USER_REQUIRED"
    AUTHENTICATED_PROFILE_UNAVAILABLE = "AUTHENTICATED_PROFILE_UNAVAILABLE"
    OPERATOR_ACCESS_DENIED = "OPERATOR_ACCESS_DENIED"
    CONTROL_UI_BUILD_MISMATCH = "CONTROL_UI_BUILD_MISMATCH"
    CONTROL_UI_ORIGIN_NOT_ALLOWED = "CONTROL_UI_ORIGIN_NOT_ALLOWED"
    PROTOCOL_MISMATCH = "PROTOCOL_MISMATCH"
    CONTROL_UI_DEVICE_IDENTITY_REQUIRED = "CONTROL_UI_DEVICE_IDENTITY_REQUIRED"
    DEVICE_IDENTITY_REQUIRED = "DEVICE_IDENTITY_REQUIRED"
    DEVICE_AUTH_INVALID = "DEVICE_AUTH_INVALID"
    DEVICE_AUTH_DEVICE_ID_MISMATCH = "DEVICE_AUTH_DEVICE_ID_MISMATCH"
    DEVICE_AUTH_SIGNATURE_EXPIRED = "DEVICE_AUTH_SIGNATURE_EXPIRED"
    DEVICE_AUTH_NONCE_REQUIRED = "DEVICE_AUTH_NONCE_REQUIRED"
    DEVICE_AUTH_NONCE_MISMATCH = "DEVICE_AUTH_NONCE_MISMATCH"
    DEVICE_AUTH_SIGNATURE_INVALID = "DEVICE_AUTH_SIGNATURE_INVALID"
    DEVICE_AUTH_PUBLIC_KEY_INVALID = "DEVICE_AUTH_PUBLIC_KEY_INVALID"
    PAIRING_REQUIRED = "PAIRING_REQUIRED"
    PAIRING_REJECTED = "PAIRING_REJECTED"
    PAIRING_EXPIRED = "PAIRING_EXPIRED"
    CLIENT_VERSION_MISMATCH = "CLIENT_VERSION_MISMATCH"
    MISSING_SCOPE = "MISSING_SCOPE"


class NextStep(StrEnum):
    """``error.details.recommendedNextStep``."""

    RETRY_WITH_DEVICE_TOKEN = "retry_with_device_token"
    UPDATE_AUTH_CONFIGURATION = "update_auth_configuration"
    UPDATE_AUTH_CREDENTIALS = "update_auth_credentials"
    WAIT_THEN_RETRY = "wait_then_retry"
    REVIEW_AUTH_CONFIGURATION = "review_auth_configuration"


class NodeErrorCode(StrEnum):
    """Error codes a node returns in ``node.invoke.result``."""

    INVALID_REQUEST = "INVALID_REQUEST"
    UNAVAILABLE = "UNAVAILABLE"
    TIMEOUT = "TIMEOUT"
    NOT_AUTHORIZED = "NOT_AUTHORIZED"
    CAMERA_DISABLED = "CAMERA_DISABLED"
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    NODE_BACKGROUND_UNAVAILABLE = "NODE_BACKGROUND_UNAVAILABLE"
    CANCELLED = "CANCELLED"


class Method(StrEnum):
    """Every RPC method name this code base knows, sorted by wire name: each method the
    bundled gateway serves (``gateway.methods.TABLE``, listed in ``hello-ok`` or not),
    ``connect``, and the real gateway's methods the client calls that the bundled one does
    not serve (``tools.*``, ``artifacts.*``, the approval resolves).

    A member's name is its wire name with camelCase split, dots and dashes made ``_``, in
    upper case (``node.pluginTools.update`` is ``NODE_PLUGIN_TOOLS_UPDATE``).
    """

    AGENT = "agent"
    AGENT_IDENTITY_GET = "agent.identity.get"
    AGENT_WAIT = "agent.wait"
    AGENTS_LIST = "agents.list"
    ARTIFACTS_GET = "artifacts.get"
    ARTIFACTS_LIST = "artifacts.list"
    BOARD_GET = "board.get"
    CHAT_ABORT = "chat.abort"
    CHAT_HISTORY = "chat.history"
    CHAT_INJECT = "chat.inject"
    CHAT_MESSAGE_GET = "chat.message.get"
    CHAT_METADATA = "chat.metadata"
    CHAT_SEND = "chat.send"
    CHAT_STARTUP = "chat.startup"
    COMMANDS_LIST = "commands.list"
    CONFIG_GET = "config.get"
    CONNECT = "connect"
    CONTROL_UI_SESSION_PULL_REQUESTS_SUBSCRIBE = "controlUi.sessionPullRequests.subscribe"
    CRON_LIST = "cron.list"
    CRON_STATUS = "cron.status"
    DEVICE_PAIR_APPROVE = "device.pair.approve"
    DEVICE_PAIR_LIST = "device.pair.list"
    DEVICE_PAIR_REJECT = "device.pair.reject"
    DEVICE_PAIR_REMOVE = "device.pair.remove"
    DEVICE_PAIR_RENAME = "device.pair.rename"
    DEVICE_PAIR_SETUP_CODE = "device.pair.setupCode"
    DEVICE_PAIR_SETUP_STATUS = "device.pair.setupStatus"
    DEVICE_TOKEN_REVOKE = "device.token.revoke"
    DEVICE_TOKEN_ROTATE = "device.token.rotate"
    DIAGNOSTICS_STABILITY = "diagnostics.stability"
    EXEC_APPROVAL_LIST = "exec.approval.list"
    EXEC_APPROVAL_RESOLVE = "exec.approval.resolve"
    EXEC_APPROVALS_GET = "exec.approvals.get"
    EXEC_APPROVALS_NODE_GET = "exec.approvals.node.get"
    EXEC_APPROVALS_NODE_SET = "exec.approvals.node.set"
    HEALTH = "health"
    LOGS_TAIL = "logs.tail"
    MENTIONS_LIST = "mentions.list"
    MODELS_AUTH_STATUS = "models.authStatus"
    MODELS_LIST = "models.list"
    NODE_DESCRIBE = "node.describe"
    NODE_EVENT = "node.event"
    NODE_INVOKE = "node.invoke"
    NODE_INVOKE_PROGRESS = "node.invoke.progress"
    NODE_INVOKE_RESULT = "node.invoke.result"
    NODE_LIST = "node.list"
    NODE_PAIR_APPROVE = "node.pair.approve"
    NODE_PAIR_LIST = "node.pair.list"
    NODE_PAIR_REJECT = "node.pair.reject"
    NODE_PAIR_REMOVE = "node.pair.remove"
    NODE_PENDING_ACK = "node.pending.ack"
    NODE_PENDING_DRAIN = "node.pending.drain"
    NODE_PENDING_PULL = "node.pending.pull"
    NODE_PLUGIN_SURFACE_REFRESH = "node.pluginSurface.refresh"
    NODE_PLUGIN_TOOLS_UPDATE = "node.pluginTools.update"
    NODE_RENAME = "node.rename"
    NODE_RUNNER_INVENTORY_UPDATE = "node.runnerInventory.update"
    NODE_SKILLS_UPDATE = "node.skills.update"
    OPENCLAW_APPROVAL_LIST = "openclaw.approval.list"
    PLUGIN_APPROVAL_LIST = "plugin.approval.list"
    PLUGIN_APPROVAL_RESOLVE = "plugin.approval.resolve"
    PLUGIN_SURFACE_REFRESH = "plugin.surface.refresh"
    PLUGINS_CONTROL_UI_LIST = "plugins.controlUi.list"
    PROGRESS_CARD_GET = "progressCard.get"
    PROJECTS_LIST = "projects.list"
    QUESTION_LIST = "question.list"
    SESSION_DISCUSSION_INFO = "session.discussion.info"
    SESSION_MEMBERS_LIST_EVIDENCE = "session.members.listEvidence"
    SESSIONS_BRANCHES_LIST = "sessions.branches.list"
    SESSIONS_CATALOG_LIST = "sessions.catalog.list"
    SESSIONS_COMPANION_STATE = "sessions.companion.state"
    SESSIONS_CREATE = "sessions.create"
    SESSIONS_DELETE = "sessions.delete"
    SESSIONS_DESCRIBE = "sessions.describe"
    SESSIONS_GITHUB_OPTIONS = "sessions.github.options"
    SESSIONS_GROUPS_DEFAULTS = "sessions.groups.defaults"
    SESSIONS_GROUPS_LIST = "sessions.groups.list"
    SESSIONS_LIST = "sessions.list"
    SESSIONS_MESSAGES_SUBSCRIBE = "sessions.messages.subscribe"
    SESSIONS_MESSAGES_UNSUBSCRIBE = "sessions.messages.unsubscribe"
    SESSIONS_OBSERVER_VISIBILITY = "sessions.observer.visibility"
    SESSIONS_PATCH = "sessions.patch"
    SESSIONS_RESET = "sessions.reset"
    SESSIONS_SUBSCRIBE = "sessions.subscribe"
    SESSIONS_VIEWERS_SET = "sessions.viewers.set"
    STATUS = "status"
    SYSTEM_PRESENCE = "system-presence"
    SYSTEM_INFO = "system.info"
    TALK_CATALOG = "talk.catalog"
    TALK_CONFIG = "talk.config"
    TALK_MODE = "talk.mode"
    TALK_SESSION_APPEND_AUDIO = "talk.session.appendAudio"
    TALK_SESSION_CANCEL_OUTPUT = "talk.session.cancelOutput"
    TALK_SESSION_CLOSE = "talk.session.close"
    TALK_SESSION_CREATE = "talk.session.create"
    TALK_SPEAK = "talk.speak"
    TASK_SUGGESTIONS_LIST = "taskSuggestions.list"
    TASKS_LIST = "tasks.list"
    TOOLS_CATALOG = "tools.catalog"
    TOOLS_INVOKE = "tools.invoke"
    UPDATE_STATUS = "update.status"
    USAGE_COST = "usage.cost"
    USERS_PREFS_GET = "users.prefs.get"


class EventName(StrEnum):
    """Every event the gateway sends (``openclaw_desktop.protocol.events``): the ones
    ``hello-ok.features.events`` lists, in its order, then the unadvertised ones. Member
    names follow :class:`Method`'s rule."""

    CONNECT_CHALLENGE = "connect.challenge"
    TICK = "tick"
    PRESENCE = "presence"
    HEALTH = "health"
    SHUTDOWN = "shutdown"
    NODE_INVOKE_REQUEST = "node.invoke.request"
    NODE_INVOKE_CANCEL = "node.invoke.cancel"
    NODE_PAIR_REQUESTED = "node.pair.requested"
    NODE_PAIR_RESOLVED = "node.pair.resolved"
    NODE_HOST_STATS = "node.hostStats"
    DEVICE_PAIR_REQUESTED = "device.pair.requested"
    DEVICE_PAIR_RESOLVED = "device.pair.resolved"
    CHAT = "chat"
    AGENT = "agent"
    SESSIONS_CHANGED = "sessions.changed"
    SESSION_MESSAGE = "session.message"
    SESSION_COMPACTED = "session.compacted"
    TALK_MODE = "talk.mode"
    TALK_EVENT = "talk.event"
    # unadvertised (the real gateway sends it without listing it)
    CHAT_SEND_TIMING = "chat.send_timing"
