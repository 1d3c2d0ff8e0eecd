"""The ``openclaw-desktop`` console script: the window when there is a display and no
subcommand, the headless CLI otherwise. Imports no Qt until the window is wanted, so the
command-line tools start fast.

An ``openclaw://pair?code=...`` argument (what the desktop entry's ``%u`` passes when a link
is opened) is parsed here and handed to the window, which shows it in its connect screen.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openclaw_desktop.cli_launch import LaunchGateway
    from openclaw_desktop.links import PairLink

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


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: ``--headless`` forces the command-line behaviour."""
    raw = list(sys.argv[1:] if argv is None else argv)
    if raw and raw[0] == "gateway":
        # The bundled gateway's own CLI, in this process: a PyInstaller bundle has no
        # ``python -m gateway`` to hand it to.
        from gateway.cli import main as gateway_main

        return gateway_main(raw[1:])

    from openclaw_desktop.cli import build_parser
    from openclaw_desktop.cli import main as cli_main
    from openclaw_desktop.errors import LinkError
    from openclaw_desktop.links import is_link, parse_link

    parser = build_parser()
    parser.epilog = (
        "Without a subcommand: the desktop window when there is a display (--headless: the "
        "embedded default without it). An openclaw://pair?code=<setup code> argument opens "
        "that setup code in the window's connect screen."
    )
    # A link is the window's argument: with a subcommand it is just a value (of `settings
    # set`, say) and stays where it is.
    if not set(raw) & _subcommands(parser):
        links = [a for a in raw if is_link(a)]
        raw = [a for a in raw if not is_link(a)]
    else:
        links = []
    headless = "--headless" in raw
    if headless:
        raw.remove("--headless")
    args = parser.parse_args(raw)
    pair_link: PairLink | None = None
    if links:
        try:
            if len(links) > 1:
                raise LinkError("give one openclaw:// link at a time")
            pair_link = parse_link(links[0])
        except LinkError as exc:  # never echoes the link
            _say(f"error: {exc}")
            return 2
    gui = args.command is None and not headless and has_display()
    if pair_link is not None and not gui:
        _say("error: openclaw:// links open in the desktop window, which needs a display")
        return 2
    if gui:
        from openclaw_desktop.cli_launch import launch_gateway
        from openclaw_desktop.errors import ConfigError

        try:
            choice = launch_gateway(args)
        except ConfigError as exc:
            _say(f"error: {exc}")
            return 2
        return _window(choice, args.verbose, pair_link, links[0] if links else None)
    if args.command == "desktop":
        from ui.icons import render_png

        return cli_main(raw, render_png=render_png)
    return cli_main(raw)


def _subcommands(parser: argparse.ArgumentParser) -> set[str]:
    return {
        name
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for name in action.choices
    }


def _window(
    choice: LaunchGateway, verbosity: int, pair_link: PairLink | None, link: str | None
) -> int:
    from openclaw_desktop.config import AppPaths
    from openclaw_desktop.log import configure_logging
    from ui.instance import forward

    configure_logging(verbosity)
    # Already running (the tray)? It takes the link, or comes to the front, and this exits.
    if forward(AppPaths.default(), link):
        _say("handed over to the OpenClaw Desktop that is already running")
        return 0

    from PySide6.QtWidgets import QApplication

    from ui.app import run
    from ui.launch_target import LaunchTarget
    from ui.smoke import SMOKE_ENV, watch_connect_screen

    argv0 = sys.argv[0] if sys.argv else "openclaw-desktop"
    smoke = os.environ.get(SMOKE_ENV, "")
    if smoke:
        app = QApplication.instance() or QApplication([argv0])
        assert isinstance(app, QApplication)
        watch_connect_screen(app, exit_after=smoke == "exit")
    target = LaunchTarget(
        url=choice.url,
        token=choice.token,
        port=choice.port,
        explicit=choice.explicit,
        pair_link=pair_link,
    )
    return run([argv0], target)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
