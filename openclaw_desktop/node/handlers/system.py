"""``system.notify``: a real desktop notification.

Params: ``title`` (required, non-empty), ``body`` (required string, may be empty),
``subtitle``, ``sound``, ``priority`` (passive | active | timeSensitive, default active) and
``delivery`` (system | overlay | auto). A JSON ``null`` counts as absent for the optional ones.

Decisions where the reference apps differ:

* Over-long text is cut, not refused: the title at :data:`TITLE_MAX` characters, the body at
  :data:`BODY_MAX` (with an ellipsis). Notification bubbles clip far earlier anyway, and an
  agent is better served by a clipped notification than by an error it has to retry.
* ``subtitle`` has no freedesktop counterpart: it becomes the first line of the body
  (on every platform, so the agent sees one behaviour).
* ``sound``: ``false`` or one of ``none, silent, off, false, 0`` asks for silence; anything
  else (``true``, a sound name) means the default sound: named sounds are not portable.
* ``delivery``: every value is shown as a system notification (there is no overlay here).
* The result is ``{sent: true}``, the Windows node's shape; it means the notification
  service accepted the notification (whether it is displayed is up to the user's settings,
  e.g. do-not-disturb).
"""

from __future__ import annotations

from typing import Any

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.notify import Notice, Notifier, Urgency
from openclaw_desktop.node.context import Area, NodeContext
from openclaw_desktop.node.handlers.params import BadParams
from openclaw_desktop.node.registry import Availability, CommandSpec, Probe
from openclaw_desktop.node.results import Handler, InvokeResult

__all__ = [
    "BODY_MAX",
    "TITLE_MAX",
    "make_system_notify",
    "notify_area",
    "parse_notice",
    "system_notify",
]

#: Longest title shown, in characters; longer titles are cut.
TITLE_MAX = 200
#: Longest body shown (subtitle line included), in characters; longer bodies are cut.
BODY_MAX = 4000
PRIORITIES: dict[str, Urgency] = {
    "passive": Urgency.LOW,
    "active": Urgency.NORMAL,
    "timeSensitive": Urgency.CRITICAL,
}
DELIVERIES = ("system", "overlay", "auto")
_SILENT = frozenset({"none", "silent", "off", "false", "0"})


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _optional_str(params: dict[str, Any], key: str) -> str | None:
    value = params.get(key)
    if value is not None and not isinstance(value, str):
        raise BadParams(f"{key} must be a string")
    return value


def parse_notice(params: Any) -> Notice:
    """Validate ``system.notify`` params into a :class:`Notice`.

    Raises:
        DeviceError: ``INVALID_REQUEST`` naming the first bad field.
    """
    if not isinstance(params, dict):
        raise BadParams("params must be an object")
    title, body = params.get("title"), params.get("body")
    if not isinstance(title, str) or not title.strip():
        raise BadParams("title required (a non-empty string)")
    if not isinstance(body, str):
        raise BadParams("body required (a string, may be empty)")
    subtitle = _optional_str(params, "subtitle")
    priority = params.get("priority")
    if priority is None:
        priority = "active"
    if not isinstance(priority, str) or priority not in PRIORITIES:
        raise BadParams(f"priority must be one of {', '.join(PRIORITIES)}")
    delivery = params.get("delivery")
    if delivery is not None and delivery not in DELIVERIES:
        raise BadParams(f"delivery must be one of {', '.join(DELIVERIES)}")
    sound = params.get("sound")
    if sound is not None and not isinstance(sound, str | bool):
        raise BadParams("sound must be a string or a boolean")
    silent = sound is False or (isinstance(sound, str) and sound.strip().lower() in _SILENT)
    text = body if not subtitle or not subtitle.strip() else f"{subtitle.strip()}\n{body}"
    return Notice(
        title=_cut(title.strip(), TITLE_MAX),
        body=_cut(text, BODY_MAX),
        urgency=PRIORITIES[priority],
        silent=silent,
    )


def make_system_notify(notifier: Notifier) -> Handler:
    """The ``system.notify`` handler sending through ``notifier``.

    The result is ``{sent: true}`` (the Windows node's shape). Bad params give
    ``INVALID_REQUEST``; a missing, vanished, failing or hung (bounded by the notifier's
    ``send_timeout``) notification service gives ``UNAVAILABLE`` with the reason.
    """

    async def system_notify(params: Any) -> InvokeResult:
        try:
            await notifier.send(parse_notice(params))
        except DeviceError as exc:
            return InvokeResult.error(exc.code, exc.message)
        return InvokeResult.success({"sent": True})

    return system_notify


_DEFAULT_NOTIFIER = Notifier()

#: ``system.notify`` through a process-wide :class:`Notifier`.
system_notify: Handler = make_system_notify(_DEFAULT_NOTIFIER)


def _probe(notifier: Notifier) -> Probe:
    async def notifications_available() -> Availability:
        status = await notifier.probe()
        return Availability.yes() if status.available else Availability.no(status.reason)

    return notifications_available


def notify_area(ctx: NodeContext, notifier: Notifier | None = None) -> Area:
    """``system.notify``, gated by the notifications setting (on by default) and by a
    notification service being there (``UNAVAILABLE`` with the reason otherwise)."""
    del ctx
    notifier = notifier or Notifier()
    spec = CommandSpec(
        "system.notify",
        "system",
        availability=_probe(notifier),
        setting="notifications",
        permission="notifications",
        disabled_message="notifications",
    )
    return Area((spec,), {"system.notify": make_system_notify(notifier)})
