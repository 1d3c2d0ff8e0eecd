"""Unit tests of the SDK's errors (:mod:`openclaw_desktop.sdk.errors`) and of the feature
check that raises :class:`Unsupported` before anything is sent."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import openclaw_desktop.errors as core
from openclaw_desktop.errors import GatewayError, OpenClawError, gateway_error_from_shape
from openclaw_desktop.protocol import HelloOk
from openclaw_desktop.sdk import DEFAULT_SCOPES, InvalidParams, MissingScope, OpenClaw, Unsupported
from tests.helpers.session_builders import hello_payload

#: The error the real gateway 2026.9.6 answers ``chat.send`` with on a read-only connection.
REAL_MISSING_WRITE = {
    "code": "FORBIDDEN",
    "message": "missing scope: operator.write",
    "details": {
        "code": "MISSING_SCOPE",
        "missingScope": "operator.write",
        "requiredScopes": ["operator.write"],
    },
}


@pytest.fixture
async def oc() -> AsyncIterator[OpenClaw]:
    """A client that never connects, with the real gateway's recorded hello-ok."""
    client = OpenClaw.connect("ws://127.0.0.1:9", token="t", identity="ephemeral")
    client._hello = HelloOk.model_validate(hello_payload())
    try:
        yield client
    finally:
        await client.aclose()


def test_missing_scope_keeps_the_gateway_error() -> None:
    """The real gateway's MISSING_SCOPE answer is a MissingScope with its details."""
    missing = gateway_error_from_shape(REAL_MISSING_WRITE, method="chat.send")
    assert isinstance(missing, MissingScope)
    assert missing.missing_scope == "operator.write"
    assert list(missing.required_scopes) == ["operator.write"]
    assert (missing.code, missing.message, missing.method) == (
        "FORBIDDEN",
        "missing scope: operator.write",
        "chat.send",
    )
    assert missing.details == REAL_MISSING_WRITE["details"]
    assert OpenClawError in MissingScope.__mro__
    assert str(missing) == "chat.send: FORBIDDEN [MISSING_SCOPE]: missing scope: operator.write"


def test_missing_scope_without_details() -> None:
    """No details: no scope names, nothing made up."""
    missing = MissingScope("FORBIDDEN", "missing scope", retryable=False)
    assert missing.missing_scope is None
    assert list(missing.required_scopes) == []
    assert missing.retryable is False


def test_sdk_missing_scope_is_the_core_one() -> None:
    """Catching either name catches the error the connection raises."""
    assert MissingScope is core.MissingScope


def test_unsupported_message() -> None:
    error = Unsupported("exec.approval.list", "ws://127.0.0.1:18789")
    assert error.method == "exec.approval.list"
    assert str(error) == (
        "the connected gateway (ws://127.0.0.1:18789) does not support exec.approval.list"
    )
    assert str(Unsupported("x.y")) == "the connected gateway does not support x.y"
    assert OpenClawError in Unsupported.__mro__
    assert GatewayError not in Unsupported.__mro__  # nothing was asked of the gateway


def test_default_scopes() -> None:
    assert DEFAULT_SCOPES == ("operator.read", "operator.write")


async def test_hello_before_connecting() -> None:
    client = OpenClaw.connect("ws://127.0.0.1:9", token="t", identity="ephemeral")
    try:
        with pytest.raises(RuntimeError, match="not connected"):
            _ = client.hello
    finally:
        await client.aclose()


async def test_methods_come_from_hello(oc: OpenClaw) -> None:
    assert oc.supports("chat.send") and oc.supports("exec.approval.list")
    assert oc.supports("health") and oc.supports("status")
    assert not oc.supports("no.such.method")
    assert oc.methods == frozenset(oc.hello.features.methods) | {"health", "status"}


async def test_an_unadvertised_method_raises_before_sending(oc: OpenClaw) -> None:
    # The connection never started: anything sent would fail with another error.
    with pytest.raises(Unsupported) as caught:
        await oc.call("no.such.method", {"x": 1})
    assert caught.value.method == "no.such.method"
    assert "127.0.0.1:9" in str(caught.value)


async def test_namespaces_check_features_too(oc: OpenClaw) -> None:
    hello = hello_payload()
    hello["features"]["methods"] = ["chat.send", "chat.history"]
    oc._hello = HelloOk.model_validate(hello)
    with pytest.raises(Unsupported, match=r"exec\.approval\.list"):
        await oc.approvals.list()
    with pytest.raises(Unsupported, match=r"exec\.approval\.resolve"):
        await oc.approvals.respond("a1", "deny")
    with pytest.raises(Unsupported, match=r"plugin\.approval\.resolve"):
        await oc.approvals.respond("a1", "deny", kind="plugin")
    with pytest.raises(Unsupported, match=r"node\.list"):
        await oc.nodes.list()
    with pytest.raises(Unsupported, match=r"models\.authStatus"):
        await oc.models.status()


async def test_a_wrong_field_raises_before_sending(oc: OpenClaw) -> None:
    """Requests are built through the method's params model (the one the gateway checks
    them with): a wrong field is refused before anything is sent (the connection never
    started: anything sent would fail with another error), and no run is left tracked."""
    with pytest.raises(InvalidParams, match=r"invalid sessions\.patch params: bogus"):
        await oc.sessions.patch("main", bogus=1)
    with pytest.raises(InvalidParams, match=r"invalid chat\.send params: queueMode"):
        await oc.sessions.send("main", "hi", queue_mode="loud", idempotency_key="r-bad")
    assert oc.run_book.get("r-bad") is None
    with pytest.raises(InvalidParams, match=r"invalid chat\.send params: sessionKey"):
        await oc.sessions.send("", "hi")
    with pytest.raises(InvalidParams, match=r"invalid chat\.history params: limit"):
        await oc.sessions.history("main", limit=0)
    with pytest.raises(InvalidParams, match=r"invalid sessions\.list params: limit"):
        await oc.sessions.list(limit="5")
    with pytest.raises(InvalidParams) as caught:
        await oc.sessions.create(label="")
    assert caught.value.method == "sessions.create"
    assert isinstance(caught.value, ValueError)  # and an OpenClawError, as every SDK error


async def test_runs_namespace_tracks_started_runs(oc: OpenClaw) -> None:
    """oc.runs knows the runs this client started and which are still going."""
    run = oc.run_book.track("r-1", "main")
    assert oc.runs.get("r-1") is run
    assert oc.runs.get("nope") is None
    assert oc.runs.active() == [run]
