"""The discovery package exports its modules' names; zeroconf stays in its two adapters."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import openclaw_desktop.discovery as discovery

MODULES = ["browser", "setup_code", "txt"]
ROOT = Path(__file__).resolve().parents[3]
ZEROCONF_ADAPTERS = {
    ROOT / "gateway" / "advertise.py",
    ROOT / "openclaw_desktop" / "discovery" / "browser.py",
}


def test_package_reexports_union_of_module_all() -> None:
    names: set[str] = set()
    for name in MODULES:
        module = importlib.import_module(f"openclaw_desktop.discovery.{name}")
        names.update(module.__all__)
        for public in module.__all__:
            assert getattr(discovery, public) is getattr(module, public)
    assert set(discovery.__all__) == names
    assert len(discovery.__all__) == len(names)


def _imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_zeroconf_is_imported_only_by_the_two_adapters() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for package in ("openclaw_desktop", "gateway")
        for path in sorted((ROOT / package).rglob("*.py"))
        if path not in ZEROCONF_ADAPTERS and "zeroconf" in _imported_roots(path)
    ]
    assert offenders == []
    for path in ZEROCONF_ADAPTERS:
        assert "zeroconf" in _imported_roots(path)


def test_pure_modules_do_no_io() -> None:
    for name in ("txt.py", "setup_code.py"):
        roots = _imported_roots(ROOT / "openclaw_desktop" / "discovery" / name)
        assert not roots & {"asyncio", "socket", "ssl", "zeroconf", "websockets"}, name
