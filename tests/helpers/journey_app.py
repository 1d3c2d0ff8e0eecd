"""The real desktop app as a child process on a journey desktop.

:class:`DesktopAppProcess` runs ``python -m ui.launcher`` (what the ``openclaw-desktop``
console script runs) with the xcb platform, Qt's AT-SPI bridge always on, a home of its own
(``HOME``, the XDG folders and ``OPENCLAW_DESKTOP_HOME`` under the test's folder), the
keyring's plain-file backend from keyrings.alt in that home, and the fake model as the bundled
gateway's provider (``OPENAI_BASE_URL``). Nothing of the developer's environment that could
change the app's behaviour gets through (provider keys, ``QT_*``, ``WAYLAND_DISPLAY``).

The app starts the bundled gateway itself, as for a user; the gateway is its child, in the
same process group, so :meth:`DesktopAppProcess.stop` ends both even if the app hangs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

from dbus_fast.errors import DBusError

from openclaw_desktop.sdk.testing.fake_model import FakeLLM
from tests.helpers.atspi import SHOWING, Atspi, AtspiError, Node
from tests.helpers.ports import free_port, port_open
from tests.helpers.xsession import Desktop, journey_desktop, stop_process_group

__all__ = ["APP_NAME", "DesktopAppProcess", "Journey", "app_home", "journey"]

#: The application's name on the accessibility bus (``QApplication.applicationName``).
APP_NAME = "OpenClaw Desktop"
_PASSED = ("PATH", "LANG", "LC_ALL", "TZ", "PYTHONPATH", "VIRTUAL_ENV", "TMPDIR")


def app_home(root: Path, remote: tuple[str, str] | None = None) -> Path:
    """A first-run-done home: ``known_gateways.json`` exists, so the app connects at once
    instead of showing the connect screen: to its bundled gateway, or to ``remote`` (url,
    token) as if the user had connected there before (the last gateway remembered, its token
    in the app's secret store)."""
    from openclaw_desktop.config import AppPaths
    from openclaw_desktop.identity import CredentialStore, gateway_key, open_secret_store

    paths = AppPaths.under(root / "openclaw")
    paths.config_dir.mkdir(parents=True, exist_ok=True)
    known = paths.config_dir / "known_gateways.json"
    if not known.exists():
        known.write_text("[]\n", encoding="utf-8")
    if remote is not None:
        url, token = remote
        last = {"url": url, "name": "the real OpenClaw gateway"}
        (paths.config_dir / "last_gateway.json").write_text(json.dumps(last), encoding="utf-8")
        store = open_secret_store(paths.secrets_file, use_keyring=False)
        CredentialStore(store).save_shared_token(gateway_key(url), token)
    return root


@dataclass
class DesktopAppProcess:
    """One launch of the app; :meth:`start` again after :meth:`stop` is a restart."""

    desktop: Desktop
    home: Path
    model_url: str
    gateway_port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    launches: int = 0

    def __post_init__(self) -> None:
        if not self.gateway_port:
            self.gateway_port = free_port()
        # Short: the single-instance socket lives here, and a unix socket path has a limit.
        self.runtime_dir = Path(tempfile.mkdtemp(prefix="ocd-run-"))

    @property
    def log(self) -> Path:
        """The app's (and its gateway's) output of the latest launch."""
        return self.home / f"app-{self.launches}.log"

    def env(self) -> dict[str, str]:
        """The environment of the app."""
        env = {k: v for k, v in os.environ.items() if k in _PASSED}
        data = self.home / "xdg-data"
        env.update(
            self.desktop.env(),
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / "xdg-config"),
            XDG_DATA_HOME=str(data),
            XDG_CACHE_HOME=str(self.home / "xdg-cache"),
            XDG_STATE_HOME=str(self.home / "xdg-state"),
            XDG_RUNTIME_DIR=str(self.runtime_dir),
            OPENCLAW_DESKTOP_HOME=str(self.home / "openclaw"),
            QT_QPA_PLATFORM="xcb",
            QT_ACCESSIBILITY="1",
            QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1",
            PYTHON_KEYRING_BACKEND="keyrings.alt.file.PlaintextKeyring",
            OPENAI_BASE_URL=self.model_url,
            OPENAI_API_KEY="sk-journey-fake",
            OPENAI_MODEL="fake-model",
            # The bundled gateway's port as a standing setting (a user's environment), not
            # --gateway-port: that would mean "this gateway now" on every relaunch.
            OPENCLAW_GATEWAY_PORT=str(self.gateway_port),
            # The connect screen browses mDNS on loopback only: no multicast leaves the test.
            OPENCLAW_DISCOVERY_INTERFACES="127.0.0.1",
            PYTHONUNBUFFERED="1",
        )
        env.setdefault("LANG", "C.UTF-8")
        return env

    def start(self) -> None:
        """Launch the app (its window appears on the desktop)."""
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.launches += 1
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "ui.launcher",
                    "-v",
                ],
                env=self.env(),
                cwd=Path(__file__).resolve().parents[2],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def running(self) -> bool:
        """Whether the app process is alive."""
        return self.proc is not None and self.proc.poll() is None

    def output(self) -> str:
        """What the latest launch printed."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def wait_exit(self, timeout: float) -> int:
        """The exit code, waiting up to ``timeout`` s (AssertionError with the log if not)."""
        assert self.proc is not None
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"the app did not exit in {timeout:g} s:\n{self.output()[-3000:]}"
            ) from None

    def gateway_listening(self) -> bool:
        """Whether the bundled gateway accepts connections."""
        return port_open(self.gateway_port)

    def wait_gateway_gone(self, timeout: float = 15.0) -> None:
        """The bundled gateway stopped with the app (its port closes)."""
        deadline = time.monotonic() + timeout
        while self.gateway_listening():
            assert time.monotonic() < deadline, "the bundled gateway outlived the app"
            time.sleep(0.1)

    def stop(self) -> None:
        """End the app and everything it started (its process group), whatever its state."""
        if self.proc is not None:
            stop_process_group(self.proc)

    def close(self) -> None:
        """Stop the app and remove its runtime folder."""
        self.stop()
        shutil.rmtree(self.runtime_dir, ignore_errors=True)


class Journey:
    """A person at the journey desktop with the app: finds controls the way a screen reader
    does (:class:`~tests.helpers.atspi.Atspi`), uses them with real X input, and looks."""

    def __init__(self, desktop: Desktop, app: DesktopAppProcess, atspi: Atspi) -> None:
        self.desktop = desktop
        self.app = app
        self.atspi = atspi
        self._root: Node | None = None

    def alive(self) -> None:
        """AssertionError with the app's output when it is no longer running."""
        assert self.app.running(), f"the app exited:\n{self.app.output()[-4000:]}"

    async def root(self, timeout: float = 60.0) -> Node:
        """The app on the accessibility bus (after a launch it registers anew)."""
        deadline = time.monotonic() + timeout
        while self._root is None:
            self.alive()
            try:
                self._root = await self.atspi.application(APP_NAME, timeout=1.0)
            except AtspiError:
                if time.monotonic() > deadline:
                    raise
        return self._root

    def relaunched(self) -> None:
        """The app was started again: look it up anew."""
        self._root = None

    async def control(self, role: str, name: str, timeout: float = 60.0) -> Node:
        """A showing control with this role and accessible name."""
        root = await self.root()
        deadline = time.monotonic() + timeout
        while True:
            found = await self.atspi.find(
                root,
                lambda n: n.role == role and n.name == name,
                f"{role} {name!r}",
                timeout=max(0.1, deadline - time.monotonic()),
                alive=self.alive,
            )
            for seen in found:
                if SHOWING in await self.atspi.states(seen.node):
                    return seen.node
            if time.monotonic() > deadline:
                raise AssertionError(f"{role} {name!r} is there but not showing")
            await asyncio.sleep(0.2)

    async def click(self, node: Node) -> None:
        """Click the middle of ``node`` with the mouse."""
        await self.desktop.click(*(await self.atspi.extents(node)).center)

    async def send(self, text: str) -> None:
        """Click into the composer, type ``text``, press Enter."""
        composer = await self.control("text", "Message")
        await self.click(composer)
        await self.desktop.type(text)
        typed = await self.atspi.text(composer)
        assert typed == text, f"the composer shows {typed!r}, typed {text!r}"
        await self.desktop.key("Return")

    async def messages(self) -> list[str]:
        """The chat's rows as a screen reader reads them (the rows' accessible names)."""
        listing = await self.control("list", "Messages")
        names = []
        for row in await self.atspi.children(listing):
            with contextlib.suppress(AtspiError, DBusError):
                if await self.atspi.role(row) == "list item":
                    names.append(await self.atspi.name(row))
        return names

    async def wait_messages(
        self, check: Callable[[list[str]], bool], what: str, timeout: float = 60.0
    ) -> list[str]:
        """The rows once ``check`` holds for them (AssertionError naming ``what`` and
        showing the rows and the app's log after ``timeout``)."""
        deadline = time.monotonic() + timeout
        rows: list[str] = []
        while time.monotonic() < deadline:
            rows = await self.messages()
            if check(rows):
                return rows
            self.alive()
            await asyncio.sleep(0.1)
        raise AssertionError(
            f"{what}: not seen in {timeout:g} s; rows: {rows}\n{self.app.output()[-3000:]}"
        )

    async def showing(self, role: str, name: str) -> bool:
        """Whether a control with this role and name is on the screen now."""
        root = await self.root()
        for seen in await self.atspi.walk(root):
            if seen.role == role and seen.name == name:
                with contextlib.suppress(AtspiError, DBusError):
                    if SHOWING in await self.atspi.states(seen.node):
                        return True
        return False

    async def main_windows(self) -> list[int]:
        """The app's main window on the screen (X window ids; empty when hidden)."""
        return await self.desktop.windows("^OpenClaw$")

    async def wait_exit(self, timeout: float = 30.0) -> int:
        """The app's exit code once it exits by itself."""
        return await asyncio.to_thread(self.app.wait_exit, timeout)


@contextlib.asynccontextmanager
async def journey(
    screens: Path,
    home: Path,
    *,
    model: FakeLLM,
    tray: bool = False,
    remote: tuple[str, str] | None = None,
) -> AsyncIterator[Journey]:
    """A desktop (with a tray when ``tray``), the app launched on it with ``model`` behind
    its bundled gateway (or connecting to ``remote``: url, token), and an AT-SPI
    connection; everything stopped at the end."""
    async with journey_desktop(screens, tray=tray) as desktop:
        app = DesktopAppProcess(desktop, app_home(home, remote), model.openai_base_url)
        atspi = await Atspi.connect(desktop.bus_address)
        try:
            app.start()
            yield Journey(desktop, app, atspi)
        finally:
            with contextlib.suppress(Exception):
                await desktop.screenshot("at-the-end")
            app.close()
            atspi.close()
            print(f"app log ({app.log}):\n{app.output()[-2000:]}")


async def read_row(j: Journey, prefix: str, name: str) -> str:
    """OCR of the chat row whose accessible name starts with ``prefix`` (what is painted)."""
    listing = await j.control("list", "Messages")
    for row in await j.atspi.children(listing):
        with contextlib.suppress(AtspiError, DBusError):
            if (await j.atspi.name(row)).startswith(prefix):
                box = await j.atspi.extents(row)
                return await j.desktop.read(name, box.x, box.y, box.width, box.height)
    raise AssertionError(f"no row starting with {prefix!r}")


async def idle(j: Journey, timeout: float = 60.0) -> None:
    """Wait until no reply is running (the Stop button is disabled again)."""
    from tests.helpers.atspi import ENABLED

    stop = await j.control("push button", "Stop")
    deadline = time.monotonic() + timeout
    while ENABLED in await j.atspi.states(stop):
        j.alive()
        assert time.monotonic() < deadline, "the reply did not end"
        await asyncio.sleep(0.1)


async def approve_own_node(j: Journey, timeout: float = 60.0) -> None:
    """On a gateway the app did not start, this computer's node is asked about twice, as on
    the real gateway: the device taking the node role, then the node's commands. Approve
    both in the window's "Pairing request" dialog, as its owner does."""
    for step in ("device", "commands"):
        approve = await j.control("push button", "Approve", timeout=timeout)
        await j.desktop.screenshot(f"own-node-pairing-{step}")
        await j.click(approve)
        deadline = time.monotonic() + 20
        while await j.showing("push button", "Approve"):
            assert time.monotonic() < deadline, "the pairing dialog stayed open"
            await asyncio.sleep(0.2)
