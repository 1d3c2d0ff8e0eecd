"""``openclaw-desktop settings`` and ``doctor`` as a user runs them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers.bundled_gateway import run_desktop_cli


def test_settings_set_show_and_keys(tmp_path: Path) -> None:
    """set writes settings.json under the home; show prints what is in effect."""
    shown = json.loads(run_desktop_cli(tmp_path, "settings", "show").stdout)
    assert shown["node"]["camera"] is False
    out = run_desktop_cli(tmp_path, "settings", "set", "node.camera", "on").stdout
    assert out.strip() == "node.camera = true"
    assert json.loads(run_desktop_cli(tmp_path, "settings", "show").stdout)["node"]["camera"]
    saved = json.loads((tmp_path / "config" / "settings.json").read_text(encoding="utf-8"))
    assert saved["node"]["camera"] is True
    keys = run_desktop_cli(tmp_path, "settings", "keys").stdout
    assert re.search(r"^node\.camera_source\s+Camera to use", keys, re.MULTILINE)


def test_settings_bad_input_exits_2_and_keeps_the_file(tmp_path: Path) -> None:
    """An unknown key or a bad value is a usage error (exit 2); nothing is written."""
    bad = run_desktop_cli(tmp_path, "settings", "set", "node.flashlight", "on", check=False)
    assert bad.returncode == 2
    assert "unknown setting 'node.flashlight'" in bad.stderr
    assert not (tmp_path / "config" / "settings.json").exists()
    bad = run_desktop_cli(tmp_path, "settings", "set", "node.screen", "perhaps", check=False)
    assert bad.returncode == 2
    assert "expected on/off" in bad.stderr


def test_corrupt_settings_are_reported_not_replaced(tmp_path: Path) -> None:
    """doctor and the node refuse a broken settings file and name it."""
    path = tmp_path / "config" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"node": {"camera": "yes please"}}', encoding="utf-8")
    result = run_desktop_cli(tmp_path, "doctor", check=False)
    assert result.returncode == 2
    assert "settings.json is not valid: node.camera" in result.stderr
    node = run_desktop_cli(tmp_path, "node", "--url", "ws://127.0.0.1:9", check=False)
    assert node.returncode == 2
    assert "settings.json is not valid" in node.stderr
    assert path.read_text(encoding="utf-8") == '{"node": {"camera": "yes please"}}'


def test_doctor_reports_every_command_with_three_answers(tmp_path: Path) -> None:
    """Each command: available here (or why not), enabled, advertised."""
    out = run_desktop_cli(tmp_path, "doctor").stdout
    lines = {
        m.group(1): m.group(0)
        for m in re.finditer(r"^\s+(\S+)\s+available: .*; enabled: .*; advertised: \w+$", out, re.M)
    }
    assert {"device.info", "device.status", "system.notify"} <= set(lines)
    assert "available: yes; enabled: yes; advertised: yes" in lines["device.info"]
    assert "gateway.nodes.commands.allow" in out
    hint = out[out.index("Gateways allow only some node commands") :]
    for needed in ("device.apps", "screen.record", "camera.list", "camera.snap", "camera.clip"):
        assert needed in hint, f"the allowlist hint names {needed}"
    run_desktop_cli(tmp_path, "settings", "set", "node.notifications", "off")
    out = run_desktop_cli(tmp_path, "doctor").stdout
    assert re.search(
        r"system\.notify .*enabled: no \(setting notifications is off\); advertised: no", out
    )


def test_doctor_names_the_keyring_fallback_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a usable keyring backend the secret-store line says why and where secrets go
    instead; the log says it once too (not once per secret-store opening)."""
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    result = run_desktop_cli(tmp_path, "doctor")
    notice = "no usable keyring backend"
    (line,) = [ln for ln in result.stdout.splitlines() if ln.startswith("secret store:")]
    assert f"{notice}: keyring.backends.fail.Keyring" in line
    assert str(tmp_path / "data" / "secrets.json") in line and "0600" in line
    assert result.stdout.count(notice) == 1
    assert result.stderr.count(notice) == 1
    (logged,) = [ln for ln in result.stderr.splitlines() if notice in ln]
    assert "WARNING" in logged and "keyring.backends.fail.Keyring" in logged
