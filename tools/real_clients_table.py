"""The README's table of real OpenClaw clients against the bundled gateway, from a test run.

Each row names a real client (or CLI command) and the interop tests that run it against both
gateways. Given the JUnit XML of a run (``./dev test`` writes it to
``~/.cache/openclaw-desktop/last-test-run.xml``), a row *works* when every one of its tests
passed, *fails* when one failed or erred, and is *not run* when none ran (or all skipped)::

    python tools/real_clients_table.py               # print the table of the last run
    python tools/real_clients_table.py --write       # and put it into README.md
"""

from __future__ import annotations

import argparse
import ast
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_XML = Path.home() / ".cache" / "openclaw-desktop" / "last-test-run.xml"
BEGIN = "<!-- real-clients:begin (tools/real_clients_table.py --write) -->"
END = "<!-- real-clients:end -->"


@dataclass(frozen=True)
class Row:
    """One real client or command, and the tests (``file::name-prefix``) that prove it."""

    client: str
    shows: str
    tests: tuple[str, ...]


ROWS = (
    Row(
        "`openclaw tui`",
        "connects, the message is sent, the reply streams into the pane, same conversation",
        ("tests/interop/test_tui_real_client.py::",),
    ),
    Row(
        "Control UI (headless Chromium)",
        "sends, renders the reply, no error answer on its normal path, same send timing",
        ("tests/interop/test_control_ui_real_client.py::",),
    ),
    Row(
        "`openclaw agent --message` (`--agent`, `--session-key`, `--json`)",
        "the model's reply, same output and `--json` keys",
        ("tests/interop/test_agent_cli_real_client.py::",),
    ),
    Row(
        "openclaw-node 0.14 `chat()`, `chatSync()`",
        "the reply, same conversation",
        ("tests/interop/test_openclaw_node_client.py::",),
    ),
    Row(
        "`openclaw models list`",
        "our catalog as the real CLI shows it",
        ("tests/interop/test_cli_ops_real_client.py::test_models_list",),
    ),
    Row(
        "`openclaw logs`",
        "our own log file",
        ("tests/interop/test_cli_ops_real_client.py::test_logs",),
    ),
    Row(
        "`openclaw cron list`, `gateway stability`, `gateway usage-cost`",
        "the real (empty) shapes, usage summed from our transcripts",
        (
            "tests/interop/test_cli_ops_real_client.py::test_cron",
            "tests/interop/test_cli_ops_real_client.py::test_gateway_stability",
            "tests/interop/test_cli_ops_real_client.py::test_gateway_usage_cost",
        ),
    ),
    Row(
        "`openclaw approvals pending`, `approvals get` (`--gateway`, `--node <id>`)",
        "the same documents",
        ("tests/interop/test_cli_ops_real_client.py::test_approvals",),
    ),
    Row(
        "`openclaw gateway probe`, `devices reject`",
        "scope-limited probe; `Rejected <deviceId>`",
        (
            "tests/interop/test_cli_ops_real_client.py::test_gateway_probe",
            "tests/interop/test_cli_ops_real_client.py::test_devices_reject",
        ),
    ),
    Row(
        "`openclaw status`, `openclaw health` (and `--json`)",
        "the same overview from our state",
        (
            "tests/interop/test_cli_ops_real_client.py::test_status",
            "tests/interop/test_cli_ops_real_client.py::test_health",
        ),
    ),
    Row(
        "`openclaw node run` (the real node host), `devices`, `nodes`",
        "pairs, is invoked; its inventory and host stats in `nodes list`",
        (
            "tests/interop/test_gw_real_clients.py::",
            "tests/interop/test_gw_node_inventory_side_by_side.py::",
        ),
    ),
)


def _matches(selector: str, file: str, name: str) -> bool:
    path, _, prefix = selector.partition("::")
    return file == path and name.startswith(prefix)


def results(xml_path: Path) -> dict[tuple[str, str], str]:
    """``(file, test name) -> passed|failed|skipped`` from a JUnit XML file."""
    out: dict[tuple[str, str], str] = {}
    for case in ET.parse(xml_path).getroot().iter("testcase"):
        classname = case.get("classname", "")
        file = classname.replace(".", "/") + ".py"
        name = case.get("name", "")
        if case.find("failure") is not None or case.find("error") is not None:
            verdict = "failed"
        elif case.find("skipped") is not None:
            verdict = "skipped"
        else:
            verdict = "passed"
        out[(file, name)] = verdict
    return out


def verdict(row: Row, ran: Mapping[tuple[str, str], str]) -> str:
    """``works``, ``fails`` or ``not run`` for one row."""
    mine = [v for (file, name), v in ran.items() if any(_matches(s, file, name) for s in row.tests)]
    if any(v == "failed" for v in mine):
        return "fails"
    if any(v == "passed" for v in mine):
        return "works"
    return "not run"


def table(ran: Mapping[tuple[str, str], str]) -> str:
    """The Markdown table (between the README's markers)."""
    lines = [
        "| real client, command | what it shows | last run | test |",
        "|---|---|---|---|",
    ]
    for row in ROWS:
        files = sorted({s.partition("::")[0].removeprefix("tests/interop/") for s in row.tests})
        tests = ", ".join(f"`{f}`" for f in files)
        lines.append(f"| {row.client} | {row.shows} | {verdict(row, ran)} | {tests} |")
    return "\n".join(lines)


def test_names(path: Path) -> set[str]:
    """The test functions a test file defines."""
    tree = ast.parse(path.read_text("utf-8"))
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test")
    }


def missing_tests(rows: Iterable[Row] = ROWS, repo: Path = REPO) -> list[str]:
    """Selectors that name no test function of their file."""
    out = []
    for row in rows:
        for selector in row.tests:
            path, _, prefix = selector.partition("::")
            file = repo / path
            if not file.exists() or not any(n.startswith(prefix) for n in test_names(file)):
                out.append(selector)
    return out


def readme_block(text: str) -> str:
    """What the README holds between the markers."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end].strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("xml", nargs="?", type=Path, default=DEFAULT_XML)
    parser.add_argument("--write", action="store_true", help="write the table into README.md")
    args = parser.parse_args(argv)
    if not args.xml.exists():
        print(f"no test run recorded at {args.xml} (run ./dev test)", file=sys.stderr)
        return 2
    rendered = table(results(args.xml))
    print(rendered)
    if args.write:
        readme = REPO / "README.md"
        text = readme.read_text("utf-8")
        old = readme_block(text)
        readme.write_text(text.replace(old, rendered, 1), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
