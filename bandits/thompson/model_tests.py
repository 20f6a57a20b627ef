"""The implementation against its declared model: two-sample, likelihood-ratio and goodness-of-fit
tests at one level, Bonferroni over all of them (a rejection is the audit verdict ``model-mismatch``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "model_tests",
]


def _welch(x: np.ndarray, y: np.ndarray) -> float:
    """Welch's two-sample t-test p-value; for two constant samples 1 if they agree, else 0 (no
    spread: the difference is certain), where SciPy would return NaN with a warning; a NaN from
    data too close to constant for its moments counts as no evidence (1).

    >>> _welch(np.ones(5), np.ones(5)), _welch(np.ones(5), np.zeros(5))
    (1.0, 0.0)
    """
    if x.std() + y.std() == 0:
        return 1.0 if x.mean() == y.mean() else 0.0
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # "precision loss": nearly constant data
        p = stats.ttest_ind(x, y, equal_var=False).pvalue
    return float(np.nan_to_num(p, nan=1.0))


def model_tests(impl: Sequence[dict[str, Any]], model: Sequence[dict[str, Any]], *, alpha: float
                ) -> dict[str, Any]:  # fmt: skip
    """The calibration tests of the implementation against its model (module docstring), for the
    two tables (index 0: R, 1: R′); Bonferroni over all tests at level ``alpha``.

    ``impl[s]``/``model[s]`` hold per-trajectory ``score`` and ``pulls`` (and for the
    implementation, on a subsample, the exact losses ``L`` and the goodness-of-fit sums). Every
    p-value is from a test that is exact or asymptotically exact under the model: KS two-sample
    (conservative for discrete statistics), Welch's t (on bounded variables for the two
    likelihood-ratio identities) and the z-test of the martingale sum (martingale CLT).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> side = lambda: {"score": rng.normal(0, 1, 4000), "pulls": rng.poisson(40, 4000).astype(float)}
    >>> model_tests([side(), side()], [side(), side()], alpha=1e-3)["rejected"]
    False
    """
    from scipy import stats
    rows: list[dict[str, Any]] = []
    for s, name in ((0, "R"), (1, "R'")):
        for stat in ("score", "pulls"):
            x, y = impl[s][stat], model[s][stat]
            rows.append({"test": f"KS two-sample, {stat} under {name}",
                         "p_value": float(stats.ks_2samp(x, y).pvalue)})  # fmt: skip
            rows.append({"test": f"Welch t, {stat} under {name}", "p_value": _welch(x, y),
                         "difference_of_means": float(np.mean(x) - np.mean(y))})  # fmt: skip
        if impl[s].get("L") is not None and impl[s]["L"].size >= 2:
            var = impl[s]["gof_var"]
            z = impl[s]["gof_sum"] / math.sqrt(var) if var > 0 else 0.0
            rows.append({"test": f"goodness of fit of P(play the changed arm) under {name}", "z": float(z),
                         "p_value": float(2 * stats.norm.sf(abs(z)))})  # fmt: skip
    L0, L1 = impl[0].get("L"), impl[1].get("L")
    if L0 is not None and L1 is not None and min(L0.size, L1.size) >= 2:
        # likelihood-ratio identities with bounded variables: E_R[g e^{-L}] = E_R'[g] for any g;
        # g = 1{L >= 0} and (swapping the roles) 1{L < 0} keep both sides in [0, 1]
        with np.errstate(over="ignore"):
            pairs = (
                ("E_R[1{L>=0} exp(-L)] = P_R'(L >= 0)", np.where(L0 >= 0, np.exp(-np.maximum(L0, 0)), 0.0),
                 (L1 >= 0).astype(float)),
                ("E_R'[1{L<0} exp(L)] = P_R(L < 0)", np.where(L1 < 0, np.exp(np.minimum(L1, 0)), 0.0),
                 (L0 < 0).astype(float)),
            )  # fmt: skip
        for what, x, y in pairs:
            rows.append({"test": f"likelihood ratio identity {what}",
                         "means": [float(x.mean()), float(y.mean())], "p_value": _welch(x, y)})  # fmt: skip
    each = alpha / len(rows)
    for r in rows:
        r["rejected"] = r["p_value"] < each
    return {
        "alpha": alpha,
        "alpha_per_test": each,
        "tests": rows,
        "rejected": any(r["rejected"] for r in rows),
        "assumption": "trajectories of the implementation and of the model are independent draws",
    }
