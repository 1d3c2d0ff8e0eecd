"""The trust package exports exactly its modules' public names."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import openclaw_desktop.trust as trust

MODULES = ["context", "endpoint", "fingerprint", "policy", "probe"]


def test_package_reexports_union_of_module_all() -> None:
    """trust.__all__ is the union of the submodules' __all__, and every name resolves."""
    names: set[str] = set()
    for name in MODULES:
        module = importlib.import_module(f"openclaw_desktop.trust.{name}")
        names.update(module.__all__)
        for public in module.__all__:
            assert getattr(trust, public) is getattr(module, public)
    assert set(trust.__all__) == names
    assert len(trust.__all__) == len(names)


def _imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_forbidden_imports() -> None:
    """No trust module imports keyring, websockets or zeroconf."""
    package_dir = Path(trust.__file__).parent
    files = sorted(package_dir.glob("*.py"))
    assert len(files) == len(MODULES) + 1
    for path in files:
        assert not _imported_roots(path) & {"keyring", "websockets", "zeroconf"}, path.name
