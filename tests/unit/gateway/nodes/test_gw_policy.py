"""Unit tests: the node command policy reproduces the real gateway (2026.9.6)."""

from __future__ import annotations

import pytest

from gateway.nodes.policy import (
    DANGEROUS_COMMANDS,
    DESKTOP_HOST_COMMANDS,
    PRIVATE_COMMANDS,
    TALK_PTT_COMMANDS,
    CommandPolicy,
    PolicyDenial,
    default_allowlist,
    node_host_platform_metadata,
    normalize_platform_id,
    required_approve_scopes,
)

OLLAMA = {"ollama.models", "ollama.chat"}
MOBILE_DATA = {
    "contacts.search",
    "calendar.events",
    "reminders.list",
    "photos.latest",
    "motion.activity",
    "motion.pedometer",
}

# What a freshly paired node of each platform may invoke with no configuration
# (node-command-policy-*.mjs PLATFORM_DEFAULTS minus desktop host commands, plus the
# linux-node, canvas and ollama plugins that are enabled by default).
EXPECTED_DEFAULTS = {
    ("linux", "Linux"): {"system.notify", "computer.act", "camera.list", "location.get"} | OLLAMA,
    ("windows", "Windows"): {
        "camera.list",
        "location.get",
        "device.info",
        "device.status",
        "system.notify",
        "computer.act",
    }
    | OLLAMA,
    ("macos", "Mac"): {
        "camera.list",
        "camera.ptz.status",
        "location.get",
        "device.info",
        "device.status",
        "device.apps",
        "system.notify",
        "computer.act",
        "canvas.present",
        "canvas.hide",
        "canvas.navigate",
    }
    | MOBILE_DATA
    | OLLAMA,
    ("ios", "iPad"): {
        "camera.list",
        "location.get",
        "device.info",
        "device.status",
        "system.notify",
    }
    | MOBILE_DATA,
    ("ios", "iPhone"): {
        "camera.list",
        "location.get",
        "device.info",
        "device.status",
        "system.notify",
        "watch.status",
        "watch.notify",
    }
    | MOBILE_DATA,
    ("watchos", "Apple Watch"): {"device.info", "device.status", "system.notify"},
    ("android", "Android"): {
        "camera.list",
        "location.get",
        "notifications.list",
        "notifications.actions",
        "system.notify",
        "device.info",
        "device.status",
        "device.permissions",
        "device.health",
        "device.apps",
        "callLog.search",
        "mobile.ui.observe",
        "mobile.ui.act",
    }
    | MOBILE_DATA,
    ("plan9", None): {"camera.list", "location.get", "system.notify"},
}


@pytest.mark.parametrize(("platform", "family"), list(EXPECTED_DEFAULTS))
def test_default_allowlist_per_platform(platform: str, family: str | None) -> None:
    """Each platform's default list is exactly what the real gateway allows."""
    assert default_allowlist(platform, family) == EXPECTED_DEFAULTS[(platform, family)]
    assert (
        CommandPolicy().default_allowlist(platform, family) == EXPECTED_DEFAULTS[(platform, family)]
    )


def test_defaults_hold_no_dangerous_host_or_private_command() -> None:
    for platform, family in EXPECTED_DEFAULTS:
        allowed = default_allowlist(platform, family)
        assert not allowed & set(DANGEROUS_COMMANDS)
        assert not allowed & DESKTOP_HOST_COMMANDS
        assert not allowed & PRIVATE_COMMANDS


def test_dangerous_list_matches_the_source() -> None:
    """desktop.stream is a desktop host command in 2026.9.6, not a dangerous one."""
    assert set(DANGEROUS_COMMANDS) == {
        "camera.snap",
        "camera.clip",
        "camera.ptz.control",
        "screen.record",
        "contacts.add",
        "calendar.add",
        "reminders.add",
        "health.summary",
        "sms.send",
        "sms.search",
    }
    assert "desktop.stream" in DESKTOP_HOST_COMMANDS


@pytest.mark.parametrize(
    ("platform", "family", "expected"),
    [
        ("linux", "Linux", "linux"),
        ("Linux", " linux ", "linux"),
        ("linux", None, "unknown"),
        ("linux", "Mac", "unknown"),
        ("macos", "Mac", "macos"),
        ("darwin", "Mac", "unknown"),
        ("windows", "Windows", "windows"),
        ("ios", None, "ios"),
        ("ios", "iPhone", "ios"),
        ("ios", "Mac", "unknown"),
        ("android", None, "android"),
        ("iOS 18.1", "iPhone", "ios"),
        ("iPadOS 18", "iPad", "ios"),
        ("macOS 15.2.1", "Mac", "macos"),
        ("macOS 15.2.1", "iPhone", "unknown"),
        ("Android 15 (SDK 35)", "Android", "android"),
        ("watchOS 11", "Apple Watch", "watchos"),
        ("", "Linux desktop", "linux"),
        ("", "MacBook Pro", "macos"),
        (None, None, "unknown"),
        ("\uff4c\uff49\uff4e\uff55\uff58", "Linux", "linux"),  # NFKD folds full-width
        ("andro\u0301id", None, "android"),  # combining marks are dropped
    ],
)
def test_normalize_platform_id(platform: str | None, family: str | None, expected: str) -> None:
    assert normalize_platform_id(platform, family) == expected


@pytest.mark.parametrize(
    ("platform", "family", "expected"),
    [
        ("linux", None, ("linux", "Linux")),
        ("linux", "", ("linux", "Linux")),
        ("linux", "Linux", ("linux", "Linux")),
        ("darwin", None, ("macos", "Mac")),
        ("win32", "windows", ("windows", "windows")),
        ("linux", "Raspberry Pi", ("linux", "Raspberry Pi")),
        ("ios", None, ("ios", None)),
    ],
)
def test_node_host_platform_metadata(
    platform: str, family: str | None, expected: tuple[str, str | None]
) -> None:
    assert node_host_platform_metadata(platform, family) == expected


def test_filter_declared_drops_disallowed_silently_and_keeps_order() -> None:
    """The observed Linux probe: camera.list and system.notify kept, probe.fail dropped."""
    policy = CommandPolicy()
    declared = [" system.notify", "probe.fail", "camera.list", "camera.list", "camera.snap", ""]
    assert policy.filter_declared("linux", "Linux", ["camera", "system"], declared) == [
        "system.notify",
        "camera.list",
    ]


def test_filter_declared_admits_desktop_host_commands_on_desktops_only() -> None:
    policy = CommandPolicy()
    declared = ["system.run", "system.which", "browser.proxy", "screen.snapshot", "desktop.stream"]
    assert policy.filter_declared("linux", "Linux", [], declared) == declared
    assert policy.filter_declared("android", None, [], declared) == []


def test_filter_declared_never_admits_private_worker_commands() -> None:
    policy = CommandPolicy(allow=["worker.launch.v1"])
    assert policy.filter_declared("linux", "Linux", [], ["worker.launch.v1"]) == []


def test_dangerous_commands_need_explicit_allow() -> None:
    policy = CommandPolicy(allow=["camera.snap"])
    assert policy.filter_declared("linux", "Linux", [], ["camera.snap", "camera.clip"]) == [
        "camera.snap"
    ]
    assert policy.check_invoke("linux", "Linux", [], "camera.snap") is None
    denial = policy.check_invoke("linux", "Linux", [], "camera.clip")
    assert denial is not None
    assert denial.message == (
        'node command not allowed: "camera.clip" requires explicit '
        "gateway.nodes.commands.allow opt-in"
    )


def test_allow_extends_any_platform() -> None:
    policy = CommandPolicy(allow=["probe.echo"])
    assert policy.check_invoke("linux", "Linux", [], "probe.echo") is None
    assert "probe.echo" in policy.default_allowlist("ios", None)


def test_deny_always_wins() -> None:
    policy = CommandPolicy(
        allow=["camera.snap", "probe.echo"], deny=["system.notify", "camera.snap"]
    )
    assert "system.notify" not in policy.allowlist("linux", "Linux")
    assert policy.filter_declared("linux", "Linux", [], ["system.notify", "probe.echo"]) == [
        "probe.echo"
    ]
    denial = policy.check_invoke("linux", "Linux", [], "system.notify")
    assert denial is not None
    assert denial.message == (
        'node command not allowed: "system.notify" is blocked by gateway.nodes.commands.deny'
    )
    # A denied dangerous command stays declarable (deny-exempt) but is never invocable.
    assert policy.filter_declared("linux", "Linux", [], ["camera.snap"]) == ["camera.snap"]
    assert policy.check_invoke("linux", "Linux", [], "camera.snap") is not None


def test_deny_beats_approved_host_commands() -> None:
    policy = CommandPolicy(deny=["system.run"])
    assert policy.filter_declared("linux", "Linux", [], ["system.run"]) == []
    denial = policy.check_invoke("linux", "Linux", [], "system.run", commands=["system.run"])
    assert denial is not None
    assert denial.reason == "command not allowlisted"


def test_talk_ptt_needs_a_talk_surface() -> None:
    policy = CommandPolicy()
    assert not set(TALK_PTT_COMMANDS) & policy.allowlist("linux", "Linux")
    assert set(TALK_PTT_COMMANDS) <= policy.allowlist("linux", "Linux", caps=["Talk"])
    assert set(TALK_PTT_COMMANDS) <= policy.allowlist("ios", None, commands=["talk.mode"])
    assert policy.filter_declared("linux", "Linux", ["talk"], ["talk.ptt.start"]) == [
        "talk.ptt.start"
    ]
    assert policy.filter_declared("linux", "Linux", [], ["talk.ptt.once"]) == ["talk.ptt.once"]
    assert policy.check_invoke("linux", "Linux", ["talk"], "talk.ptt.stop") is None
    denial = policy.check_invoke("linux", "Linux", [], "talk.ptt.stop")
    assert denial is not None
    assert denial.message == (
        'node command not allowed: "talk.ptt.stop" requires a trusted Talk-capable node'
    )


def test_not_in_allowlist_message_and_details() -> None:
    """The observed wording, with the platform quoted as the node sent it."""
    denial = CommandPolicy().check_invoke("linux", "Linux", ["camera"], "probe.fail")
    assert denial == PolicyDenial(
        message=(
            'node command not allowed: "probe.fail" is not in the allowlist for platform "linux"'
        ),
        reason="command not allowlisted",
        command="probe.fail",
    )
    assert denial.code == "INVALID_REQUEST"
    assert denial.details == {"reason": "command not allowlisted", "command": "probe.fail"}


def test_dangerous_message_and_details() -> None:
    denial = CommandPolicy().check_invoke("linux", "Linux", ["camera"], "camera.snap")
    assert denial is not None
    assert denial.message == (
        'node command not allowed: "camera.snap" requires explicit '
        "gateway.nodes.commands.allow opt-in"
    )
    assert denial.details == {"reason": "command not allowlisted", "command": "camera.snap"}


def test_host_commands_need_an_approved_surface_when_commands_are_given() -> None:
    policy = CommandPolicy()
    assert policy.check_invoke("linux", "Linux", [], "system.run", commands=["system.run"]) is None
    denial = policy.check_invoke("linux", "Linux", [], "system.run", commands=["system.notify"])
    assert denial is not None
    assert denial.reason == "command not allowlisted"
    # Without the approved list only the allowlist is checked; host commands pass it.
    assert policy.check_invoke("linux", "Linux", [], "system.run") is None
    # Mobile platforms never get host commands.
    assert policy.check_invoke("android", None, [], "system.run") is not None


def test_declared_checks_when_commands_are_given() -> None:
    policy = CommandPolicy()
    denial = policy.check_invoke("linux", "Linux", [], "camera.list", commands=["system.notify"])
    assert denial is not None
    assert denial.reason == "command not declared by node"
    assert denial.message == (
        'node command not allowed: the node (platform: linux) does not support "camera.list"'
    )
    empty = policy.check_invoke("linux", "Linux", [], "camera.list", commands=[])
    assert empty is not None
    assert empty.reason == "node did not declare commands"
    assert "did not declare any supported commands" in empty.message
    pending = policy.check_invoke(
        "linux", "Linux", [], "camera.list", commands=[], pending=["camera.list"]
    )
    assert pending is not None
    assert "pending approval" in pending.message


def test_empty_and_private_commands_are_refused() -> None:
    policy = CommandPolicy(allow=["worker.status.v1"])
    empty = policy.check_invoke("linux", "Linux", [], "  ")
    assert empty is not None
    assert empty.reason == "command required"
    private = policy.check_invoke("linux", "Linux", [], "worker.status.v1")
    assert private is not None
    assert private.reason == "command not allowlisted"


def test_plugin_defaults_can_be_turned_off() -> None:
    policy = CommandPolicy(plugin_defaults={})
    assert policy.default_allowlist("linux", "Linux") == {"system.notify", "computer.act"}


@pytest.mark.parametrize(
    ("commands", "expected"),
    [
        ([], ["operator.pairing"]),
        (["system.notify", "camera.list"], ["operator.pairing", "operator.write"]),
        (["mcp.tools.call.v1", "screen.snapshot"], ["operator.pairing", "operator.write"]),
        (["system.notify", "system.run"], ["operator.pairing", "operator.admin"]),
        (["system.run.prepare"], ["operator.pairing", "operator.admin"]),
        (["system.which"], ["operator.pairing", "operator.admin"]),
        (["browser.proxy"], ["operator.pairing", "operator.admin"]),
        (["browser.proxy.upload.v1"], ["operator.pairing", "operator.admin"]),
        (["fs.listDir"], ["operator.pairing", "operator.admin"]),
        (["terminal.upload"], ["operator.pairing", "operator.admin"]),
        (["system.execApprovals.get"], ["operator.pairing", "operator.admin"]),
        (["system.execApprovals.set"], ["operator.pairing", "operator.admin"]),
    ],
)
def test_required_approve_scopes(commands: list[str], expected: list[str]) -> None:
    assert required_approve_scopes(commands) == expected
    assert CommandPolicy.required_approve_scopes(commands) == expected
