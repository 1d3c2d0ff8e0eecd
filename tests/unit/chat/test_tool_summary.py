"""What a tool card says about a call: the command, the node, the key arguments, redacted."""

from __future__ import annotations

from openclaw_desktop.chat import ChatTimeline
from openclaw_desktop.chat.tool_summary import SUMMARY_CHARS, describe_call
from openclaw_desktop.sdk.events import Event

SECRET = "sk-" + "a1b2c3d4" * 4


def test_our_node_invoke_names_command_node_and_params() -> None:
    """The bundled gateway's ``node_invoke``: command on node, then its params."""
    args = {"node": "laptop", "command": "screen.snapshot", "params": {"format": "png"}}
    assert describe_call("node_invoke", args) == "screen.snapshot on laptop · format=png"


def test_the_real_gateways_nodes_tool_reads_the_same() -> None:
    """The real ``nodes`` tool: ``invokeCommand`` and ``invokeParamsJson`` (JSON text), and
    its other actions (``camera_snap``) are the command; plumbing is left out."""
    invoke = {
        "action": "invoke",
        "node": "iPhone",
        "invokeCommand": "health.summary",
        "invokeParamsJson": '{"period": "today"}',
        "invokeTimeoutMs": 30000,
    }
    assert describe_call("nodes", invoke) == "health.summary on iPhone · period=today"
    snap = {"action": "camera_snap", "node": "pixel", "facing": "front"}
    assert describe_call("nodes", snap) == "camera_snap on pixel · facing=front"


def test_secrets_are_never_shown() -> None:
    """Secret-looking values and arguments named like secrets are redacted."""
    shell = describe_call("exec", {"command": f"curl -H 'Authorization: Bearer {SECRET}' x"})
    assert SECRET not in shell and "[redacted]" in shell
    named = describe_call("login", {"user": "ada", "password": "hunter2", "apiKey": "short"})
    assert named == "user=ada, password=[redacted], apiKey=[redacted]"
    nested = describe_call(
        "node_invoke", {"node": "n", "command": "system.run", "params": {"env": f"TOKEN={SECRET}"}}
    )
    assert SECRET not in nested


def test_summaries_are_one_bounded_line_without_control_characters() -> None:
    """Newlines, terminal escapes and long values cannot stretch or disguise a card."""
    args = {"command": "echo \x1b[31mred\x1b[0m\nrm -rf /", "note": "x" * 5_000, "n": 3}
    text = describe_call("exec", args)
    assert "\n" not in text and "\x1b" not in text
    assert text.startswith("echo red rm -rf /")
    assert len(text) <= SUMMARY_CHARS
    assert describe_call("nodes_list", {}) == ""
    assert describe_call("odd", ["not", "an", "object"]) == ""


def test_the_timeline_gives_live_and_history_cards_the_same_summary() -> None:
    """A card built from the live ``tool.call.started`` event and one rebuilt from
    ``chat.history`` (the ``toolCall`` block) say the same."""
    args = {"node": "laptop", "command": "screen.snapshot", "params": {"token": SECRET}}
    live = ChatTimeline("agent:main:main")
    live.apply(
        Event(
            "e1",
            1,
            "tool.call.started",
            {"toolCallId": "c1", "name": "node_invoke", "args": args},
            run_id="r1",
            session_key="agent:main:main",
        )
    )
    history = ChatTimeline("agent:main:main")
    history.merge_history(
        [
            {
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "id": "c1", "name": "node_invoke", "arguments": args}
                ],
                "stopReason": "toolUse",
                "__openclaw": {"id": "m1", "runId": "r1"},
            }
        ]
    )
    cards = [[i.tool for i in t.items if i.tool is not None] for t in (live, history)]
    summaries = [[c.summary for c in found] for found in cards]
    assert summaries[0] == summaries[1] == ["screen.snapshot on laptop · token=[redacted]"]
