"""Fail when a module grows past the line budget (no god files)."""

from __future__ import annotations

import sys
from pathlib import Path

BUDGET = 600
EXCEPTIONS: dict[str, int] = {}
ROOTS = ("openclaw_desktop", "gateway", "ui")


def main() -> int:
    """Print each module over budget; exit 1 if any."""
    over = []
    for root in ROOTS:
        for path in sorted(Path(root).rglob("*.py")):
            lines = sum(1 for _ in path.open(encoding="utf-8"))
            limit = EXCEPTIONS.get(str(path), BUDGET)
            if lines > limit:
                over.append(f"{path}: {lines} lines (budget {limit})")
    for line in over:
        print(line)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
