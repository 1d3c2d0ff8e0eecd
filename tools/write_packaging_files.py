"""Write the generated files of ``packaging/`` (desktop entry, AppStream metainfo, SVG icon)
from ``openclaw_desktop.integration``; a unit test fails when they are out of date."""

from __future__ import annotations

import sys
from pathlib import Path

from openclaw_desktop.integration.icon import ICON_NAME, ICON_SVG
from openclaw_desktop.integration.xdg import DESKTOP_FILE, METAINFO_FILE, desktop_entry, metainfo

PACKAGING = Path(__file__).resolve().parents[1] / "packaging"


def packaging_files() -> dict[Path, str]:
    """Each generated file of ``packaging/`` and its text."""
    return {
        PACKAGING / "linux" / DESKTOP_FILE: desktop_entry(["openclaw-desktop"]),
        PACKAGING / "linux" / METAINFO_FILE: metainfo(),
        PACKAGING / "icons" / f"{ICON_NAME}.svg": ICON_SVG,
    }


def main() -> int:
    """Write them; print what changed."""
    for path, text in packaging_files().items():
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
