"""The devices/nodes admin subcommands map to the right operator RPCs."""

from __future__ import annotations

import argparse

import pytest

from openclaw_desktop.cli import _parser
from openclaw_desktop.cli_admin import admin_request
from openclaw_desktop.errors import ConfigError


def parse(*argv: str) -> argparse.Namespace:
    """Parse a command line."""
    return _parser().parse_args(list(argv))


@pytest.mark.parametrize(
    ("argv", "method", "params"),
    [
        (("devices", "list"), "device.pair.list", {}),
        (("devices", "approve", "r1"), "device.pair.approve", {"requestId": "r1"}),
        (("devices", "reject", "r2"), "device.pair.reject", {"requestId": "r2"}),
        (("nodes", "list"), "node.list", {}),
        (("nodes", "pending"), "node.pair.list", {}),
        (("nodes", "approve", "n1"), "node.pair.approve", {"requestId": "n1"}),
        (("nodes", "reject", "n2"), "node.pair.reject", {"requestId": "n2"}),
    ],
)
def test_admin_methods(argv: tuple[str, ...], method: str, params: dict[str, str]) -> None:
    """Each admin action is one operator RPC with the request id as params."""
    got_method, got_params, _timeout = admin_request(parse(*argv))
    assert got_method == method
    assert got_params == params


def test_invoke_builds_node_invoke() -> None:
    """`nodes invoke` sends node.invoke with parsed params, a timeout and a fresh key."""
    args = parse(
        "nodes", "invoke", "--node", "abc", "--command", "device.info", "--params", '{"a": 1}'
    )
    method, params, timeout = admin_request(args)
    assert method == "node.invoke"
    assert params["nodeId"] == "abc"
    assert params["command"] == "device.info"
    assert params["params"] == {"a": 1}
    assert params["timeoutMs"] == 30_000
    assert params["idempotencyKey"]
    assert timeout > 30


@pytest.mark.parametrize(
    "argv",
    [
        ("devices", "approve"),
        ("nodes", "reject"),
        ("nodes", "invoke", "--node", "abc"),
        ("nodes", "invoke", "--node", "abc", "--command", "x", "--params", "{not json"),
    ],
)
def test_bad_admin_usage_is_a_config_error(argv: tuple[str, ...]) -> None:
    """Missing ids, missing --command and invalid JSON are clear usage errors."""
    with pytest.raises(ConfigError):
        admin_request(parse(*argv))
