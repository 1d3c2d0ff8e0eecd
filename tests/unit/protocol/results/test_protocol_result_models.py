"""The result models of :mod:`openclaw_desktop.protocol.results`: one for every method the
bundled gateway serves, each accepting the real gateway 2026.9.6's recorded answers
(``tests/fixtures``) and refusing one without a field the reference always sends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, RootModel, ValidationError

from gateway.methods import TABLE
from openclaw_desktop.protocol.results import RESULTS, result_model

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


def _load(relative: str) -> Any:
    return json.loads((FIXTURES / relative).read_text(encoding="utf-8"))


def _recorded() -> list[tuple[str, str, Any]]:
    """``(label, method, payload)`` of every ok answer of the real gateway on file."""
    out: list[tuple[str, str, Any]] = []
    node_methods = _load("gateway/real-node-methods.json")
    for key in ("health", "status", "system-presence", "node.list", "node.describe"):
        out.append((f"real-node-methods {key}", key, node_methods[key]))
    for key in ("device.pair.list", "node.pair.list", "node.pair.approve"):
        out.append((f"real-node-methods {key}", key, node_methods[key]))
    for key, method in (("node.list.after", "node.list"), ("node.describe.after", "node.describe")):
        out.append((f"real-node-methods {key}", method, node_methods[key]))
    for method, payload in _load("gateway/real-session-mutations.json").items():
        if not method.startswith("_"):
            out.append((f"real-session-mutations {method}", method, payload))
    for label, entry in _load("protocol/sent_frames.json").items():
        for pair in (entry, entry.get("then")):
            if not pair or pair["sent"].get("type") != "req" or not pair.get("reply"):
                continue
            reply = pair["reply"]
            if reply["ok"] and pair["sent"]["method"] != "connect":
                out.append((f"sent_frames {label}", pair["sent"]["method"], reply["payload"]))
    for label, ack in _load("protocol/node_invoke_results.json")["acks"].items():
        if ack["ok"]:
            out.append((f"node_invoke_results {label}", "node.invoke.result", ack["payload"]))
    for name in ("chat_events", "chat_run"):
        out.append(
            (f"{name} send_ack", "chat.send", _load(f"protocol/{name}.json")["send_ack"]["payload"])
        )
    for scenario in ("abort", "steer", "stopsteer", "tool"):
        for ack in _load(f"chat-traces/real-{scenario}.json")["acks"]:
            method = "chat.send" if "runId" in ack else "chat.abort"
            out.append((f"real-{scenario} ack", method, ack))
    return out


RECORDED = _recorded()


def _required_aliases(model: type[BaseModel]) -> list[str]:
    return [f.alias or n for n, f in model.model_fields.items() if f.is_required()]


def test_every_served_method_has_a_result_model() -> None:
    """Adding a method to the gateway without a result model fails here (and a model for a
    method nobody serves is a leftover)."""
    served = {spec.name for spec in TABLE}
    assert sorted(served - set(RESULTS)) == []
    assert sorted(set(RESULTS) - served) == []
    assert all(result_model(name) is RESULTS[name] for name in served)


def test_recorded_answers_cover_the_main_methods() -> None:
    """The fixtures hold real answers of at least these methods (a lost fixture shows)."""
    covered = {method for _label, method, _payload in RECORDED}
    assert {"health", "status", "system-presence", "node.list", "node.describe"} <= covered
    assert {"chat.send", "chat.abort", "node.invoke", "node.event", "node.pending.pull"} <= covered
    assert {"device.pair.approve", "node.pair.approve", "node.invoke.result"} <= covered
    assert {"sessions.create", "sessions.patch", "sessions.reset", "sessions.delete"} <= covered


@pytest.mark.parametrize(
    ("method", "payload"), [(m, p) for _l, m, p in RECORDED], ids=[lbl for lbl, _m, _p in RECORDED]
)
def test_model_accepts_the_real_answer(method: str, payload: Any) -> None:
    """Each recorded real answer validates, and its fields survive (tolerant models)."""
    parsed = RESULTS[method].model_validate(payload)
    if isinstance(parsed, RootModel):
        assert parsed.root == payload
    else:
        assert parsed.model_dump(by_alias=True, exclude_unset=True).keys() == payload.keys()


@pytest.mark.parametrize(
    ("method", "payload"), [(m, p) for _l, m, p in RECORDED], ids=[lbl for lbl, _m, _p in RECORDED]
)
def test_model_refuses_the_answer_without_a_required_field(method: str, payload: Any) -> None:
    """Each required field, left out of a real answer, is refused by name; an array answer
    refuses an object."""
    model = RESULTS[method]
    if issubclass(model, RootModel):
        with pytest.raises(ValidationError):
            model.model_validate({"not": "a list"})
        return
    required = _required_aliases(model)
    assert required, f"{method}: no required field"
    for name in required:
        broken = {k: v for k, v in payload.items() if k != name}
        with pytest.raises(ValidationError) as caught:
            model.model_validate(broken)
        assert name in str(caught.value)


def test_models_keep_fields_a_newer_gateway_adds() -> None:
    """Unknown fields are kept, not refused."""
    parsed = RESULTS["chat.abort"].model_validate(
        {"ok": True, "aborted": False, "runIds": [], "newField": 1}
    )
    assert parsed.model_dump(by_alias=True)["newField"] == 1
