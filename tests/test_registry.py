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
    allowed = {"bandits", "bandits.actions", "bandits.algorithm", "bandits.registry"}
    ours = {m for m in loaded if m.startswith("bandits.") or m == "bandits"}
    families = {
        "thompson", "dp_ts_ucb", "lazy", "full_info", "matroid", "semibandits", "cascading", "references"
    }  # fmt: skip
    specs = {f"bandits.{f}" for f in families} | {f"bandits.{f}.spec" for f in families}
    assert specs <= loaded  # every family's spec was declared
    extra = sorted(ours - allowed - specs)
    assert not extra, extra


@pytest.mark.parametrize(
    "spec_module, name, module, attr",
    [
        ("bandits.lazy.spec", "UNIT", "bandits.lazy.policies", "UNIT"),
        ("bandits.dp_ts_ucb.spec", "UNIT", "bandits.lazy.policies", "UNIT"),
        ("bandits.semibandits.spec", "UNIT", "bandits.semibandits.policies", "UNIT"),
        ("bandits.matroid.spec", "UNIT", "bandits.matroid.policies", "UNIT"),
        ("bandits.matroid.spec", "INIT_MODES", "bandits.matroid.policies", "INIT_MODES"),
        ("bandits.cascading.spec", "PAPER_ENV", "bandits.environments.cascade", "PAPER_ENV"),
        ("bandits.cascading.spec", "CUCB_ENV", "bandits.cascading.cucb_ldp_gaussian", "DEFAULT_ENV"),
        ("bandits.cascading.spec", "UNIT", "bandits.cascading.policies", "UNIT"),
        ("bandits.cascading.spec", "INIT_MODES", "bandits.cascading.policies", "INIT_MODES"),
        ("bandits.cascading.spec", "FACTOR_TARGETS", "bandits.cascading.policies", "FACTOR_TARGETS"),
        ("bandits.cascading.spec", "CALIBRATIONS", "bandits.cascading.policies", "CALIBRATIONS"),
        ("bandits.cascading.spec", "C1", "bandits.cascading.policies", "C1"),
        ("bandits.algorithm", "TIE_RULES", "bandits.structures.combinatorial", "TIE_RULES"),
    ],
)
def test_repeated_constants_agree(spec_module: str, name: str, module: str, attr: str) -> None:
    import importlib

    spec = importlib.import_module(spec_module)
    assert getattr(spec, name) == getattr(importlib.import_module(module), attr)


def test_the_lazy_package_exposes_its_public_names() -> None:
    import bandits

    assert sorted(bandits.__all__) == sorted(bandits._LAZY)
    assert all(hasattr(bandits, name) for name in bandits.__all__)
    assert set(bandits.__all__) <= set(dir(bandits))
    with pytest.raises(AttributeError):
        bandits.no_such_name  # noqa: B018


_RUN_TINY = """
import contextlib, io, json, sys
from dpaudit.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["run", "ts", "-T", "200", "-R", "2", "--audit-trials", "0", "--json"])
print(json.dumps([code, sorted(sys.modules)]))
"""


def test_a_tiny_run_imports_only_the_scipy_it_uses() -> None:
    """Start-up (issue: the main job in a few seconds): SciPy (its special functions alone
    cost ≈ 60 ms), numpy.polynomial, the auditor and matplotlib load only in the functions that
    use them; a tiny Thompson-sampling run with its certificate needs none of them."""
    proc = subprocess.run(
        [sys.executable, "-c", _RUN_TINY], capture_output=True, text=True, cwd=ROOT, check=True
    )
    code, loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert code == 0
    lazy = ("bandits.plots", "numpy.polynomial", "dpaudit.audit.pilot", "bandits.auditing.views")
    heavy = sorted(m for m in loaded if m.split(".")[0] in ("scipy", "matplotlib", "numba") or m in lazy)
    assert not heavy, heavy  # numba: 400 rounds are below the kernel's threshold
