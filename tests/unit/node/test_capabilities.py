"""The capability table against the command registry, the settings schema and the bundled
gateway's allowlist: the lists that used to be copied by hand now come from it, and what
cannot (the lower layers' view) is checked to agree with it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from openclaw_desktop.config import NodeSettings, SettingsStore
from openclaw_desktop.integration.command import EMBEDDED_ALLOW, bundled_gateway_args
from openclaw_desktop.node import CommandSpec, NodeContext, build_surface
from openclaw_desktop.node.capabilities import (
    CAPABILITIES,
    Capability,
    embedded_allow,
    toggleable,
)


def exec_capability() -> Capability:
    """The row that gates ``system.run``."""
    return next(cap for cap in CAPABILITIES if "system.run" in cap.commands)


def registered() -> list[CommandSpec]:
    """Every command this build registers, as the running node builds them."""
    registry, _handlers = build_surface(NodeContext())
    return registry.specs


def test_every_registered_command_belongs_to_exactly_one_capability() -> None:
    """No command of the registry is missing from the table or listed twice in it."""
    for spec in registered():
        owners = [cap for cap in CAPABILITIES if spec.name in cap.commands]
        assert len(owners) == 1, f"{spec.name}: {[c.label for c in owners]}"


def test_every_capability_command_is_registered_and_gated_by_its_setting() -> None:
    """Each row's commands exist, and the registry gates them on the row's setting."""
    specs = {spec.name: spec for spec in registered()}
    for cap in CAPABILITIES:
        assert cap.commands, cap.label
        for command in cap.commands:
            assert command in specs, f"{cap.label}: {command} is not registered"
            assert specs[command].setting == cap.setting, command


def test_the_table_matches_the_settings_schema() -> None:
    """The toggles are the schema's on/off fields, same names, same order, same defaults."""
    rows = toggleable()
    defaults = NodeSettings().toggles()
    assert [cap.setting for cap in rows] == list(defaults)
    for cap in rows:
        assert defaults[cap.setting or ""] is cap.default, cap.setting
        assert cap.key == f"node.{cap.setting}"
    assert [cap.setting for cap in CAPABILITIES if cap.setting is None] == [None]


def test_toggles_follow_the_settings_they_read() -> None:
    """toggles() is read from the schema's values, not a fixed list: flipping each field
    flips its toggle and nothing else."""
    for cap in toggleable():
        name = cap.setting or ""
        flipped = NodeSettings.model_validate({name: not cap.default}).toggles()
        assert flipped[name] is (not cap.default)
        assert {k: v for k, v in flipped.items() if k != name} == {
            k: v for k, v in NodeSettings().toggles().items() if k != name
        }


def test_an_old_settings_file_reads_with_the_same_keys(tmp_path: Path) -> None:
    """A settings.json written before exec existed loads, exec off; saving keeps its keys."""
    path = tmp_path / "settings.json"
    old = {
        "version": 1,
        "node": {"display_name": None, "notifications": False, "camera": True},
        "ui": {"notify_replies": True},
    }
    path.write_text(json.dumps(old), encoding="utf-8")
    store = SettingsStore(path)
    toggles = store.load().node.toggles()
    assert toggles == {
        "notifications": False,
        "camera": True,
        "screen": False,
        "microphone": False,
        "exec": False,
        "location": False,
        "installed_apps": False,
        "computer": False,
    }
    store.set("node.exec", "on")
    saved = json.loads(path.read_text(encoding="utf-8"))["node"]
    assert saved["exec"] is True and saved["camera"] is True and saved["notifications"] is False


def test_exec_is_a_toggle_off_by_default() -> None:
    """Running commands is a capability of its own, off until enabled, shown as a toggle,
    with a label that does not promise more than the approvals document does."""
    cap = exec_capability()
    assert cap in toggleable()
    assert cap.setting == "exec" and cap.default is False
    assert set(cap.commands) == {
        "system.run.prepare",
        "system.run",
        "system.which",
        "system.execApprovals.get",
        "system.execApprovals.set",
    }
    assert "Run commands" in cap.label and "approvals" in cap.help
    assert NodeSettings().exec is False


def test_embedded_allowlist_is_the_table_written_out() -> None:
    """The gateway-side literal equals the table's allowlist (order included); exec stays out
    because the gateway's desktop defaults already carry it once the surface is approved."""
    assert embedded_allow() == EMBEDDED_ALLOW
    assert not set(embedded_allow()) & set(exec_capability().commands)
    args = bundled_gateway_args(18789, allow=["canvas.present", "camera.snap"])
    assert args[-1].split(",") == [*embedded_allow(), "canvas.present"]


def test_helpers_read_any_table() -> None:
    """toggleable and embedded_allow work on the table they are given."""
    table = (
        Capability(None, "Always", "always on", True, ("a.one",)),
        Capability("x", "X", "x help", False, ("x.one", "x.two"), embedded_allow=False),
        Capability("y", "Y long", "y help", True, ("y.one",), menu_label="Y"),
    )
    assert toggleable(table) == [table[1], table[2]]
    assert embedded_allow(table) == ("a.one", "y.one")
    assert (table[0].key, table[1].key) == (None, "node.x")
    assert (table[1].menu_text, table[2].menu_text) == ("X", "Y")
    assert [cap.command_prefix for cap in table] == ["a.", "x.", "y."]


def test_a_capture_capability_command_prefix_covers_exactly_its_commands() -> None:
    """The prefix the capture indicator's Stop cancels by (the namespace a capability's
    commands share) covers exactly the capability's commands for the captures."""
    every = [cmd for cap in CAPABILITIES for cmd in cap.commands]
    for cap in toggleable():
        assert cap.command_prefix and all(c.startswith(cap.command_prefix) for c in cap.commands)
        if cap.setting in ("camera", "microphone", "screen", "computer"):
            assert {c for c in every if c.startswith(cap.command_prefix)} == set(cap.commands)


def test_the_table_loads_without_the_handlers_or_device_libraries() -> None:
    """The UI reads the table at start-up: importing it loads no handler and no OpenCV."""
    code = (
        "import sys\n"
        "import openclaw_desktop.node.capabilities\n"
        "heavy = [m for m in sys.modules if m in ('cv2', 'numpy') "
        "or m.startswith('openclaw_desktop.node.handlers')]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == ""
