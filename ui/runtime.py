"""The desktop runtime, as the window imports it: it lives in the Qt-free core
(:mod:`openclaw_desktop.runtime`), the composition root shared with headless use."""

from __future__ import annotations

from openclaw_desktop.runtime import WINDOW_SCOPES, DesktopRuntime, RuntimeTarget

__all__ = ["WINDOW_SCOPES", "DesktopRuntime", "RuntimeTarget"]
