"""The SDK's pytest plugin as an app uses it (a separate pytest run in a project of its own),
and the import hygiene of ``openclaw_desktop.sdk.testing``."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(180)

CONFTEST = 'pytest_plugins = ["openclaw_desktop.sdk.testing.pytest_plugin"]\n'

APP_TESTS = """
import pytest

from openclaw_desktop.sdk.testing import TestGateway


@pytest.mark.asyncio
async def test_async_fixture(openclaw_gateway):
    assert isinstance(openclaw_gateway, TestGateway)
    assert openclaw_gateway.running and openclaw_gateway.token
    assert openclaw_gateway.url.startswith("ws://127.0.0.1:")


@pytest.mark.openclaw_gateway(args=["--display-name", "app-under-test"], env={"TZ": "UTC"})
def test_sync_fixture_with_marker_options(openclaw_gateway_sync):
    assert openclaw_gateway_sync.args == ("--display-name", "app-under-test")
    assert openclaw_gateway_sync.env == {"TZ": "UTC"}
    assert openclaw_gateway_sync.running


def test_session_fixture(openclaw_gateway_session, request):
    assert openclaw_gateway_session.running
    request.config.cache_session_pid = openclaw_gateway_session.pid


def test_session_fixture_is_shared(openclaw_gateway_session, request):
    assert openclaw_gateway_session.pid == request.config.cache_session_pid
"""


def run_pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m pytest`` in ``project`` (its own ini: strict asyncio mode, strict markers)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=150,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def make_project(root: Path, conftest: str, tests: str = APP_TESTS) -> Path:
    """An app's test folder: pytest.ini, conftest.py and ``tests``."""
    root.mkdir()
    (root / "pytest.ini").write_text(
        textwrap.dedent(
            """\
            [pytest]
            addopts = --strict-markers
            asyncio_mode = strict
            asyncio_default_fixture_loop_scope = function
            filterwarnings = error
            """
        ),
        "utf-8",
    )
    (root / "conftest.py").write_text(conftest, "utf-8")
    (root / "test_app.py").write_text(tests, "utf-8")
    return root


def test_an_app_uses_the_fixtures(tmp_path: Path) -> None:
    """With the plugin opted in, the async, sync and session fixtures all give a running
    gateway (pytest-asyncio strict mode, strict markers, warnings as errors)."""
    result = run_pytest(make_project(tmp_path / "app", CONFTEST))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout


def test_the_plugin_is_opt_in(tmp_path: Path) -> None:
    """Without ``pytest_plugins`` the fixtures do not exist: no entry point loads them."""
    tests = "def test_needs_the_plugin(openclaw_gateway_sync):\n    pass\n"
    result = run_pytest(make_project(tmp_path / "app", "", tests))
    assert result.returncode != 0
    assert "fixture 'openclaw_gateway_sync' not found" in result.stdout
    plugins = importlib.metadata.entry_points(group="pytest11")
    assert not [e for e in plugins if e.value.startswith("openclaw_desktop")]


def test_importing_the_helpers_pulls_in_no_pytest_gateway_or_qt() -> None:
    """``openclaw_desktop.sdk.testing`` is importable by apps at runtime: it imports neither
    pytest (a dev dependency), nor the bundled gateway, nor the UI or Qt."""
    probe = (
        "import sys, openclaw_desktop.sdk.testing as t, openclaw_desktop.sdk.testing.fake_model;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('pytest', '_pytest', 'gateway', 'ui', 'PySide6', 'qasync'));"
        "print(repr(bad), t.TestGateway.__test__)"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
        cwd=Path(__file__).parent,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[] False"
