"""Result models: the answer of every method the bundled gateway serves, as the real
OpenClaw gateway 2026.9.6 sends it; the gateway's tests and the client both read them.

:data:`RESULTS` maps a method name to its model; each family module declares its own
``RESULTS`` beside its models, merged here. Models are :class:`OpenModel` (newer
gateways add fields, which are kept); a field is required only when the reference always
sends it. Parse an answer with ``RESULTS[method].model_validate(payload)``.

Answers that are not objects: ``system-presence``, ``exec.approval.list``,
``plugin.approval.list`` and ``openclaw.approval.list`` answer an array
(:class:`~pydantic.RootModel` of dicts). Answers with no field always present (validated
only as an object): ``device.pair.setupStatus`` (``{}`` until a setup completes),
``exec.approvals.node.get``/``.set`` (the node's own answer passed through),
``node.pluginSurface.refresh``/``plugin.surface.refresh`` (this gateway hosts no plugin
surfaces and always refuses).

Where the reference's TypeBox result schema exists (``dist/*.mjs``, ``<Name>ResultSchema``)
it decides what is required; otherwise the recorded answers and what the bundled gateway
sends do.
"""

from __future__ import annotations

from pydantic import BaseModel

from openclaw_desktop.protocol.results import (
    agent,
    chat,
    control_ui,
    devices,
    nodes,
    ops,
    sessions,
    system,
    talk,
)

__all__ = ["RESULTS", "result_model"]

RESULTS: dict[str, type[BaseModel]] = {
    **system.RESULTS,
    **nodes.RESULTS,
    **devices.RESULTS,
    **chat.RESULTS,
    **sessions.RESULTS,
    **talk.RESULTS,
    **agent.RESULTS,
    **ops.RESULTS,
    **control_ui.RESULTS,
}
"""Method name -> result model, one per method the bundled gateway serves."""


def result_model(method: str) -> type[BaseModel] | None:
    """The result model of ``method`` (None for a method without one)."""
    return RESULTS.get(method)
