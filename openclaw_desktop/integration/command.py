"""The command line that starts this app, and quoting it for desktop entries and systemd.

Installed files (desktop entries, autostart entries, systemd units) name this app by the
absolute path it runs from now: a PyInstaller bundle's executable, the ``openclaw-desktop``
console script beside the interpreter of its virtual environment (pip, pipx), or the
interpreter itself with ``-m ui.launcher``. Symbolic links are kept, not resolved: a venv's
``python`` is a link whose target would lose the venv.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "EMBEDDED_ALLOW",
    "SCRIPT_NAME",
    "app_argv",
    "bundled_gateway_args",
    "desktop_exec",
    "frozen",
    "gateway_argv",
    "systemd_exec",
]

SCRIPT_NAME = "openclaw-desktop"

#: Node commands of this app that the bundled gateway allows beyond the Linux defaults. On
#: the user's own gateway the gate that matters is the user's settings (camera, screen and
#: microphone are off until enabled), so every command this app can offer is allowed here.
#: It is ``openclaw_desktop.node.capabilities.embedded_allow()`` written out: the bundled
#: gateway's service unit reads it, and the gateway may not import the node package (its
#: import-linter contract), so ``tests/unit/node/test_capabilities.py`` checks the two are
#: equal, order included.
EMBEDDED_ALLOW = (
    "device.info",
    "device.status",
    "system.notify",
    "camera.list",
    "camera.snap",
    "camera.clip",
    "screen.snapshot",
    "screen.record",
    "talk.ptt.start",
    "talk.ptt.stop",
    "talk.ptt.cancel",
    "talk.ptt.once",
    "location.get",
    "device.apps",
)

# Characters the Desktop Entry specification reserves in Exec arguments (they need quoting).
_DESKTOP_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def frozen() -> bool:
    """Whether this runs from a PyInstaller bundle."""
    return bool(getattr(sys, "frozen", False))


def _script() -> Path | None:
    """The ``openclaw-desktop`` console script of this interpreter's environment, if any."""
    name = SCRIPT_NAME + (".exe" if os.name == "nt" else "")
    script = Path(sys.executable).absolute().parent / name
    return script if script.is_file() else None


def app_argv() -> list[str]:
    """The absolute command (argv prefix) that runs ``openclaw-desktop`` as installed here."""
    if frozen():
        return [str(Path(sys.executable).absolute())]
    script = _script()
    if script is not None:
        return [str(script)]
    return [str(Path(sys.executable).absolute()), "-m", "ui.launcher"]


def gateway_argv() -> list[str]:
    """The command (argv prefix) that runs the bundled gateway's CLI (``python -m gateway``)."""
    if frozen():
        return [str(Path(sys.executable).absolute()), "gateway"]
    return [sys.executable, "-m", "gateway"]


def bundled_gateway_args(port: int, *, allow: Sequence[str] = ()) -> list[str]:
    """Arguments of ``gateway`` that run the bundled gateway as the embedded default does
    (loopback, token auth, every command of this app allowed), plus ``allow``."""
    allowed = list(dict.fromkeys([*EMBEDDED_ALLOW, *allow]))
    return ["run", "--port", str(port), "--allow", ",".join(allowed)]


def _desktop_arg(arg: str) -> str:
    if not arg or any(c in _DESKTOP_RESERVED for c in arg):
        escaped = "".join("\\" + c if c in '"`$\\' else c for c in arg)
        arg = f'"{escaped}"'
    # The key's value is a string: a backslash is itself escaped in the file, and "%"
    # introduces field codes.
    return arg.replace("\\", "\\\\").replace("%", "%%")


def desktop_exec(argv: Sequence[str], *field_codes: str) -> str:
    """An ``Exec=`` value (without the key) for ``argv`` followed by field codes (``%u``)."""
    if not argv:
        raise ValueError("empty command")
    if any("\n" in a or "\r" in a for a in argv):
        raise ValueError("a command argument contains a line break")
    return " ".join([*(_desktop_arg(a) for a in argv), *field_codes])


def _systemd_arg(arg: str) -> str:
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"')
    # "%" starts a specifier and "$" an environment variable in ExecStart.
    escaped = escaped.replace("%", "%%").replace("$", "$$")
    if not arg or any(c.isspace() or c in "'\"\\;" for c in arg):
        return f'"{escaped}"'
    return escaped


def systemd_exec(argv: Sequence[str]) -> str:
    """An ``ExecStart=`` value (without the key) for ``argv``: absolute first word, quoted."""
    if not argv:
        raise ValueError("empty command")
    if not Path(argv[0]).is_absolute():
        raise ValueError(f"systemd needs an absolute executable path, not {argv[0]!r}")
    if any("\n" in a or "\r" in a for a in argv):
        raise ValueError("a command argument contains a line break")
    return " ".join(_systemd_arg(a) for a in argv)
