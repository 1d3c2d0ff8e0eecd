"""Who controls this computer's pointer and keyboard: the one live Computer Use execution, the
screenshot frames it may aim at, and the user's Stop.

``screen.snapshot`` with an ``executionId`` issues a ``displayFrameId`` bound to that execution,
the captured screen (the display, its index and geometry) and the delivered image size.
``computer.act`` coordinates are pixels of that image; :meth:`ComputerControl.frame_for`
refuses (``COMPUTER_STALE_FRAME``) a frame that is unknown, belongs to another execution, was
delivered at another reference width, or whose screen has changed geometry since.

One execution at a time owns the computer (another one gets ``COMPUTER_HOST_BUSY`` until it
closes with ``__close_execution`` or stays idle for :data:`EXECUTION_IDLE_S`). While one is live
the capture indicator shows ``computer`` ("the agent is controlling this computer"). The user's
Stop closes it at once (running actions are cancelled, held keys and buttons released) and
refuses all further control until Computer control has been switched off and on again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.portal_bus import wayland_session

__all__ = [
    "ACTIONS",
    "EXECUTION_IDLE_S",
    "ComputerControl",
    "Frame",
    "InputDriver",
    "ScreenGeometry",
    "descriptor",
]

log = logging.getLogger("openclaw.node")

#: An execution with no snapshot or action for this long is closed (its frames dropped).
EXECUTION_IDLE_S = 60.0
#: Frames remembered per execution (newest kept).
MAX_FRAMES = 16

#: The Computer Use v2 actions this node fulfils (``screenshot`` and ``wait`` run through
#: ``screen.snapshot`` in the gateway's tool; the rest are ``computer.act`` actions).
ACTIONS = (
    "screenshot",
    "left_click",
    "right_click",
    "middle_click",
    "double_click",
    "triple_click",
    "mouse_move",
    "left_click_drag",
    "left_mouse_down",
    "left_mouse_up",
    "scroll",
    "type",
    "key",
    "hold_key",
    "wait",
)
#: This process's provider generation: a restart invalidates every frame and execution.
GENERATION = secrets.token_hex(8)


def descriptor() -> dict[str, Any]:
    """The ``computerUse`` descriptor advertised in ``connect`` with ``computer.act`` and
    ``screen.snapshot`` (the reference's contract version 2): screen targets, foreground
    delivery, image observations, several screens (``screenIndex``). The provider is the
    desktop portal on a Wayland session, XTest elsewhere."""
    if wayland_session():
        provider = ("openclaw-desktop-portal", "OpenClaw Desktop (Wayland desktop portal)")
    else:
        provider = ("openclaw-desktop-xtest", "OpenClaw Desktop (X11 XTest)")
    return {
        "contractVersion": 2,
        "provider": {"id": provider[0], "label": provider[1], "generation": GENERATION},
        "actions": list(ACTIONS),
        "targets": ["screen"],
        "deliveryModes": ["foreground"],
        "observations": ["image"],
        "features": {"recording": False, "agentCursor": False, "multiDisplay": True},
    }


@dataclass(frozen=True, slots=True)
class ScreenGeometry:
    """One screen of one display: the display's name, the screen's index and its rectangle in
    root-window pixels."""

    display: str
    index: int
    left: int
    top: int
    width: int
    height: int


@dataclass(frozen=True, slots=True)
class Frame:
    """A delivered screenshot that coordinates may refer to."""

    id: str
    execution_id: str
    geometry: ScreenGeometry
    width: int
    height: int
    max_width: int

    def to_screen(self, x: float, y: float, label: str = "action") -> tuple[int, int]:
        """Image pixel ``(x, y)`` -> root-window pixel.

        Raises:
            DeviceError: ``COMPUTER_INVALID_REQUEST`` outside the delivered image.
        """
        if not (0 <= x < self.width and 0 <= y < self.height):
            raise DeviceError(
                "COMPUTER_INVALID_REQUEST",
                f"{label} coordinates are outside the captured frame ({self.width}x{self.height})",
            )
        geo = self.geometry
        sx = min(geo.width - 1, round(x * geo.width / self.width))
        sy = min(geo.height - 1, round(y * geo.height / self.height))
        return geo.left + sx, geo.top + sy


class InputDriver(Protocol):
    """What ``computer.act`` drives input through: XTest on X11, the desktop portal's
    RemoteDesktop on Wayland. Buttons are X numbers (1 left, 2 middle, 3 right), keys X
    keysyms, points pixels of the frame's screen (see :meth:`bind`). Every press is
    recorded; :meth:`release` lets go of all of them (but a left button held by
    ``left_mouse_down``, unless closing)."""

    left_held: bool

    def bind(self, width: int, height: int) -> None:
        """The size of the screen the next points are pixels of."""

    async def move(self, x: int, y: int) -> None: ...

    async def button(self, button: int, press: bool) -> None: ...

    async def click_at(self, x: int, y: int, button: int, count: int = 1) -> None: ...

    async def press_at(self, x: int, y: int, button: int) -> None: ...

    async def wheel(self, direction: str, ticks: int) -> None: ...

    async def key(self, keysym: int, press: bool) -> None: ...

    async def type_keysym(self, keysym: int) -> None: ...

    async def holds(self, button: int) -> bool: ...

    async def release(self, close: bool = False) -> None: ...


def stale(message: str) -> DeviceError:
    """``COMPUTER_STALE_FRAME: <message>; take a new screenshot`` (the reference's wording)."""
    return DeviceError("COMPUTER_STALE_FRAME", f"{message}; take a new screenshot")


class ComputerControl:
    """The execution, its frames and the Stop state, shared by ``screen.snapshot`` and
    ``computer.act``.

    Args:
        live: called with True when an execution starts and False when it ends (the capture
            indicator); exceptions are logged.
    """

    def __init__(self, live: Callable[[bool], None] | None = None) -> None:
        self.execution_id: str | None = None
        self.frames: OrderedDict[str, Frame] = OrderedDict()
        self.stopped = False
        #: Run (awaited) when an execution ends: release held input, close the X connection.
        self.close_hooks: list[Callable[[], Awaitable[None]]] = []
        self.live_listeners: list[Callable[[bool], None]] = [] if live is None else [live]
        self._idle: asyncio.TimerHandle | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self._last_used = 0.0

    # --------------------------------------------------------------- executions

    def claim(self, execution_id: str) -> None:
        """Make ``execution_id`` the live execution (or keep it live).

        Raises:
            DeviceError: ``COMPUTER_DRIVER_UNAVAILABLE`` after the user's Stop;
                ``COMPUTER_HOST_BUSY`` while another execution owns this computer.
        """
        if self.stopped:
            raise DeviceError(
                "COMPUTER_DRIVER_UNAVAILABLE",
                "the user took back control with Stop; computer control stays off until "
                "it is switched on again in Settings",
            )
        if self.execution_id is not None and self.execution_id != execution_id:
            raise DeviceError("COMPUTER_HOST_BUSY", "another provider execution owns this computer")
        if self.execution_id is None:
            self.execution_id = execution_id
            log.warning("computer control: execution started")
            self._notify(True)
        self._touch()

    def _touch(self) -> None:
        self._last_used = time.monotonic()
        if self._idle is None:
            with contextlib.suppress(RuntimeError):
                loop = asyncio.get_running_loop()
                self._idle = loop.call_later(EXECUTION_IDLE_S, self._check_idle)

    def _check_idle(self) -> None:
        self._idle = None
        if self.execution_id is None:
            return
        left = self._last_used + EXECUTION_IDLE_S - time.monotonic()
        if left > 0:
            self._idle = asyncio.get_running_loop().call_later(left, self._check_idle)
            return
        log.info("computer control: execution idle for %g s; closing it", EXECUTION_IDLE_S)
        task = asyncio.get_running_loop().create_task(self.close(None), name="computer-idle")
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def close(self, execution_id: str | None) -> None:
        """End the live execution (only when it is ``execution_id``, unless None): drop its
        frames, run the close hooks (held input is released)."""
        if self.execution_id is None or (
            execution_id is not None and execution_id != self.execution_id
        ):
            return
        self.execution_id = None
        self.frames.clear()
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        for hook in list(self.close_hooks):
            try:
                await hook()
            except Exception:
                log.exception("computer control close hook failed")
        log.warning("computer control: execution ended")
        self._notify(False)

    async def stop(self) -> None:
        """The user's Stop: end the execution and refuse control until :meth:`resume`."""
        self.stopped = True
        await self.close(None)

    def resume(self) -> None:
        """Computer control was switched off (and may be switched on again): lift the Stop."""
        self.stopped = False

    def _notify(self, live: bool) -> None:
        for listener in list(self.live_listeners):
            try:
                listener(live)
            except Exception:
                log.exception("computer control listener failed")

    # ------------------------------------------------------------------- frames

    def issue_frame(
        self, execution_id: str, geometry: ScreenGeometry, width: int, height: int, max_width: int
    ) -> str:
        """A new ``displayFrameId`` for an image of ``width`` x ``height`` of ``geometry``
        (``execution_id`` must have been claimed)."""
        frame_id = f"frame-{secrets.token_hex(12)}"
        self.frames[frame_id] = Frame(frame_id, execution_id, geometry, width, height, max_width)
        while len(self.frames) > MAX_FRAMES:
            self.frames.popitem(last=False)
        return frame_id

    def frame_for(
        self,
        frame_id: str | None,
        execution_id: str,
        ref_width: int | None,
        current: Callable[[int], ScreenGeometry | None],
    ) -> Frame:
        """The frame coordinates refer to, checked against the screen as it is now
        (``current(index)``: the geometry of screen ``index`` now, None when it is gone).

        Raises:
            DeviceError: ``COMPUTER_STALE_FRAME``.
        """
        frame = self.frames.get(frame_id or "")
        if frame is None or frame.execution_id != execution_id:
            raise stale("the coordinate frame is missing or no longer current")
        now = current(frame.geometry.index)
        if now != frame.geometry:
            self.frames.pop(frame.id, None)
            raise stale("the display geometry changed")
        if ref_width is not None and ref_width not in (frame.max_width, frame.width):
            raise stale("the coordinate reference width changed")
        return frame
