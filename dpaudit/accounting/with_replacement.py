"""Rényi DP of a Gaussian on a batch drawn *with* replacement (replace-one relation).

m draws, uniformly and independently from n records; record i is drawn C ~ Binomial(m, 1/n)
times. Condition on the drawn indices J: the two neighbouring datasets (record i replaced) give
N(f(batch_J), σ²) and N(f(batch'_J), σ²) whose means differ by at most C·s (C entries changed one
at a time, each by at most the sensitivity s), so their Rényi divergence of order α is at most
αC²μ²/2 (μ = s/σ). The outputs are the mixtures over J with the *same* weights, and
(p, q) ↦ ∫p^α q^{1−α} is jointly convex for α > 1, so

    e^{(α−1)ρ(α)} ≤ Σ_c P(C = c) e^{(α−1)αc²μ²/2} = 1 + Σ_{c≥1} P(C = c) expm1((α−1)αc²μ²/2),

ρ(α) ≤ log(1 + S)/(α − 1). This is sound for every n, m and σ, but the amplification is only
O(m/n) (joint convexity, not the O((m/n)²) of Poisson or without-replacement sampling at small
orders): it is loose, and dp-accounting 0.6 offers no bound at all for this event (its RDP and
PLD accountants refuse it), so there is no peer number to compare with.

Computed in log space: the terms c = 1 … min(m, 64) exactly (log P(C = c) from log-gamma, with
a margin of 1e-14 times the magnitude of its parts), the rest together at most
P(C ≥ 65)·e^{(α−1)αm²μ²/2} with P(C ≥ k) ≤ binom(m, k)/n^k (a union bound over the k-sets of
draws); log expm1(x) by upper bounds (log x + x below 1e-10, x above 30). Capped everywhere by
the Gaussian with sensitivity m·s, αm²μ²/2 (every term is at most it).
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.events import GaussianEvent
from dpaudit.events_ml import SampledWithReplacementEvent
from dpaudit.numerics import div_up, special

__all__ = ["log_with_replacement_rdp", "log_expm1_up", "log_rho_of_terms", "log_binomial_up"]

_TERMS = 64
_LOG2 = math.log(2.0)


def log_expm1_up(log_x: np.ndarray) -> np.ndarray:
    """An upper bound on log(e^x − 1) from log x (also used by :mod:`dpaudit.accounting.mixtures`)."""
    with np.errstate(over="ignore", under="ignore"):
        x = np.exp(log_x)
        lv = np.log(np.expm1(np.clip(x, 1e-10, 30.0)))
        mid = lv + 1e-14 * np.abs(lv)
    return np.where(x < 1e-10, log_x + x, np.where(x > 30.0, x, mid))


def log_binomial_up(m: int, c: np.ndarray | float) -> np.ndarray:
    """log binom(m, c), rounded up (vectorised over c)."""
    parts = (special().gammaln(m + 1.0), special().gammaln(c + 1.0), special().gammaln(m - c + 1.0))
    err = 1e-14 * (abs(parts[0]) + np.abs(parts[1]) + np.abs(parts[2])) + 1e-15
    return parts[0] - parts[1] - parts[2] + err


def log_with_replacement_rdp(leaf: SampledWithReplacementEvent, alphas: np.ndarray) -> np.ndarray:
    """log ρ(α) of ``leaf`` (see the module docstring), an upper bound, vectorised over α."""
    a = np.asarray(alphas, dtype=float)
    inner = leaf.event
    assert isinstance(inner, GaussianEvent)
    mu = div_up(inner.sensitivity, inner.sigma)
    n, m = leaf.dataset_size, leaf.sample_size
    with np.errstate(over="ignore", divide="ignore"):
        log_cap = np.log(a) + 2.0 * (math.log(m) + math.log(mu)) - _LOG2 if math.isfinite(mu) else \
            np.full(a.shape, np.inf)
    if n == 1 or not 0 < mu < 1e150:
        return log_cap  # every draw is the one record: the Gaussian of sensitivity m·s
    log_n, log1m = math.log(n), math.log1p(-1.0 / n)
    k = min(m, _TERMS)
    c = np.arange(1, k + 1, dtype=float)[:, None]
    log_w = log_binomial_up(m, c) - c * log_n + (m - c) * log1m
    log_w = log_w + 1e-14 * (c * log_n + (m - c) * abs(log1m))
    base = np.log(a - 1.0) + np.log(a) + 2.0 * math.log(mu) - _LOG2  # log of x at c = 1
    base = base + 1e-14 * (np.abs(np.log(a - 1.0)) + np.log(a) + 2.0 * abs(math.log(mu)) + _LOG2)
    rows = [log_w + log_expm1_up(base[None, :] + 2.0 * np.log(c))]
    if m > k:
        kk = np.array([float(k + 1)])
        log_tail = float(log_binomial_up(m, kk)[0]) - (k + 1) * log_n
        with np.errstate(over="ignore"):
            rows.append((log_tail + np.exp(base + 2.0 * math.log(m)) * (1.0 + 1e-14))[None, :])
    return np.minimum(log_rho_of_terms(rows, a), log_cap)


def log_rho_of_terms(rows: list[np.ndarray], alphas: np.ndarray) -> np.ndarray:
    """log[log(1 + S)/(α − 1)], rounded up, where log S is the log-sum-exp over the rows of
    ``rows`` (each an upper bound on the log of its part of S, one column per order): the Rényi
    divergence bound of joint convexity, e^{(α−1)ρ} ≤ 1 + S."""
    a = np.asarray(alphas, dtype=float)
    terms = np.concatenate(rows, axis=0)
    top = np.max(terms, axis=0)
    with np.errstate(invalid="ignore", over="ignore"):
        spread = np.log(np.sum(np.exp(terms - top[None, :]), axis=0)) * (1.0 + 1e-14)
        log_s = top + spread + 1e-14 * np.abs(top)
        log_s = np.where(np.isinf(top), top, log_s)  # every part inf: inf; every part 0: −inf
        exact = np.log(np.logaddexp(0.0, np.maximum(log_s, -36.0))) + 1e-15
        log_log1p = np.where(log_s < -36.0, log_s, exact)
    return log_log1p - np.log(a - 1.0)
