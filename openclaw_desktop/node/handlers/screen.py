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

With an ``executionId`` (the v2 Computer Use form, as the gateway's ``computer`` tool sends
it) the params are the reference's closed set ``executionId``, ``screenIndex``, ``maxWidth``,
``quality`` (a fraction 0-1, as the reference's providers take it) and ``format``, and the
result adds ``displayFrameId`` (the frame ``computer.act`` coordinates refer to, bound to
that execution, this screen's geometry and the delivered width), ``screenIndex`` and
``capturedAtMs``. A frame is issued only while Computer control is on; otherwise the capture
is a plain one.
"""

from __future__ import annotations

import dataclasses
import os
import time
from typing import Any

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.screen import ImageFormat, ScreenGrabber, SnapshotRequest
from openclaw_desktop.node.computer_control import ScreenGeometry
from openclaw_desktop.node.context import Area, NodeContext
from openclaw_desktop.node.handlers.computer_params import execution_id_of
from openclaw_desktop.node.handlers.params import BadParams, int_param, params_object
from openclaw_desktop.node.registry import Availability, CommandSpec, Probe
from openclaw_desktop.node.results import Handler, InvokeResult

__all__ = ["make_screen_snapshot", "parse_snapshot_request", "screen_area"]

_FORMATS: dict[str, ImageFormat] = {"png": "png", "jpeg": "jpeg", "jpg": "jpeg"}
MAX_SCREEN_INDEX = 32


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
    index = int_param(params, "screenIndex", 0, 0, MAX_SCREEN_INDEX)
    monitor = int_param(params, "monitor", index, 0, MAX_SCREEN_INDEX)
    if params.get("screenIndex") is None:
        index = monitor
    elif monitor != index:
        raise BadParams("screenIndex and monitor disagree; send one of them")
    pointer = params.get("includePointer")
    if pointer is not None and not isinstance(pointer, bool):
        raise BadParams("includePointer must be a boolean")
    return SnapshotRequest(
        format=_FORMATS[fmt.lower()],
        max_width=int_param(params, "maxWidth", 1920, 16, 7680),
        quality=int_param(params, "quality", 80, 1, 100),
        screen_index=index,
        include_pointer=True if pointer is None else pointer,
    )


_V2_FIELDS = frozenset({"executionId", "screenIndex", "maxWidth", "quality", "format"})


def parse_v2_request(params: dict[str, Any]) -> SnapshotRequest:
    """Validate the v2 (``executionId``) form: the reference's closed field set, ``quality``
    a fraction.

    Raises:
        DeviceError: ``COMPUTER_INVALID_REQUEST: invalid params: ...``.
    """
    for key in params:
        if key not in _V2_FIELDS:
            raise DeviceError(
                "COMPUTER_INVALID_REQUEST", f"invalid params: {key} is not a screen.snapshot field"
            )
    quality = params.get("quality")
    if quality is not None and (
        isinstance(quality, bool) or not isinstance(quality, int | float) or not 0 < quality <= 1
    ):
        raise DeviceError(
            "COMPUTER_INVALID_REQUEST", "invalid params: quality must be a number from 0 to 1"
        )
    legacy = {k: v for k, v in params.items() if k not in ("executionId", "quality")}
    try:
        request = parse_snapshot_request(legacy)
    except DeviceError as exc:
        raise DeviceError("COMPUTER_INVALID_REQUEST", f"invalid params: {exc.message}") from None
    if quality is not None:
        request = dataclasses.replace(request, quality=max(1, min(100, round(quality * 100))))
    return request


async def _v2_snapshot(
    ctx: NodeContext, grabber: ScreenGrabber, params: dict[str, Any]
) -> InvokeResult:
    execution_id = execution_id_of(params)
    request = parse_v2_request(params)
    issue = bool(ctx.settings().toggles().get("computer"))
    if issue:
        ctx.computer.claim(execution_id)
    with ctx.activity.capture("screen", "screen.snapshot"):
        snapshot = await grabber.snapshot(request)
    payload = snapshot.to_payload()
    payload["screenIndex"] = request.screen_index
    payload["capturedAtMs"] = int(time.time() * 1000)
    if issue and snapshot.rect is not None:
        display = snapshot.display or os.environ.get("DISPLAY", "")
        geometry = ScreenGeometry(display, request.screen_index, *snapshot.rect)
        payload["displayFrameId"] = ctx.computer.issue_frame(
            execution_id, geometry, snapshot.width, snapshot.height, request.max_width
        )
    return InvokeResult.success(payload)


def make_screen_snapshot(ctx: NodeContext, grabber: ScreenGrabber) -> Handler:
    """The ``screen.snapshot`` handler: validates, then captures inside
    ``ctx.activity.capture("screen", ...)`` in a worker thread (bounded by the grabber)."""

    async def screen_snapshot(params: Any) -> InvokeResult:
        try:
            if isinstance(params, dict) and params.get("executionId") is not None:
                return await _v2_snapshot(ctx, grabber, params)
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
