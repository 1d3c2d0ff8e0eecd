"""The golden frames, captured afresh from the real gateway 2026.9.6, against the committed ones.

One real gateway (manual pairing, a fake model) serves the whole module: the scenario of
:func:`tests.helpers.golden_capture.capture_all` runs once (about a minute, most of it waiting
for the first 30 s ``tick``) and the tests below check what it recorded:

* every fresh frame validates with our models for its kind;
* the structure (key sets and value types) of every captured fixture in
  ``tests/fixtures/protocol`` is still what the real gateway sends, so wire drift in a new
  gateway build shows up here and the fixtures get recaptured (``tools/capture_golden.py``);
* everything we serialized (both ``connect`` params, ``node.invoke`` params, the
  ``node.invoke.result`` forms, ``node.event`` with ``payload`` and ``payloadJSON``,
  ``chat.send``, requests with ``{}`` and without params, a ``cancel`` frame) was accepted.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.fake_llm import FakeLLM
from tests.helpers.golden_capture import (
    CAPTURE_FILES,
    GATEWAY_ALLOW,
    Capture,
    CaptureError,
    capture_all,
    drift,
    event_drift,
    iter_frames,
    redact,
    validate_frame,
)
from tests.helpers.real_openclaw import GatewayFactory, OpenClawInstall

pytestmark = pytest.mark.timeout(300)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "protocol"
EXPECTED_ERRORS = {
    "node.invoke (error)": "UNAVAILABLE",
    "node.invoke (unknown node)": "UNAVAILABLE",
}
"""Requests of the scenario whose refusal is the point (a node error, a node that is gone)."""


@dataclass(frozen=True)
class Fresh:
    """One capture run: redacted files as they would be written, and the raw capture."""

    files: dict[str, Any]
    capture: Capture


def committed(name: str) -> Any:
    """A committed fixture."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def fresh(openclaw_install: OpenClawInstall) -> Fresh:
    """Run the capture scenario once against one real gateway for the whole module.

    The gateway is stopped as soon as the capture is done: the tests only read what it sent.
    """
    factory = GatewayFactory(openclaw_install)
    try:
        with FakeLLM() as llm:
            gw = factory(manual_pairing=True, allow=GATEWAY_ALLOW, fake_llm_port=llm.port)
            try:
                capture = asyncio.run(
                    capture_all(
                        gw.url, gw.token, lambda rid: gw.cli("devices", "approve", rid), chat=True
                    )
                )
            except CaptureError as exc:
                raise CaptureError(f"{exc}\n--- gateway log tail ---\n{gw.log_tail(60)}") from exc
        return Fresh(redact(capture.files, capture, state_dir=gw.state_dir), capture)
    finally:
        factory.close()


def test_capture_is_complete(fresh: Fresh) -> None:
    """Every fixture file was captured, from the pinned gateway version."""
    assert set(fresh.files) == set(CAPTURE_FILES)
    assert fresh.capture.gateway_version == "2026.9.6"
    assert fresh.capture.gateway_build == committed("capture.json")["buildId"]


def test_every_fresh_frame_validates(fresh: Fresh) -> None:
    """Each frame the real gateway sent (and each we sent) fits our model for its kind."""
    failures: list[str] = []
    count = 0
    for name, data in fresh.files.items():
        for label, frame, method in iter_frames(name, data):
            count += 1
            try:
                validate_frame(frame, method=method)
            except ValueError as exc:  # pydantic.ValidationError is a ValueError
                failures.append(f"{label}: {exc}")
    assert failures == []
    assert count > 60


@pytest.mark.parametrize("name", sorted(set(CAPTURE_FILES) - {"chat_run.json"}))
def test_structure_matches_the_committed_fixture(fresh: Fresh, name: str) -> None:
    """Key sets and value types of the fresh capture equal the committed file's."""
    assert drift(committed(name), fresh.files[name]) == [], (
        f"the real gateway's frames drifted from tests/fixtures/protocol/{name}; if that is "
        "expected, recapture with `.venv/bin/python -m tools.capture_golden`"
    )


def test_chat_run_matches_the_committed_fixture(fresh: Fresh) -> None:
    """The fresh chat turn has the same kinds of events, each shaped as committed."""
    old, new = committed("chat_run.json"), fresh.files["chat_run.json"]
    assert drift(old["send_ack"], new["send_ack"]) == []
    assert event_drift(old["events"], new["events"]) == []


def test_transcribed_fixtures_still_match_the_real_gateway(fresh: Fresh) -> None:
    """The fixtures transcribed from the reference notes have the fresh frames' structure."""
    files = fresh.files
    rejections = {row["case"]: row for row in committed("connect_rejections.json")}
    pairs = {
        "hello_ok_operator.json": (
            committed("hello_ok_operator.json"),
            files["hello_ok_operator_captured.json"],
        ),
        "node_invoke_request.json": (
            committed("node_invoke_request.json"),
            files["node_invoke_request_captured.json"],
        ),
        "connect_rejections.json: wrong shared token": (
            rejections["wrong shared token"],
            {"case": "wrong shared token", **files["connect_token_mismatch.json"]},
        ),
        "connect_rejections.json: unpaired device": (
            rejections["unpaired device"],
            {"case": "unpaired device", **files["connect_not_paired_node.json"]},
        ),
    }
    found = {label: drift(old, new) for label, (old, new) in pairs.items()}
    assert found == {label: [] for label in pairs}
    chat = committed("chat_events.json")
    assert drift(chat["send_ack"], files["chat_run.json"]["send_ack"]) == []
    # The transcription is an abridged selection of one run's events: each must still occur
    # with every field it has (the real events may carry more).
    assert event_drift(chat["events"], files["chat_run.json"]["events"], selection=True) == []


@pytest.mark.parametrize("key", sorted(set(committed("sent_frames.json"))))
def test_what_we_serialize_is_accepted(fresh: Fresh, key: str) -> None:
    """The real gateway accepted each frame we built with our own code."""
    entry = fresh.files["sent_frames.json"][key]
    validate_frame(entry["sent"])
    if entry["sent"]["type"] == "cancel":
        # No answer to a cancel, and the connection carries on.
        assert entry["reply"] is None
        assert entry["then"]["reply"]["ok"] is True
        return
    reply = fresh.files[entry["reply_in"]] if "reply_in" in entry else entry["reply"]
    assert reply["id"] == entry["sent"]["id"]
    if key in EXPECTED_ERRORS:
        assert reply["ok"] is False
        assert reply["error"]["code"] == EXPECTED_ERRORS[key]
    else:
        assert reply["ok"] is True, reply


def test_node_invoke_result_forms_are_acked(fresh: Fresh) -> None:
    """node.invoke.result with payload, payloadJSON and error: each acked {ok: true}."""
    acks = fresh.files["node_invoke_results.json"]["acks"]
    for key in ("payload", "payloadJSON", "error"):
        assert acks[key]["ok"] is True and acks[key]["payload"] == {"ok": True}, key
    responses = fresh.files["node_invoke_results.json"]["operator_responses"]
    assert responses["payloadJSON"]["payload"]["payload"] == {"delivered": True, "via": "json"}
