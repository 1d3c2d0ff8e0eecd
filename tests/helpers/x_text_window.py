"""A real X client for input tests: a Tk text window that reports what it received.

Run as a program (``python -m tests.helpers.x_text_window STATE_FILE``) on the test's
``DISPLAY``: one undecorated 640x480 window at the screen's origin holding a Text widget with
40 numbered lines. After every input event it writes ``STATE_FILE`` (atomically, JSON):

* ``text``: the widget's content, ``insert``: its insert cursor (``line.column``),
  ``selection``: the selected text, ``top``: the first visible line fraction (scrolling),
* ``presses`` / ``releases``: pointer buttons as ``[button, x_root, y_root]``,
* ``keys`` / ``key_releases``: key symbols pressed and released, ``combos``: Control+Shift+T
  seen as a chord,
* ``ready``: the window is mapped and has the keyboard focus.

What it reports is the window's own state (Tk's text, selection and view), not the sender's
bookkeeping. :class:`TextWindow` starts it and reads the state.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

__all__ = ["TextWindow", "text_window"]

LINES = 40


def _run(state_file: Path) -> None:  # pragma: no cover - runs in the subprocess
    import tkinter as tk

    root = tk.Tk()
    root.overrideredirect(True)
    root.geometry("640x480+0+0")
    text = tk.Text(root, font=("Courier", 12), undo=False, wrap="none")
    text.pack(fill="both", expand=True)
    text.insert("1.0", "".join(f"line {n:02d}\n" for n in range(1, LINES + 1)))
    text.mark_set("insert", "1.0")
    state: dict[str, Any] = {
        "presses": [],
        "releases": [],
        "keys": [],
        "key_releases": [],
        "combos": 0,
        "ready": False,
    }
    pending = [False]

    def write() -> None:
        pending[0] = False
        ranges = text.tag_ranges("sel")
        state["text"] = text.get("1.0", "end-1c")
        state["insert"] = text.index("insert")
        state["selection"] = text.get(ranges[0], ranges[1]) if ranges else ""
        state["top"] = text.yview()[0]
        state["ready"] = root.focus_get() is text
        tmp = state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state), encoding="utf-8")
        os.replace(tmp, state_file)

    def later(_event: object = None) -> None:
        if not pending[0]:
            pending[0] = True
            root.after(20, write)

    def press(event: Any) -> None:
        state["presses"].append([int(event.num), int(event.x_root), int(event.y_root)])
        later()

    def release(event: Any) -> None:
        state["releases"].append([int(event.num), int(event.x_root), int(event.y_root)])
        later()

    def key(event: Any) -> None:
        state["keys"].append(str(event.keysym))
        later()

    def key_release(event: Any) -> None:
        state["key_releases"].append(str(event.keysym))
        later()

    def combo(_event: object) -> str:
        state["combos"] += 1
        later()
        return "break"

    text.bind("<ButtonPress>", press, add=True)
    text.bind("<ButtonRelease>", release, add=True)
    text.bind("<KeyPress>", key, add=True)
    text.bind("<KeyRelease>", key_release, add=True)
    text.bind("<Control-Shift-T>", combo)
    for name in ("<<Selection>>", "<B1-Motion>", "<Configure>"):
        text.bind(name, later, add=True)

    def focus() -> None:
        root.focus_force()
        text.focus_set()
        later()
        root.after(200, lambda: None if root.focus_get() is text else focus())

    root.after(50, focus)
    root.after(500, lambda: poll())

    def poll() -> None:  # the view changes without an event of its own while scrolling
        later()
        root.after(200, poll)

    root.mainloop()


class TextWindow:
    """The running client and its reported state."""

    def __init__(self, proc: subprocess.Popen[bytes], state_file: Path) -> None:
        self.proc = proc
        self.state_file = state_file

    def state(self) -> dict[str, Any]:
        """The last reported state ({} before the first)."""
        try:
            return dict(json.loads(self.state_file.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return {}

    async def until(
        self, check: Callable[[dict[str, Any]], bool], timeout: float = 10.0
    ) -> dict[str, Any]:
        """Wait (bounded) until ``check(state)`` holds; returns that state.

        Raises:
            AssertionError: it did not within ``timeout`` (with the last state).
        """
        deadline = time.monotonic() + timeout
        state = self.state()
        while not check(state):
            if time.monotonic() > deadline:
                raise AssertionError(f"the text window never got there; last state: {state}")
            if self.proc.poll() is not None:
                raise AssertionError(f"the text window exited with {self.proc.returncode}")
            await asyncio.sleep(0.05)
            state = self.state()
        return state


_ROOT = Path(__file__).resolve().parents[2]


def _spawn(display: str, state_file: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "DISPLAY": display}
    env.pop("WAYLAND_DISPLAY", None)
    return subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.x_text_window", str(state_file)],
        env=env,
        cwd=str(_ROOT),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@contextlib.asynccontextmanager
async def text_window(display: str, folder: Path) -> AsyncIterator[TextWindow]:
    """Start the window on ``display``; wait until it is ready (focused); stop it on exit."""
    state_file = folder / "text-window.json"
    proc = _spawn(display, state_file)
    window = TextWindow(proc, state_file)
    try:
        await window.until(lambda s: bool(s.get("ready")), timeout=20)
        yield window
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        if proc.stderr is not None:
            proc.stderr.close()


if __name__ == "__main__":  # pragma: no cover
    _run(Path(sys.argv[1]))
