"""The params models of :mod:`openclaw_desktop.protocol.methods` and the schemas derived
from them: the derivation itself, each derived schema against the real gateway's (dumped
from its package, ``tests/fixtures/gateway/real-params-schemas.json``), and the derived
schemas' rejection texts against the real gateway's answers to the same params
(``real-params-rejections.json``, captured side by side by
``tests/interop/test_gw_params_models_side_by_side.py``; ``real-chat-trace.json``).

Where ours still deliberately differs from the reference, the property is listed with why,
and each listed difference is checked to still be one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field, ValidationError

from gateway.errors import MethodError
from gateway.methods import TABLE
from gateway.methods.closed import derived_schema, model_checked, schema_problems
from openclaw_desktop.protocol.base import ClosedModel
from openclaw_desktop.protocol.methods import (
    AS_ENUM,
    NULLABLE,
    PARAMS,
    UNCHECKED,
    UNIQUE,
    ChatSendParams,
    params_schema,
    unchecked_fields,
)
from openclaw_desktop.protocol.methods import chat as chat_models
from openclaw_desktop.protocol.methods import sessions as sessions_models

FIXTURES = Path(__file__).parents[3] / "fixtures" / "gateway"
REAL_SCHEMAS: dict[str, Any] = json.loads(
    (FIXTURES / "real-params-schemas.json").read_text(encoding="utf-8")
)["schemas"]
REJECTIONS: list[dict[str, Any]] = json.loads(
    (FIXTURES / "real-params-rejections.json").read_text(encoding="utf-8")
)["cases"]
HANDWRITTEN: dict[str, Any] = json.loads(
    (FIXTURES / "handwritten-params-schemas.json").read_text(encoding="utf-8")
)["schemas"]
TRACE: list[dict[str, Any]] = json.loads(
    (FIXTURES / "real-chat-trace.json").read_text(encoding="utf-8")
)

#: (method, property): why ours is not the reference's (kept as the gateway had it).
DEVIATIONS: dict[tuple[str, str], str] = {
    ("chat.history", "agentId"): "no minLength here",
    ("chat.history", "inputRunIds"): "items and their bounds are not checked here",
    ("chat.inject", "agentId"): "no minLength here",
    ("chat.send", "attachments"): "items are checked by the handler, worded its own way",
    ("sessions.list", "label"): "no length bounds here",
    ("sessions.create", "key"): "bounded at 512 here",
    ("sessions.create", "agentId"): "no minLength here",
    ("sessions.patch", "agentId"): "no minLength here",
    ("sessions.patch", "model"): "may be empty (clears it) here",
    ("sessions.patch", "label"): "may be empty (clears it) here",
    ("sessions.patch", "category"): "may be empty here",
    ("sessions.reset", "agentId"): "no minLength here",
    ("sessions.delete", "agentId"): "no minLength here",
}


class _Item(ClosedModel):
    id: Annotated[str, Field(pattern="^.*$")]
    size: int | None = None


class _Example(ClosedModel):
    name: Annotated[str, Field(min_length=1, max_length=8)]
    count: Annotated[int | None, Field(ge=0, le=9)] = None
    ratio: float | None = None
    flag: bool | None = None
    mode: Literal["a", "b"] | None = None
    level: Annotated[Literal["x", "y"] | None, AS_ENUM] = None
    note: Annotated[str | None, NULLABLE, Field(max_length=3)] = None
    items: list[str] | None = None
    extra: dict[str, Any] | None = None
    taken: Annotated[Any, UNCHECKED] = None
    token: str
    nested: _Item | None = None
    rows: Annotated[list[_Item] | None, Field(min_length=1, max_length=4), UNIQUE] = None
    anything: list[Any] | None = None


def test_the_derived_schema_says_what_the_model_declares() -> None:
    """Each construct as the reference's TypeBox schemas compile it, key for key."""
    item = {
        "type": "object",
        "additionalProperties": False,
        "required": ["id"],
        "properties": {"id": {"type": "string", "pattern": "^.*$"}, "size": {"type": "integer"}},
    }
    assert params_schema(_Example) == {
        "type": "object",
        "additionalProperties": False,
        "required": ["name", "token"],
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 8},
            "count": {"type": "integer", "minimum": 0, "maximum": 9},
            "ratio": {"type": "number"},
            "flag": {"type": "boolean"},
            "mode": {"anyOf": [{"type": "string", "const": "a"}, {"type": "string", "const": "b"}]},
            "level": {"type": "string", "enum": ["x", "y"]},
            "note": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}]},
            "items": {"type": "array", "items": {"type": "string"}},
            "extra": {"type": "object"},
            "taken": {},
            "token": {"type": "string"},
            "nested": item,
            "rows": {
                "type": "array",
                "items": item,
                "minItems": 1,
                "maxItems": 4,
                "uniqueItems": True,
            },
            "anything": {"type": "array"},
        },
    }
    assert list(params_schema(_Example)["properties"]) == [
        "name", "count", "ratio", "flag", "mode", "level", "note", "items", "extra", "taken",
        "token", "nested", "rows", "anything",
    ]  # fmt: skip
    assert unchecked_fields(_Example) == {"taken"}


def test_a_model_without_required_properties_has_no_required_list() -> None:
    schema = params_schema(PARAMS["sessions.list"])
    assert "required" not in schema
    assert schema["additionalProperties"] is False


def test_every_model_names_a_method_this_gateway_serves() -> None:
    assert set(PARAMS) <= set(TABLE.handlers())


@pytest.mark.parametrize("method", sorted(m for m in PARAMS if m in REAL_SCHEMAS))
def test_derived_schema_is_the_reference_schema(method: str) -> None:
    """Same closed object, same required list, the same combinations refused (``not`` /
    ``allOf``), the reference's property order, and each checked property's schema key for
    key (except the deviations listed)."""
    ours, real = derived_schema(PARAMS[method]), REAL_SCHEMAS[method]
    assert ours["additionalProperties"] is real["additionalProperties"] is False
    assert ours.get("required") == real.get("required")
    assert (ours.get("not"), ours.get("allOf")) == (real.get("not"), real.get("allOf"))
    names = list(ours["properties"])
    assert names == [name for name in real["properties"] if name in ours["properties"]]
    skip = unchecked_fields(PARAMS[method])
    for name in names:
        if name in skip:
            continue
        if (method, name) in DEVIATIONS:
            assert ours["properties"][name] != real["properties"][name], (method, name)
        else:
            assert ours["properties"][name] == real["properties"][name], (method, name)


@pytest.mark.parametrize("method", sorted(HANDWRITTEN))
def test_derived_schema_is_the_dict_the_gateway_wrote_by_hand(method: str) -> None:
    """The dicts the method modules held before their models, key for key and in order
    (models.list's hand dict left its allOf to the handler, and had no maxLength on
    authProfileId: the model says both, as the reference)."""
    ours, before = derived_schema(PARAMS[method]), HANDWRITTEN[method]
    if method == "models.list":
        ours = {key: value for key, value in ours.items() if key != "allOf"}
        ours["properties"] = dict(ours["properties"])
        ours["properties"]["authProfileId"] = {"type": "string", "minLength": 1}
    assert ours == before
    assert list(ours["properties"]) == list(before["properties"])


def _prefix(method: str) -> str:
    return f"invalid {method} params: "


#: The recorded cases ours still answers differently, by method and the properties given:
#: each touches a property admitted unchecked (any value) or declared as :data:`DEVIATIONS`.
KNOWN_DIFFERENT: dict[tuple[str, frozenset[str]], str] = {
    (m, frozenset(names)): why
    for m, names, why in [
        ("chat.history", ("sessionKey", "cursor", "offset", "messageId", "sessionId"), "unchecked"),
        ("chat.abort", ("sessionKey", "agentId", "preserveSideRuns"), "unchecked"),
        ("sessions.list", ("archived", "profileRelation"), "unchecked"),
        ("sessions.create", ("key", "label"), "key bounded at 512 here"),
        ("sessions.create", ("displayName", "timeoutMs", "task"), "unchecked"),
        ("sessions.patch", ("key", "verboseLevel", "sendPolicy", "ttlMinutes"), "unchecked"),
        ("sessions.delete", ("key", "expectedSessionId", "emitLifecycleHooks"), "unchecked"),
    ]
}


def _known_different(method: str, params: Any) -> bool:
    return isinstance(params, dict) and (method, frozenset(params)) in KNOWN_DIFFERENT


def _recorded() -> list[tuple[str, Any, str | None]]:
    """(method, params, the real gateway's INVALID_REQUEST text or None when accepted)."""
    out: list[tuple[str, Any, str | None]] = []
    for case in REJECTIONS:
        answer = case["answer"]
        out.append(
            (case["method"], case["params"], None if answer.get("ok") else answer["message"])
        )
    for entry in TRACE:
        message = (entry.get("error") or {}).get("message", "")
        if entry.get("call") in PARAMS and message.startswith(_prefix(entry["call"])):
            out.append((entry["call"], entry["params"], message))
    return out


RECORDED = _recorded()


@pytest.mark.parametrize(
    ("method", "params", "real"), RECORDED, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(RECORDED)]
)
def test_derived_schema_words_the_real_rejection(
    method: str, params: Any, real: str | None
) -> None:
    """The derived schema refuses what the real gateway refused, in its words; a case
    listed as known to differ is checked to still differ."""
    problems = schema_problems(derived_schema(PARAMS[method]), params)
    ours = None if problems is None else _prefix(method) + problems
    if _known_different(method, params):
        assert ours != real, "matches now: drop it from KNOWN_DIFFERENT"
    else:
        assert ours == real


def test_the_recorded_cases_cover_every_chat_and_sessions_model() -> None:
    """The chat and sessions families' models (the Control UI's ``chat.*`` / ``sessions.*``
    models have their own recorded cases in test_protocol_control_ui_params)."""
    families = set(chat_models.PARAMS) | set(sessions_models.PARAMS)
    assert {m for m, _, _ in RECORDED} >= families - {"sessions.subscribe"}
    assert sum(1 for m, p, _ in RECORDED if not _known_different(m, p)) > 40
    recorded = {(m, frozenset(p)) for m, p, _ in RECORDED if isinstance(p, dict)}
    assert set(KNOWN_DIFFERENT) <= recorded


def test_checked_params_keep_only_what_the_gateway_acts_on() -> None:
    """Unchecked properties are dropped, an integral float of an integer is an int."""
    out = model_checked(
        "chat.history", PARAMS["chat.history"], {"sessionKey": "k", "limit": 5.0, "cursor": 1}
    )
    assert out == {"sessionKey": "k", "limit": 5}
    assert isinstance(out["limit"], int)
    with pytest.raises(MethodError) as caught:
        model_checked("chat.history", PARAMS["chat.history"], "x")
    assert caught.value.shape["message"] == "invalid chat.history params: must be object"


def test_the_client_model_refuses_what_the_gateway_refuses() -> None:
    """The same model, on the client: a wrong field fails before anything is sent."""
    with pytest.raises(ValidationError):
        ChatSendParams(session_key="k", message="x", idempotency_key="i", queue_mode="loud")
    with pytest.raises(ValidationError):
        ChatSendParams(session_key="", message="x", idempotency_key="i")
    wire = ChatSendParams(session_key="k", message="x", idempotency_key="i").to_wire()
    assert wire == {"sessionKey": "k", "message": "x", "idempotencyKey": "i"}
    assert schema_problems(derived_schema(ChatSendParams), wire) is None
