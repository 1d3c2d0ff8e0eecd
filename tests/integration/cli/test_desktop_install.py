"""`openclaw-desktop desktop install|uninstall`: the desktop entry, metainfo and icons land in
$XDG_DATA_HOME, openclaw:// links are handed to this app, and the freedesktop validators
accept what is installed and what packaging/ ships."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from openclaw_desktop.integration.icon import HICOLOR_SIZES
from openclaw_desktop.integration.xdg import (
    DESKTOP_FILE,
    METAINFO_FILE,
    SCHEME_MIME,
    autostart_entry,
    desktop_entry,
    install,
)
from ui.icons import render_png

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[3]
SCRIPT = Path(sys.executable).parent / "openclaw-desktop"
OTHER_LINES = [
    "[Default Applications]",
    "text/html=firefox.desktop;",
    "",
    "[Added Associations]",
    "x-scheme-handler/openclaw=other-client.desktop;",
    "image/png=eog.desktop;",
]


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCLAW_")}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    env["OPENCLAW_DESKTOP_HOME"] = str(tmp_path / "home")
    return env


def _desktop(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "desktop", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _validate_desktop(path: Path) -> None:
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        return
    done = subprocess.run([tool, str(path)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and not done.stdout.strip(), done.stdout + done.stderr


def _validate_metainfo(path: Path) -> None:
    tool = shutil.which("appstreamcli")
    if tool is None:
        return
    done = subprocess.run(
        [tool, "validate", "--no-net", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_install_and_uninstall_through_the_console_script(tmp_path: Path) -> None:
    assert SCRIPT.is_file(), "the console script is installed by pip install -e ."
    env = _env(tmp_path)
    # Hide xdg-mime (if installed) so the mimeapps.list fallback is what runs.
    env["PATH"] = str(tmp_path / "empty-bin")
    mimeapps = tmp_path / "config" / "mimeapps.list"
    mimeapps.parent.mkdir(parents=True)
    mimeapps.write_text("\n".join(OTHER_LINES) + "\n", encoding="utf-8")

    done = _desktop(env, "install")
    assert done.returncode == 0, done.stderr
    data = tmp_path / "data"
    entry = data / "applications" / DESKTOP_FILE
    assert entry.read_text(encoding="utf-8") == desktop_entry([str(SCRIPT)])
    assert f"Exec={SCRIPT} %u\n" in entry.read_text(encoding="utf-8")
    _validate_desktop(entry)
    _validate_metainfo(data / "metainfo" / METAINFO_FILE)
    svg = data / "icons" / "hicolor" / "scalable" / "apps" / "openclaw-desktop.svg"
    assert svg.read_text(encoding="utf-8").startswith("<svg")
    for size in HICOLOR_SIZES:
        png = data / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "openclaw-desktop.png"
        assert _png_size(png) == (size, size)
    lines = mimeapps.read_text(encoding="utf-8").splitlines()
    assert f"{SCHEME_MIME}={DESKTOP_FILE};" in lines
    assert f"{SCHEME_MIME}={DESKTOP_FILE};other-client.desktop;" in lines
    assert "text/html=firefox.desktop;" in lines and "image/png=eog.desktop;" in lines
    assert "openclaw:// links open this app" in done.stderr

    doctor = subprocess.run(
        [str(SCRIPT), "doctor"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert f"desktop entry: {entry}\n" in doctor.stdout, doctor.stdout + doctor.stderr
    assert "gateway service: not installed (openclaw-desktop gateway install-service)" in (
        doctor.stdout
    )

    again = _desktop(env, "install")  # idempotent
    assert again.returncode == 0, again.stderr
    assert mimeapps.read_text(encoding="utf-8").count(DESKTOP_FILE) == 2

    done = _desktop(env, "uninstall")
    assert done.returncode == 0, done.stderr
    assert not entry.exists()
    assert not list((data / "icons").rglob("openclaw-desktop.*"))
    assert not (data / "metainfo" / METAINFO_FILE).exists()
    lines = mimeapps.read_text(encoding="utf-8").splitlines()
    assert not any(DESKTOP_FILE in line for line in lines)
    assert f"{SCHEME_MIME}=other-client.desktop;" in lines
    assert "text/html=firefox.desktop;" in lines and "image/png=eog.desktop;" in lines


def test_entries_for_awkward_install_paths_validate(tmp_path: Path) -> None:
    """A bundle unpacked into a folder with spaces, quotes, $ and % still gets valid entries."""
    argv = [str(tmp_path / "Open Claw's $HOME 100%" / "openclaw-desktop")]
    report = install(
        argv, data=tmp_path / "d", config=tmp_path / "c", render_png=render_png, xdg_mime=None
    )
    entry = tmp_path / "d" / "applications" / DESKTOP_FILE
    assert entry in report.written
    _validate_desktop(entry)
    autostart = tmp_path / "autostart" / DESKTOP_FILE
    autostart.parent.mkdir()
    autostart.write_text(autostart_entry(argv), encoding="utf-8")
    _validate_desktop(autostart)


def test_the_validators_catch_a_broken_entry(tmp_path: Path) -> None:
    """The checks above can fail: a bad Exec quoting and a bad metainfo are refused."""
    if not (shutil.which("desktop-file-validate") and shutil.which("appstreamcli")):
        pytest.skip("desktop-file-validate / appstreamcli not installed (./dev installs them)")
    bad = tmp_path / "bad.desktop"
    bad.write_text(
        desktop_entry(["/usr/bin/x"]).replace("Exec=/usr/bin/x", "Exec='/a b/x'"),
        encoding="utf-8",
    )
    with pytest.raises(AssertionError):
        _validate_desktop(bad)
    meta = tmp_path / "bad.metainfo.xml"
    meta.write_text(
        (REPO / "packaging" / "linux" / METAINFO_FILE)
        .read_text()
        .replace("<summary>", "<summary>.</summary><summary>")
    )
    with pytest.raises(AssertionError):
        _validate_metainfo(meta)


def test_packaged_files_validate() -> None:
    if not (shutil.which("desktop-file-validate") and shutil.which("appstreamcli")):
        pytest.skip("desktop-file-validate / appstreamcli not installed (./dev installs them)")
    _validate_desktop(REPO / "packaging" / "linux" / DESKTOP_FILE)
    _validate_metainfo(REPO / "packaging" / "linux" / METAINFO_FILE)


def test_xdg_mime_sets_the_default_when_installed(tmp_path: Path) -> None:
    xdg_mime = shutil.which("xdg-mime")
    if xdg_mime is None:
        pytest.skip("xdg-mime (xdg-utils) not installed: the mimeapps.list path is tested above")
    env = _env(tmp_path)
    done = _desktop(env, "install")
    assert done.returncode == 0, done.stderr
    query = subprocess.run(
        [xdg_mime, "query", "default", SCHEME_MIME],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert query.stdout.strip() == DESKTOP_FILE, query.stdout + query.stderr
