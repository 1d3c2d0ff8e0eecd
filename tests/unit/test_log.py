"""Console logging: text or JSON lines, redacted either way."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_desktop.config import AppPaths
from openclaw_desktop.log import configure_logging, log_to_folder


@pytest.fixture(autouse=True)
def _restore_root_logger() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_json_lines_are_one_redacted_object_per_record(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(1, json_lines=True)
    log = logging.getLogger("gateway.test")
    log.info("connect with token=%s from %s", "s3cret-value", "127.0.0.1")
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("handler failed")
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert first["level"] == "info"
    assert first["logger"] == "gateway.test"
    assert first["msg"] == "connect with token=<redacted> from 127.0.0.1"
    assert first["ts"].endswith("+00:00")
    assert "s3cret-value" not in err
    assert second["level"] == "error"
    assert "ValueError: boom" in second["exc"]


def test_text_is_the_default_and_also_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(0)
    logging.getLogger("gateway.test").warning('sent {"password": "hunter2"}')
    text = capsys.readouterr().err
    assert "WARNING" in text
    assert "gateway.test" in text
    assert "hunter2" not in text
    assert '"password": "<redacted>' in text


def test_the_log_file_is_in_the_logs_folder(tmp_path: Path) -> None:
    """The window's log file: ``desktop.log`` in ``AppPaths.log_dir``, redacted."""
    paths = AppPaths.under(tmp_path)
    path = log_to_folder(paths.log_dir)
    assert path is not None and path.parent == paths.state_dir / "logs"
    root = logging.getLogger()
    handler = root.handlers[-1]
    try:
        logging.getLogger("openclaw.ui").warning("written to the log file, token=abc")
        handler.flush()
        text = path.read_text(encoding="utf-8")
        assert "written to the log file" in text and "abc" not in text
    finally:
        root.removeHandler(handler)
        handler.close()


def test_an_unwritable_log_folder_is_no_log_file(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert log_to_folder(blocker / "logs") is None
