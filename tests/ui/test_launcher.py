"""The console script's routing: an openclaw:// link goes to the window (parsed, never
echoed), hostile links are refused before anything starts, and the smoke probe sees the
real connect screen."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import ui.app
from openclaw_desktop.discovery.setup_code import encode_setup_code
from ui import launcher
from ui.launch_target import LaunchTarget
from ui.smoke import CONNECT_SCREEN_SHOWN, SMOKE_ENV

pytestmark = [pytest.mark.ui, pytest.mark.timeout(90)]

TOKEN = "bt_launcher_Secret_77"
CODE = encode_setup_code({"url": "ws://192.168.1.30:18789", "bootstrapToken": TOKEN})
LINK = f"openclaw://pair?code={CODE}"


def _capture_run(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], Any]]:
    """Record what the launcher hands to ui.app.run instead of opening a window (and undo
    the launcher's logging setup afterwards)."""
    calls: list[tuple[list[str], Any]] = []
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", list(root.handlers))
    monkeypatch.setattr(root, "level", root.level)

    def run(argv: list[str], target: Any) -> int:
        calls.append((argv, target))
        return 0

    monkeypatch.setattr(ui.app, "run", run)
    return calls


def test_a_pair_link_reaches_the_window(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENCLAW_DESKTOP_HOME", str(tmp_path))
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.delenv(SMOKE_ENV, raising=False)
    calls = _capture_run(monkeypatch)
    assert launcher.main(["--gateway-port", "18795", LINK]) == 0
    [(_, target)] = calls
    assert isinstance(target, LaunchTarget)
    assert target.port == 18795 and target.url is None
    assert target.pair_link is not None
    assert target.pair_link.url == "ws://192.168.1.30:18789"
    assert target.pair_link.setup.bootstrap_token == TOKEN
    assert TOKEN not in repr(target)


def test_without_a_link_the_window_gets_no_link(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENCLAW_DESKTOP_HOME", str(tmp_path))
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.delenv(SMOKE_ENV, raising=False)
    calls = _capture_run(monkeypatch)
    assert launcher.main([]) == 0
    [(_, target)] = calls
    assert isinstance(target, LaunchTarget) and target.pair_link is None


def _launch(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OPENCLAW_")}
    base.pop("DISPLAY", None)
    base.pop("WAYLAND_DISPLAY", None)
    base.pop("QT_QPA_PLATFORM", None)
    base["OPENCLAW_DESKTOP_HOME"] = str(tmp_path)
    return subprocess.run(
        [sys.executable, "-m", "ui.launcher", *args],
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.mark.parametrize(
    ("link", "expected"),
    [
        (f"openclaw://connect?code={CODE}", "unknown action 'connect'"),
        (f"openclaw://pair?code={CODE}&code={CODE}", "more than one code"),
        ("openclaw://pair?code=" + "A" * 5000, "longer than 4096"),
        ("openclaw://pair?code=bm90IGpzb24", "does not hold UTF-8 JSON"),
    ],
)
def test_hostile_links_are_refused_before_anything_starts(
    tmp_path: Path, link: str, expected: str
) -> None:
    done = _launch(tmp_path, link, QT_QPA_PLATFORM="offscreen")
    assert done.returncode == 2
    assert expected in done.stderr
    assert CODE not in done.stderr + done.stdout
    assert not (tmp_path / "state").exists(), "nothing may start for a refused link"


def test_a_link_without_a_display_is_refused(tmp_path: Path) -> None:
    done = _launch(tmp_path, LINK)
    assert done.returncode == 2
    assert "needs a display" in done.stderr
    assert TOKEN not in done.stderr and CODE not in done.stderr


def test_a_link_as_a_subcommand_value_is_left_alone(tmp_path: Path) -> None:
    done = _launch(tmp_path, "settings", "set", "node.camera_source", "openclaw://cam")
    assert "unusable openclaw:// link" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert "openclaw://cam" in done.stdout


def test_smoke_probe_sees_the_connect_screen_and_exits(tmp_path: Path) -> None:
    """First run: the window shows its connect screen; the probe logs it, then closes it."""
    started = time.monotonic()
    done = _launch(tmp_path, "-v", QT_QPA_PLATFORM="offscreen", **{SMOKE_ENV: "exit"})
    assert CONNECT_SCREEN_SHOWN in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 60
