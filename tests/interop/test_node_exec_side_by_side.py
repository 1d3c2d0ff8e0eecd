"""Our node's exec commands side by side with the real node host (``openclaw node run``),
both paired with the real OpenClaw gateway on its defaults: the same ``node.invoke`` calls
(``system.which``, ``system.run``: exit codes, output, truncation, timeouts, cancel, bad
input; ``system.run.prepare``) and the same ``exec.approvals.node.get/set`` calls (hashes,
conflicts, policy decisions) give the same answers modulo ids, paths and times; and
``openclaw approvals allowlist add --node <ours>`` changes our node's document.

What each node sends is seen through a loopback WebSocket relay in front of the real
gateway: while ``system.run`` runs, our node streams its output as ``node.invoke.progress``
(the real gateway answers ``{ok: true, ignored: true}``: it consumes progress only for its
own plugin-runtime streams), the real node host sends none; the final results are the same.

Through our bundled gateway: ``system.run`` reaches our node, and so does
``exec.approvals.node.get`` (the approvals CLI's ``--node``), as through the real gateway.

The three tests through the real gateway share one, on its defaults (:func:`gateway`): each
pairs a node host and a node of its own (fresh device identities, so fresh node ids, surface
approvals and approvals documents, which live on the nodes), calls only its own nodes by id,
and stops them at its end; the real node host is told apart from the earlier tests' nodes as
the connected node that is not ours.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import websockets
from websockets.asyncio.server import Server, ServerConnection

from openclaw_desktop.config import NodeSettings, Settings, SettingsStore
from tests.helpers.bundled_gateway import BundledGateway, DesktopNode, RawClient, raw_operator
from tests.helpers.real_openclaw import NodeHostFactory, RealGateway

pytestmark = pytest.mark.timeout(420)

EXEC = {
    "system.run.prepare",
    "system.run",
    "system.which",
    "system.execApprovals.get",
    "system.execApprovals.set",
}


@dataclass
class Pair:
    """The real gateway, an operator on it, and the two nodes' ids."""

    gw: RealGateway
    op: RawClient
    ours: str
    real: str
    home: Path

    async def call(self, method: str, params: dict[str, Any], node: str) -> dict[str, Any]:
        full = {"nodeId": node, **params}
        if method == "node.invoke":
            full["idempotencyKey"] = f"k-{time.monotonic_ns()}"
        return await self.op.call(method, full, timeout=90)

    async def both(
        self, method: str, params: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        ours, real = await asyncio.gather(
            self.call(method, params, self.ours), self.call(method, params, self.real)
        )
        return ours, real

    async def run(self, params: dict[str, Any], **extra: Any) -> tuple[Any, Any]:
        ours, real = await self.both(
            "node.invoke", {"command": "system.run", "params": params, **extra}
        )
        return _answer(ours), _answer(real)


def _answer(res: dict[str, Any]) -> Any:
    """A gateway answer without what differs by node (ids, the raw payload text)."""
    if res["ok"]:
        payload = dict(res["payload"])
        payload.pop("nodeId", None)
        payload.pop("payloadJSON", None)
        return {"ok": True, **payload}
    error = dict(res["error"])
    details = error.get("details")
    return {"ok": False, "code": error["code"], "message": error["message"], "details": details}


async def until(probe: Any, what: str, timeout: float = 90) -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await asyncio.to_thread(probe)
        if value:
            return value
        if loop.time() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.5)


async def approve_exec_surfaces(gw: RealGateway, node_ids: list[str]) -> None:
    """Approve the pending surfaces until both nodes have the exec commands active."""

    def both_active() -> bool:
        for row in gw.cli_json("nodes", "pending"):
            if row["nodeId"] in node_ids:
                gw.cli_json("nodes", "approve", row["requestId"])
        nodes = {n["nodeId"]: n for n in gw.cli_json("nodes", "status")["nodes"]}
        return all(
            nodes.get(i, {}).get("connected") and set(nodes[i].get("commands") or []) >= EXEC
            for i in node_ids
        )

    await until(both_active, "both nodes with system.run active", 120)


@pytest.fixture(scope="module")
def gateway(real: RealGateway) -> RealGateway:
    """The module's real gateway on its defaults (shared: see the module's docstring)."""
    return real


def real_node_id(gw: RealGateway, ours: str) -> str | None:
    """The node host's id: the connected node that is not ours (the nodes of the tests
    before, paired with the same gateway, are listed too, disconnected)."""
    nodes = gw.cli_json("nodes", "status")["nodes"]
    return next((n["nodeId"] for n in nodes if n.get("connected") and n["nodeId"] != ours), None)


@pytest.fixture
async def pair(
    gateway: RealGateway, real_node_host: NodeHostFactory, tmp_path: Path
) -> AsyncIterator[Pair]:
    gw = gateway
    host = real_node_host(gw)
    home = tmp_path / "desktop"
    SettingsStore(home / "config" / "settings.json").save(Settings(node=NodeSettings(exec=True)))
    node = DesktopNode.start(home, url=gw.url, token=gw.token)
    try:
        ours = await asyncio.to_thread(lambda: node.device_id)
        assert host.running
        real = await until(lambda: real_node_id(gw, ours), "the real node host to appear")
        await approve_exec_surfaces(gw, [ours, real])
        async with raw_operator(
            gw.url, auth={"token": gw.token}, client_id="cli", client_mode="cli"
        ) as op:
            yield Pair(gw, op, ours, real, home)
    finally:
        node.stop()


INJECTED = "tap-"
#: Malformed ``node.invoke.progress`` params (from the node's own connection) and the real
#: gateway's answer to each, which our bundled gateway gives too
#: (``tests/integration/node/test_exec_progress_bundled.py``).
BAD_PROGRESS: list[tuple[dict[str, Any], str]] = [
    ({"nodeId": "someone-else"}, "nodeId mismatch"),
    ({"chunk": "€" * 6000}, "progress chunk too large"),
    (
        {"invokeId": None},
        "invalid node.invoke.progress params: must have required property 'invokeId'",
    ),
    ({"seq": -1}, "invalid node.invoke.progress params: at /seq: must be >= 0"),
    ({"extra": 1}, "invalid node.invoke.progress params: at root: unexpected property 'extra'"),
    (
        {"chunk": "x" * 16385},
        "invalid node.invoke.progress params: at /chunk: must not have more than 16384 characters",
    ),
]


@dataclass
class Tap:
    """A loopback WebSocket relay in front of the real gateway, recording the text frames a
    node sends through it and the ones it gets back (both still pass unchanged)."""

    upstream: str
    sent: list[dict[str, Any]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    server: Server | None = None
    gateway: Any = None

    @property
    def port(self) -> int:
        assert self.server is not None
        port: int = next(iter(self.server.sockets)).getsockname()[1]
        return port

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    async def _relay(self, client: ServerConnection) -> None:
        async with websockets.connect(self.upstream, max_size=None) as gateway:
            self.gateway = gateway

            async def pump(src: Any, dst: Any, log: list[dict[str, Any]]) -> None:
                async for message in src:
                    frame = json.loads(message) if isinstance(message, str) else {}
                    log.append(frame)
                    if not str(frame.get("id", "")).startswith(INJECTED):
                        await dst.send(message)

            tasks = [
                asyncio.create_task(pump(client, gateway, self.sent)),
                asyncio.create_task(pump(gateway, client, self.received)),
            ]
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def inject(self, method: str, params: Any) -> dict[str, Any]:
        """Send a request on the node's own connection, as the node; the answer is kept
        from the node."""
        frame_id = f"{INJECTED}{len(self.received)}-{time.monotonic_ns()}"
        await self.gateway.send(
            json.dumps({"type": "req", "id": frame_id, "method": method, "params": params})
        )
        async with asyncio.timeout(10):
            while True:
                for frame in self.received:
                    if frame.get("id") == frame_id:
                        return frame
                await asyncio.sleep(0.02)

    def progress(self) -> list[tuple[dict[str, Any], Any]]:
        """Each ``node.invoke.progress`` request sent, with the gateway's answer (or None)."""
        answers = {f.get("id"): f for f in self.received if f.get("type") == "res"}
        return [
            (frame["params"], answers.get(frame["id"]))
            for frame in self.sent
            if frame.get("type") == "req" and frame.get("method") == "node.invoke.progress"
        ]


@contextlib.asynccontextmanager
async def tap(upstream: str) -> AsyncIterator[Tap]:
    """A :class:`Tap` listening on a free loopback port; closed on exit."""
    relay = Tap(upstream)
    relay.server = await websockets.serve(relay._relay, "127.0.0.1", 0, max_size=None)
    try:
        yield relay
    finally:
        relay.server.close()
        await relay.server.wait_closed()


def _gone(pid: int) -> bool:
    """Gone, or a zombie waiting for whoever inherited it to reap it (it runs no more)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return True


async def test_system_run_and_which_answer_as_the_real_node_host(
    pair: Pair, tmp_path: Path
) -> None:
    """Same invokes, same answers (modulo node ids)."""
    same_cases: list[dict[str, Any]] = [
        {"command": ["printf", "%s|", "a b", "$HOME"]},
        {"command": ["sh", "-c", "echo oops >&2; exit 3"]},
        {"command": ["sh", "-c", "printf out; printf err >&2"]},
        {"command": ["/nonexistent/tool"]},
        {"command": ["sleep", "5"], "timeoutMs": 300},
        {"command": ["sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x"]},
        {"command": ["sh", "-c", "head -c 300000 /dev/zero | tr '\\0' e >&2; echo out"]},
        {"command": ["env"], "env": {"PATH": "/tmp", "LD_PRELOAD": "x", "A-B": "1"}},
        {"command": ["env"], "env": {"HOME": "/tmp"}},
        {"command": ["sh", "-c", 'echo "[$GREETING]"'], "env": {"GREETING": "hi"}},
        {"command": ["pwd"], "cwd": str(tmp_path)},
        {},
        {"command": []},
        {"command": ["ls"], "rawCommand": "rm -rf /"},
        {"command": ["ls"], "approved": True},
        {"command": ["ls"], "approvalSource": "bogus"},
    ]
    for params in same_cases:
        ours, real = await pair.run(params)
        assert ours == real, params
    # One line per inherited variable: the same names are dropped (the nodes' own
    # variables differ: HOME, the state folders, ...); overrides reach the command.
    ours, real = await pair.run({"command": ["env"], "env": {"GREETING": "hi"}})
    for answer in (ours, real):
        lines = answer["payload"]["stdout"].splitlines()
        assert "GREETING=hi" in lines and "OPENCLAW_CLI=1" in lines, answer
        assert not [line for line in lines if line.startswith(("LD_", "NODE_OPTIONS="))]
    # A missing working directory: the same message but for the OS's own words.
    ours, real = await pair.run({"command": ["ls"], "cwd": "/nonexistent-dir"})
    assert ours == real
    which = {"command": "system.which", "params": {"bins": ["sh", "no-such-bin-xyz", "", 3]}}
    ours_w, real_w = await pair.both("node.invoke", which)
    assert _answer(ours_w) == _answer(real_w)
    for params in ({}, {"bins": "sh"}):
        bad = {"command": "system.which", "params": params}
        ours_w, real_w = await pair.both("node.invoke", bad)
        assert _answer(ours_w) == _answer(real_w), params

    # Cancel: the gateway's invoke deadline passes while a command and its child run; the
    # caller gets the same answer, and on our node the whole process group is gone.
    pids = {who: tmp_path / f"{who}.pid" for who in ("ours", "real")}
    calls = [
        pair.call(
            "node.invoke",
            {
                "command": "system.run",
                "params": {"command": ["sh", "-c", f"sleep 60 & echo $! > {pids[who]}; wait"]},
                "timeoutMs": 3000,
            },
            node,
        )
        for who, node in (("ours", pair.ours), ("real", pair.real))
    ]
    ours_c, real_c = await asyncio.gather(*calls)
    assert _answer(ours_c)["code"] == _answer(real_c)["code"]
    assert _answer(ours_c)["message"] == _answer(real_c)["message"]
    child = int(pids["ours"].read_text())
    await until(lambda: _gone(child), "our node to end the cancelled command's child", 15)
    real_child = int(pids["real"].read_text())
    real_gone = await asyncio.to_thread(lambda: _wait_gone(real_child, 15))
    assert real_gone == _gone(child), "the real node host ends the process tree on cancel too"

    prepared = {"command": "system.run.prepare", "params": {"command": ["printf", "ok"]}}
    ours_p, real_p = await pair.both("node.invoke", prepared)
    ours_plan, real_plan = (
        ours_p["payload"]["payload"]["plan"],
        real_p["payload"]["payload"]["plan"],
    )
    assert ours_plan["argv"] == real_plan["argv"]
    assert ours_plan["commandText"] == real_plan["commandText"]
    assert ours_plan["policySnapshot"] == real_plan["policySnapshot"]
    assert ours_p["payload"]["payload"]["execPolicy"] == real_p["payload"]["payload"]["execPolicy"]


async def test_our_node_streams_run_output_the_real_gateway_ignores(
    gateway: RealGateway, real_node_host: NodeHostFactory, tmp_path: Path
) -> None:
    """A command printing a line every 0.2 s, on both nodes through the real gateway: our
    node sends its output as node.invoke.progress (seq 0.., in order, before the result,
    together a prefix of the result's stdout), each answered {ok: true, ignored: true}; the
    real node host sends none; both results are the same."""
    gw = gateway
    home = tmp_path / "desktop"
    SettingsStore(home / "config" / "settings.json").save(Settings(node=NodeSettings(exec=True)))
    async with tap(gw.url) as ours_tap, tap(gw.url) as real_tap:
        host = real_node_host(gw, port=real_tap.port)
        node = DesktopNode.start(home, url=ours_tap.url, token=gw.token)
        try:
            ours = await asyncio.to_thread(lambda: node.device_id)
            assert host.running
            real = await until(lambda: real_node_id(gw, ours), "the real node host to appear")
            await approve_exec_surfaces(gw, [ours, real])
            async with raw_operator(
                gw.url, auth={"token": gw.token}, client_id="cli", client_mode="cli"
            ) as op:
                pair = Pair(gw, op, ours, real, home)
                script = 'for i in 1 2 3 4 5 6; do echo "line $i é€"; sleep 0.2; done'
                ours_run, real_run = await pair.run({"command": ["sh", "-c", script]})
                good = {"invokeId": "no-such-invoke", "nodeId": ours, "seq": 0, "chunk": "hi"}
                unknown = await ours_tap.inject("node.invoke.progress", good)
                refusals = []
                for change, _message in BAD_PROGRESS:
                    params = {k: v for k, v in {**good, **change}.items() if v is not None}
                    refusals.append(await ours_tap.inject("node.invoke.progress", params))
        finally:
            node.stop()
    expected = "".join(f"line {i} é€\n" for i in range(1, 7))
    assert ours_run == real_run
    assert ours_run["payload"]["stdout"] == expected
    assert real_tap.progress() == []  # the real node host answers once, at the end
    streamed = ours_tap.progress()
    assert len(streamed) >= 2, streamed  # while it ran, not once at the end
    assert [p["seq"] for p, _ in streamed] == list(range(len(streamed)))
    assert {p["nodeId"] for p, _ in streamed} == {ours}
    assert len({p["invokeId"] for p, _ in streamed}) == 1
    assert "".join(p["chunk"] for p, _ in streamed) == expected
    for _params, answer in streamed:
        assert answer is not None and answer["ok"] is True, answer
        assert answer["payload"] == {"ok": True, "ignored": True}
    # the real gateway's answers to progress it cannot use (ours gives the same)
    assert unknown["ok"] is True and unknown["payload"] == {"ok": True, "ignored": True}
    for (change, message), answer in zip(BAD_PROGRESS, refusals, strict=True):
        assert answer["ok"] is False, (change, answer)
        assert (answer["error"]["code"], answer["error"]["message"]) == (
            "INVALID_REQUEST",
            message,
        ), change
    # every chunk went out before the result
    (invoke_id,) = {p["invokeId"] for p, _ in streamed}
    requests = [f for f in ours_tap.sent if f.get("type") == "req"]
    last_progress = max(
        i for i, f in enumerate(requests) if f.get("method") == "node.invoke.progress"
    )
    (result_at,) = [
        i
        for i, f in enumerate(requests)
        if f.get("method") == "node.invoke.result" and f["params"].get("id") == invoke_id
    ]
    assert result_at > last_progress


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _gone(pid):
            return True
        time.sleep(0.2)
    os.kill(pid, 9)  # the test started it: do not leave it behind
    return False


async def test_exec_approvals_documents_hashes_and_policy_match(pair: Pair) -> None:
    """The approvals document through exec.approvals.node.get/set: same shape, same
    conflict errors, same policy decisions; the approvals CLI changes our document."""
    ours, real = await pair.both("exec.approvals.node.get", {})
    assert ours["ok"] and real["ok"], (ours, real)
    doc_ours, doc_real = ours["payload"], real["payload"]
    assert set(doc_ours) == set(doc_real) == {"path", "exists", "hash", "file"}
    assert doc_ours["exists"] is doc_real["exists"] is True
    assert set(doc_ours["file"]) == set(doc_real["file"])
    assert {k: v for k, v in doc_ours["file"].items() if k != "socket"} == {
        k: v for k, v in doc_real["file"].items() if k != "socket"
    }
    assert set(doc_ours["file"]["socket"]) == set(doc_real["file"]["socket"]) == {"path"}
    assert len(doc_ours["hash"]) == len(doc_real["hash"]) == 64

    deny = {"version": 1, "defaults": {"security": "deny"}}
    for params in ({"file": deny}, {"file": deny, "baseHash": "0" * 64}, {"baseHash": "x"}):
        ours, real = await pair.both("exec.approvals.node.set", params)
        assert _answer(ours) == _answer(real), params

    async def set_both(file: dict[str, Any]) -> None:
        for node in (pair.ours, pair.real):
            current = (await pair.call("exec.approvals.node.get", {}, node))["payload"]
            saved = await pair.call(
                "exec.approvals.node.set", {"file": file, "baseHash": current["hash"]}, node
            )
            assert saved["ok"], saved
            assert saved["payload"]["hash"] != current["hash"]
            stale = await pair.call(
                "exec.approvals.node.set", {"file": file, "baseHash": current["hash"]}, node
            )
            assert not stale["ok"] and "changed; reload and retry" in stale["error"]["message"]

    await set_both(deny)
    assert _same(*(await pair.run({"command": ["true"]})))
    uname = await asyncio.to_thread(lambda: os.path.realpath("/usr/bin/uname"))
    allow = {
        "version": 1,
        "defaults": {"security": "allowlist", "ask": "off", "askFallback": "deny"},
        "agents": {"main": {"allowlist": [{"pattern": uname}]}},
    }
    await set_both(allow)
    runs: list[dict[str, Any]] = [
        {"command": [uname, "-s"]},  # no agent: "main" entries do not apply
        {"command": [uname, "-s"], "agentId": "main"},
        {"command": ["/usr/bin/id"], "agentId": "main"},
        {"command": ["uname", "-s"], "agentId": "main"},
    ]
    for params in runs:
        assert _same(*(await pair.run(params))), params
    # The entry that allowed a run records it, on both nodes alike (the hash moves on).
    ours, real = await pair.both("exec.approvals.node.get", {})
    (ours_entry,) = ours["payload"]["file"]["agents"]["main"]["allowlist"]
    (real_entry,) = real["payload"]["file"]["agents"]["main"]["allowlist"]
    assert set(ours_entry) == set(real_entry), (ours_entry, real_entry)
    for key in ("pattern", "lastUsedCommand", "lastResolvedPath"):
        assert ours_entry.get(key) == real_entry.get(key), key
    ours, real = await pair.both("exec.approvals.node.get", {})
    assert (
        ours["payload"]["file"]["defaults"]
        == real["payload"]["file"]["defaults"]
        == allow["defaults"]
    )
    on_miss = {"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss"}}
    await set_both(on_miss)
    assert _same(*(await pair.run({"command": ["/usr/bin/id"]})))  # nobody to ask: deny

    # The operator CLI, through the real gateway, edits our node's document.
    await set_both({"version": 1})
    for node in (pair.ours, pair.real):
        await asyncio.to_thread(
            pair.gw.cli, "approvals", "allowlist", "add", "--node", node, "/usr/bin/uname"
        )
    stored = json.loads((pair.home / "config" / "exec-approvals.json").read_text("utf-8"))
    (entry,) = stored["agents"]["*"]["allowlist"]
    assert entry["pattern"] == "/usr/bin/uname"
    ours, real = await pair.both("exec.approvals.node.get", {})
    assert _entries(ours) == _entries(real) == [{"pattern": "/usr/bin/uname"}]


def _entries(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``*`` allowlist without its generated id and time."""
    return [
        {k: v for k, v in e.items() if k not in ("id", "lastUsedAt")}
        for e in doc["payload"]["file"]["agents"]["*"]["allowlist"]
    ]


def _same(ours: Any, real: Any) -> bool:
    """Equal answers (an approval error's text is compared too)."""
    assert ours == real, (ours, real)
    return True


async def test_bundled_gateway_forwards_run_and_approvals(tmp_path: Path) -> None:
    """Our bundled gateway: system.run reaches our node, and so does exec.approvals.node.get
    (the approvals CLI's ``--node``): the node's own document comes back, as through the
    real gateway."""
    home = tmp_path / "desktop"
    SettingsStore(home / "config" / "settings.json").save(Settings(node=NodeSettings(exec=True)))
    with BundledGateway.start() as gw:  # its defaults, as the real gateway's: no --allow
        node = DesktopNode.start(home, url=gw.url, token=gw.token)
        try:
            node_id = await asyncio.to_thread(lambda: node.device_id)

            def approved() -> bool:
                for row in gw.cli_json("nodes", "pending")["pending"]:
                    if row["nodeId"] == node_id:
                        gw.cli("nodes", "approve", row["requestId"])
                entry = next(
                    (n for n in gw.cli_json("nodes", "list")["nodes"] if n["nodeId"] == node_id),
                    None,
                )
                return bool(entry and entry.get("connected") and set(entry["commands"]) >= EXEC)

            await until(approved, "our node approved on the bundled gateway", 90)
            async with raw_operator(gw.url, auth={"token": gw.token}) as op:
                res = await op.call(
                    "node.invoke",
                    {
                        "nodeId": node_id,
                        "command": "system.run",
                        "params": {"command": ["printf", "hi"]},
                        "idempotencyKey": "k1",
                    },
                    timeout=60,
                )
                assert res["ok"], res
                assert res["payload"]["payload"]["stdout"] == "hi"
                got = await op.call("exec.approvals.node.get", {"nodeId": node_id}, timeout=60)
                assert got["ok"], got
                assert {"path", "exists", "hash", "file"} <= set(got["payload"]), got
        finally:
            node.stop()
