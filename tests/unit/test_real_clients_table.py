"""The README's real-clients table (``tools/real_clients_table.py``): every row names tests
that exist, the README holds exactly the rows the tool knows, and a row's verdict is read
from a JUnit record the way pytest writes it."""

from __future__ import annotations

from pathlib import Path

from tools.real_clients_table import (
    REPO,
    ROWS,
    Row,
    missing_tests,
    readme_block,
    results,
    table,
    verdict,
)

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.interop.test_tui_real_client" name="test_a[ours]" time="1"/>
<testcase classname="tests.interop.test_tui_real_client" name="test_b" time="1">
  <failure message="boom">trace</failure></testcase>
<testcase classname="tests.interop.test_x" name="test_c" time="1"><skipped/></testcase>
<testcase classname="tests.interop.test_y" name="test_d" time="1"/>
</testsuite></testsuites>
"""


def test_every_row_names_tests_that_exist() -> None:
    assert missing_tests() == []
    assert missing_tests([Row("x", "y", ("tests/interop/test_tui_real_client.py::test_nope",))])


def test_the_readme_has_the_rows_of_the_tool() -> None:
    block = readme_block((REPO / "README.md").read_text("utf-8"))
    rows = [line.split(" | ")[0].removeprefix("| ") for line in block.splitlines()[2:]]
    assert rows == [row.client for row in ROWS]
    assert len(table({}).splitlines()) == len(block.splitlines())


def test_a_row_works_fails_or_was_not_run(tmp_path: Path) -> None:
    xml = tmp_path / "run.xml"
    xml.write_text(JUNIT, "utf-8")
    ran = results(xml)
    assert ran[("tests/interop/test_tui_real_client.py", "test_a[ours]")] == "passed"
    assert verdict(Row("t", "", ("tests/interop/test_tui_real_client.py::test_a",)), ran) == "works"
    assert verdict(Row("t", "", ("tests/interop/test_tui_real_client.py::",)), ran) == "fails"
    assert verdict(Row("t", "", ("tests/interop/test_x.py::",)), ran) == "not run"
    assert verdict(Row("t", "", ("tests/interop/test_z.py::",)), ran) == "not run"
    assert verdict(Row("t", "", ("tests/interop/test_y.py::test_d",)), ran) == "works"
