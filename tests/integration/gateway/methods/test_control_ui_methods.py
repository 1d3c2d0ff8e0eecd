"""The Control UI methods of the bundled gateway (gateway.methods.control_ui) over real
loopback WebSockets, with our fake model server over real HTTP.

The expected wordings and shapes are the real gateway 2026.9.6's, captured side by side
(``tests/interop/test_control_ui_methods_side_by_side.py``); the real web app walking them
is ``tests/interop/test_control_ui_real_client.py``.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest

from gateway.methods import TABLE
from tests.helpers.bundled_gateway import raw_operator
from tests.integration.gateway.chat.test_gw_chat_runs import chat_gateway

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("no_ambient_providers")]

#: The reference's scope for each Control UI method (its method-scope table).
REAL_SCOPES = {
    "agent.identity.get": "operator.read",
    "board.get": "operator.read",
    "chat.metadata": "operator.read",
    "chat.startup": "operator.read",
    "controlUi.sessionPullRequests.subscribe": "operator.read",
    "mentions.list": "operator.read",
    "plugin.surface.refresh": "operator.read",
    "plugins.controlUi.list": "operator.read",
    "progressCard.get": "operator.read",
    "projects.list": "operator.read",
    "question.list": "operator.questions",
    "session.discussion.info": "operator.read",
    "session.members.listEvidence": "operator.read",
    "sessions.branches.list": "operator.read",
    "sessions.catalog.list": "operator.read",
    "sessions.companion.state": "operator.read",
    "sessions.github.options": "operator.read",
    "sessions.groups.defaults": "operator.write",
    "sessions.groups.list": "operator.read",
    "sessions.observer.visibility": "operator.read",
    "sessions.viewers.set": "operator.read",
    "system.info": "operator.read",
    "taskSuggestions.list": "operator.read",
    "tasks.list": "operator.read",
    "update.status": "operator.admin",
    "users.prefs.get": "operator.read",
}
INVALID = "INVALID_REQUEST"
FEWER_THAN_1 = "must not have fewer than 1 characters"
#: Calls with nothing to list here, and the empty answer (the real gateway's shape).
EMPTY: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "board.get",
        {"sessionKey": "main"},
        {"sessionKey": "agent:main:main", "revision": 0, "tabs": [], "widgets": []},
    ),
    ("progressCard.get", {"sessionKey": "main"}, {"card": None}),
    ("session.discussion.info", {"sessionKey": "main"}, {"state": "none"}),
    ("sessions.branches.list", {"sessionKey": "main"}, {"branches": []}),
    ("sessions.companion.state", {"sessionKey": "main"}, {"exchanges": []}),
    ("sessions.catalog.list", {"agentId": "main", "limitPerHost": 40}, {"catalogs": []}),
    ("sessions.groups.list", {}, {"groups": [], "sectionOrder": []}),
    ("sessions.groups.defaults", {}, {"defaults": []}),
    ("question.list", {}, {"questions": []}),
    ("projects.list", {}, {"projects": [], "recents": []}),
    ("taskSuggestions.list", {"agentId": "main"}, {"suggestions": []}),
    ("tasks.list", {"status": ["queued", "running"], "limit": 200}, {"tasks": []}),
    ("sessions.observer.visibility", {"visible": True}, {"ok": True}),
    ("controlUi.sessionPullRequests.subscribe", {"sessionKeys": []}, {"subscribed": False}),
    ("controlUi.sessionPullRequests.subscribe", {"sessionKeys": ["main"]}, {"subscribed": True}),
    ("users.prefs.get", {"keys": ["ui.theme"]}, {"status": "ok", "entries": {}}),
    ("update.status", {}, {"sentinel": None, "updateAvailable": None}),
]
#: Bad params and the reference's answer (code, message); ``@`` stands for
#: ``invalid <method> params: ``.
REFUSED: list[tuple[str, dict[str, Any], str, str]] = [
    ("agent.identity.get", {"agentId": ""}, INVALID, "@at /agentId: " + FEWER_THAN_1),
    ("board.get", {}, INVALID, "@must have required property 'sessionKey'"),
    ("board.get", {"sessionKey": "main", "agentId": "nope"}, INVALID, 'Unknown agent id "nope"'),
    ("chat.metadata", {"sessionKey": "main", "authProfileId": "x"}, INVALID, "@must not be valid"),
    (
        "chat.startup",
        {},
        INVALID,
        "@must have required property 'sessionKey'; must have required property 'shortId'; "
        "must match a schema in anyOf",
    ),
    (
        "chat.startup",
        {"sessionKey": "main", "limit": 0},
        INVALID,
        "@at /limit: must be >= 1; must have required property 'shortId'; "
        "at root: unexpected property 'sessionKey'; must match a schema in anyOf",
    ),
    (
        "chat.startup",
        {"shortId": "x", "agentId": "main"},
        INVALID,
        "shortId must be 8-32 hexadecimal characters",
    ),
    (
        "controlUi.sessionPullRequests.subscribe",
        {"sessionKeys": "x"},
        INVALID,
        "invalid controlUi.sessionPullRequests.subscribe params",
    ),
    ("plugin.surface.refresh", {}, INVALID, "surface required"),
    (
        "plugin.surface.refresh",
        {"surface": "canvas"},
        "UNAVAILABLE",
        "canvas plugin surface unavailable",
    ),
    ("session.members.listEvidence", {"sessionKey": "unused"}, INVALID, "unknown session: unused"),
    (
        "sessions.github.options",
        {"sessionKey": "unused"},
        "FORBIDDEN",
        "GitHub publication session was not found.",
    ),
    ("sessions.observer.visibility", {"visible": "x"}, INVALID, "@at /visible: must be boolean"),
    (
        "sessions.viewers.set",
        {"sessionKeys": [" "]},
        INVALID,
        "invalid sessions.viewers.set params",
    ),
    ("system.info", {"x": 1}, INVALID, "@at root: unexpected property 'x'"),
    (
        "tasks.list",
        {"status": "bogus"},
        INVALID,
        "@at /status: must be equal to constant; at /status: must match a schema in anyOf; "
        "at /status: must be array",
    ),
    (
        "tasks.list",
        {"sortBy": "x"},
        INVALID,
        "@at /sortBy: must be equal to one of the allowed values",
    ),
    ("users.prefs.get", {"keys": [""]}, INVALID, '@at /keys/0: must match pattern "^.{1,256}$"'),
    ("users.prefs.get", {"keys": ["a", "a"]}, INVALID, "@at /keys: must not have duplicate items"),
    (
        "chat.history",
        {"sessionKey": "main", "maxBytes": 10},
        INVALID,
        "@at /maxBytes: must be >= 1024",
    ),
]


def _text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def test_scopes_are_the_reference_ones() -> None:
    """Each Control UI method is declared with the real gateway's scope."""
    assert {name: TABLE[name].scope for name in REAL_SCOPES} == REAL_SCOPES


async def test_empty_catalogues_answer_the_real_shape(tmp_path: Path) -> None:
    """What this gateway has none of is answered with the reference's empty result."""
    async with chat_gateway(tmp_path) as chat:
        for method, params, expected in EMPTY:
            assert await chat.op.ok(method, params) == expected, method


async def test_bad_params_are_refused_in_the_reference_words(tmp_path: Path) -> None:
    """Each refusal has the real gateway's code and message, and the gateway goes on."""
    async with chat_gateway(tmp_path) as chat:
        for method, params, code, message in REFUSED:
            error = await chat.op.error(method, params)
            expected = message.replace("@", f"invalid {method} params: ", 1)
            assert (error["code"], error["message"]) == (code, expected), method
        assert (await chat.op.ok("sessions.groups.list", {}))["groups"] == []


async def test_chat_startup_is_the_first_page_with_the_model_defaults(tmp_path: Path) -> None:
    """After a run, chat.startup (as the web app calls it) has the turn and the defaults."""
    async with chat_gateway(tmp_path) as chat:
        run_id = await chat.send("hello startup")
        await chat.finished(run_id)
        page = await chat.op.ok(
            "chat.startup", {"sessionKey": "agent:main:main", "limit": 80, "maxBytes": 262144}
        )
        texts = [_text(m) for m in page["messages"]]
        assert texts == ["hello startup", "FAKE-LLM reply #1: hello startup"]
        assert page["totalMessages"] == 2 and page["hasMore"] is False
        assert page["defaults"] == {
            "modelProvider": "fake",
            "model": "fake-model",
            "contextTokens": 128_000,
            "modelSelectionTarget": "session",
        }
        info = page["sessionInfo"]
        assert info["key"] == "agent:main:main" and info["hasActiveRun"] is False
        assert info["activeRunIds"] == []
        # Later pages are chat.history's, with the web app's extra params accepted.
        history = await chat.op.ok(
            "chat.history", {"sessionKey": "agent:main:main", "inputRunIds": [run_id]}
        )
        assert history["totalMessages"] == 2


async def test_chat_metadata_lists_the_configured_models_and_commands(tmp_path: Path) -> None:
    """The fake model, tagged default; the chat's own slash commands."""
    async with chat_gateway(tmp_path) as chat:
        meta = await chat.op.ok("chat.metadata", {"agentId": "main", "sessionKey": "main"})
        assert meta["models"] == [
            {
                "id": "fake-model",
                "name": "Fake Model",
                "provider": "fake",
                "contextWindow": 128_000,
                "reasoning": False,
                "tags": ["default"],
                "thinkingLevels": [{"id": "off", "label": "off"}],
                "thinkingDefault": "off",
                "available": True,
            }
        ]
        names = [c["name"] for c in meta["commands"]]
        assert "help" in names and all(
            c["textAliases"] == [f"/{c['name']}"] for c in meta["commands"]
        )
        assert meta["runtimeSelectionLocked"] is False
        assert "runtimeSelectionLocked" not in await chat.op.ok("chat.metadata", {})


async def test_identity_sessions_and_viewers(tmp_path: Path) -> None:
    """Our one agent's default identity; a used session's owner evidence; canonical keys."""
    async with chat_gateway(tmp_path) as chat:
        identity = await chat.op.ok("agent.identity.get", {"agentId": "main"})
        assert identity == {
            "agentId": "main",
            "name": "Assistant",
            "nameSource": "default",
            "avatar": "A",
        }
        run_id = await chat.send("hello members")
        await chat.finished(run_id)
        evidence = await chat.op.ok("session.members.listEvidence", {"sessionKey": "main"})
        assert evidence["sessionKey"] == "agent:main:main"
        assert evidence["members"] == [] and evidence["owner"]["id"] == "gateway-owner"
        github = await chat.op.ok("sessions.github.options", {"sessionKey": "main"})
        assert github == {
            "personal": None,
            "shared": None,
            "pendingPersonal": None,
            "latestShared": None,
        }
        viewers = await chat.op.ok(
            "sessions.viewers.set", {"sessionKeys": ["main", "agent:main:x"]}
        )
        assert viewers == {"sessionKeys": ["agent:main:main", "agent:main:x"]}
        mentions = await chat.op.ok("mentions.list", {})
        assert mentions == {"gatewayInstanceId": chat.gw.app.boot_id, "revision": 0, "items": []}
        plugins = await chat.op.ok("plugins.controlUi.list", {})
        assert plugins["plugins"] == [] and plugins["diagnostics"] == [] and plugins["revision"]


async def test_system_info_describes_this_host(tmp_path: Path) -> None:
    """Host name, process, CPUs, memory and the state dir's disk are this machine's."""
    async with chat_gateway(tmp_path) as chat:
        info = await chat.op.ok("system.info", {})
        assert info["hostname"] == socket.gethostname()
        assert info["pid"] == os.getpid()  # the gateway runs in this process here
        assert info["port"] == chat.gw.port
        assert info["cpuCount"] == os.cpu_count()
        assert info["processInstanceId"] == chat.gw.app.boot_id
        assert 0 < info["memoryFreeBytes"] <= info["memoryTotalBytes"]
        assert info["diskPath"] == str(tmp_path / "state")
        assert 0 <= info["diskAvailableBytes"] <= info["diskTotalBytes"]
        stats = os.statvfs(tmp_path)
        assert info["diskTotalBytes"] == stats.f_blocks * stats.f_frsize
        assert info["nodeVersion"].startswith("python ")
        assert len(info["loadAverage"]) == 3


async def test_scopes_are_enforced(tmp_path: Path) -> None:
    """A read-only operator may read, but not question.list (questions), the group
    defaults (write) nor update.status (admin)."""
    async with (
        chat_gateway(tmp_path) as chat,
        raw_operator(chat.gw.url, scopes=["operator.read"]) as reader,
    ):
        assert await reader.ok("system.info", {})
        for method, missing in (
            ("question.list", "operator.questions"),
            ("sessions.groups.defaults", "operator.write"),
            ("update.status", "operator.admin"),
        ):
            error = await reader.error(method, {})
            assert error["code"] == "FORBIDDEN"
            assert error["message"] == f"missing scope: {missing}", method
