"""The method reference, ``docs/gateway-methods.md``, generated from the method table.

``python -m gateway.methods.reference`` rewrites the file; a unit test fails when it is
stale (``tests/unit/gateway/methods/test_gw_method_table.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from gateway.methods import TABLE
from gateway.methods.table import MethodTable

__all__ = ["REFERENCE_PATH", "render_reference"]

#: Where the reference lives in the source tree.
REFERENCE_PATH = Path(__file__).resolve().parents[2] / "docs" / "gateway-methods.md"

_HEADER = """\
# Bundled gateway methods

Generated from the method table (each handler's `@table.method(...)` declaration in
`gateway/methods/`, see `gateway/methods/table.py`) by `python -m gateway.methods.reference`; do not
edit by hand. A unit test (`tests/unit/gateway/methods/test_gw_method_table.py`) fails when this
file and the table disagree.

Methods are listed in the order of `hello-ok.features.methods`. *Who may call* is the
operator scope a method needs (operator.admin satisfies every scope; operator.write also
read, talk and the sessions scopes), or the node role. A call to a method not listed is
refused as the real gateway refuses it: `missing scope: operator.admin` for an operator
without admin, `unknown method` for one with it, `unauthorized role` for any other role.
*Params* is the method's params model in `openclaw_desktop/protocol/methods/` (the request
is checked against the schema derived from it before the handler runs).
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_reference(table: MethodTable = TABLE) -> str:
    """The reference's Markdown text for ``table``."""
    lines = [
        _HEADER,
        "| Method | Who may call | Params | Module | Summary |",
        "|---|---|---|---|---|",
    ]
    for name in sorted(spec.name for spec in table):  # the unadvertised ones too
        spec = table[name]
        family = spec.family.rsplit(".", 1)[-1]
        params = f"`{spec.params.__name__}`" if spec.params is not None else "(handler)"
        lines.append(
            f"| `{name}` | {_cell(spec.scope_label)} | {params} | `{family}` "
            f"| {_cell(spec.summary)} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    """Write the reference; print where."""
    REFERENCE_PATH.write_text(render_reference(), encoding="utf-8")
    sys.stdout.write(f"wrote {REFERENCE_PATH} ({len(TABLE)} methods)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
