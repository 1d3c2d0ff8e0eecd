"""Property-based fuzzing of our node's real commands, over real loopback sockets.

The sibling ``tests/integration/transport/test_node_invoke_fuzz.py`` fuzzes the envelope with
made-up commands. Here our node is built as the running app builds it (the real spec table
and handlers of every area, ``build_dispatcher``) with its settings on, and the scripted
gateway sends hypothesis-made ``node.invoke.request`` events for the real commands:
``system.run`` / ``system.run.prepare`` / ``system.which`` / ``system.execApprovals.get|set``
(the approvals document says ``security: deny``, and every generated argv is harmless),
``location.get`` (no GeoClue on the bus it is pointed at: the unavailable path),
``device.apps`` (temporary XDG folders), ``screen.snapshot``, ``screen.record`` and
``computer.act`` (no display: their typed refusals), with well-formed, ill-typed and junk
params. Every request with a usable id gets exactly one typed ``node.invoke.result``, the node
logs no ERROR, and it stays on its first connection.

Bounded: a fixed number of examples, no shrinking, no example database; derandomized when
``CI`` is set.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from openclaw_desktop.config import NodeSettings
from openclaw_desktop.node import NodeContext, NodeSession, build_dispatcher
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.scripted_gateway import ScriptedGateway, ScriptedPeer, node_options

pytestmark = pytest.mark.timeout(150)

FUZZ = settings(
    max_examples=120,
    deadline=None,
    database=None,
    derandomize=bool(os.environ.get("CI")),
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

COMMANDS = (
    "device.info",
    "system.run",
    "system.run.prepare",
    "system.which",
    "system.execApprovals.get",
    "system.execApprovals.set",
    "location.get",
    "device.apps",
    "screen.snapshot",
    "screen.record",
    "computer.act",
)
CAPS = ("device", "system", "location", "screen", "computer")

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**40), max_value=2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
#: Only harmless programs, so even a document the fuzzer managed to widen runs nothing that
#: matters; ``security: deny`` refuses them anyway.
argv = st.lists(st.sampled_from(["true", "echo", "printf", "x", "-n", ""]), max_size=4)
run_params = st.fixed_dictionaries(
    {"command": argv | json_values},
    optional={
        "rawCommand": st.text(max_size=10) | json_values,
        "cwd": st.sampled_from(["/", "/nonexistent", ""]) | json_values,
        "env": st.dictionaries(st.sampled_from(["A", "PATH", "LD_PRELOAD"]), st.text(max_size=4))
        | json_values,
        "timeoutMs": st.integers(min_value=-5, max_value=3_000) | json_values,
        "agentId": json_values,
        "sessionKey": json_values,
    },
)
approvals_file = st.fixed_dictionaries(
    {"version": st.just(1) | json_values},
    optional={
        "defaults": st.fixed_dictionaries(
            {"security": st.sampled_from(["deny", "allowlist", "bogus"]) | json_values},
            optional={"ask": st.sampled_from(["off", "on-miss", "always"]) | json_values},
        )
        | json_values,
        "agents": json_values,
    },
)
PARAMS: dict[str, st.SearchStrategy[Any]] = {
    "device.info": st.just({}),
    "system.run": run_params,
    "system.run.prepare": run_params,
    "system.which": st.fixed_dictionaries({"bins": st.lists(st.text(max_size=8), max_size=3)})
    | json_values,
    "system.execApprovals.get": st.just({}) | json_values,
    "system.execApprovals.set": st.fixed_dictionaries(
        {"file": approvals_file | json_values}, optional={"baseHash": st.text(max_size=8)}
    )
    | json_values,
    "location.get": st.fixed_dictionaries(
        {},
        optional={
            "timeoutMs": st.integers(min_value=-1, max_value=2_000) | json_values,
            "maxAgeMs": json_values,
            "desiredAccuracy": st.sampled_from(["coarse", "balanced", "precise"]) | json_values,
        },
    )
    | json_values,
    "device.apps": st.fixed_dictionaries(
        {},
        optional={
            "query": st.text(max_size=6) | json_values,
            "limit": st.integers(min_value=-1, max_value=300) | json_values,
            "includeSystem": json_values,
        },
    )
    | json_values,
    "screen.snapshot": st.fixed_dictionaries(
        {}, optional={"screenIndex": json_values, "maxWidth": json_values}
    )
    | json_values,
    "screen.record": st.fixed_dictionaries(
        {},
        optional={
            "durationMs": st.integers(min_value=0, max_value=1_000) | json_values,
            "fps": st.integers(min_value=0, max_value=70) | json_values,
            "screenIndex": json_values,
            "includeAudio": json_values,
        },
    )
    | json_values,
    "computer.act": st.fixed_dictionaries(
        {
            "action": st.sampled_from(["click", "type", "key", "move", "scroll", "wait"])
            | json_values
        },
        optional={"x": json_values, "y": json_values, "text": json_values, "key": json_values},
    )
    | json_values,
}


@st.composite
def requests(draw: st.DrawFn) -> Any:
    """A node.invoke.request payload: mostly a real command with generated params."""
    if draw(st.integers(min_value=0, max_value=9)) == 0:
        return draw(json_values)  # not an object at all, or one without a usable shape
    command = draw(st.sampled_from(COMMANDS))
    payload: dict[str, Any] = {
        "id": draw(st.text(min_size=1, max_size=6)),
        "nodeId": "node-1",
        "command": command,
    }
    params = draw(PARAMS[command])
    if draw(st.booleans()):
        payload["paramsJSON"] = json.dumps(params)
    elif draw(st.booleans()):
        payload["paramsJSON"] = draw(st.sampled_from(["{oops", "", "null", "[]"]))
    else:
        payload["params"] = params
    if draw(st.booleans()):
        payload["timeoutMs"] = draw(st.sampled_from([1_000, 5_000, 0, -1]) | json_values)
    return payload


def _request(command: str, params: Any) -> dict[str, Any]:
    return {"id": "x", "nodeId": "node-1", "command": command, "paramsJSON": json.dumps(params)}


#: Well-formed requests of every command, sent first (hypothesis' explicit phase).
EXAMPLES = [
    _request("system.run", {"command": ["echo", "x"]}),
    _request("system.run.prepare", {"command": ["echo", "x"]}),
    _request("system.which", {"bins": ["sh", "no-such-tool"]}),
    _request("system.execApprovals.get", {}),
    _request("location.get", {"timeoutMs": 1_000}),
    _request("device.apps", {"limit": 5}),
    _request("screen.snapshot", {}),
    _request("screen.record", {"durationMs": 100}),
    _request("computer.act", {"action": "wait", "durationMs": 10}),
]


@pytest.fixture
def no_display(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No X/Wayland display, temporary XDG data folders with one app, a deny-all document."""
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_SESSION_TYPE", "tty")
    apps = tmp_path / "data" / "applications"
    apps.mkdir(parents=True)
    (apps / "calc.desktop").write_text(
        "[Desktop Entry]\nType=Application\nName=Calc\nExec=true\n", encoding="utf-8"
    )
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_DATA_DIRS", str(tmp_path / "none"))
    approvals = tmp_path / "exec-approvals.json"
    approvals.write_text(
        json.dumps(
            {"version": 1, "defaults": {"security": "deny", "ask": "off", "askFallback": "deny"}}
        ),
        encoding="utf-8",
    )
    return approvals


def test_fuzz_real_commands_are_answered_once(
    no_display: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Each request with a usable id gets exactly one typed result; the node stays up."""
    caplog.set_level(logging.WARNING)
    peers: list[ScriptedPeer] = []
    node_settings = NodeSettings(
        exec=True,
        location=True,
        location_bus=f"unix:path={tmp_path / 'no-bus'}",
        installed_apps=True,
        screen=True,
        computer=True,
    )
    ctx = NodeContext(settings=lambda: node_settings, exec_approvals_path=no_display)

    async def script(peer: ScriptedPeer) -> None:
        await peer.accept(role="node")
        peers.append(peer)
        await peer.serve_requests(lambda frame: {})

    with asyncio.Runner() as runner:
        gw = ScriptedGateway(script)
        gw_cm = gw.running()
        runner.run(gw_cm.__aenter__())
        connection = GatewayConnection(node_options(gw.url, COMMANDS, CAPS))

        async def start() -> NodeSession:
            session = NodeSession(connection, build_dispatcher(ctx))
            connection.start()
            async with asyncio.timeout(10):
                while not peers:
                    await asyncio.sleep(0.01)
            return session

        session = runner.run(start())
        peer = peers[0]
        counter = itertools.count()
        expected: list[str] = []
        commands_sent: Counter[str] = Counter()

        async def until_answered(invoke_id: str) -> None:
            async with asyncio.timeout(15):
                while not any(r.get("id") == invoke_id for r in peer.invoke_results()):
                    await asyncio.sleep(0.005)

        async def one(payload: Any) -> None:
            n = next(counter)
            if isinstance(payload, dict) and isinstance(payload.get("id"), str):
                payload["id"] = f"e{n}-{payload['id']}"  # unique across examples
                expected.append(payload["id"])
                commands_sent[str(payload.get("command"))] += 1
            await peer.send({"type": "event", "event": "node.invoke.request", "payload": payload})
            if expected and expected[-1].startswith(f"e{n}-"):
                await until_answered(expected[-1])
            sentinel = f"s{n}"
            await peer.send(
                {
                    "type": "event",
                    "event": "node.invoke.request",
                    "payload": {"id": sentinel, "nodeId": "node-1", "command": "device.info"},
                }
            )
            await until_answered(sentinel)

        @FUZZ
        @given(payload=requests())
        @example(payload=EXAMPLES[0])
        @example(payload=EXAMPLES[1])
        @example(payload=EXAMPLES[2])
        @example(payload=EXAMPLES[3])
        @example(payload=EXAMPLES[4])
        @example(payload=EXAMPLES[5])
        @example(payload=EXAMPLES[6])
        @example(payload=EXAMPLES[7])
        @example(payload=EXAMPLES[8])
        def check(payload: Any) -> None:
            runner.run(one(payload))

        try:
            check()
            runner.run(asyncio.sleep(0.3))  # a second answer to any id would be in by now
            results = peer.invoke_results()
            answered = Counter(r.get("id") for r in results)
            assert {i: n for i, n in answered.items() if n != 1} == {}
            sentinels = {i for i in answered if isinstance(i, str) and i.startswith("s")}
            assert set(answered) - sentinels == set(expected)
            for result in results:
                assert isinstance(result["ok"], bool), result
                if result["id"] in sentinels:
                    assert result["ok"] is True, result
                elif not result["ok"]:
                    code, message = result["error"]["code"], result["error"]["message"]
                    assert re.fullmatch(r"[A-Z][A-Z0-9_]+", code), result
                    assert isinstance(message, str) and message, result
            ran = [
                r
                for r in results
                if r["ok"] and isinstance(r.get("payload"), dict) and "exitCode" in r["payload"]
            ]
            assert ran == [], "security: deny runs nothing"
            codes = [(r.get("error") or {}).get("code") for r in results]
            assert "SYSTEM_RUN_DENIED" in codes, "system.run answered the policy's refusal"
            assert any(r["ok"] and "apps" in (r.get("payload") or {}) for r in results)
            assert len(peers) == 1, "the node stayed on its first connection"
            assert len(commands_sent) >= 8, commands_sent
            assert len(expected) > 60, (len(expected), next(counter))
        finally:
            runner.run(session.aclose())
            runner.run(connection.aclose())
            runner.run(gw_cm.__aexit__(None, None, None))
    errors = [
        f"{r.name}: {r.getMessage()}"
        for r in caplog.get_records("call")
        if r.levelno >= logging.ERROR and r.name.startswith(("openclaw", "asyncio"))
    ]
    assert errors == []
