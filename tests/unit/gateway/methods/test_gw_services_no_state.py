"""Unit tests: no method handler reaches the gateway's whole state (issue #16). A family's
services protocol names the stores its handlers read (``device_registry``, ``node_surfaces``,
...), so neither may a protocol declare ``state`` nor may a handler read ``state`` off its
services argument: read from the source, so the check needs no gateway and sees every
module, declaring methods or not."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import gateway.methods

_METHODS_DIR = Path(gateway.methods.__file__).parent
_MODULES = sorted(_METHODS_DIR.glob("*.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _is_protocol(cls: ast.ClassDef) -> bool:
    """``class X(Protocol)`` or ``class X(typing.Protocol)``."""
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id == "Protocol":
            return True
        if isinstance(base, ast.Attribute) and base.attr == "Protocol":
            return True
    return False


def _services_protocols(tree: ast.Module) -> list[ast.ClassDef]:
    """The module's services protocols: the ``Protocol`` classes named ``...Services``."""
    return [
        node
        for node in tree.body
        if isinstance(node, ast.ClassDef) and _is_protocol(node) and node.name.endswith("Services")
    ]


def _member_names(cls: ast.ClassDef) -> set[str]:
    """What a protocol's body declares: methods, properties and annotated attributes."""
    names: set[str] = set()
    for item in cls.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(item.name)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.add(item.target.id)
        elif isinstance(item, ast.Assign):
            names.update(t.id for t in item.targets if isinstance(t, ast.Name))
    return names


def _all_services_names() -> set[str]:
    """Every services protocol declared in ``gateway.methods``, so a handler typed by another
    module's protocol is checked too."""
    return {cls.name for path in _MODULES for cls in _services_protocols(_tree(path))}


def _annotation_name(annotation: ast.expr | None) -> str | None:
    """``DeviceServices`` for ``gw: DeviceServices`` or ``gw: "DeviceServices"``."""
    if isinstance(annotation, ast.Name):
        return annotation.id
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value
    return None


def _services_params(func: ast.FunctionDef | ast.AsyncFunctionDef, services: set[str]) -> set[str]:
    """The names of ``func``'s parameters typed by a services protocol (``gw`` by custom)."""
    args = func.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    return {a.arg for a in every if _annotation_name(a.annotation) in services}


def _reads_state(node: ast.AST, params: set[str]) -> bool:
    """``node`` is ``gw.state`` (load, store or delete alike) or ``getattr(gw, "state")``
    for one of ``params``."""
    if isinstance(node, ast.Attribute):
        return node.attr == "state" and isinstance(node.value, ast.Name) and node.value.id in params
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
        args = node.args
        return (
            len(args) >= 2
            and isinstance(args[0], ast.Name)
            and args[0].id in params
            and isinstance(args[1], ast.Constant)
            and args[1].value == "state"
        )
    return False


def _state_reads(tree: ast.Module, services: set[str]) -> list[str]:
    """Each place a function reads ``state`` off a services-typed parameter, as
    ``function:line``. Nested functions are walked with their outer function, so a closure
    over ``gw`` counts."""
    found: list[str] = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        params = _services_params(func, services)
        if params:
            found += [f"{func.name}:{n.lineno}" for n in ast.walk(func) if _reads_state(n, params)]
    return found


@pytest.mark.parametrize("path", _MODULES, ids=lambda p: p.name)
def test_no_services_protocol_declares_state(path: Path) -> None:
    """A family's protocol names the stores it uses; ``state`` would hand over them all."""
    declaring = [
        cls.name for cls in _services_protocols(_tree(path)) if "state" in _member_names(cls)
    ]
    assert not declaring, f"{path.name}: {declaring} declare state"


@pytest.mark.parametrize("path", _MODULES, ids=lambda p: p.name)
def test_no_handler_reads_state_off_its_services(path: Path) -> None:
    """``gw.state`` cannot come back: the stores are the protocol's own properties."""
    reads = _state_reads(_tree(path), _all_services_names())
    assert not reads, f"{path.name} reads gw.state at {reads}"


def test_the_check_sees_the_handlers() -> None:
    """The checks are not vacuous: every family's protocol is found, and the handlers of
    the families that used to read ``gw.state`` are recognized by their services argument."""
    services = _all_services_names()
    assert {"DeviceServices", "NodeServices", "NodeRoleServices", "SystemServices"} <= services
    for name in ("devices.py", "nodes.py", "node_role.py", "system.py"):
        tree = _tree(_METHODS_DIR / name)
        typed = [
            func.name
            for func in ast.walk(tree)
            if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef)
            and _services_params(func, services)
        ]
        assert len(typed) >= 3, f"{name}: only {typed} take a services argument"


_SAMPLE = """
from typing import Protocol

class DemoServices(Protocol):
    @property
    def state(self) -> object: ...

class Unrelated(Protocol):
    state: int

async def bad(gw: DemoServices, peer, params):
    def later():
        return gw.state.devices
    return getattr(gw, "state"), later

async def fine(gw: DemoServices, peer, params):
    return peer.state, params.state, {"state": 1}, gw.config.state_dir, gw.device_registry

def untyped(gw):
    return gw.state
"""


def test_the_check_flags_state_and_only_state() -> None:
    """On a sample: the protocol's ``state`` and both reads in ``bad`` (a closure's too) are
    caught; another object's ``state``, a ``state`` key, ``state_dir``, a protocol that is
    not a services one and an untyped ``gw`` are not."""
    tree = ast.parse(_SAMPLE)
    protocols = _services_protocols(tree)
    assert [(cls.name, "state" in _member_names(cls)) for cls in protocols] == [
        ("DemoServices", True)
    ]
    assert sorted(_state_reads(tree, {"DemoServices"})) == ["bad:13", "bad:14"]
