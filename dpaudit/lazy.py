"""Lazy package exports: a package's public names load their module on first use.

A package ``__init__`` that imports every submodule makes ``import package.small_part`` pay
for all of them (``dpaudit.audit`` and ``mechanisms`` cost a small ``dpaudit run`` ≈ 30 ms of
its start-up). Such a package keeps its real imports under ``if TYPE_CHECKING:`` (so type
checkers and readers see them) and serves the same names at run time through :func:`exports`
(PEP 562's module ``__getattr__``). ``tests/test_lazy_exports.py`` checks that the two lists
agree and that every name resolves.

Example:
    >>> get, names = exports("dpaudit.audit", {"Verdict": "report"})
    >>> get("Verdict").__name__, "Verdict" in names()
    ('Verdict', True)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["exports"]


def exports(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``names`` maps each public name to its
    submodule (relative to the package); a name is imported on first access and then cached in
    the package's namespace, so later accesses cost nothing."""

    def get(name: str) -> Any:
        sub = names.get(name)
        if sub is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{sub}"), name)
        module = sys.modules.get(package)
        if module is not None:
            setattr(module, name, value)
        return value

    def listing() -> list[str]:
        module = sys.modules.get(package)
        own = list(vars(module)) if module is not None else []
        return sorted(set(own) | set(names))

    return get, listing
