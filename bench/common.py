"""Shared pieces of the benchmarks: percentiles, an echo node, an operator, RSS."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from openclaw_desktop.config.client_profile import cli_client, node_client
from openclaw_desktop.identity import CredentialStore, DeviceIdentity, MemorySecretStore
from openclaw_desktop.node import (
    CommandRegistry,
    CommandSpec,
    InvokeDispatcher,
    InvokeResult,
    NodeSession,
)
from openclaw_desktop.protocol import Role
from openclaw_desktop.transport import ConnectionOptions, GatewayConnection

ECHO = "bench.echo"
ADMIN_SCOPES = ("operator.read", "operator.write", "operator.admin", "operator.pairing")


def pct(values: list[float], q: float) -> float:
    """Percentile (nearest rank) of seconds, in milliseconds."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))
    return ordered[index] * 1000


def summary(samples: list[float]) -> dict[str, float]:
    """p50/p99 in ms and the sample count."""
    return {"p50": pct(samples, 50), "p99": pct(samples, 99), "n": len(samples)}


async def echo(params: Any) -> InvokeResult:
    """Return the params unchanged."""
    return InvokeResult.success(params)


def operator_options(url: str, token: str, **kw: Any) -> ConnectionOptions:
    """A fresh operator identity with admin scopes."""
    base: dict[str, Any] = {
        "url": url,
        "role": Role.OPERATOR,
        "client": cli_client(),
        "signer": DeviceIdentity.generate(),
        "credentials": CredentialStore(MemorySecretStore()),
        "scopes": ADMIN_SCOPES,
        "shared_token": token,
    }
    base.update(kw)
    return ConnectionOptions(**base)


@contextlib.asynccontextmanager
async def operator(url: str, token: str) -> AsyncIterator[GatewayConnection]:
    """A connected operator."""
    conn = GatewayConnection(operator_options(url, token))
    conn.start()
    try:
        await conn.wait_ready(60)
        yield conn
    finally:
        await conn.aclose()


@contextlib.asynccontextmanager
async def approved_node(
    url: str,
    token: str,
    approver: GatewayConnection,
    dispatcher: InvokeDispatcher,
    caps: tuple[str, ...],
) -> AsyncIterator[str]:
    """A connected node answering with ``dispatcher`` (every command of its registry), its
    surface approved by ``approver``; yields its id."""
    ident = DeviceIdentity.generate()
    conn = GatewayConnection(
        ConnectionOptions(
            url=url,
            role=Role.NODE,
            client=node_client("bench-node"),
            signer=ident,
            credentials=CredentialStore(MemorySecretStore()),
            shared_token=token,
            commands=tuple(s.name for s in dispatcher.registry.specs),
            caps=caps,
            min_protocol=3,
        )
    )
    node = NodeSession(conn, dispatcher)
    conn.start()
    try:
        await conn.wait_ready(60)
        async with asyncio.timeout(30):
            while True:
                pending = (await approver.request("node.pair.list", {}))["pending"]
                mine = [p for p in pending if p["nodeId"] == ident.device_id]
                if mine:
                    await approver.request("node.pair.approve", {"requestId": mine[0]["requestId"]})
                    break
                await asyncio.sleep(0.1)
        yield ident.device_id
    finally:
        await node.aclose()
        await conn.aclose()


@contextlib.asynccontextmanager
async def echo_node(url: str, token: str, approver: GatewayConnection) -> AsyncIterator[str]:
    """A connected node offering ``bench.echo``, its surface approved; yields its id."""
    registry = CommandRegistry([CommandSpec(ECHO, "bench")])
    dispatcher = InvokeDispatcher(registry, {ECHO: echo}, dict)
    async with approved_node(url, token, approver, dispatcher, ("bench",)) as node_id:
        yield node_id


async def invoke(conn: GatewayConnection, node_id: str, payload: Any) -> Any:
    """One ``node.invoke`` of ``bench.echo``."""
    return await conn.request(
        "node.invoke",
        {"nodeId": node_id, "command": ECHO, "params": payload, "idempotencyKey": uuid.uuid4().hex},
        timeout_s=60,
    )


async def time_invokes(conn: GatewayConnection, node_id: str, n: int, size: int) -> list[float]:
    """Sequential round trips (after 5 warm-up calls)."""
    payload = {"blob": "x" * size}
    samples: list[float] = []
    for i in range(n + 5):
        start = time.perf_counter()
        result = await invoke(conn, node_id, payload)
        if i >= 5:
            samples.append(time.perf_counter() - start)
        assert len(result["payload"]["blob"]) == size
    return samples


async def throughput(conn: GatewayConnection, node_id: str, total: int, in_flight: int) -> float:
    """Invokes per second with ``in_flight`` requests outstanding."""
    semaphore = asyncio.Semaphore(in_flight)

    async def one() -> None:
        async with semaphore:
            await invoke(conn, node_id, {"n": 1})

    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(total)))
    return total / (time.perf_counter() - start)


def tree_rss_bytes(pid: int) -> int:
    """Resident memory of a process and all its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        stack.extend(children.get(current, []))
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total
