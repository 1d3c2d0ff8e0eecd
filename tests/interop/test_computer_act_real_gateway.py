"""``computer.act`` and the v2 ``screen.snapshot`` on our node, invoked through the REAL
OpenClaw gateway's ``node.invoke``.

Our headless node (``openclaw-desktop node``) runs with Screen and Computer control on, on a
private Xvfb where the Tk text window of :mod:`tests.helpers.x_text_window` runs; it pairs
with the real gateway (2026.9.6, ``screen.snapshot`` and ``computer.act`` allowed). An
operator's ``node.invoke`` takes a snapshot in an execution (the gateway's ``computer`` tool's
params), clicks and types on its frame (the window's own text shows it), and a malformed
request is refused by the real gateway itself before dispatch (its ``cua-computer`` policy
classifies the arguments), a well-formed one on a guessed frame is the node's typed
``COMPUTER_STALE_FRAME`` as the gateway relays it, and the node acts again afterwards.
The same unclassifiable requests sent to the real gateway and to our bundled one (the same
node code behind each) get the same answer.

The two tests share one real gateway in that config (:func:`computer_gateway`): each starts
its own Xvfb, window and node (a fresh home, so a fresh device identity and node id, with its
own surface approval), invokes only that node by id, in executions of its own (fresh uuids),
and stops it at its end.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.config import NodeSettings
from openclaw_desktop.integration.command import EMBEDDED_ALLOW
from openclaw_desktop.node import NodeContext, build_dispatcher
from openclaw_desktop.node.computer_control import descriptor
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.approved_node import approved_node
from tests.helpers.bundled_gateway import RawClient, bundled_gateway, operator_options, raw_operator
from tests.helpers.computer_node import paired_computer_node
from tests.helpers.desktop_session import xvfb
from tests.helpers.real_openclaw import GatewayFactory, OpenClawInstall, RealGateway
from tests.helpers.x_text_window import TextWindow, text_window

pytestmark = pytest.mark.timeout(420)

BOTH = {"screen.snapshot", "computer.act"}


@dataclass
class Rig:
    """The real gateway, an operator on it, our node's id, the window and its display."""

    gw: RealGateway
    op: RawClient
    node_id: str
    window: TextWindow
    display: str

    async def invoke(self, command: str, params: Any) -> Any:
        return await self.op.call(
            "node.invoke",
            {
                "nodeId": self.node_id,
                "command": command,
                "params": params,
                "idempotencyKey": f"k-{time.monotonic_ns()}",
            },
            timeout=90,
        )


@pytest.fixture(scope="module")
def computer_gateway(openclaw_install: OpenClawInstall) -> Iterator[RealGateway]:
    """The module's real gateway: its defaults plus both commands allowed (shared: see the
    module's docstring)."""
    with GatewayFactory(openclaw_install) as factory:
        yield factory(allow=tuple(sorted(BOTH)))


@pytest.fixture
async def rig(computer_gateway: RealGateway, tmp_path: Path) -> AsyncIterator[Rig]:
    gw = computer_gateway
    with xvfb() as screen:
        async with (
            text_window(screen.display, tmp_path) as window,
            paired_computer_node(gw, screen.display, tmp_path / "desktop") as node_id,
            raw_operator(
                gw.url, auth={"token": gw.token}, client_id="cli", client_mode="cli"
            ) as op,
        ):
            yield Rig(gw, op, node_id, window, screen.display)


async def test_snapshot_click_and_type_through_the_real_gateway(rig: Rig) -> None:
    """The computer tool's snapshot params give a frame; a click on it and a type reach the
    window; a malformed action is refused by the gateway, a guessed frame by the node; the
    node acts again afterwards; the execution closes."""
    listed = await rig.op.call("node.list", {}, timeout=30)
    ours = next(n for n in listed["payload"]["nodes"] if n["nodeId"] == rig.node_id)
    # accepted and kept as advertised (the generation is the node process's own)
    advertised = ours["computerUse"]
    expected = descriptor()
    assert advertised["provider"]["generation"], advertised
    advertised["provider"]["generation"] = expected["provider"]["generation"] = "-"
    assert advertised == expected, ours
    execution = str(uuid.uuid4())
    shot = await rig.invoke(
        "screen.snapshot",
        {"executionId": execution, "maxWidth": 320, "quality": 0.85, "format": "jpeg"},
    )
    assert shot["ok"] is True, shot
    frame = shot["payload"]["payload"]
    assert (frame["width"], frame["height"], frame["format"]) == (320, 240, "jpeg")
    assert frame["displayFrameId"] and frame["screenIndex"] == 0

    click = {
        "action": "left_click",
        "executionId": execution,
        "displayFrameId": frame["displayFrameId"],
        "refWidth": 320,
        "x": 100,
        "y": 60,
    }
    clicked = await rig.invoke("computer.act", click)
    assert clicked["ok"] is True, clicked
    assert clicked["payload"]["payload"]["ok"] is True
    await rig.window.until(lambda s: [1, 200, 120] in s["presses"])

    typed = await rig.invoke(
        "computer.act", {"action": "type", "executionId": execution, "text": "über gw"}
    )
    assert typed["ok"] is True, typed
    await rig.window.until(lambda s: "über gw" in s["text"])

    bad = await rig.invoke(
        "computer.act", {"action": "scroll", "executionId": execution, "scrollDirection": "in"}
    )
    # the real gateway classifies computer.act arguments (its cua-computer plugin policy)
    # before dispatch: a malformed action never reaches the node
    assert bad["ok"] is False, bad
    assert bad["error"]["code"] == "INVALID_REQUEST", bad
    assert bad["error"]["details"] == {
        "nodeCommandDispatched": False,
        "code": "PLUGIN_POLICY_RISK_CLASSIFICATION_FAILED",
    }, bad
    stale = await rig.invoke("computer.act", dict(click, displayFrameId="frame-guessed"))
    assert stale["ok"] is False and "COMPUTER_STALE_FRAME" in str(stale["error"]), stale

    key = await rig.invoke(
        "computer.act", {"action": "key", "executionId": execution, "keys": "Return"}
    )
    assert key["ok"] is True, key
    await rig.window.until(lambda s: "über gw\n" in s["text"])
    closed = await rig.invoke(
        "computer.act", {"action": "__close_execution", "executionId": execution}
    )
    assert closed["ok"] is True and closed["payload"]["payload"] == {"ok": True}, closed


EXECUTION = str(uuid.uuid4())
#: No v2 computer action (the real gateway's cua-computer policy refuses them before
#: dispatch), then a well-formed one our node refuses (no executionId).
SIDE_BY_SIDE: list[Any] = [
    {"action": "scroll", "executionId": EXECUTION, "scrollDirection": "in"},
    {"action": "left_click", "executionId": "not-a-uuid", "x": 1, "y": 1},
    {"action": "left_click", "executionId": EXECUTION, "x": None},
    {"action": "type", "executionId": EXECUTION, "text": "a", "extra": 1},
    {"action": "screenshot"},
    {"action": "kill_app"},
    [1, 2],
    "text",
    {"action": "left_click"},
]


async def test_both_gateways_refuse_unclassifiable_actions_alike(
    rig: Rig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each request to the real gateway and to ours (our node on each, the same settings):
    the same error, code, message and details; only the last reached the node (whose
    refusal both relay the policy's way)."""
    monkeypatch.setenv("DISPLAY", rig.display)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("XDG_SESSION_TYPE", "x11")
    settings = NodeSettings(screen=True, computer=True)
    dispatcher = build_dispatcher(NodeContext(settings=lambda: settings))
    async with (
        bundled_gateway(tmp_path / "gw", nodes_allow=list(EMBEDDED_ALLOW)) as ours,
        GatewayConnection(operator_options(ours.url)) as operator,
        approved_node(ours.url, operator, dispatcher, settings, computer_use=descriptor()) as node,
        raw_operator(ours.url) as op,
    ):
        for params in SIDE_BY_SIDE:
            real = await rig.invoke("computer.act", params)
            mine = await op.call(
                "node.invoke",
                {
                    "nodeId": node.identity.device_id,
                    "command": "computer.act",
                    "params": params,
                    "idempotencyKey": f"k-{time.monotonic_ns()}",
                },
                timeout=30,
            )
            assert real["ok"] is False and mine["ok"] is False, (params, real, mine)
            assert mine["error"] == real["error"], (params, real["error"], mine["error"])
        assert node.session.handled == 1
    assert rig.window.state()["presses"] == [] and rig.window.state()["keys"] == []
