"""Run the REAL ``openclaw tui`` in a tmux pane, against any gateway, and read the pane.

The TUI is a full-screen terminal program, so it runs in a detached tmux session on a tmux
server of its own (``tmux -L <unique socket>``: never the developer's), 120x40, with a fresh
``HOME``/``OPENCLAW_STATE_DIR`` and a config in remote mode (``gateway.mode=remote``,
``gateway.remote.url``/``token``) pointing at the gateway under test::

    with TuiPane.start(install, url, token) as tui:
        tui.wait_for("gateway connected", timeout=60)
        tui.type_line("hello there")
        tui.wait_for("FAKE-LLM reply", timeout=60)
        print(tui.text())

:meth:`TuiPane.close` kills the tmux server (and with it the TUI) and removes the state dir.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from types import TracebackType
from typing import Self

from tests.helpers.real_openclaw import OpenClawInstall

__all__ = ["TuiPane", "tmux_available"]

_WIDTH, _HEIGHT = 120, 40
_POLL_S = 0.05
_ENV_KEYS = (
    "HOME",
    "OPENCLAW_STATE_DIR",
    "OPENCLAW_CONFIG_PATH",
    "OPENCLAW_NO_AUTO_UPDATE",
    "OPENCLAW_DISABLE_BONJOUR",
    "PATH",
    "TERM",
)


def tmux_available() -> bool:
    """Whether the ``tmux`` binary is on PATH."""
    return shutil.which("tmux") is not None


class TuiPane:
    """One ``openclaw tui`` in a detached tmux session (see the module docstring)."""

    def __init__(self, install: OpenClawInstall, url: str, token: str) -> None:
        self.socket = f"oc-tui-{uuid.uuid4().hex[:12]}"
        self.root = Path(tempfile.mkdtemp(prefix="openclaw-tui-"))
        for sub in ("home", "state"):
            (self.root / sub).mkdir()
        config = {
            "gateway": {"mode": "remote", "remote": {"url": url, "token": token}},
            "update": {"checkOnStart": False},
        }
        (self.root / "openclaw.json").write_text(json.dumps(config) + "\n", "utf-8")
        self.env = install.isolated_env(
            {
                "HOME": str(self.root / "home"),
                "OPENCLAW_STATE_DIR": str(self.root / "state"),
                "OPENCLAW_CONFIG_PATH": str(self.root / "openclaw.json"),
                "OPENCLAW_NO_AUTO_UPDATE": "1",
                "OPENCLAW_DISABLE_BONJOUR": "1",
                "TERM": "xterm-256color",
            }
        )
        self.argv = install.argv("tui")
        self.started_at = 0.0

    @classmethod
    def start(cls, install: OpenClawInstall, url: str, token: str) -> TuiPane:
        """Start the TUI in a new tmux server; returns at once (see :meth:`wait_for`)."""
        pane = cls(install, url, token)
        env_args: list[str] = []
        for key in _ENV_KEYS:
            env_args += ["-e", f"{key}={pane.env[key]}"]
        command = " ".join(shlex.quote(part) for part in pane.argv)
        pane.started_at = time.monotonic()
        result = pane._tmux(
            "new-session", "-d", "-s", "tui", "-x", str(_WIDTH), "-y", str(_HEIGHT),
            *env_args, "-c", str(pane.root), command,
        )  # fmt: skip
        if result.returncode != 0:
            pane.close()
            raise RuntimeError(f"tmux new-session failed: {result.stderr.strip()}")
        return pane

    def _tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            stdin=subprocess.DEVNULL,
        )

    def text(self) -> str:
        """What the pane shows now (plain text, trailing blank lines dropped)."""
        return self._tmux("capture-pane", "-p", "-t", "tui").stdout.rstrip("\n") + "\n"

    def wait_for(self, needle: str, timeout: float, *, after: str | None = None) -> str:
        """Wait until the pane shows ``needle`` (with ``after``: somewhere below the last
        line holding ``after``); returns the pane text.

        Raises:
            TimeoutError: not shown in time (the message holds the pane).
        """
        deadline = time.monotonic() + timeout
        while True:
            text = self.text()
            body = text
            if after is not None:
                at = text.rfind(after)
                body = text[at + len(after) :] if at >= 0 else ""
            if needle in body:
                return text
            if time.monotonic() >= deadline:
                raise TimeoutError(f"the TUI did not show {needle!r} in {timeout:.0f}s:\n{text}")
            time.sleep(_POLL_S)

    def type_line(self, line: str) -> None:
        """Type ``line`` literally, then Enter."""
        self._tmux("send-keys", "-t", "tui", "-l", line)
        self._tmux("send-keys", "-t", "tui", "Enter")

    def close(self) -> None:
        """Kill the tmux server (the TUI with it), remove its socket and the state dir."""
        self._tmux("kill-server")
        tmp = Path(os.environ.get("TMUX_TMPDIR") or "/tmp")
        (tmp / f"tmux-{os.getuid()}" / self.socket).unlink(missing_ok=True)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
