"""Install and run ``openclaw-node`` (the npm SDK client of the OpenClaw gateway) for interop
tests: the pinned :data:`OCN_VERSION`, installed once with the npm of the node wheel that
:mod:`tests.helpers.real_openclaw` installs, into ``$OC_HOME/openclaw-node`` (the download
cache stays under ``~/.cache``, never in the repository).

:func:`run_node_script` runs a small ES module against a gateway with a fresh ``HOME`` (the
client keeps its device identity in ``~/.openclaw``), and returns the JSON it printed last.
"""

from __future__ import annotations

import fcntl
import json
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from tests.helpers.processes import GroupTimeout, communicate_group
from tests.helpers.real_openclaw import OC_HOME, OpenClawInstall

__all__ = ["OCN_VERSION", "ensure_openclaw_node", "run_node_script", "undecorated"]

OCN_VERSION = "0.14.0"
"""The npm ``openclaw-node`` version the interop tests run."""

_ROOT = OC_HOME / "openclaw-node"
# What the real gateway adds to the user's message before the model sees it (the fake model
# echoes it): the time the message came in, and on a session's first turn its runtime line.
_STAMP_RE = re.compile(r"\[[A-Z][a-z]{2} \d{4}-\d{2}-\d{2} \d{2}:\d{2} [A-Z]+\] ")
_RUNTIME_RE = re.compile(r"\n\nRuntime: [^\n]*$")


def undecorated(reply: str) -> str:
    """A fake-model reply without the real gateway's time stamp and runtime line, so the
    two gateways' replies to the same message compare equal."""
    return _RUNTIME_RE.sub("", _STAMP_RE.sub("", reply)).strip()


def _package_dir(root: Path) -> Path:
    return root / "node_modules" / "openclaw-node"


def _installed(root: Path) -> bool:
    manifest = _package_dir(root) / "package.json"
    try:
        version = json.loads(manifest.read_text("utf-8")).get("version")
    except (OSError, ValueError):
        return False
    return bool(version == OCN_VERSION)


def ensure_openclaw_node(install: OpenClawInstall, root: Path = _ROOT) -> Path:
    """The installed package folder (``.../node_modules/openclaw-node``), installing it first
    (``npm install --ignore-scripts openclaw-node@OCN_VERSION``, under a file lock) if needed.

    Raises:
        RuntimeError: npm failed or did not install :data:`OCN_VERSION`.
    """
    if _installed(root):
        return _package_dir(root)
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".install.lock").open("a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            if not _installed(root):
                _npm_install(install, root)
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    if not _installed(root):
        raise RuntimeError(f"openclaw-node {OCN_VERSION} is not installed in {root}")
    return _package_dir(root)


def _npm_install(install: OpenClawInstall, root: Path) -> None:
    manifest = root / "package.json"
    if not manifest.exists():  # pins npm's project root here
        manifest.write_text('{"name": "openclaw-node-interop", "private": true}\n', "utf-8")
    npm_cli = install.node_bin.parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    argv = [str(install.node_bin), str(npm_cli), "install", "--no-audit", "--no-fund"]
    argv += ["--ignore-scripts", "--save-exact", f"openclaw-node@{OCN_VERSION}"]
    env = install.isolated_env({})
    result = subprocess.run(
        argv,
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"npm install openclaw-node failed:\n{result.stderr[-3000:]}")


def run_node_script(
    install: OpenClawInstall,
    package: Path,
    script: str,
    *args: str,
    timeout: float = 120,
) -> Any:
    """Run the ES module ``script`` on the wheel's node with ``args`` (``process.argv[2:]``)
    and ``OPENCLAW_NODE_PACKAGE`` naming ``package``; return the JSON of its last stdout
    line. The process runs in its own group, killed on timeout.

    Raises:
        RuntimeError: it exited non-zero, timed out, or printed no JSON (with its output).
    """
    with tempfile.TemporaryDirectory(prefix="openclaw-node-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        path = Path(tmp) / "script.mjs"
        path.write_text(script, "utf-8")
        env = install.isolated_env({"HOME": str(home), "OPENCLAW_NODE_PACKAGE": str(package)})
        proc = subprocess.Popen(
            [str(install.node_bin), str(path), *args],
            cwd=tmp,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, stderr = communicate_group(proc, timeout)
        except GroupTimeout as exc:
            raise RuntimeError(
                f"node script timed out:\n{exc.stdout[-2000:]}\n{exc.stderr[-2000:]}"
            ) from None
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"node script exited {proc.returncode}:\n{stdout[-3000:]}\n{stderr[-3000:]}"
        )
    return json.loads(lines[-1])
