"""The plain NumPy loops of ``benchmarks/bench_families.py`` run the same algorithms as the
toolkit: at each case's test size, the two mean final regrets (independent random numbers) agree
within 4 standard errors of their difference (plus 2 % of the mean for the algorithms' rounding
conventions), and the numba loop agrees with the NumPy loop the same way."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.bench_families import all_cases, project_regret

CASES = all_cases()


def _agree(a: np.ndarray, b: np.ndarray) -> tuple[bool, str]:
    d = abs(a.mean() - b.mean())
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    tol = 4.0 * se + 0.02 * max(abs(a.mean()), abs(b.mean())) + 1e-9
    return d <= tol, f"{a.mean():.1f} vs {b.mean():.1f} (diff {d:.1f}, tolerance {tol:.1f})"


@pytest.mark.parametrize("case", CASES, ids=[f"{c.family}-{c.algorithm}" for c in CASES])
def test_loop_runs_the_toolkit_algorithm(case):
    ours = project_regret(case, case.test_horizon, case.test_reps, 11)
    loop = case.loop(case.test_horizon, case.test_reps, 12)
    assert loop.shape == (case.test_reps,) and np.all(np.isfinite(loop))
    ok, msg = _agree(ours, loop)
    assert ok, msg
    if case.numba_loop is not None:
        nb = case.numba_loop(case.test_horizon, case.test_reps, 13)
        ok, msg = _agree(loop, nb)
        assert ok, "numba: " + msg


def test_every_family_has_a_loop():
    """Every family subpackage with a registered algorithm is benchmarked."""
    from bandits.registry import algorithms

    families = {spec.build.__module__.split(".")[1] for spec in algorithms().values()}
    assert families <= {c.family for c in CASES}, sorted(families - {c.family for c in CASES})
