"""Declaring the algorithms is cheap: the registry and every spec module load no policy, audit,
accountant or environment grammar (those load when a run builds, audits or parses), so that
``dpaudit run ALG`` refuses a bad option in a fraction of a second. The spec modules repeat a few
constants of the modules they do not import; here they must agree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_DECLARE = """
import json, sys
from bandits.registry import algorithms
algorithms()
print(json.dumps(sorted(sys.modules)))
"""


def test_declaring_every_algorithm_imports_no_policy_code() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _DECLARE], capture_output=True, text=True, cwd=ROOT, check=True
    )
    loaded = set(json.loads(proc.stdout))
    heavy = sorted(m for m in loaded if m.split(".")[0] in ("scipy", "numba", "mechanisms", "matplotlib"))
    assert not heavy, heavy
    allowed = {"bandits", "bandits.actions", "bandits.registry"}
    ours = {m for m in loaded if m.startswith("bandits.") or m == "bandits"}
    extra = sorted(m for m in ours - allowed if not m.startswith("bandits.algorithms"))
    assert not extra, extra


@pytest.mark.parametrize(
    "spec_module, name, module, attr",
    [
        ("seed002", "SEED", "bandits.lazy", "SEED"),
        ("seed002", "UNIT", "bandits.lazy", "UNIT"),
        ("csb", "UNIT", "bandits.csb", "UNIT"),
        ("matroid", "UNIT", "bandits.matroid_bandits", "UNIT"),
        ("matroid", "INIT_MODES", "bandits.matroid_bandits", "INIT_MODES"),
        ("cascade", "PAPER_ENV", "bandits.cascade_env", "PAPER_ENV"),
        ("cascade", "CUCB_ENV", "bandits.cucb_ldp_gaussian", "DEFAULT_ENV"),
        ("cascade", "UNIT", "bandits.cascade_policies", "UNIT"),
        ("cascade", "INIT_MODES", "bandits.cascade_policies", "INIT_MODES"),
        ("cascade", "FACTOR_TARGETS", "bandits.cascade_policies", "FACTOR_TARGETS"),
        ("cascade", "CALIBRATIONS", "bandits.cascade_policies", "CALIBRATIONS"),
        ("cascade", "C1", "bandits.cascade_policies", "C1"),
        ("_common", "TIE_RULES", "bandits.combinatorial", "TIE_RULES"),
    ],
)
def test_repeated_constants_agree(spec_module: str, name: str, module: str, attr: str) -> None:
    import importlib

    spec = importlib.import_module(f"bandits.algorithms.{spec_module}")
    assert getattr(spec, name) == getattr(importlib.import_module(module), attr)


def test_the_lazy_package_exposes_its_public_names() -> None:
    import bandits

    assert sorted(bandits.__all__) == sorted(bandits._LAZY)
    assert all(hasattr(bandits, name) for name in bandits.__all__)
    assert set(bandits.__all__) <= set(dir(bandits))
    with pytest.raises(AttributeError):
        bandits.no_such_name  # noqa: B018
