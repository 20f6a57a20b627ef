"""The lazily exporting packages (:mod:`dpaudit.lazy`): the names served at run time are exactly
the ones their ``TYPE_CHECKING`` imports show to type checkers and readers, each from the module
those imports name, and every one resolves."""

from __future__ import annotations

import ast
import importlib
import inspect

import pytest


def _type_checking_imports(package: str) -> dict[str, str]:
    """name → module of the ``from X import name`` statements under ``if TYPE_CHECKING:``."""
    tree = ast.parse(inspect.getsource(importlib.import_module(package)))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module
                for alias in stmt.names:
                    found[alias.asname or alias.name] = stmt.module
    return found


@pytest.mark.parametrize("package", ["bandits", "dpaudit.audit", "mechanisms"])
def test_lazy_exports_match_the_type_checking_imports(package: str) -> None:
    mod = importlib.import_module(package)
    shown = _type_checking_imports(package)
    served = {name: f"{package}.{sub}" for name, sub in _served(mod).items()}
    assert served == shown
    assert sorted(mod.__all__) == sorted(shown)
    for name, module in shown.items():
        assert getattr(mod, name) is getattr(importlib.import_module(module), name)
    assert set(mod.__all__) <= set(dir(mod))
    with pytest.raises(AttributeError, match="no_such_name"):
        mod.no_such_name  # noqa: B018


def _served(mod: object) -> dict[str, str]:
    exports = getattr(mod, "_EXPORTS", None)
    if exports is None:  # bandits keeps full module names in _LAZY
        return {n: m.removeprefix("bandits.") for n, m in mod._LAZY.items()}  # type: ignore[attr-defined]
    return dict(exports)


def test_importing_a_report_type_does_not_load_the_auditor() -> None:
    """``dpaudit.audit.report`` alone (what a run without an audit needs) leaves the rest of the
    auditor unloaded — in a fresh interpreter, so earlier tests' imports do not count."""
    import json
    import subprocess
    import sys

    code = ("import json, sys; import dpaudit.audit.report; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('dpaudit.audit'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(json.loads(out))
    assert "dpaudit.audit.pilot" not in loaded and "dpaudit.audit.curves" not in loaded, loaded
