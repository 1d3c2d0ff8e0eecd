"""The params of the methods the real Control UI calls on its normal path (``board.get``,
``chat.startup``, ``tasks.list``, ``system.info``, ...), in the reference's property order.

Where the reference's schema says more than a params model can (a ``not``, a union of two
objects, the items of an array, a nested union), the model says what it can and its
docstring names the rule the gateway's handler checks after it, in the reference's words.
``plugin.surface.refresh`` and ``controlUi.sessionPullRequests.subscribe`` have no schema in
the reference: its handlers read the params themselves and refuse in one sentence each, so
their models are read by hand (:mod:`~openclaw_desktop.protocol.methods.lenient`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from openclaw_desktop.protocol.base import ClosedModel, WireModel
from openclaw_desktop.protocol.methods.lenient import (
    LenientParams,
    ParamsRefused,
    js_trim,
    optional_string,
)
from openclaw_desktop.protocol.methods.ops import EmptyParams
from openclaw_desktop.protocol.methods.schema import AS_ENUM, UNIQUE, NotTogether

__all__ = [
    "PARAMS",
    "AgentIdentityGetParams",
    "ChatMetadataParams",
    "ChatStartupParams",
    "ChatStartupShortLinkParams",
    "PluginSurfaceRefreshParams",
    "ProjectsListParams",
    "PullRequestSubscription",
    "SessionPullRequestsSubscribeParams",
    "SessionTargetParams",
    "SessionsCatalogListParams",
    "SessionsGithubOptionsParams",
    "SessionsObserverVisibilityParams",
    "SessionsViewersSetParams",
    "TaskSuggestionsListParams",
    "TasksListParams",
    "UpdateStatusParams",
    "UsersPrefsGetParams",
]

NonEmpty = Annotated[str, Field(min_length=1)]
#: ``users.prefs.get`` ``keys`` items: 1 to 256 characters, as the reference's pattern says.
PREF_KEY_PATTERN = "^.{1,256}$"


class AgentIdentityGetParams(ClosedModel):
    """``agent.identity.get``: whose display identity (the default agent's when unnamed)."""

    agent_id: NonEmpty | None = None
    session_key: str | None = None


class ChatMetadataParams(ClosedModel):
    """``chat.metadata``: not a ``sessionKey`` with an ``authProfileId`` (the reference's
    ``not: {required: [sessionKey, authProfileId]}``)."""

    NOT_TOGETHER: ClassVar[tuple[NotTogether, ...]] = (
        NotTogether(("session_key", "auth_profile_id")),
    )

    agent_id: NonEmpty | None = None
    auth_profile_id: Annotated[str | None, Field(min_length=1, max_length=256)] = None
    session_key: NonEmpty | None = None


class ChatStartupParams(ClosedModel):
    """``chat.startup``'s first branch: chat.history's params (what the Control UI sends).

    The reference's schema is the union (``anyOf``) of this and
    :class:`ChatStartupShortLinkParams`; the gateway's handler checks the union.
    """

    session_key: NonEmpty
    agent_id: NonEmpty | None = None
    cursor: str | None = None
    limit: Annotated[int | None, Field(ge=1, le=1000)] = None
    max_bytes: Annotated[int | None, Field(ge=1024)] = None
    offset: Annotated[int | None, Field(ge=0)] = None
    pending_before: Annotated[int | None, Field(ge=1)] = None
    input_run_ids: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=256)]] | None,
        Field(min_length=1, max_length=50),
        UNIQUE,
    ] = None
    message_id: NonEmpty | None = None
    session_id: NonEmpty | None = None
    max_chars: Annotated[int | None, Field(ge=1, le=500_000)] = None


class ChatStartupShortLinkParams(ClosedModel):
    """``chat.startup``'s second branch: a short chat link (``shortId`` of the agent)."""

    short_id: NonEmpty
    slug_hint: NonEmpty | None = None
    agent_id: NonEmpty
    limit: Annotated[int | None, Field(ge=1, le=1000)] = None
    max_bytes: Annotated[int | None, Field(ge=1024)] = None


class SessionTargetParams(ClosedModel):
    """``{sessionKey, agentId?}``: the target of the per-session reads (``board.get``,
    ``progressCard.get``, ``session.discussion.info``, ``sessions.branches.list``,
    ``sessions.companion.state``, ``session.members.listEvidence``)."""

    session_key: NonEmpty
    agent_id: NonEmpty | None = None


class SessionsGithubOptionsParams(ClosedModel):
    """``sessions.github.options``: a session's GitHub publication options."""

    session_key: NonEmpty
    agent_id: NonEmpty | None = None
    idempotency_key: NonEmpty | None = None


class SessionsViewersSetParams(ClosedModel):
    """``sessions.viewers.set``: the sessions a connection shows (at most 32)."""

    agent_id: NonEmpty | None = None
    session_keys: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=512)]], Field(max_length=32)
    ]


class SessionsObserverVisibilityParams(ClosedModel):
    """``sessions.observer.visibility``: whether the connection's page is visible."""

    visible: bool


class SessionsCatalogListParams(ClosedModel):
    """``sessions.catalog.list``: external session catalogues. The values of ``cursors``
    (strings) are not checked here."""

    catalog_id: NonEmpty | None = None
    metadata_only: bool | None = None
    cursors: dict[str, str] | None = None
    agent_id: NonEmpty | None = None
    progress_id: Annotated[str | None, Field(min_length=1, max_length=128)] = None
    allow_partial_results: bool | None = None
    search: str | None = None
    limit_per_host: Annotated[int | None, Field(ge=1)] = None
    host_ids: list[NonEmpty] | None = None


class ProjectsListParams(ClosedModel):
    """``projects.list``: the agent's projects (and the observed ones when asked)."""

    include_observed: bool | None = None


class TaskSuggestionsListParams(ClosedModel):
    """``taskSuggestions.list``: suggested tasks, for a session or an agent."""

    session_key: Annotated[str | None, Field(min_length=1, max_length=512)] = None
    agent_id: Annotated[str | None, Field(min_length=1, max_length=128)] = None


#: A task's status as ``tasks.list`` filters on it.
TaskStatus = Literal["queued", "running", "completed", "failed", "cancelled", "timed_out"]


class TasksListParams(ClosedModel):
    """``tasks.list``: the task ledger, filtered. ``status`` is a :data:`TaskStatus` or a
    list of them (``anyOf`` of the two, as the reference declares it)."""

    status: TaskStatus | list[TaskStatus] | None = None
    agent_id: NonEmpty | None = None
    session_key: NonEmpty | None = None
    limit: Annotated[int | None, Field(ge=1, le=500)] = None
    cursor: Annotated[str | None, Field(max_length=512)] = None
    sort_by: Annotated[Literal["updatedAt", "endedAt"] | None, AS_ENUM] = None


class UsersPrefsGetParams(ClosedModel):
    """``users.prefs.get``: which saved UI preferences (at most 32 unique keys)."""

    keys: Annotated[
        list[Annotated[str, Field(pattern=PREF_KEY_PATTERN)]] | None, Field(max_length=32), UNIQUE
    ] = None


class UpdateStatusParams(ClosedModel):
    """``update.status``: the update sentinel (``refreshCheckout`` re-reads a checkout)."""

    refresh_checkout: bool | None = None


class PluginSurfaceRefreshParams(LenientParams):
    """``plugin.surface.refresh``: any params served; ``surface`` (a non-blank string,
    trimmed) names the surface, ``observedUrl`` the URL the caller saw (:meth:`surface_name`)."""

    surface: Any = None
    observed_url: Any = None

    def surface_name(self) -> str:
        """The surface trimmed, or :class:`ParamsRefused` ``surface required``."""
        name = optional_string(self.surface)
        if name is None:
            raise ParamsRefused("surface required")
        return name


#: ``controlUi.sessionPullRequests.subscribe``: the most keys a list holds, the longest key.
PR_MAX_KEYS = 200
PR_MAX_KEY_LENGTH = 512


@dataclass(frozen=True)
class PullRequestSubscription:
    """The sessions whose pull requests a connection follows (``session_keys``, trimmed,
    without repeats), and those of them it wants refreshed at once."""

    session_keys: list[str]
    refresh_session_keys: list[str]


def _pr_keys(value: Any) -> list[str] | None:
    """A list of at most 200 non-blank strings of at most 512 UTF-16 units (trimmed),
    without repeats; None for anything else."""
    if not isinstance(value, list) or len(value) > PR_MAX_KEYS:
        return None
    keys: list[str] = []
    for entry in value:
        key = js_trim(entry) if isinstance(entry, str) else ""
        if not key or len(key.encode("utf-16-le", "surrogatepass")) // 2 > PR_MAX_KEY_LENGTH:
            return None
        keys.append(key)
    return list(dict.fromkeys(keys))


class SessionPullRequestsSubscribeParams(LenientParams):
    """``controlUi.sessionPullRequests.subscribe``: any params read; ``sessionKeys`` (must be
    given) and ``refreshSessionKeys`` (absent: none; each one of ``sessionKeys``) read as
    the reference reads them (:meth:`subscription`)."""

    session_keys: Any = None
    refresh_session_keys: Any = None

    def subscription(self) -> PullRequestSubscription:
        """The keys, or :class:`ParamsRefused` with the reference's one sentence for every
        problem (``invalid controlUi.sessionPullRequests.subscribe params``)."""
        refused = ParamsRefused("invalid controlUi.sessionPullRequests.subscribe params")
        if not self.given("session_keys"):
            raise refused
        keys = _pr_keys(self.session_keys)
        # Absent is none; null is not a list (the reference tells undefined from null).
        given = self.given("refresh_session_keys")
        refresh = _pr_keys(self.refresh_session_keys) if given else []
        if keys is None or refresh is None or not set(refresh) <= set(keys):
            raise refused
        return PullRequestSubscription(keys, refresh)


#: The params model of each of these methods, by method name.
PARAMS: dict[str, type[WireModel]] = {
    "agent.identity.get": AgentIdentityGetParams,
    "chat.metadata": ChatMetadataParams,
    "chat.startup": ChatStartupParams,
    "board.get": SessionTargetParams,
    "progressCard.get": SessionTargetParams,
    "session.discussion.info": SessionTargetParams,
    "sessions.branches.list": SessionTargetParams,
    "sessions.companion.state": SessionTargetParams,
    "session.members.listEvidence": SessionTargetParams,
    "sessions.github.options": SessionsGithubOptionsParams,
    "sessions.viewers.set": SessionsViewersSetParams,
    "sessions.observer.visibility": SessionsObserverVisibilityParams,
    "sessions.catalog.list": SessionsCatalogListParams,
    "sessions.groups.list": EmptyParams,
    "sessions.groups.defaults": EmptyParams,
    "mentions.list": EmptyParams,
    "question.list": EmptyParams,
    "projects.list": ProjectsListParams,
    "taskSuggestions.list": TaskSuggestionsListParams,
    "tasks.list": TasksListParams,
    "users.prefs.get": UsersPrefsGetParams,
    "plugins.controlUi.list": EmptyParams,
    "system.info": EmptyParams,
    "update.status": UpdateStatusParams,
    "plugin.surface.refresh": PluginSurfaceRefreshParams,
    "controlUi.sessionPullRequests.subscribe": SessionPullRequestsSubscribeParams,
}
