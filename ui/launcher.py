"""The ``openclaw-desktop`` console script: the window when there is a display and no
subcommand, the headless CLI otherwise. Imports no Qt until the window is wanted, so the
command-line tools start fast."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

__all__ = ["has_display", "main"]


def has_display() -> bool:
    """Whether a window can be shown (X11/Wayland on Linux; always on macOS and Windows)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(
        os.environ.get("DISPLAY")
        or os.environ.get("WAYLAND_DISPLAY")
        or os.environ.get("QT_QPA_PLATFORM")
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: ``--headless`` forces the command-line behaviour."""
    from openclaw_desktop.cli import build_parser
    from openclaw_desktop.cli import main as cli_main

    raw = list(sys.argv[1:] if argv is None else argv)
    if raw and raw[0] == "gateway":  # its own argument parser (python -m gateway)
        return cli_main(raw)
    headless = "--headless" in raw
    if headless:
        raw.remove("--headless")
    args = build_parser().parse_args(raw)
    if args.command is None and not headless and has_display():
        from ui.app import run
        from ui.runtime import RuntimeTarget

        return run([sys.argv[0]], RuntimeTarget(port=args.gateway_port))
    return cli_main(raw)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
