"""Results of the Control UI methods: the per-session panels (board, progress card,
branches, members...) and the sidebar lists (catalogs, groups, mentions, tasks...).

The rows are the Control UI's to read, not this client's, so they stay dicts.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from openclaw_desktop.protocol.base import OpenModel

__all__ = [
    "RESULTS",
    "BoardGetResult",
    "MentionsListResult",
    "ObserverVisibilityResult",
    "PluginsControlUiListResult",
    "ProgressCardResult",
    "ProjectsListResult",
    "PullRequestsSubscribeResult",
    "QuestionListResult",
    "SessionBranchesResult",
    "SessionCompanionStateResult",
    "SessionDiscussionInfoResult",
    "SessionGithubOptionsResult",
    "SessionMembersEvidenceResult",
    "SessionViewersResult",
    "SessionsCatalogListResult",
    "SessionsGroupsDefaultsResult",
    "SessionsGroupsListResult",
    "TaskSuggestionsListResult",
    "TasksListResult",
    "UsersPrefsResult",
]


class BoardGetResult(OpenModel):
    """``board.get``: ``{sessionKey, revision, tabs, widgets}``."""

    session_key: str
    revision: int
    tabs: list[dict[str, Any]]
    widgets: list[dict[str, Any]]


class ProgressCardResult(OpenModel):
    """``progressCard.get``: ``{card}`` (null without one)."""

    card: dict[str, Any] | None


class SessionDiscussionInfoResult(OpenModel):
    """``session.discussion.info``: ``{state: "none"}`` for a session without a discussion
    (what the real gateway answers live, and all this gateway answers), else
    ``{agentId?, sessionKeys}`` (the discussion's sessions: its TypeBox result schema)."""

    state: str | None = None
    session_keys: list[str] | None = None
    agent_id: str | None = None


class SessionBranchesResult(OpenModel):
    """``sessions.branches.list``: ``{branches}``."""

    branches: list[dict[str, Any]]


class SessionCompanionStateResult(OpenModel):
    """``sessions.companion.state``: ``{exchanges}``."""

    exchanges: list[dict[str, Any]]


class SessionMembersEvidenceResult(OpenModel):
    """``session.members.listEvidence``: the owner, members and who may see the session."""

    session_key: str
    members: list[dict[str, Any]]
    identities: list[dict[str, Any]]
    role: str
    allowed_visibilities: list[str]
    owner: dict[str, Any] | None = None
    public_share: dict[str, Any] | None = None


class SessionGithubOptionsResult(OpenModel):
    """``sessions.github.options``: ``{personal, shared, pendingPersonal, latestShared}``,
    each null when unset."""

    personal: dict[str, Any] | None
    shared: dict[str, Any] | None
    pending_personal: dict[str, Any] | None
    latest_shared: dict[str, Any] | None


class SessionViewersResult(OpenModel):
    """``sessions.viewers.set``: ``{sessionKeys}`` (canonical keys)."""

    session_keys: list[str]


class PullRequestsSubscribeResult(OpenModel):
    """``controlUi.sessionPullRequests.subscribe``: ``{subscribed}``."""

    subscribed: bool


class ObserverVisibilityResult(OpenModel):
    """``sessions.observer.visibility``: ``{ok}``."""

    ok: Literal[True]


class SessionsCatalogListResult(OpenModel):
    """``sessions.catalog.list``: ``{catalogs}``."""

    catalogs: list[dict[str, Any]]


class SessionsGroupsListResult(OpenModel):
    """``sessions.groups.list``: ``{groups, sectionOrder}``."""

    groups: list[dict[str, Any]]
    section_order: list[Any] | None = None


class SessionsGroupsDefaultsResult(OpenModel):
    """``sessions.groups.defaults``: ``{defaults}``."""

    defaults: list[dict[str, Any]]


class MentionsListResult(OpenModel):
    """``mentions.list``: ``{gatewayInstanceId, revision, items}``."""

    gateway_instance_id: str
    revision: int
    items: list[dict[str, Any]]


class QuestionListResult(OpenModel):
    """``question.list``: ``{questions}``."""

    questions: list[dict[str, Any]]


class ProjectsListResult(OpenModel):
    """``projects.list``: ``{projects, recents}``."""

    projects: list[dict[str, Any]]
    recents: list[dict[str, Any]] | None = None
    observed_projects: list[dict[str, Any]] | None = None


class TaskSuggestionsListResult(OpenModel):
    """``taskSuggestions.list``: ``{suggestions}``."""

    suggestions: list[dict[str, Any]]


class TasksListResult(OpenModel):
    """``tasks.list``: ``{tasks}``."""

    tasks: list[dict[str, Any]]
    next_cursor: str | None = None


class UsersPrefsResult(OpenModel):
    """``users.prefs.get``: ``{status: ok, entries}`` or ``{status: no_durable_identity}``."""

    status: str
    entries: dict[str, Any] | None = None


class PluginsControlUiListResult(OpenModel):
    """``plugins.controlUi.list``: ``{revision, plugins, diagnostics}``."""

    revision: str
    plugins: list[dict[str, Any]]
    diagnostics: list[Any] | None = None


RESULTS: dict[str, type[BaseModel]] = {
    "board.get": BoardGetResult,
    "progressCard.get": ProgressCardResult,
    "session.discussion.info": SessionDiscussionInfoResult,
    "sessions.branches.list": SessionBranchesResult,
    "sessions.companion.state": SessionCompanionStateResult,
    "session.members.listEvidence": SessionMembersEvidenceResult,
    "sessions.github.options": SessionGithubOptionsResult,
    "sessions.viewers.set": SessionViewersResult,
    "controlUi.sessionPullRequests.subscribe": PullRequestsSubscribeResult,
    "sessions.observer.visibility": ObserverVisibilityResult,
    "sessions.catalog.list": SessionsCatalogListResult,
    "sessions.groups.list": SessionsGroupsListResult,
    "sessions.groups.defaults": SessionsGroupsDefaultsResult,
    "mentions.list": MentionsListResult,
    "question.list": QuestionListResult,
    "projects.list": ProjectsListResult,
    "taskSuggestions.list": TaskSuggestionsListResult,
    "tasks.list": TasksListResult,
    "users.prefs.get": UsersPrefsResult,
    "plugins.controlUi.list": PluginsControlUiListResult,
}
"""Method name -> result model, for the control_ui family's methods."""
