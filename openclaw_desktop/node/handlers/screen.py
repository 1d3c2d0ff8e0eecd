"""``screen.snapshot``: a screenshot of one screen, off by default.

Params (all optional): ``format`` png | jpeg | jpg (default png, the reference default),
``maxWidth`` 16-7680 (1920), ``quality`` 1-100 (80, JPEG only), ``screenIndex`` or its alias
``monitor`` 0-32 (0), ``includePointer`` (true; drawn on X11 only). ``null`` counts as absent.
Values out of range are refused (``INVALID_REQUEST``), not clamped, so the agent learns the
limits; a screen index past the last screen gives ``INVALID_REQUEST: no screen N, there are K``.

Result ``{format, width, height, base64}`` (``format`` is ``png`` or ``jpeg``). The reference
Windows node also sends the same bytes again as a ``data:`` URL in ``image``; that doubles the
payload, so it is left out. The base64 stays under 5 MiB: JPEG lowers its quality, then both
formats shrink the image.
"""

from __future__ import annotations

from typing import Any

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.screen import ImageFormat, ScreenGrabber, SnapshotRequest
from openclaw_desktop.node.context import Area, NodeContext
from openclaw_desktop.node.handlers.params import BadParams, params_object
from openclaw_desktop.node.registry import Availability, CommandSpec, Probe
from openclaw_desktop.node.results import Handler, InvokeResult

__all__ = ["make_screen_snapshot", "parse_snapshot_request", "screen_area"]

_FORMATS: dict[str, ImageFormat] = {"png": "png", "jpeg": "jpeg", "jpg": "jpeg"}
MAX_SCREEN_INDEX = 32


def _int(params: dict[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = params.get(key)
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadParams(f"{key} must be an integer from {low} to {high}")
    return value


def parse_snapshot_request(params: Any) -> SnapshotRequest:
    """Validate ``screen.snapshot`` params.

    Raises:
        DeviceError: ``INVALID_REQUEST`` naming the first bad field.
    """
    params = params_object(params)
    fmt = params.get("format")
    if fmt is None:
        fmt = "png"
    if not isinstance(fmt, str) or fmt.lower() not in _FORMATS:
        raise BadParams("format must be png or jpeg")
    index = _int(params, "screenIndex", 0, 0, MAX_SCREEN_INDEX)
    monitor = _int(params, "monitor", index, 0, MAX_SCREEN_INDEX)
    if params.get("screenIndex") is None:
        index = monitor
    elif monitor != index:
        raise BadParams("screenIndex and monitor disagree; send one of them")
    pointer = params.get("includePointer")
    if pointer is not None and not isinstance(pointer, bool):
        raise BadParams("includePointer must be a boolean")
    return SnapshotRequest(
        format=_FORMATS[fmt.lower()],
        max_width=_int(params, "maxWidth", 1920, 16, 7680),
        quality=_int(params, "quality", 80, 1, 100),
        screen_index=index,
        include_pointer=True if pointer is None else pointer,
    )


def make_screen_snapshot(ctx: NodeContext, grabber: ScreenGrabber) -> Handler:
    """The ``screen.snapshot`` handler: validates, then captures inside
    ``ctx.activity.capture("screen", ...)`` in a worker thread (bounded by the grabber)."""

    async def screen_snapshot(params: Any) -> InvokeResult:
        try:
            request = parse_snapshot_request(params)
            with ctx.activity.capture("screen", "screen.snapshot"):
                snapshot = await grabber.snapshot(request)
        except DeviceError as exc:
            return InvokeResult.error(exc.code, exc.message)
        return InvokeResult.success(snapshot.to_payload())

    return screen_snapshot


def _probe(grabber: ScreenGrabber) -> Probe:
    async def display_available() -> Availability:
        status = await grabber.probe()
        return Availability.yes() if status.available else Availability.no(status.reason)

    return display_available


def screen_area(ctx: NodeContext, grabber: ScreenGrabber | None = None) -> Area:
    """``screen.snapshot``: off until the user enables Screen, only while the user is at the
    computer, and only where a display can be read."""
    grabber = grabber or ScreenGrabber()
    spec = CommandSpec(
        "screen.snapshot",
        "screen",
        availability=_probe(grabber),
        setting="screen",
        permission="screenRecording",
        needs_presence=True,
        disabled_message="enable Screen in Settings",
    )
    return Area((spec,), {"screen.snapshot": make_screen_snapshot(ctx, grabber)})
