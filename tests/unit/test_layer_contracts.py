"""The import-linter layer contracts place every package: a new top-level module of the core
or of the gateway that no layer names would be checked by no layer rule (import-linter says
nothing about modules a contract leaves out), so adding one means deciding its layer."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _layers(name: str) -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["name"] == name]
    return {m for layer in contract["layers"] for m in re.split(r"\s*[|:]\s*", layer)}


def _top_modules(package: str) -> set[str]:
    found = set()
    for path in (ROOT / package).iterdir():
        if path.is_dir() and (path / "__init__.py").exists():
            found.add(f"{package}.{path.name}")
        elif path.suffix == ".py" and path.stem not in ("__init__",):
            found.add(f"{package}.{path.stem}")
    return found


@pytest.mark.parametrize(
    ("contract", "package", "outside"),
    [
        ("Core layers", "openclaw_desktop", set()),
        (
            "The gateway's layers: server, app, rpc, methods, services, state, protocol",
            "gateway",
            {"openclaw_desktop.protocol"},
        ),
    ],
)
def test_every_top_level_module_has_a_layer(contract: str, package: str, outside: set[str]) -> None:
    named = _layers(contract)
    assert named - outside <= _top_modules(package), "a layer names a module that is gone"
    assert _top_modules(package) - named == set()
