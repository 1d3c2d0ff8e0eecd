"""The PyInstaller one-folder bundle: built by packaging/build.sh, then run without the
project's Python on PATH: it answers --version, its window reaches the connect screen
(offscreen), and headless it starts its own bundled gateway as a child of the same
executable and joins it as a node. Prints the build time, bundle size and start time (for
packaging/README.md)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_desktop import __version__
from tests.helpers.ports import free_port, port_open
from tests.helpers.processes import stop_group, wait_for_log
from ui.smoke import CONNECT_SCREEN_SHOWN, SMOKE_ENV

pytestmark = pytest.mark.timeout(900)

REPO = Path(__file__).resolve().parents[2]


def _du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Build the bundle into a temporary folder (removed afterwards: it is about 0.5 GB)."""
    dist = tmp_path_factory.mktemp("dist")
    work = tmp_path_factory.mktemp("pyinstaller-work")
    started = time.monotonic()
    done = subprocess.run(
        ["bash", str(REPO / "packaging" / "build.sh"), str(dist)],
        env={**os.environ, "OPENCLAW_BUILD_WORK": str(work)},
        capture_output=True,
        text=True,
        timeout=840,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    exe = Path(done.stdout.strip().splitlines()[-1])
    assert exe.is_file() and os.access(exe, os.X_OK)
    size_mb = _du(exe.parent) / 1e6
    print(f"\nbundle: built in {time.monotonic() - started:.0f} s, {size_mb:.0f} MB at {exe}")
    try:
        yield exe
    finally:
        shutil.rmtree(dist, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


def _env(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment: no venv, no Python on PATH, no display but offscreen Qt."""
    keep = ("HOME", "LANG", "LC_ALL", "TMPDIR", "USER")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update(PATH=str(home / "no-bin"), OPENCLAW_DESKTOP_HOME=str(home), **extra)
    return env


def _run(exe: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(exe), *args],
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
        cwd=home,
    )


def test_version(bundle: Path, tmp_path: Path) -> None:
    done = _run(bundle, tmp_path, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"openclaw-desktop {__version__}"
    done = _run(bundle, tmp_path, "gateway", "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"openclaw-desktop gateway {__version__}"


def test_desktop_install_renders_the_icons(bundle: Path, tmp_path: Path) -> None:
    """`desktop install` from the bundle: its Qt renders the PNGs, the entry runs the bundle."""
    env = _env(tmp_path, XDG_DATA_HOME=str(tmp_path / "data"))
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    done = subprocess.run(
        [str(bundle), "desktop", "install"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    entry = (tmp_path / "data" / "applications" / "openclaw-desktop.desktop").read_text()
    assert f"Exec={bundle} %u\n" in entry
    hicolor = tmp_path / "data" / "icons" / "hicolor"
    for size in (16, 256, 512):
        png = (hicolor / f"{size}x{size}" / "apps" / "openclaw-desktop.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 100


def test_window_reaches_the_connect_screen(bundle: Path, tmp_path: Path) -> None:
    log = tmp_path / "window.log"
    env = _env(tmp_path, QT_QPA_PLATFORM="offscreen", **{SMOKE_ENV: "exit"})
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(bundle), "-v", "--gateway-port", str(free_port())],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=tmp_path,
        )
    try:
        shown_after = wait_for_log(log, CONNECT_SCREEN_SHOWN, proc, 60)
        assert proc.wait(30) == 0, log.read_text()
        print(f"\nbundle: connect screen shown {shown_after:.2f} s after launch")
    finally:
        stop_group(proc)


def test_headless_runs_its_own_gateway_and_node(bundle: Path, tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "headless.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [str(bundle), "--headless", "--gateway-port", str(port)],
            env=_env(tmp_path),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=tmp_path,
        )
    try:
        wait_for_log(log, "node commands approved and active", proc, 90)
        assert (tmp_path / "state" / "gateway" / "gateway-token").is_file()
        assert port_open(port)
        # The bundle's own CLI invokes its node through its gateway.
        ident = _run(bundle, tmp_path, "identity", "show")
        assert ident.returncode == 0, ident.stderr
        node_id = json.loads(ident.stdout)["deviceId"]
        url = f"ws://127.0.0.1:{port}"
        done = _run(
            bundle,
            tmp_path,
            "nodes",
            "invoke",
            "--url",
            url,
            "--node",
            node_id,
            "--command",
            "device.info",
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["payload"]["systemName"]
        os.killpg(proc.pid, signal.SIGTERM)
        assert proc.wait(20) == 0, log.read_text()
    finally:
        stop_group(proc)
    deadline = time.monotonic() + 10
    while port_open(port) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not port_open(port), "the bundled gateway outlived the app"
