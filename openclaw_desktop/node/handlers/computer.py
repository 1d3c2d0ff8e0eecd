"""``computer.act``: the agent's pointer and keyboard on this computer (X11 through XTest, a
Wayland session through the desktop portal's RemoteDesktop), off by default.

Coordinates are pixels of a screenshot taken with ``screen.snapshot`` in the same execution
(its ``displayFrameId``, echoed with ``refWidth``: see
:mod:`openclaw_desktop.node.computer_control`); they are mapped onto that screen's rectangle,
and refused with ``COMPUTER_STALE_FRAME`` when the screen changed since. Actions: the five
clicks, ``mouse_move``, ``left_click_drag``, ``left_mouse_down``/``up``, ``scroll``,
``type``, ``key``, ``hold_key`` (params: :mod:`.computer_params`). The tool's ``screenshot``
and ``wait`` are not node actions: the gateway runs them through ``screen.snapshot``.

Every press is released: after each action, on error and on cancellation (``node.invoke.cancel``
stops typing before the next character). A button held by ``left_mouse_down`` stays held
until ``left_mouse_up``, the end of the execution or the user's Stop.

The input driver is chosen once per execution (:class:`DriverChoice`): the portal's on a
Wayland session (available only when the portal offers RemoteDesktop with a keyboard and a
pointer, and ScreenCast; otherwise unavailable naming what is missing), XTest elsewhere. Both
implement :class:`~openclaw_desktop.node.computer_control.InputDriver`; frames, executions,
Stop and error codes are the same for both.

Result: ``{"ok": true, "details": {"action": ...}}`` (neither XTest nor the portal can confirm
that an application reacted, so no ``effect`` is claimed). Errors are the reference's
``COMPUTER_*`` codes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

from openclaw_desktop.config.paths import AppPaths
from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.portal_bus import wayland_session
from openclaw_desktop.devices.portal_input import PortalDriver, remote_desktop_status
from openclaw_desktop.devices.screen import WAYLAND_DISPLAY_NAME, screen_rects
from openclaw_desktop.devices.x11_input import BUTTONS, X11Input, input_status
from openclaw_desktop.devices.x11_keys import KeyError_, char_keysym, parse_chord, parse_modifiers
from openclaw_desktop.node.computer_control import (
    ComputerControl,
    Frame,
    InputDriver,
    ScreenGeometry,
    stale,
)
from openclaw_desktop.node.context import Area, NodeContext
from openclaw_desktop.node.handlers.computer_params import (
    CLICKS,
    CLOSE_ACTION,
    ActParams,
    invalid,
    parse_act_params,
)
from openclaw_desktop.node.registry import Availability, CommandSpec, Probe
from openclaw_desktop.node.results import Handler, InvokeResult

__all__ = [
    "DriverChoice",
    "X11Driver",
    "computer_area",
    "current_geometry",
    "make_computer_act",
]

T = TypeVar("T")
DEFAULT_SCROLL = 3
DEFAULT_HOLD_MS = 1000
DRAG_STEPS = 12
BUTTON_NOT_HELD = "left button is not held by computer control"
#: Where the portal's ``restore_token`` (the user's standing grant) is kept.
PORTAL_TOKEN_FILE = "portal-remote-desktop.token"


def _portal_geometry(computer: ComputerControl, index: int) -> ScreenGeometry | None:
    """On Wayland the desktop as the newest portal screenshot showed it (a later screenshot
    of another size makes the older frames stale)."""
    for frame in reversed(computer.frames.values()):
        if frame.geometry.display == WAYLAND_DISPLAY_NAME and frame.geometry.index == index:
            return frame.geometry
    return None


def current_geometry(index: int) -> ScreenGeometry | None:
    """Screen ``index`` of ``$DISPLAY`` as it is now (blocking), None when it is gone."""
    try:
        rects = screen_rects()
    except DeviceError:
        return None
    if index >= len(rects):
        return None
    return ScreenGeometry(os.environ.get("DISPLAY", ""), index, *rects[index])


class X11Driver:
    """One XTest connection, opened on first use, used by one worker thread at a time."""

    def __init__(self) -> None:
        self._input: X11Input | None = None
        self._lock = asyncio.Lock()
        #: ``left_mouse_down`` holds the left button across actions until ``left_mouse_up``.
        self.left_held = False

    async def run(self, call: Callable[[X11Input], T]) -> T:
        """Run ``call(input)`` in a worker thread (never two at once).

        Raises:
            DeviceError: ``COMPUTER_DRIVER_UNAVAILABLE`` when the display cannot be opened.
        """
        async with self._lock:
            return await asyncio.to_thread(self._call, call)

    def _call(self, call: Callable[[X11Input], T]) -> T:
        if self._input is None:
            self._input = X11Input()
        return call(self._input)

    def bind(self, width: int, height: int) -> None:
        """XTest takes root-window pixels: nothing to bind."""

    async def move(self, x: int, y: int) -> None:
        await self.run(functools.partial(X11Input.move, x=x, y=y))

    async def button(self, button: int, press: bool) -> None:
        await self.run(functools.partial(X11Input.button, button=button, press=press))

    async def click_at(self, x: int, y: int, button: int, count: int = 1) -> None:
        await self.run(functools.partial(X11Input.click_at, x=x, y=y, button=button, count=count))

    async def press_at(self, x: int, y: int, button: int) -> None:
        await self.run(functools.partial(X11Input.press_at, x=x, y=y, button=button))

    async def wheel(self, direction: str, ticks: int) -> None:
        await self.run(functools.partial(X11Input.wheel, direction=direction, ticks=ticks))

    async def key(self, keysym: int, press: bool) -> None:
        await self.run(functools.partial(X11Input.key, keysym=keysym, press=press))

    async def type_keysym(self, keysym: int) -> None:
        await self.run(functools.partial(X11Input.type_keysym, keysym=keysym))

    async def holds(self, button: int) -> bool:
        return await self.run(lambda i: button in i.held_buttons)

    async def release(self, close: bool = False) -> None:
        """Release every held key and button (but the left button ``left_mouse_down``
        holds, unless closing the connection); survives a cancellation of the caller, so a
        held key is never left behind."""
        if close:
            self.left_held = False
        keep = (1,) if self.left_held else ()

        def let_go() -> None:
            if self._input is not None:
                self._input.release_all(keep)
                if close:
                    self._input.close()
                    self._input = None

        async def locked() -> None:
            async with self._lock:
                await asyncio.to_thread(let_go)

        task = asyncio.ensure_future(locked())
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            await task
            raise


def _chord(text: str) -> list[int]:
    try:
        chord = parse_chord(text)
    except KeyError_ as exc:
        raise DeviceError("COMPUTER_UNSUPPORTED_KEY", str(exc)) from None
    return [*chord.modifiers, chord.key]


def _modifiers(params: ActParams) -> list[int]:
    try:
        return list(parse_modifiers(params.get("modifiers")))
    except KeyError_ as exc:
        raise DeviceError("COMPUTER_UNSUPPORTED_KEY", str(exc)) from None


class _Act:
    """Performs one validated action."""

    def __init__(self, ctx: NodeContext, driver: InputDriver, params: ActParams) -> None:
        self.ctx = ctx
        self.driver = driver
        self.p = params

    async def frame(self) -> Frame:
        frame_id = self.p.get("displayFrameId")
        execution = self.p.execution_id
        if not frame_id:
            raise stale("the coordinate frame is missing or no longer current")
        known = self.ctx.computer.frames.get(frame_id)
        index = known.geometry.index if known is not None else 0
        if known is not None and known.geometry.display == WAYLAND_DISPLAY_NAME:
            now = _portal_geometry(self.ctx.computer, index)
        else:
            now = await asyncio.to_thread(current_geometry, index)
        frame = self.ctx.computer.frame_for(
            frame_id, execution, self.p.get("refWidth"), {index: now}.get
        )
        wanted = self.p.get("screenIndex")
        if wanted is not None and wanted != frame.geometry.index:
            raise stale(f"the frame is of screen {frame.geometry.index}, not {wanted}")
        self.driver.bind(frame.geometry.width, frame.geometry.height)
        return frame

    async def point(
        self, x_key: str = "x", y_key: str = "y", label: str = "action"
    ) -> tuple[int, int]:
        x, y = self.p.get(x_key), self.p.get(y_key)
        if x is None or y is None:
            raise invalid(f"{label} coordinates are required")
        return (await self.frame()).to_screen(x, y, label)

    async def optional_point(self) -> tuple[int, int] | None:
        if self.p.get("x") is None and self.p.get("y") is None:
            return None
        return await self.point()

    async def press_keys(self, keysyms: list[int], press: bool) -> None:
        order = keysyms if press else list(reversed(keysyms))
        for keysym in order:
            await self.driver.key(keysym, press)

    async def run(self) -> dict[str, Any]:
        action = self.p.action
        if action in CLICKS:
            button, count = CLICKS[action]
            x, y = await self.point()
            mods = _modifiers(self.p)
            await self.press_keys(mods, True)
            await self.driver.click_at(x, y, BUTTONS[button], count)
            await self.press_keys(mods, False)
        elif action == "mouse_move":
            x, y = await self.point()
            await self.driver.move(x, y)
        elif action == "left_click_drag":
            await self.drag()
        elif action in ("left_mouse_down", "left_mouse_up"):
            await self.left_button(action == "left_mouse_down")
        elif action == "scroll":
            await self.scroll()
        elif action == "type":
            await self.type_text(self.p.get("text"))
        elif action == "key":
            keys = _chord(self.p.get("keys"))
            await self.press_keys(keys, True)
            await self.press_keys(keys, False)
        elif action == "hold_key":
            keys = _chord(self.p.get("keys"))
            duration = self.p.get("durationMs")
            await self.press_keys(keys, True)
            await asyncio.sleep((DEFAULT_HOLD_MS if duration is None else duration) / 1000)
            await self.press_keys(keys, False)
        return {"ok": True, "details": {"action": action}}

    async def drag(self) -> None:
        x0, y0 = await self.point("fromX", "fromY", "drag start")
        x1, y1 = await self.point("x", "y", "drag end")
        duration = self.p.get("durationMs") or 0
        await self.driver.press_at(x0, y0, 1)
        for step in range(1, DRAG_STEPS + 1):
            x = x0 + (x1 - x0) * step // DRAG_STEPS
            y = y0 + (y1 - y0) * step // DRAG_STEPS
            await self.driver.move(x, y)
            await asyncio.sleep(duration / 1000 / DRAG_STEPS)
        await self.driver.button(1, False)

    async def left_button(self, down: bool) -> None:
        point = await self.optional_point()
        mods = _modifiers(self.p)
        if not down and not await self.driver.holds(1):
            raise invalid(BUTTON_NOT_HELD)
        if point is not None:
            await self.driver.move(*point)
        await self.press_keys(mods, True)
        await self.driver.button(1, down)
        self.driver.left_held = down
        await self.press_keys(mods, False)

    async def scroll(self) -> None:
        point = await self.optional_point()
        direction = self.p.get("scrollDirection")
        amount = self.p.get("scrollAmount") or DEFAULT_SCROLL
        mods = _modifiers(self.p)
        if point is not None:
            await self.driver.move(*point)
        await self.press_keys(mods, True)
        await self.driver.wheel(direction, amount)
        await self.press_keys(mods, False)

    async def type_text(self, text: str) -> None:
        try:
            keysyms = [char_keysym(char) for char in text]
        except KeyError_ as exc:
            raise DeviceError("COMPUTER_UNSUPPORTED_KEY", str(exc)) from None
        for keysym in keysyms:  # one character per step: a cancel stops before the next
            await self.driver.type_keysym(keysym)


def _refuse_targets(params: ActParams) -> None:
    refs = [key for key in ("windowRef", "elementRef", "observationId") if params.get(key)]
    if refs:
        raise DeviceError(
            "COMPUTER_UNSUPPORTED_ACTION",
            f"{', '.join(refs)}: this node targets the screen only (no window or element "
            "references)",
        )
    if params.get("deliveryMode") == "background":
        raise DeviceError(
            "COMPUTER_UNSUPPORTED_ACTION", "background delivery is not supported by this node"
        )


class DriverChoice:
    """The input driver of the live execution, chosen when it starts (the portal on a
    Wayland session, XTest elsewhere) and kept until it ends."""

    def __init__(self, x11: X11Driver | None = None, portal: PortalDriver | None = None) -> None:
        self.x11 = x11 or X11Driver()
        self.portal = portal or PortalDriver(AppPaths.default().state_dir / PORTAL_TOKEN_FILE)
        self.chosen: InputDriver | None = None

    def current(self) -> InputDriver:
        """The execution's driver (chosen now when none is)."""
        if self.chosen is None:
            self.chosen = self.portal if wayland_session() else self.x11
        return self.chosen

    async def close(self) -> None:
        """The execution ended: release and close its driver; the next one chooses again."""
        chosen, self.chosen = self.chosen, None
        if chosen is not None:
            await chosen.release(close=True)


def make_computer_act(ctx: NodeContext, drivers: DriverChoice) -> Handler:
    """The ``computer.act`` handler."""

    async def computer_act(params: Any) -> InvokeResult:
        try:
            request = parse_act_params(params)
            if request.action == CLOSE_ACTION:
                await ctx.computer.close(request.execution_id)
                return InvokeResult.success({"ok": True})
            ctx.computer.claim(request.execution_id)
            _refuse_targets(request)
            driver = drivers.current()
            try:
                payload = await _Act(ctx, driver, request).run()
            finally:
                await driver.release()
        except DeviceError as exc:
            return InvokeResult.error(exc.code, exc.message)
        return InvokeResult.success(payload)

    return computer_act


def _probe(drivers: DriverChoice) -> Probe:
    async def input_available() -> Availability:
        if wayland_session():
            portal = await remote_desktop_status(drivers.portal.address)
            return Availability.yes() if portal.available else Availability.no(portal.reason)
        status = await asyncio.to_thread(input_status)
        return Availability.yes() if status.available else Availability.no(status.reason)

    return input_available


def _show_live(ctx: NodeContext) -> Callable[[bool], None]:
    """While an execution is live, the capture indicator says ``computer``."""
    stack = contextlib.ExitStack()

    def live(active: bool) -> None:
        if active:
            stack.enter_context(ctx.activity.capture("computer", "computer.act"))
        else:
            stack.close()

    return live


def computer_area(
    ctx: NodeContext, driver: X11Driver | None = None, portal: PortalDriver | None = None
) -> Area:
    """``computer.act``: off until the user enables Computer control, only while the user is
    at the computer, and only where input reaches the session (XTest on X11, the portal's
    RemoteDesktop on Wayland)."""
    drivers = DriverChoice(driver, portal)
    ctx.computer.live_listeners.append(_show_live(ctx))
    ctx.computer.close_hooks.append(drivers.close)
    spec = CommandSpec(
        "computer.act",
        "computer",
        availability=_probe(drivers),
        setting="computer",
        needs_presence=True,
        disabled_code="COMPUTER_DRIVER_UNAVAILABLE",
        disabled_message="computer control is off; enable Computer control in Settings",
        unavailable_code="COMPUTER_DRIVER_UNAVAILABLE",
    )
    return Area((spec,), {"computer.act": make_computer_act(ctx, drivers)})
