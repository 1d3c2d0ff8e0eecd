"""Package attributes imported on first use (PEP 562), for packages whose submodules load
slow libraries (numpy, an HTTP client) that most importers never need."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: each name of ``homes`` comes from the
    submodule it maps to, imported (and cached in the package) when first asked for.

    Use it as ``__getattr__ = lazy_getattr(__name__, {"Name": "submodule", ...})``, with the
    same names imported under ``TYPE_CHECKING`` for type checkers.
    """

    def get(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return get
