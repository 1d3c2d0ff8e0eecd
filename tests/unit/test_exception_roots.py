"""Every exception class the project defines is rooted: the core's (and the SDK's) and the
window's (``ui``) derive from :class:`openclaw_desktop.errors.OpenClawError`, the bundled
gateway's from :class:`gateway.errors.BundledGatewayError`, so ``except`` on the root catches
all of a package's own errors and nothing else. The wire layer (``openclaw_desktop.protocol``)
imports nothing of the project, so its frame errors, the computer-use params error and the
refusal of a hand-read method's params stay plain ``ValueError``."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import gateway
import openclaw_desktop
import ui
from gateway.errors import BundledGatewayError
from openclaw_desktop.errors import OpenClawError

#: Private helpers that never leave their module, and the wire layer's own errors.
EXEMPT = {
    "openclaw_desktop.protocol.frames.FrameDecodeError",
    "openclaw_desktop.protocol.frames.FrameEncodeError",
    "openclaw_desktop.protocol.computer_use.ComputerParamsError",
    "openclaw_desktop.protocol.methods.lenient.ParamsRefused",
}


def _modules(package: ModuleType) -> list[ModuleType]:
    names = [
        info.name
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
        if not info.name.endswith("__main__")
    ]
    return [importlib.import_module(name) for name in names]


def _own_exceptions(package: ModuleType) -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for module in _modules(package):
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == module.__name__:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [cls for name, cls in sorted(found.items()) if name not in EXEMPT]


@pytest.mark.parametrize(
    ("package", "root", "at_least"),
    [
        (openclaw_desktop, OpenClawError, 11),
        (gateway, BundledGatewayError, 11),
        (ui, OpenClawError, 0),
    ],
)
def test_every_exception_of_a_package_derives_from_its_root(
    package: ModuleType, root: type[BaseException], at_least: int
) -> None:
    assert len(_modules(package)) > 10  # the walk found the package's modules
    classes = _own_exceptions(package)
    assert len(classes) >= at_least  # and found their classes
    unrooted = [f"{c.__module__}.{c.__qualname__}" for c in classes if not issubclass(c, root)]
    assert unrooted == []
