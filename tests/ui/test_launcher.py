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
from openclaw_desktop.links import parse_link
from ui import launcher
from ui.launch_target import LaunchTarget
from ui.smoke import CONNECT_SCREEN_SHOWN, SMOKE_ENV

pytestmark = pytest.mark.timeout(90)

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


# ---------------------------------------------------------------- which gateway a launch uses
def test_the_command_line_says_whether_it_named_the_gateway(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``--gateway-port`` / ``--gateway-url`` name the gateway for this launch; the port in
    ``OPENCLAW_GATEWAY_PORT`` is a standing setting and names nothing."""
    monkeypatch.setenv("OPENCLAW_DESKTOP_HOME", str(tmp_path))
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    monkeypatch.delenv(SMOKE_ENV, raising=False)
    monkeypatch.delenv("OPENCLAW_GATEWAY_TOKEN", raising=False)
    monkeypatch.setenv("OPENCLAW_GATEWAY_PORT", "18796")
    calls = _capture_run(monkeypatch)
    assert launcher.main([]) == 0
    assert launcher.main(["--gateway-port", "18795"]) == 0
    monkeypatch.setenv("OPENCLAW_GATEWAY_TOKEN", "tok-from-env")
    assert launcher.main(["--gateway-url", "ws://127.0.0.1:18797"]) == 0
    plain, port, url = (target for _, target in calls)
    assert (plain.port, plain.url, plain.explicit) == (18796, None, False)
    assert (port.port, port.url, port.explicit) == (18795, None, True)
    assert (url.port, url.url, url.explicit) == (18796, "ws://127.0.0.1:18797", True)
    assert url.token == "tok-from-env" and "tok-from-env" not in repr(url)


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (["--gateway-url", "http://127.0.0.1:1"], {}, "--gateway-url:"),
        (["--gateway-url", "ws://203.0.113.9:18789"], {}, "refusing cleartext ws://"),
        ([], {"OPENCLAW_GATEWAY_PORT": "eighty"}, "OPENCLAW_GATEWAY_PORT: not a port number"),
        ([], {"OPENCLAW_GATEWAY_PORT": "70000"}, "OPENCLAW_GATEWAY_PORT: not a port number"),
    ],
)
def test_an_unusable_gateway_on_the_command_line_is_refused_before_anything_starts(
    tmp_path: Path, args: list[str], env: dict[str, str], expected: str
) -> None:
    done = _launch(tmp_path, *args, QT_QPA_PLATFORM="offscreen", **env)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr
    assert not (tmp_path / "state").exists(), "nothing may start for a refused gateway"


def test_a_bad_gateway_port_flag_is_a_usage_error(tmp_path: Path) -> None:
    done = _launch(tmp_path, "--gateway-port", "0", QT_QPA_PLATFORM="offscreen")
    assert done.returncode == 2
    assert "not a port number (1-65535): 0" in done.stderr


def test_the_launch_decision_against_the_remembered_gateway(tmp_path: Path) -> None:
    """The decision ``run`` makes, on real files: nothing named → the gateway chosen last;
    ``--gateway-port`` or ``--gateway-url`` named → that one, whatever was remembered."""
    from openclaw_desktop.config import AppPaths
    from openclaw_desktop.known_gateways import LastGateway, launch_target
    from ui.runtime import RuntimeTarget

    paths = AppPaths.under(tmp_path)
    last = LastGateway(paths.last_gateway_file)
    nothing = LaunchTarget(port=18801)
    assert launch_target(nothing, paths) is nothing, "nothing remembered: the bundled gateway"

    last.save(RuntimeTarget(url="ws://127.0.0.1:18900"))
    remembered = launch_target(nothing, paths)
    assert (remembered.url, remembered.port) == ("ws://127.0.0.1:18900", 18801)
    port = LaunchTarget(port=18802, explicit=True)
    assert launch_target(port, paths) is port
    link = LaunchTarget(port=18803, pair_link=parse_link(LINK))
    assert launch_target(link, paths) is link, "a link opens the connect screen instead"

    last.save(RuntimeTarget(port=18789))  # this computer's gateway chosen last
    url = LaunchTarget(url="ws://127.0.0.1:18901", explicit=True)
    assert launch_target(url, paths) is url
    bundled = launch_target(LaunchTarget(port=18804), paths)
    assert (bundled.url, bundled.port) == (None, 18804)


def _app(root: Path, log: Path, *args: str, **env: str) -> subprocess.Popen[bytes]:
    """The real app (``python -m ui.launcher -v``) offscreen, in a home of its own."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCLAW_", "QT_"))}
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS"):
        base.pop(name, None)
    base.update(
        HOME=str(root),
        XDG_CONFIG_HOME=str(root / "xdg-config"),
        XDG_DATA_HOME=str(root / "xdg-data"),
        XDG_RUNTIME_DIR=str(root / "run"),
        OPENCLAW_DESKTOP_HOME=str(root / "openclaw"),
        PYTHON_KEYRING_BACKEND="keyrings.alt.file.PlaintextKeyring",
        QT_QPA_PLATFORM="offscreen",
        PYTHONUNBUFFERED="1",
        **env,
    )
    (root / "run").mkdir(mode=0o700, exist_ok=True)
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "ui.launcher", "-v", *args],
            env=base,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def test_an_explicit_gateway_port_beats_the_remembered_gateway(tmp_path: Path) -> None:
    """Through the real launcher: with a remote gateway chosen last, a plain launch goes
    back to it (the bundled gateway's port only from the environment, not started); a
    launch with ``--gateway-port`` runs this computer's gateway there and connects to it,
    and that becomes the choice remembered."""
    from openclaw_desktop.config import AppPaths
    from openclaw_desktop.known_gateways import LastGateway
    from tests.helpers.bundled_gateway import BundledGateway
    from tests.helpers.journey_app import app_home
    from tests.helpers.ports import free_port, port_open
    from tests.helpers.processes import stop_group, wait_for_log

    remote = BundledGateway.start()
    bundled_port = free_port()
    try:
        root = app_home(tmp_path / "home", (remote.url, remote.token))
        last = LastGateway(AppPaths.under(root / "openclaw").last_gateway_file)
        plain_log = tmp_path / "plain.log"
        plain = _app(root, plain_log, OPENCLAW_GATEWAY_PORT=str(bundled_port))
        try:
            wait_for_log(plain_log, f"connected to 127.0.0.1:{remote.port} as operator", plain, 60)
            assert not port_open(bundled_port), "a plain launch started the bundled gateway"
        finally:
            stop_group(plain)
        remembered = last.target(bundled_port)
        assert remembered is not None and remembered.url == remote.url

        named_log = tmp_path / "named.log"
        named = _app(root, named_log, "--gateway-port", str(bundled_port))
        try:
            wait_for_log(named_log, f"connected to 127.0.0.1:{bundled_port} as operator", named, 90)
            assert port_open(bundled_port)
            output = named_log.read_text(errors="replace")
            assert f"connected to 127.0.0.1:{remote.port}" not in output
            assert remote.token not in output
            deadline = time.monotonic() + 30
            while last.load() is not True:  # saved once the chat is wired
                assert named.poll() is None, named_log.read_text(errors="replace")
                assert time.monotonic() < deadline, "the gateway used now is not remembered"
                time.sleep(0.1)
        finally:
            stop_group(named)
    finally:
        remote.stop()
        remote.cleanup()
