"""Unit tests: every method is declared with its params model and reached through its
family's narrow services (issue #16): the declaration names the model the protocol package
registers for it, the family modules never import the application, and the application
offers every family's services."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import gateway.methods
from gateway.app import family_services
from gateway.methods import TABLE
from openclaw_desktop.protocol.methods import PARAMS
from tests.helpers.method_dispatch import gateway_app

_METHODS_DIR = Path(gateway.methods.__file__).parent


#: Methods declared without a params model, by why: none is left (issue #16); a new method
#: without one needs its reason here.
UNMODELLED: dict[str, str] = {}


def test_every_method_declares_the_params_model_the_protocol_registers() -> None:
    """One model per method, declared on the table and registered in the protocol package,
    the same class on both sides; the methods without one yet are exactly the listed ones."""
    undeclared = {spec.name for spec in TABLE if spec.params is None}
    assert undeclared == set(UNMODELLED)
    assert {spec.name: spec.params for spec in TABLE if spec.params is not None} == {
        name: PARAMS[name] for name in (spec.name for spec in TABLE) if name not in UNMODELLED
    }
    assert set(PARAMS) <= {spec.name for spec in TABLE}, "a model for a method not served"


def test_most_declared_models_are_checked_by_the_dispatcher() -> None:
    """``check=False`` is for the reference's any-params methods and the handler-checked
    rules (``health``, ``exec.approvals.node.set``'s oneOf...), not the rule."""
    unchecked = sorted(spec.name for spec in TABLE if spec.params is not None and not spec.check)
    # 18, each because the reference checks it so:
    # - any params served, read by no schema (non-objects too): health, status,
    #   system-presence, models.authStatus, exec/plugin/openclaw.approval.list;
    # - read by hand, refused in the reference's own sentences, not schema problems:
    #   diagnostics.stability, usage.cost (lenient numbers, dates and calendars),
    #   controlUi.sessionPullRequests.subscribe, plugin.surface.refresh and its node twin
    #   node.pluginSurface.refresh (one sentence each), node.runnerInventory.update (the
    #   declaration judged whole by the runner rules);
    # - a rule the derived schema cannot say, checked by the handler after it:
    #   exec.approvals.node.set (oneOf), chat.startup (anyOf of two objects),
    #   sessions.list/subscribe (properties taken unchecked), node.invoke.result
    #   (normalized before its check).
    assert len(unchecked) <= 18, unchecked


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize("path", sorted(_METHODS_DIR.glob("*.py")), ids=lambda p: p.name)
def test_no_method_module_imports_the_application(path: Path) -> None:
    """Handlers get their family's services, typed by a protocol, never the app (not even
    under TYPE_CHECKING: that import closed a 21-module cycle)."""
    assert not {"gateway.app", "gateway.server", "gateway.rpc"} & _imports(path)


def _families() -> set[str]:
    return {spec.family for spec in TABLE}


def test_the_app_offers_every_familys_services(tmp_path: Path) -> None:
    """:func:`gateway.app.family_services` names each family module that declares methods,
    each entry is the app itself, and the app has every member the family's protocol reads
    (mypy checks the types of the same assignments)."""
    with gateway_app(tmp_path) as app:
        services = family_services(app)
        assert set(services) == _families()
        for family, entry in services.items():
            assert entry is app, family
            module = importlib.import_module(family)
            protocols = [
                obj
                for obj in vars(module).values()
                if isinstance(obj, type)
                and getattr(obj, "_is_protocol", False)
                and obj.__module__ == family
                and obj.__name__.endswith("Services")
            ]
            assert protocols, f"{family} declares no <Family>Services protocol"
            for protocol in protocols:
                members = [
                    name
                    for name, value in vars(protocol).items()
                    if isinstance(value, property) or inspect.isfunction(value)
                ]
                assert members, f"{protocol.__name__} names nothing"
                for member in members:
                    assert hasattr(app, member), f"{family}: the app has no {member}"


def test_every_family_module_is_merged_into_the_table() -> None:
    """A family module with a table that ``gateway.methods`` forgot would never be served."""
    declaring = set()
    for info in pkgutil.iter_modules([str(_METHODS_DIR)]):
        module = importlib.import_module(f"gateway.methods.{info.name}")
        if isinstance(getattr(module, "table", None), type(TABLE)) and len(module.table):
            declaring.add(module.__name__)
    assert declaring == _families()
