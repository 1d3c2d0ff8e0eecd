"""Result models: the answer of every method the bundled gateway serves, as the real
OpenClaw gateway 2026.9.6 sends it; the gateway's tests and the client both read them.

:data:`RESULTS` maps a method name to its model. Models are :class:`OpenModel` (newer
gateways add fields, which are kept); a field is required only when the reference always
sends it. Parse an answer with ``RESULTS[method].model_validate(payload)``.

Answers that are not objects: ``system-presence``, ``exec.approval.list``,
``plugin.approval.list`` and ``openclaw.approval.list`` answer an array
(:class:`~pydantic.RootModel` of dicts). Answers with no field always present (validated
only as an object): ``device.pair.setupStatus`` (``{}`` until a setup completes),
``exec.approvals.node.get``/``.set`` (the node's own answer passed through),
``node.pluginSurface.refresh``/``plugin.surface.refresh`` (this gateway hosts no plugin
surfaces and always refuses).

Where the reference's TypeBox result schema exists (``dist/*.mjs``, ``<Name>ResultSchema``)
it decides what is required; otherwise the recorded answers and what the bundled gateway
sends do.
"""

from __future__ import annotations

from pydantic import BaseModel

from openclaw_desktop.protocol.chat import ChatSendAck
from openclaw_desktop.protocol.node import NodeEventResult, NodeInvokeResponse
from openclaw_desktop.protocol.results import (
    agent,
    chat,
    control_ui,
    devices,
    nodes,
    ops,
    sessions,
    system,
    talk,
)

__all__ = ["RESULTS", "result_model"]

RESULTS: dict[str, type[BaseModel]] = {
    "health": system.HealthResult,
    "status": system.StatusResult,
    "system-presence": system.SystemPresenceResult,
    "system.info": system.SystemInfoResult,
    "update.status": system.UpdateStatusResult,
    "node.list": nodes.NodeListResult,
    "node.describe": nodes.NodeDescribeResult,
    "node.rename": nodes.NodeRenameResult,
    "node.invoke": NodeInvokeResponse,
    "node.invoke.result": nodes.NodeAckResult,
    "node.invoke.progress": nodes.NodeInvokeProgressResult,
    "node.event": NodeEventResult,
    "node.pluginTools.update": nodes.NodePluginToolsResult,
    "node.skills.update": nodes.NodeSkillsResult,
    "node.pluginSurface.refresh": nodes.NodePluginSurfaceRefreshResult,
    "node.runnerInventory.update": nodes.NodeIdResult,
    "node.pending.pull": nodes.NodePendingPullResult,
    "node.pending.drain": nodes.NodePendingDrainResult,
    "node.pending.ack": nodes.NodePendingAckResult,
    "node.pair.list": nodes.NodePairListResult,
    "node.pair.approve": nodes.NodePairResolveResult,
    "node.pair.reject": nodes.NodePairResolveResult,
    "node.pair.remove": nodes.NodeIdResult,
    "device.pair.list": devices.DevicePairListResult,
    "device.pair.approve": devices.DevicePairApproveResult,
    "device.pair.reject": devices.DevicePairRejectResult,
    "device.pair.remove": devices.DevicePairRemoveResult,
    "device.pair.rename": devices.DevicePairRenameResult,
    "device.token.rotate": devices.DeviceTokenRotateResult,
    "device.token.revoke": devices.DeviceTokenRevokeResult,
    "device.pair.setupCode": devices.DeviceSetupCodeResult,
    "device.pair.setupStatus": devices.DeviceSetupStatusResult,
    "chat.send": ChatSendAck,
    "chat.abort": chat.ChatAbortResult,
    "chat.history": chat.ChatHistoryResult,
    "chat.message.get": chat.ChatMessageGetResult,
    "chat.inject": chat.ChatInjectResult,
    "chat.metadata": chat.ChatMetadataResult,
    "chat.startup": chat.ChatStartupResult,
    "sessions.list": sessions.SessionsListResult,
    "sessions.describe": sessions.SessionsDescribeResult,
    "commands.list": sessions.CommandsListResult,
    "sessions.create": sessions.SessionsCreateResult,
    "sessions.patch": sessions.SessionsPatchResult,
    "sessions.reset": sessions.SessionsPatchResult,
    "sessions.delete": sessions.SessionsDeleteResult,
    "sessions.subscribe": sessions.SessionsSubscribeResult,
    "sessions.messages.subscribe": sessions.SessionsMessagesSubscribeResult,
    "sessions.messages.unsubscribe": sessions.SessionsMessagesSubscribeResult,
    "talk.catalog": talk.TalkCatalogResult,
    "talk.config": talk.TalkConfigResult,
    "talk.mode": talk.TalkModeResult,
    "talk.speak": talk.TalkSpeakResult,
    "talk.session.create": talk.TalkSessionCreateResult,
    "talk.session.appendAudio": talk.TalkAppendAudioResult,
    "talk.session.cancelOutput": talk.TalkCancelOutputResult,
    "talk.session.close": talk.TalkCloseResult,
    "agents.list": agent.AgentsListResult,
    "agent": agent.AgentResult,
    "agent.wait": agent.AgentWaitResult,
    "agent.identity.get": agent.AgentIdentityResult,
    "models.list": agent.ModelsListResult,
    "models.authStatus": agent.ModelsAuthStatusResult,
    "logs.tail": ops.LogsTailResult,
    "diagnostics.stability": ops.DiagnosticsStabilityResult,
    "usage.cost": ops.UsageCostResult,
    "cron.list": ops.CronListResult,
    "cron.status": ops.CronStatusResult,
    "exec.approval.list": ops.ApprovalListResult,
    "plugin.approval.list": ops.ApprovalListResult,
    "openclaw.approval.list": ops.ApprovalListResult,
    "exec.approvals.get": ops.ExecApprovalsGetResult,
    "exec.approvals.node.get": ops.ExecApprovalsNodeResult,
    "exec.approvals.node.set": ops.ExecApprovalsNodeResult,
    "config.get": ops.ConfigGetResult,
    "board.get": control_ui.BoardGetResult,
    "progressCard.get": control_ui.ProgressCardResult,
    "session.discussion.info": control_ui.SessionDiscussionInfoResult,
    "sessions.branches.list": control_ui.SessionBranchesResult,
    "sessions.companion.state": control_ui.SessionCompanionStateResult,
    "session.members.listEvidence": control_ui.SessionMembersEvidenceResult,
    "sessions.github.options": control_ui.SessionGithubOptionsResult,
    "sessions.viewers.set": control_ui.SessionViewersResult,
    "controlUi.sessionPullRequests.subscribe": control_ui.PullRequestsSubscribeResult,
    "sessions.observer.visibility": control_ui.ObserverVisibilityResult,
    "sessions.catalog.list": control_ui.SessionsCatalogListResult,
    "sessions.groups.list": control_ui.SessionsGroupsListResult,
    "sessions.groups.defaults": control_ui.SessionsGroupsDefaultsResult,
    "mentions.list": control_ui.MentionsListResult,
    "question.list": control_ui.QuestionListResult,
    "projects.list": control_ui.ProjectsListResult,
    "taskSuggestions.list": control_ui.TaskSuggestionsListResult,
    "tasks.list": control_ui.TasksListResult,
    "users.prefs.get": control_ui.UsersPrefsResult,
    "plugins.controlUi.list": control_ui.PluginsControlUiListResult,
    "plugin.surface.refresh": nodes.NodePluginSurfaceRefreshResult,
}
"""Method name -> result model, one per method the bundled gateway serves."""


def result_model(method: str) -> type[BaseModel] | None:
    """The result model of ``method`` (None for a method without one)."""
    return RESULTS.get(method)
