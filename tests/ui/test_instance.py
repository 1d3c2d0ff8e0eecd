"""Single instance: a second launch (a real `python -m ui.launcher` process) hands its
openclaw:// link, or a plain "show", to the running app's InstanceServer and exits without
opening a window; hostile messages are refused by the server itself."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtNetwork import QLocalSocket
from pytestqt.qtbot import QtBot

from openclaw_desktop.config import AppPaths
from openclaw_desktop.discovery.setup_code import encode_setup_code
from openclaw_desktop.links import PairLink
from ui.instance import InstanceServer, server_name

pytestmark = pytest.mark.timeout(60)

TOKEN = "bt_instance_Secret_42"
CODE = encode_setup_code({"url": "wss://10.0.0.7:18789", "bootstrapToken": TOKEN})
LINK = f"openclaw://pair?code={CODE}"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("OPENCLAW_DESKTOP_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def server(home: Path) -> Iterator[InstanceServer]:
    srv = InstanceServer(AppPaths.default())
    assert srv.listen()
    yield srv
    srv.close()


def _second_launch(*args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items()}
    env["QT_QPA_PLATFORM"] = "offscreen"
    return subprocess.Popen(
        [sys.executable, "-m", "ui.launcher", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def test_a_second_launch_hands_over_its_link(qtbot: QtBot, server: InstanceServer) -> None:
    with qtbot.waitSignal(server.link_received, timeout=30_000) as received:
        proc = _second_launch(LINK)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "handed over" in err
    [link] = received.args
    assert isinstance(link, PairLink)
    assert link.url == "wss://10.0.0.7:18789" and link.setup.bootstrap_token == TOKEN
    assert TOKEN not in out + err


def test_a_plain_second_launch_raises_the_window(qtbot: QtBot, server: InstanceServer) -> None:
    with qtbot.waitSignal(server.show_requested, timeout=30_000):
        proc = _second_launch()
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err


def test_only_one_server_listens(server: InstanceServer, home: Path) -> None:
    second = InstanceServer(AppPaths.default())
    assert not second.listen()


def test_a_stale_socket_is_replaced(home: Path) -> None:
    name = server_name(AppPaths.default())
    Path(name).write_text("left by a crash")
    srv = InstanceServer(AppPaths.default())
    try:
        assert srv.listen()
    finally:
        srv.close()


def _raw_exchange(qtbot: QtBot, name: str, payload: bytes) -> bytes:
    """Send raw bytes as a hostile local client; the server's answer (b"" if it hung up)."""
    sock = QLocalSocket()
    sock.connectToServer(name)
    qtbot.waitUntil(lambda: sock.state() == QLocalSocket.LocalSocketState.ConnectedState)
    sock.write(payload)
    deadline = time.monotonic() + 10
    answer = b""
    while time.monotonic() < deadline:
        qtbot.wait(20)
        answer += bytes(sock.readAll().data())
        if b"\n" in answer or sock.state() == QLocalSocket.LocalSocketState.UnconnectedState:
            break
    sock.abort()
    return answer


def test_hostile_messages_are_refused(qtbot: QtBot, server: InstanceServer) -> None:
    got: list[object] = []
    server.link_received.connect(got.append)
    assert _raw_exchange(qtbot, server.name, b"https://evil.example/?code=x\n") == b"bad\n"
    assert _raw_exchange(qtbot, server.name, b"openclaw://pair?code=%%%\n") == b"bad\n"
    assert _raw_exchange(qtbot, server.name, b"A" * 6000) == b""  # hung up, no newline
    assert got == []
    assert _raw_exchange(qtbot, server.name, LINK.encode() + b"\n") == b"ok\n"
    assert len(got) == 1
