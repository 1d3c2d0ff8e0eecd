"""The Control UI methods' params models (:mod:`openclaw_desktop.protocol.methods.control_ui`):
each derived schema is the real gateway's (its TypeBox schemas, JSON-dumped from the
openclaw 2026.9.6 package's ``dist/gateway/protocol/index.js``, descriptions dropped, below
as data), but for what a model cannot say and the handler checks; and bad params get the
reference's exact text through a real dispatch (``gateway.rpc.answer_request`` with the
method table and a real app; the texts are the reference validator's, run on the same
params). ``plugin.surface.refresh`` and ``controlUi.sessionPullRequests.subscribe`` have no
schema in the reference: their models are read by hand, refusing in its one sentence each
(what it accepts and refuses was asked of it; its side-by-side asks again)."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.app import GatewayApp
from gateway.methods import TABLE
from gateway.methods.closed import derived_schema
from openclaw_desktop.protocol.methods import PARAMS
from openclaw_desktop.protocol.methods.control_ui import PARAMS as CONTROL_UI_PARAMS
from openclaw_desktop.protocol.methods.control_ui import (
    ChatStartupShortLinkParams,
    PluginSurfaceRefreshParams,
    PullRequestSubscription,
    SessionPullRequestsSubscribeParams,
)
from tests.helpers.method_dispatch import answer, assert_hand_read

#: The reference's params schema of each method with a model here, key for key.
REAL_SCHEMAS: dict[str, Any] = {
    "agent.identity.get": {
        "type": "object",
        "properties": {
            "agentId": {"type": "string", "minLength": 1},
            "sessionKey": {"type": "string"},
        },
        "additionalProperties": False,
    },
    "chat.metadata": {
        "type": "object",
        "properties": {
            "agentId": {"type": "string", "minLength": 1},
            "authProfileId": {"type": "string", "minLength": 1, "maxLength": 256},
            "sessionKey": {"type": "string", "minLength": 1},
        },
        "additionalProperties": False,
        "not": {"required": ["sessionKey", "authProfileId"]},
    },
    "chat.startup": {
        "anyOf": [
            {
                "type": "object",
                "required": ["sessionKey"],
                "properties": {
                    "sessionKey": {"type": "string", "minLength": 1},
                    "agentId": {"type": "string", "minLength": 1},
                    "cursor": {"type": "string"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
                    "maxBytes": {"type": "integer", "minimum": 1024},
                    "offset": {"type": "integer", "minimum": 0},
                    "pendingBefore": {"type": "integer", "minimum": 1},
                    "inputRunIds": {
                        "type": "array",
                        "items": {"type": "string", "minLength": 1, "maxLength": 256},
                        "minItems": 1,
                        "maxItems": 50,
                        "uniqueItems": True,
                    },
                    "messageId": {"type": "string", "minLength": 1},
                    "sessionId": {"type": "string", "minLength": 1},
                    "maxChars": {"type": "integer", "minimum": 1, "maximum": 500000},
                },
                "additionalProperties": False,
            },
            {
                "type": "object",
                "required": ["shortId", "agentId"],
                "properties": {
                    "shortId": {"type": "string", "minLength": 1},
                    "slugHint": {"type": "string", "minLength": 1},
                    "agentId": {"type": "string", "minLength": 1},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
                    "maxBytes": {"type": "integer", "minimum": 1024},
                },
                "additionalProperties": False,
            },
        ]
    },
    "board.get": {
        "type": "object",
        "required": ["sessionKey"],
        "properties": {
            "sessionKey": {"type": "string", "minLength": 1},
            "agentId": {"type": "string", "minLength": 1},
        },
        "additionalProperties": False,
    },
    "progressCard.get": {
        "type": "object",
        "required": ["sessionKey"],
        "properties": {
            "sessionKey": {"type": "string", "minLength": 1},
            "agentId": {"type": "string", "minLength": 1},
        },
        "additionalProperties": False,
    },
    "session.discussion.info": {
        "type": "object",
        "required": ["sessionKey"],
        "properties": {
            "sessionKey": {"type": "string", "minLength": 1},
            "agentId": {"type": "string", "minLength": 1},
        },
        "additionalProperties": False,
    },
    "sessions.branches.list": {
        "type": "object",
        "required": ["sessionKey"],
        "properties": {
            "sessionKey": {"type": "string", "minLength": 1},
            "agentId": {"type": "string", "minLength": 1},
        },
        "additionalProperties": False,
    },
    "sessions.companion.state": {
        "type": "object",
        "required": ["sessionKey"],
        "properties": {
            "sessionKey": {"type": "string", "minLength": 1},
            "agentId": {"type": "string", "minLength": 1},
        },
        "additionalProperties": False,
    },
    "session.members.listEvidence": {
        "type": "object",
        "required": ["sessionKey"],
        "properties": {
            "sessionKey": {"type": "string", "minLength": 1},
            "agentId": {"type": "string", "minLength": 1},
        },
        "additionalProperties": False,
    },
    "sessions.github.options": {
        "type": "object",
        "required": ["sessionKey"],
        "properties": {
            "sessionKey": {"type": "string", "minLength": 1},
            "agentId": {"type": "string", "minLength": 1},
            "idempotencyKey": {"type": "string", "minLength": 1},
        },
        "additionalProperties": False,
    },
    # Not exported by the package: the schema its validator compiled (``.schema``).
    "sessions.viewers.set": {
        "type": "object",
        "required": ["sessionKeys"],
        "properties": {
            "agentId": {"type": "string", "minLength": 1},
            "sessionKeys": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": 512},
                "maxItems": 32,
            },
        },
        "additionalProperties": False,
    },
    "sessions.observer.visibility": {
        "type": "object",
        "required": ["visible"],
        "properties": {"visible": {"type": "boolean"}},
        "additionalProperties": False,
    },
    "sessions.catalog.list": {
        "type": "object",
        "properties": {
            "catalogId": {"type": "string", "minLength": 1},
            "metadataOnly": {"type": "boolean"},
            "cursors": {"type": "object", "patternProperties": {"^.*$": {"type": "string"}}},
            "agentId": {"type": "string", "minLength": 1},
            "progressId": {"type": "string", "minLength": 1, "maxLength": 128},
            "allowPartialResults": {"type": "boolean"},
            "search": {"type": "string"},
            "limitPerHost": {"type": "integer", "minimum": 1},
            "hostIds": {"type": "array", "items": {"type": "string", "minLength": 1}},
        },
        "additionalProperties": False,
    },
    "sessions.groups.list": {"type": "object", "properties": {}, "additionalProperties": False},
    "sessions.groups.defaults": {"type": "object", "properties": {}, "additionalProperties": False},
    "mentions.list": {"type": "object", "properties": {}, "additionalProperties": False},
    "question.list": {"type": "object", "properties": {}, "additionalProperties": False},
    "projects.list": {
        "type": "object",
        "properties": {"includeObserved": {"type": "boolean"}},
        "additionalProperties": False,
    },
    "taskSuggestions.list": {
        "type": "object",
        "properties": {
            "sessionKey": {"type": "string", "minLength": 1, "maxLength": 512},
            "agentId": {"type": "string", "minLength": 1, "maxLength": 128},
        },
        "additionalProperties": False,
    },
    "tasks.list": {
        "type": "object",
        "properties": {
            "status": {
                "anyOf": [
                    {
                        "anyOf": [
                            {"type": "string", "const": "queued"},
                            {"type": "string", "const": "running"},
                            {"type": "string", "const": "completed"},
                            {"type": "string", "const": "failed"},
                            {"type": "string", "const": "cancelled"},
                            {"type": "string", "const": "timed_out"},
                        ]
                    },
                    {
                        "type": "array",
                        "items": {
                            "anyOf": [
                                {"type": "string", "const": "queued"},
                                {"type": "string", "const": "running"},
                                {"type": "string", "const": "completed"},
                                {"type": "string", "const": "failed"},
                                {"type": "string", "const": "cancelled"},
                                {"type": "string", "const": "timed_out"},
                            ]
                        },
                    },
                ]
            },
            "agentId": {"type": "string", "minLength": 1},
            "sessionKey": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 500},
            "cursor": {"type": "string", "maxLength": 512},
            "sortBy": {
                "type": "string",
                "enum": ["updatedAt", "endedAt"],
                "x-openclaw-since": "2026.8",
            },
        },
        "additionalProperties": False,
    },
    "users.prefs.get": {
        "type": "object",
        "properties": {
            "keys": {
                "type": "array",
                "items": {"type": "string", "pattern": "^.{1,256}$"},
                "maxItems": 32,
                "uniqueItems": True,
            }
        },
        "additionalProperties": False,
    },
    "plugins.controlUi.list": {"type": "object", "properties": {}, "additionalProperties": False},
    "system.info": {"type": "object", "properties": {}, "additionalProperties": False},
    "update.status": {
        "type": "object",
        "properties": {"refreshCheckout": {"type": "boolean"}},
        "additionalProperties": False,
    },
}

#: (method, property): the keywords of the reference's property schema the derived one
#: lacks (a model declares an array as ``array``); the handler checks those it acts on
#: after the declared check.
NOT_DERIVED: dict[tuple[str, str], set[str]] = {
    ("sessions.catalog.list", "cursors"): {"patternProperties"},
    ("tasks.list", "sortBy"): {"x-openclaw-since"},
}


def _branches(method: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(ours, the reference's) object schemas of ``method``: ``chat.startup``'s union has
    two, its first the registered model's."""
    real = REAL_SCHEMAS[method]
    ours = derived_schema(PARAMS[method])
    if method == "chat.startup":
        return [
            (ours, real["anyOf"][0]),
            (derived_schema(ChatStartupShortLinkParams), real["anyOf"][1]),
        ]
    return [(ours, real)]


#: Methods the reference serves without a params schema (its handler reads them by hand,
#: refusing in one sentence each): their models list what is read, and the handler reads
#: them through the model (below).
HAND_READ: dict[str, tuple[type[Any], list[str]]] = {
    "plugin.surface.refresh": (PluginSurfaceRefreshParams, ["surface", "observedUrl"]),
    "controlUi.sessionPullRequests.subscribe": (
        SessionPullRequestsSubscribeParams,
        ["sessionKeys", "refreshSessionKeys"],
    ),
}


def test_every_control_ui_method_with_a_reference_schema_has_a_model() -> None:
    assert set(CONTROL_UI_PARAMS) == set(REAL_SCHEMAS) | set(HAND_READ)
    assert all(
        TABLE[method].family.startswith("gateway.methods.control_ui") for method in REAL_SCHEMAS
    )


@pytest.mark.parametrize("method", sorted(REAL_SCHEMAS))
def test_derived_schema_is_the_reference_schema(method: str) -> None:
    """Closed object, required list, property order and each property key for key, but
    for the keywords listed as not derived."""
    for ours, real in _branches(method):
        assert set(real) - set(ours) == set()
        assert ours.get("not") == real.get("not")
        assert ours["additionalProperties"] is real["additionalProperties"] is False
        assert ours.get("required") == real.get("required")
        assert list(ours["properties"]) == list(real["properties"])
        for name, sub in real["properties"].items():
            missing = NOT_DERIVED.get((method, name), set())
            assert {k: v for k, v in sub.items() if k not in missing} == ours["properties"][name], (
                method,
                name,
            )
            assert missing <= set(sub), (method, name)


def test_methods_declare_their_models_where_the_schema_is_the_whole_check() -> None:
    """``params=`` on every method whose reference schema a model says whole (or whose
    handler checks its extra rules after the declared check); the union is checked by its
    handler."""
    checked = {method for method in REAL_SCHEMAS if TABLE[method].check}
    assert checked == set(REAL_SCHEMAS) - {"chat.startup"}
    assert all(TABLE[method].params is PARAMS[method] for method in REAL_SCHEMAS)


#: (method, params, the reference validator's text for them).
REFUSED: list[tuple[str, Any, str]] = [
    (
        "agent.identity.get",
        {"agentId": "", "bogus": 1},
        "@at root: unexpected property 'bogus'; at /agentId: must not have fewer than 1 characters",
    ),
    ("agent.identity.get", {"sessionKey": 5}, "@at /sessionKey: must be string"),
    (
        "chat.metadata",
        {"sessionKey": "", "authProfileId": "x"},
        "@at /sessionKey: must not have fewer than 1 characters; must not be valid",
    ),
    ("chat.metadata", "x", "@must be object; must not be valid"),
    (
        "chat.metadata",
        {"authProfileId": ""},
        "@at /authProfileId: must not have fewer than 1 characters",
    ),
    (
        "chat.startup",
        {},
        "@must have required property 'sessionKey'; must have required property 'shortId'; "
        "must match a schema in anyOf",
    ),
    (
        "chat.startup",
        {"sessionKey": "main", "bogus": 1},
        "@at root: unexpected property 'bogus'; must have required property 'shortId'; "
        "at root: unexpected property 'sessionKey'; must match a schema in anyOf",
    ),
    (
        "chat.startup",
        {"shortId": "abc", "agentId": "", "limit": 2000},
        "@must have required property 'sessionKey'; at root: unexpected property 'shortId'; "
        "at /agentId: must not have fewer than 1 characters; at /limit: must be <= 1000; "
        "must match a schema in anyOf",
    ),
    ("chat.startup", [], "@must be object; must match a schema in anyOf"),
    (
        "board.get",
        {"sessionKey": "", "x": 1},
        "@at root: unexpected property 'x'; at /sessionKey: must not have fewer than 1 characters",
    ),
    (
        "progressCard.get",
        {"sessionKey": 1, "agentId": ""},
        "@at /sessionKey: must be string; at /agentId: must not have fewer than 1 characters",
    ),
    ("session.discussion.info", {}, "@must have required property 'sessionKey'"),
    (
        "sessions.branches.list",
        {"sessionKey": "main", "a": 1, "b": 2},
        "@at root: unexpected property 'a'",
    ),
    ("sessions.companion.state", {"agentId": "x"}, "@must have required property 'sessionKey'"),
    (
        "sessions.github.options",
        {"sessionKey": "main", "idempotencyKey": ""},
        "@at /idempotencyKey: must not have fewer than 1 characters",
    ),
    ("sessions.viewers.set", {}, "@must have required property 'sessionKeys'"),
    ("sessions.viewers.set", {"sessionKeys": "main"}, "@at /sessionKeys: must be array"),
    ("sessions.viewers.set", {"sessionKeys": [5]}, "@at /sessionKeys/0: must be string"),
    (
        "sessions.viewers.set",
        {"sessionKeys": [f"k{i}" for i in range(33)]},
        "@at /sessionKeys: must not have more than 32 items",
    ),
    (
        "sessions.viewers.set",
        {"sessionKeys": [""]},
        "@at /sessionKeys/0: must not have fewer than 1 characters",
    ),
    (
        "sessions.viewers.set",
        {"sessionKeys": ["k" * 513]},
        "@at /sessionKeys/0: must not have more than 512 characters",
    ),
    ("sessions.observer.visibility", {"visible": "x"}, "@at /visible: must be boolean"),
    (
        "sessions.catalog.list",
        {"limitPerHost": 0, "progressId": ""},
        "@at /progressId: must not have fewer than 1 characters; at /limitPerHost: must be >= 1",
    ),
    (
        "sessions.catalog.list",
        {"cursors": [], "hostIds": {}},
        "@at /cursors: must be object; at /hostIds: must be array",
    ),
    ("sessions.groups.list", {"x": 1}, "@at root: unexpected property 'x'"),
    ("sessions.groups.defaults", {"x": 1}, "@at root: unexpected property 'x'"),
    ("mentions.list", {"x": 1}, "@at root: unexpected property 'x'"),
    ("question.list", {"x": 1}, "@at root: unexpected property 'x'"),
    ("projects.list", {"includeObserved": "x"}, "@at /includeObserved: must be boolean"),
    (
        "taskSuggestions.list",
        {
            "sessionKey": "",
            "agentId": "a" * 136,
        },
        "@at /sessionKey: must not have fewer than 1 characters; "
        "at /agentId: must not have more than 128 characters",
    ),
    (
        "tasks.list",
        {"status": "bogus"},
        "@at /status: must be equal to constant; at /status: must match a schema in anyOf; "
        "at /status: must be array",
    ),
    # The reference's validateTasksListParams (openclaw 2026.9.6) answers these the same:
    # the string branch's const errors fill the eight kept errors.
    (
        "tasks.list",
        {"status": 5},
        "@at /status: must be string; at /status: must be equal to constant",
    ),
    (
        "tasks.list",
        {"status": ["queued", 7]},
        "@at /status: must be string; at /status: must be equal to constant",
    ),
    (
        "tasks.list",
        {"limit": 0, "cursor": 5, "sortBy": "x"},
        "@at /limit: must be >= 1; at /cursor: must be string; "
        "at /sortBy: must be equal to one of the allowed values",
    ),
    ("users.prefs.get", {"keys": "x"}, "@at /keys: must be array"),
    ("users.prefs.get", {"keys": ["a", "a"]}, "@at /keys: must not have duplicate items"),
    ("users.prefs.get", {"keys": [""]}, '@at /keys/0: must match pattern "^.{1,256}$"'),
    ("users.prefs.get", {"keys": [5]}, "@at /keys/0: must be string"),
    (
        "users.prefs.get",
        {"keys": [f"k{i}" for i in range(33)]},
        "@at /keys: must not have more than 32 items",
    ),
    ("plugins.controlUi.list", {"x": 1}, "@at root: unexpected property 'x'"),
    ("system.info", {"x": 1}, "@at root: unexpected property 'x'"),
    ("system.info", 5, "@must be object"),
    ("update.status", {"refreshCheckout": "yes"}, "@at /refreshCheckout: must be boolean"),
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
    assert frame["error"]["message"] == text.replace("@", f"invalid {method} params: ", 1)


async def test_checked_params_reach_the_handler(app: GatewayApp) -> None:
    """A declared check passes good params on (the handler answers them)."""
    frame = await answer(app, "projects.list", {"includeObserved": True})
    assert frame == {
        "type": "res",
        "id": "r1",
        "ok": True,
        "payload": {"projects": [], "observedProjects": []},
    }
    frame = await answer(app, "tasks.list", {"status": "queued", "limit": 5.0, "sortBy": "endedAt"})
    assert frame["payload"] == {"tasks": []}


# ------------------------------------------------------------------ read by hand


@pytest.mark.parametrize("method", sorted(HAND_READ))
def test_a_hand_read_model_is_declared_unchecked_and_lists_what_is_read(method: str) -> None:
    assert_hand_read(method, *HAND_READ[method])


_PR = "controlUi.sessionPullRequests.subscribe"
HAND_REFUSED: list[tuple[str, Any, str]] = [
    ("plugin.surface.refresh", p, "surface required")
    for p in [{}, {"surface": " \ufeff"}, {"surface": 5}, "canvas", [1]]
]
HAND_REFUSED += [
    (_PR, params, f"invalid {_PR} params")
    for params in [
        None,
        {},
        [1],
        "abc",
        {"sessionKeys": None},
        {"sessionKeys": "x"},
        {"sessionKeys": [5]},
        {"sessionKeys": [" \ufeff"]},
        {"sessionKeys": ["x" * 513]},
        {"sessionKeys": ["\U0001f600" * 257]},  # 514 UTF-16 units
        {"sessionKeys": ["k"] * 201},
        {"sessionKeys": [], "refreshSessionKeys": None},
        {"sessionKeys": ["a"], "refreshSessionKeys": ["b"]},
    ]
]


@pytest.mark.parametrize(
    ("method", "params", "text"),
    HAND_REFUSED,
    ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(HAND_REFUSED)],
)
async def test_hand_read_params_are_refused_in_the_reference_sentence(
    app: GatewayApp, method: str, params: Any, text: str
) -> None:
    frame = await answer(app, method, params)
    assert frame["ok"] is False
    assert frame["error"] == {"code": "INVALID_REQUEST", "message": text}


@pytest.mark.parametrize(
    ("params", "surface"),
    [
        ({"surface": "canvas"}, "canvas"),
        ({"surface": " canvas2 ", "observedUrl": 5}, "canvas2"),
        ({"surface": "x\x1f"}, "x\x1f"),
    ],
)
async def test_a_named_surface_is_unavailable_here(
    app: GatewayApp, params: Any, surface: str
) -> None:
    assert PluginSurfaceRefreshParams.lenient(params).surface_name() == surface
    frame = await answer(app, "plugin.surface.refresh", params)
    assert frame["error"] == {
        "code": "UNAVAILABLE",
        "message": f"{surface} plugin surface unavailable",
    }


@pytest.mark.parametrize(
    ("params", "keys", "refresh"),
    [
        ({"sessionKeys": []}, [], []),
        ({"sessionKeys": ["a"], "bogus": 1}, ["a"], []),
        ({"sessionKeys": [" a ", "a", "b"], "refreshSessionKeys": [" a "]}, ["a", "b"], ["a"]),
        ({"sessionKeys": ["\x1f"]}, ["\x1f"], []),
        ({"sessionKeys": ["\U0001f600" * 256]}, ["\U0001f600" * 256], []),
        ({"sessionKeys": ["k"] * 200}, ["k"], []),
    ],
)
async def test_pull_request_keys_read_as_the_reference(
    app: GatewayApp, params: Any, keys: list[str], refresh: list[str]
) -> None:
    wanted = SessionPullRequestsSubscribeParams.lenient(params).subscription()
    assert wanted == PullRequestSubscription(keys, refresh)
    frame = await answer(app, _PR, params)
    assert frame["payload"] == {"subscribed": bool(keys)}
