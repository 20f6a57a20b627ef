"""Exact binomial confidence bounds, and what error-rate bounds say about privacy.

Two jobs, both pure functions on arrays:

* Clopper–Pearson bounds on a binomial proportion: :func:`cp_upper` / :func:`cp_lower` are the
  array kernels (level α, no validation) that every bound of the toolkit uses;
  :func:`clopper_pearson_upper` / :func:`clopper_pearson_lower` are the validated public forms.
* Error rates of a test → privacy parameters: :func:`epsilon_from_rates`,
  :func:`mu_from_rates`, :func:`delta_from_rates`. A threshold test between the outputs on x
  and on x′ has a false-positive rate FPR and a false-negative rate FNR; every DP guarantee
  constrains the pair, so upper confidence bounds on both rates give lower bounds on ε, μ, δ.

Sources:

* Clopper, C. J. & Pearson, E. S. (1934). The use of confidence or fiducial limits illustrated
  in the case of the binomial. *Biometrika* 26(4), 404–413: the exact interval, written with
  Beta quantiles as ``p_u = B⁻¹(1 − α; k + 1, n − k)`` and ``p_l = B⁻¹(α; k, n − k + 1)``.
* Kairouz, P., Oh, S. & Viswanath, P. (2015). The composition theorem for differential
  privacy. ICML, arXiv:1311.0776, Theorem 2.1: M is (ε, δ)-DP iff every test satisfies
  ``FPR + e^ε·FNR ≥ 1 − δ`` and ``e^ε·FPR + FNR ≥ 1 − δ``.
* Dong, J., Roth, A. & Su, W. (2022). Gaussian differential privacy. *JRSS-B* 84(1),
  arXiv:1905.02383, Definition 2.6 (μ-GDP: FNR ≥ G_μ(FPR) for every test, with
  ``G_μ(α) = Φ(Φ⁻¹(1 − α) − μ)`` the trade-off curve of N(0, 1) vs N(μ, 1)).

Example:
    >>> round(clopper_pearson_upper(0, 100, confidence=0.95), 6)
    0.029513
    >>> round(epsilon_from_rates(0.01, 0.5, 0.0), 4)   # log(0.5 / 0.01)
    3.912
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpaudit.validation import check_probability

__all__ = [
    "cp_upper_many",
    "check_counts",
    "cp_upper",
    "cp_lower",
    "clopper_pearson_upper",
    "clopper_pearson_lower",
    "epsilon_from_rates",
    "mu_from_rates",
    "delta_from_rates",
]

ArrayLike = Any


def check_counts(successes: ArrayLike, trials: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Validated (k, n) as broadcast float arrays: integers with 0 ≤ k ≤ n, n ≥ 1."""
    k = np.asarray(successes)
    n = np.asarray(trials)
    for name, v in (("successes", k), ("trials", n)):
        if v.dtype == np.bool_ or not (np.issubdtype(v.dtype, np.integer) or np.all(np.mod(v, 1) == 0)):
            raise ValueError(f"{name} must be integers")
    k, n = np.broadcast_arrays(k.astype(np.float64), n.astype(np.float64))
    if np.any(n < 1):
        raise ValueError("trials must be integers >= 1")
    if np.any(k < 0) or np.any(k > n):
        raise ValueError("successes must be integers in [0, trials]")
    return k, n


def _scalar_or_array(out: np.ndarray, *inputs: ArrayLike) -> Any:
    return float(out) if all(np.ndim(x) == 0 for x in inputs) else out


def _rates(fpr: ArrayLike, fnr: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(fpr, dtype=np.float64)
    q = np.asarray(fnr, dtype=np.float64)
    if np.any(~(p >= 0) | ~(p <= 1) | ~(q >= 0) | ~(q <= 1)):
        raise ValueError("fpr and fnr must be in [0, 1]")
    return p, q


# ---------------------------------------------------------------------------------------
# Clopper–Pearson (1934)


def cp_upper(k: ArrayLike, n: ArrayLike, alpha: float) -> np.ndarray:
    """One-sided upper bound at level ``alpha``: P[p > bound] ≤ alpha (no validation).

    ``B⁻¹(1 − α; k + 1, n − k)`` (Clopper & Pearson 1934), with the closed forms
    ``1 − α^{1/n}`` at k = 0 (solves (1 − p)ⁿ = α) and ``1`` at k = n.

    >>> cp_upper([0, 5, 10], 10, 0.05).round(4).tolist()
    [0.2589, 0.7776, 1.0]
    """
    from scipy import special
    k, n = np.broadcast_arrays(np.asarray(k, np.float64), np.asarray(n, np.float64))
    out = np.ones(k.shape)
    zero = k == 0
    mid = (k > 0) & (k < n)
    out[zero] = -np.expm1(math.log(alpha) / n[zero])
    if mid.any():
        out[mid] = special.betainccinv(k[mid] + 1.0, n[mid] - k[mid], alpha)  # = stats.beta.isf
    return out


_TABLES: dict[tuple[int, float], np.ndarray] = {}
_TABLE_MAX_N = 50_000


def cp_upper_many(k: ArrayLike, n: int, alpha: float) -> np.ndarray:
    """:func:`cp_upper` of many integer counts out of the same ``n`` (identical values): each
    distinct count is evaluated once, or looked up in a table of all ``n + 1`` counts (kept
    for later calls) when ``n ≤ 50 000`` and the counts are at least a quarter as many as the
    table or the table exists already.

    >>> cp_upper_many([[0, 5], [5, 10]], 10, 0.05).round(4).tolist()
    [[0.2589, 0.7776], [0.7776, 1.0]]
    """
    kk = np.asarray(k)
    key = (int(n), float(alpha))
    if key in _TABLES or (key[0] <= _TABLE_MAX_N and 4 * kk.size >= key[0]):
        if key not in _TABLES:
            if len(_TABLES) >= 64:
                _TABLES.pop(next(iter(_TABLES)))
            _TABLES[key] = cp_upper(np.arange(key[0] + 1), key[0], alpha)
        return _TABLES[key][kk.astype(np.int64)]
    u, inv = np.unique(kk, return_inverse=True)
    return cp_upper(u, n, alpha)[inv].reshape(kk.shape)


def cp_lower(k: ArrayLike, n: ArrayLike, alpha: float) -> np.ndarray:
    """One-sided lower bound at level ``alpha``: P[p < bound] ≤ alpha (no validation).

    ``B⁻¹(α; k, n − k + 1)`` (Clopper & Pearson 1934), with the closed forms ``0`` at k = 0
    and ``α^{1/n}`` at k = n (solves pⁿ = α).

    >>> cp_lower([0, 5, 10], 10, 0.05).round(4).tolist()
    [0.0, 0.2224, 0.7411]
    """
    from scipy import special
    k, n = np.broadcast_arrays(np.asarray(k, np.float64), np.asarray(n, np.float64))
    out = np.zeros(k.shape)
    full = k == n
    mid = (k > 0) & (k < n)
    out[full] = np.exp(math.log(alpha) / n[full])
    if mid.any():
        out[mid] = special.betaincinv(k[mid], n[mid] - k[mid] + 1.0, alpha)  # = stats.beta.ppf
    return out


def clopper_pearson_upper(successes: ArrayLike, trials: ArrayLike, *, confidence: float) -> Any:
    """One-sided Clopper–Pearson upper confidence bound on a binomial proportion.

    ``P[p ≤ bound] ≥ confidence`` for every true ``p``. Exact at ``successes = 0``
    (``1 − (1 − confidence)^{1/n}``) and ``successes = trials`` (``1``). Vectorised; returns a
    float for scalar inputs.

    >>> round(clopper_pearson_upper(0, 100, confidence=0.95), 6)
    0.029513
    >>> clopper_pearson_upper(100, 100, confidence=0.95)
    1.0
    >>> clopper_pearson_upper([1, 5], 10, confidence=0.95).round(4)
    array([0.3942, 0.7776])
    """
    k, n = check_counts(successes, trials)
    alpha = 1.0 - check_probability("confidence", confidence)
    return _scalar_or_array(cp_upper(k, n, alpha), successes, trials)


def clopper_pearson_lower(successes: ArrayLike, trials: ArrayLike, *, confidence: float) -> Any:
    """One-sided Clopper–Pearson lower confidence bound on a binomial proportion.

    ``P[p ≥ bound] ≥ confidence``. Exact at ``successes = 0`` (``0``) and ``successes = trials``
    (``(1 − confidence)^{1/n}``).

    >>> clopper_pearson_lower(0, 100, confidence=0.95)
    0.0
    >>> round(clopper_pearson_lower(100, 100, confidence=0.95), 6)
    0.970487
    """
    k, n = check_counts(successes, trials)
    alpha = 1.0 - check_probability("confidence", confidence)
    return _scalar_or_array(cp_lower(k, n, alpha), successes, trials)


# ---------------------------------------------------------------------------------------
# from error rates to privacy parameters


def epsilon_from_rates(fpr: ArrayLike, fnr: ArrayLike, delta: float) -> Any:
    """``max(0, log((1 − δ − FNR)/FPR), log((1 − δ − FPR)/FNR))`` in log space.

    The two inequalities of Kairouz, Oh & Viswanath (2015, Theorem 2.1) solved for ε; applied
    to *upper* confidence bounds on the rates this is a lower bound on ε at δ. Zero-rate tests
    give ``inf`` when the other rate leaves room (``FNR < 1 − δ``).

    >>> round(epsilon_from_rates(0.01, 0.5, 0.0), 4)   # log(0.5/0.01)
    3.912
    >>> epsilon_from_rates(0.5, 0.5, 0.0)
    0.0
    """
    d = check_probability("delta", delta, low_open=False)
    p, q = _rates(fpr, fnr)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(d + q < 1, np.log1p(-(d + q)) - np.log(p), -np.inf)
        t2 = np.where(d + p < 1, np.log1p(-(d + p)) - np.log(q), -np.inf)
    out = np.maximum(0.0, np.fmax(t1, t2))
    return _scalar_or_array(np.nan_to_num(out, nan=0.0, posinf=np.inf), fpr, fnr)


def mu_from_rates(fpr: ArrayLike, fnr: ArrayLike) -> Any:
    """``max(0, Φ⁻¹(1 − FPR) − Φ⁻¹(FNR))``: the μ at which ``FNR = G_μ(FPR)``.

    μ-GDP means ``FNR ≥ Φ(Φ⁻¹(1 − FPR) − μ)`` for every test (Dong, Roth & Su 2022,
    Definition 2.6), i.e. ``μ ≥ Φ⁻¹(1 − FPR) − Φ⁻¹(FNR)``; on upper confidence bounds of the
    rates this is a lower bound on μ.

    >>> round(mu_from_rates(0.3085375387, 0.3085375387), 6)   # Φ(−1/2) each: μ = 1
    1.0
    >>> mu_from_rates(0.7, 0.7)
    0.0
    """
    from scipy import special
    p, q = _rates(fpr, fnr)
    with np.errstate(invalid="ignore"):
        out = -special.ndtri(p) - special.ndtri(q)  # = stats.norm.isf(p) - stats.norm.ppf(q)
    out = np.maximum(0.0, np.nan_to_num(out, nan=0.0, posinf=np.inf, neginf=0.0))
    return _scalar_or_array(out, fpr, fnr)


def delta_from_rates(fpr: ArrayLike, fnr: ArrayLike, epsilon: ArrayLike) -> Any:
    """``max(0, 1 − FPR − e^ε FNR, 1 − FNR − e^ε FPR)``: the smallest δ consistent with the
    rates at ε (Kairouz, Oh & Viswanath 2015, Theorem 2.1, solved for δ). On upper bounds of
    the rates, a lower bound on the privacy profile δ(ε).

    >>> round(delta_from_rates(0.1, 0.2, 0.0), 6)
    0.7
    """
    p = np.asarray(fpr, dtype=np.float64)
    q = np.asarray(fnr, dtype=np.float64)
    e = np.asarray(epsilon, dtype=np.float64)
    if np.any(~(e >= 0)):
        raise ValueError("epsilon must be in [0, inf]")
    with np.errstate(over="ignore", invalid="ignore"):
        ee = np.exp(e)
        a = 1.0 - p - np.where(q > 0, ee * q, 0.0)
        b = 1.0 - q - np.where(p > 0, ee * p, 0.0)
    out = np.maximum(0.0, np.maximum(a, b))
    return _scalar_or_array(out, fpr, fnr, epsilon)
