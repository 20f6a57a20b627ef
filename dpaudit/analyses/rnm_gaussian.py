"""Heterogeneous Gaussian report-noisy-max, exactly (seed 004, Appendix C, Algorithm 4).

The mechanism releases ``argmax_i (f_i + X_i)`` with independent ``X_i ~ N(0, σ_i²)``.
Neighbouring query vectors f, f′ differ in at most one coordinate k, by at most s_k.

This module computes, without sampling,

* the output distribution P(argmax = i) by 1-D quadrature in log space
  (:func:`argmax_log_distribution`, :func:`argmax_distribution`);
* the exact privacy profile δ(ε) (hockey-stick divergence of the two discrete output
  distributions, both directions) and the exact pure ε of one neighbour pair
  (:func:`exact_privacy_profile`, :func:`exact_epsilon`);
* the worst case over neighbour pairs, by optimisation over the query gaps
  (:func:`worst_case_profile`, :func:`worst_case_epsilon`), returning the maximising
  adversarial pair;
* the GDP bound μ = max_i s_i/σ_i (:func:`gdp_bound`), which is correct;
* the bounds of seed 004 *as published* (:func:`published_bound_theorem6`,
  :func:`published_bound_theorem7`), which the exact profile shows to be false
  (see ``docs/finding-rnm-gaussian.md``).

Example (one Thompson-sampling round, N = 2 arms each pulled once: s = 1/2, σ = 1/√2):
    >>> import numpy as np
    >>> p = argmax_distribution([0.0, 0.5], [2 ** -0.5, 2 ** -0.5])
    >>> bool(abs(p[0] - 0.3085375387259869) < 1e-12)  # Φ(−1/2)
    True
    >>> eps = published_bound_theorem7(2, 1e-6)  # the paper's per-round ε at δ = 1e-6
    >>> round(eps, 4)
    1.2807
    >>> wc = worst_case_profile(0.5, [2 ** -0.5, 2 ** -0.5], [eps], search="symmetric")
    >>> float(wc.deltas[0]) > 1e-3  # the exact δ at the published ε: > 1000 × the claim
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from dpaudit.numerics import bisect
from dpaudit.validation import check_integer, check_probability

__all__ = [
    "log_argmax_probability",
    "argmax_log_distribution",
    "argmax_distribution",
    "ExactProfile",
    "exact_privacy_profile",
    "exact_epsilon",
    "NeighbourPair",
    "WorstCaseProfile",
    "worst_case_profile",
    "worst_case_epsilon",
    "gdp_bound",
    "published_bound_theorem6",
    "published_bound_theorem7",
]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(20)
_DROP = 45.0  # integrate where the log-integrand is within _DROP of its maximum (e^-45 ≈ 3e-20)
_H_MAX = 4.0  # largest panel width (in units of σ_i); 20-node GL error on a unit-curvature panel ≲ 1e-23
_WIDEN = 1.0  # a panel at distance δ from the mode may be _H_MAX + _WIDEN·δ wide
_SHARP = 1.0  # a factor Φ((x − f_j)/σ_j) is "sharp" for candidate i when σ_j/σ_i < _SHARP
_GRADE = np.array([-12.0, -8.0, -4.0, -2.0, 0.0, 2.0, 4.0, 8.0])  # around a sharp step, in its widths
_BUDGET = 1 << 20  # node × factor pairs per log_ndtr call (8 MiB per float64 temporary)


# ---------------------------------------------------------------------------------------
# validation


def _as_values(name: str, values: Iterable[float] | np.ndarray) -> np.ndarray:
    v = np.atleast_1d(np.asarray(values, dtype=float)).reshape(-1)
    if v.size < 1:
        raise ValueError(f"{name} must contain at least one value")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must all be finite numbers in (-inf, inf), got {values!r}")
    return v


def _as_positive(name: str, values: Iterable[float] | float, size: int | None = None) -> np.ndarray:
    v = np.atleast_1d(np.asarray(values, dtype=float)).reshape(-1)
    if size is not None:
        if v.size == 1:
            v = np.full(size, float(v[0]))
        if v.size != size:
            raise ValueError(f"{name} must have 1 or {size} entries, got {v.size}")
    if v.size < 1 or not np.all(np.isfinite(v)) or np.any(v <= 0):
        raise ValueError(f"{name} must all be in (0, inf), got {values!r}")
    return v


# ---------------------------------------------------------------------------------------
# 1. the output distribution


def _log_h(z: np.ndarray, d: np.ndarray, r: np.ndarray, per_row: np.ndarray | None = None) -> np.ndarray:
    """h(z) = log φ(z) + Σ_j log Φ(d_j + r_j z): one z per row of (d, r), or ``per_row[b]``
    consecutive nodes for row b (rows repeated, not gathered: the nodes of a row are contiguous)."""
    if per_row is not None:
        d, r = np.repeat(d, per_row, axis=0), np.repeat(r, per_row, axis=0)
    u = d + r * z[:, None]
    return -0.5 * z * z - _LOG_SQRT_2PI + special.log_ndtr(u).sum(axis=1)


def _h_slope(z: np.ndarray, d: np.ndarray, r: np.ndarray) -> np.ndarray:
    """h′(z) = −z + Σ_j r_j φ(u_j)/Φ(u_j), u_j = d_j + r_j z (one z per row); strictly
    decreasing because h″ ≤ −1. The Mills ratio is taken in log space (no 0/0 far left)."""
    u = d + r * z[:, None]
    mills = np.exp(-0.5 * u * u - _LOG_SQRT_2PI - special.log_ndtr(u))
    return -z + (r * mills).sum(axis=1)


def _window(d: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mode z* of h and the edges of the window where h ≥ h(z*) − ``_DROP``, per row.

    h′(0) > 0 and h′(z) ≤ h′(0) − z, so z* ∈ [0, h′(0)]: bisection to 1e-4 (z* is only a
    breakpoint and the window centre). h(z) ≤ h(z*) − (z − z*)²/2 puts each edge within
    z* ± (√(2·_DROP) + 1); 10 bisection steps keep the far end outside, so an imprecise edge
    only widens the window.
    """
    rows = np.arange(d.shape[0])
    lo, hi = bisect(lambda z: _h_slope(z, d, r) > 0, 0.0, _h_slope(np.zeros(rows.size), d, r), xtol=1e-4)
    zmode = 0.5 * (lo + hi)
    floor = _log_h(zmode, d, r) - _DROP
    reach = math.sqrt(2.0 * _DROP) + 1.0
    edges = []
    for side in (-1.0, 1.0):

        def inside(x: np.ndarray, side: float = side) -> np.ndarray:
            return _log_h(zmode + side * x, d, r) > floor

        _, out = bisect(inside, 0.0, np.full(rows.size, reach), iters=10)
        edges.append(zmode + side * out)
    return zmode, edges[0], edges[1]


def _panels(d: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes, weights and owner rows covering each row's window.

    Breakpoints: the window edges, the mode z* and z* ± ``_H_MAX``, and — for every factor
    narrower than candidate i's (σ_j < ``_SHARP``·σ_i, i.e. r_j > 1/``_SHARP``) — graded points
    around its step z_j = −d_j/r_j in units of its width 1/r_j (log Φ has curvature ≤ 1 in
    those units, so the spacing of 4 matches the panel width). Each piece at distance δ from
    z* is cut into panels of width ≤ ``_H_MAX`` + δ (e^h has fallen by ≥ e^{−δ²/2} there) with a
    20-node rule. Ragged per row, built without a Python loop over rows.
    """
    n = d.shape[0]
    zmode, z_left, z_right = _window(d, r)
    with np.errstate(invalid="ignore"):
        step = np.where(r > 1.0 / _SHARP, -d / r, np.nan)
    graded = (step[:, :, None] + (1.0 / r)[:, :, None] * _GRADE).reshape(n, -1)
    bp = np.concatenate([z_left[:, None], zmode[:, None], z_right[:, None], (zmode - _H_MAX)[:, None],
                         (zmode + _H_MAX)[:, None], graded], axis=1)  # fmt: skip
    with np.errstate(invalid="ignore"):
        bp = np.where((bp >= z_left[:, None]) & (bp <= z_right[:, None]), bp, np.nan)
        bp.sort(axis=1)  # NaN last
        width = np.diff(bp, axis=1)
        ok = width > 0  # drops NaN and repeated breakpoints
    owner = np.nonzero(ok)[0]
    a0, wd = bp[:, :-1][ok], width[ok]
    # panels may widen with the distance from the mode, where e^h has fallen by ≥ e^{−δ²/2}
    dist = np.maximum(0.0, np.maximum(a0 - zmode[owner], zmode[owner] - (a0 + wd)))
    pieces = np.ceil(wd / (_H_MAX + _WIDEN * dist)).astype(np.int64)
    piece_of = np.repeat(np.arange(pieces.size), pieces)
    k = np.arange(piece_of.size) - np.repeat(np.cumsum(pieces) - pieces, pieces)
    half = (wd / pieces)[piece_of] / 2.0
    mids = a0[piece_of] + (2.0 * k + 1.0) * half
    nodes = (mids[:, None] + half[:, None] * _GL_NODES[None, :]).ravel()
    weights = (half[:, None] * _GL_WEIGHTS[None, :]).ravel()
    return nodes, weights, np.repeat(owner[piece_of], _GL_NODES.size)


def _log_argmax_rows(mu: np.ndarray, sigma: np.ndarray, cand: np.ndarray) -> np.ndarray:
    n, N = mu.shape
    rows = np.arange(n)
    keep = np.ones((n, N), dtype=bool)
    keep[rows, cand] = False
    mi, si = mu[rows, cand][:, None], sigma[rows, cand][:, None]
    mj, sj = mu[keep].reshape(n, N - 1), sigma[keep].reshape(n, N - 1)
    d, r = (mi - mj) / sj, si / sj  # u_j = d_j + r_j z = (μ_i + σ_i z − μ_j)/σ_j
    z, w, own = _panels(d, r)
    per_row = np.bincount(own, minlength=n)  # ≥ 1 panel per row: the window is never empty
    ends = np.cumsum(per_row)
    logv = np.log(w)
    group = max(1, _BUDGET // (N - 1))  # nodes per log_ndtr call
    r0 = 0
    while r0 < n:  # groups of whole rows with at most `group` nodes (at least one row)
        base = int(ends[r0 - 1]) if r0 else 0
        r1 = max(r0 + 1, int(np.searchsorted(ends, base + group, side="right")))
        logv[base : ends[r1 - 1]] += _log_h(z[base : ends[r1 - 1]], d[r0:r1], r[r0:r1], per_row[r0:r1])
        r0 = r1
    start = ends - per_row
    mx = np.maximum.reduceat(logv, start)
    return mx + np.log(np.add.reduceat(np.exp(logv - np.repeat(mx, per_row)), start))


def log_argmax_probability(
    means: np.ndarray, sigmas: np.ndarray, candidates: np.ndarray, *, rows_per_chunk: int = 1024
) -> np.ndarray:
    """log P(argmax_k (means[b, k] + sigmas[b, k]·Z_k) = candidates[b]) for every row b, with
    Z_k i.i.d. N(0, 1): the one Gaussian-argmax quadrature of the toolkit, vectorised over rows.

    P_i = ∫ φ(z) Π_{j≠i} Φ((μ_i + σ_i z − μ_j)/σ_j) dz (condition on candidate i's own noise).
    The log-integrand h(z) (a sum of ``log_ndtr`` terms) is concave with h″ ≤ −1, so it has one
    mode z*, found by bisection (:func:`dpaudit.numerics.bisect`); the integral is taken over the
    window where h ≥ h(z*) − 45 (the rest weighs < e^{−45} relative), split at z* and z* ± 4,
    at graded breakpoints around the step of every factor narrower than candidate i's
    (σ_j < σ_i), and into panels of width ≤ 4 near the mode (wider further out), each with
    20-node Gauss–Legendre; the sum is taken in log space, so tiny probabilities keep full
    relative accuracy. Accuracy: |error of log P| ≤ 2.6e-15·max(1, |log P|) against 60-digit
    mpmath quadrature on 77 probabilities (log P down to −4957, σ ratios up to 10⁴;
    ``tests/test_rnm_gaussian.py`` pins 1e-12 against 25 digits).

    ``means``, ``sigmas``: shape (B, N), finite, σ > 0; ``candidates``: shape (B,), in [0, N).
    Rows are processed ``rows_per_chunk`` at a time (memory ∝ chunk × nodes × N).

    >>> import numpy as np
    >>> lp = log_argmax_probability(np.array([[0.0, 0.5], [1.0, 0.0]]), np.full((2, 2), 2 ** -0.5),
    ...                             np.array([0, 0]))
    >>> np.exp(lp).round(10).tolist()   # Φ(−1/2), Φ(1)
    [0.3085375387, 0.8413447461]
    """
    mu = np.asarray(means, dtype=float)
    sg = np.asarray(sigmas, dtype=float)
    c = np.asarray(candidates)
    if mu.ndim != 2 or sg.shape != mu.shape or c.shape != (mu.shape[0],):
        raise ValueError(
            f"means and sigmas must have the same shape (B, N) and candidates shape (B,), got "
            f"{mu.shape}, {sg.shape} and {c.shape}"
        )
    B, N = mu.shape
    if c.dtype.kind not in "iu" or np.any((c < 0) | (c >= N)):
        raise ValueError(f"candidates must be integers in [0, {N - 1}]")
    if not np.all(np.isfinite(mu)):
        raise ValueError("means must all be finite numbers in (-inf, inf)")
    if not np.all(np.isfinite(sg) & (sg > 0)):
        raise ValueError("sigmas must all be in (0, inf)")
    if N == 1:
        return np.zeros(B)
    chunk = check_integer("rows_per_chunk", rows_per_chunk)
    c = c.astype(np.intp)
    out = np.empty(B)
    for s in range(0, B, chunk):
        out[s : s + chunk] = _log_argmax_rows(mu[s : s + chunk], sg[s : s + chunk], c[s : s + chunk])
    return out


def argmax_log_distribution(values: Iterable[float], sigmas: Iterable[float] | float) -> np.ndarray:
    """log P(argmax_i (f_i + X_i) = i), X_i ~ N(0, σ_i²) independent, for every candidate i
    (:func:`log_argmax_probability` with one row per candidate).

    >>> lp = argmax_log_distribution([0.0, 30.0], [1.0, 1.0])
    >>> from scipy.special import log_ndtr
    >>> bool(abs(lp[0] - log_ndtr(-30 / 2 ** 0.5)) < 1e-10)  # P ≈ 1e-198, still relative
    True
    """
    f = _as_values("values", values)
    n = f.size
    sig = _as_positive("sigmas", sigmas, n)
    if n == 1:
        return np.zeros(1)
    return log_argmax_probability(np.tile(f, (n, 1)), np.tile(sig, (n, 1)), np.arange(n))


def argmax_distribution(values: Iterable[float], sigmas: Iterable[float] | float) -> np.ndarray:
    """P(argmax_i (f_i + X_i) = i), X_i ~ N(0, σ_i²) independent; see
    :func:`argmax_log_distribution` (accurate to ≈1e-13, sums to 1 within 1e-12).

    >>> p = argmax_distribution([1.0, 0.0, -1.0], [1.0, 0.5, 2.0])
    >>> bool(abs(p.sum() - 1.0) < 1e-12)
    True
    >>> [round(float(x), 4) for x in p]
    [0.6969, 0.1374, 0.1658]
    """
    return np.exp(argmax_log_distribution(values, sigmas))


# ---------------------------------------------------------------------------------------
# 2. exact privacy profile of one neighbour pair


@dataclass(frozen=True, eq=False)
class ExactProfile:
    """Exact privacy profile of one pair of output distributions P = M(f), P′ = M(f′).

    ``deltas[k]`` = max(D_{ε_k}(P‖P′), D_{ε_k}(P′‖P)) with the hockey-stick divergence
    D_ε(P‖Q) = Σ_o max(0, P(o) − e^ε Q(o)); ``deltas_forward``/``deltas_backward`` are the
    two directions; ``pure_epsilon`` = max_o |log P(o) − log P′(o)| (δ = 0 beyond it).
    """

    epsilons: np.ndarray
    deltas: np.ndarray
    deltas_forward: np.ndarray
    deltas_backward: np.ndarray
    pure_epsilon: float
    log_p: np.ndarray
    log_p_prime: np.ndarray


def _hockey_stick(log_p: np.ndarray, log_q: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """Σ_o P(o)·max(0, 1 − e^{ε + log Q(o) − log P(o)}) for every ε (relative-accurate)."""
    x = eps[:, None] + (log_q - log_p)[None, :]
    terms = np.where(x < 0, -np.expm1(np.minimum(x, 0.0)) * np.exp(log_p)[None, :], 0.0)
    return terms.sum(axis=1)


def _profile_from_logs(log_p: np.ndarray, log_q: np.ndarray, eps: np.ndarray) -> ExactProfile:
    fwd = _hockey_stick(log_p, log_q, eps)
    bwd = _hockey_stick(log_q, log_p, eps)
    return ExactProfile(
        epsilons=eps,
        deltas=np.maximum(fwd, bwd),
        deltas_forward=fwd,
        deltas_backward=bwd,
        pure_epsilon=float(np.max(np.abs(log_p - log_q))),
        log_p=log_p,
        log_p_prime=log_q,
    )


def _as_epsilons(epsilons: Iterable[float] | float) -> np.ndarray:
    eps = np.atleast_1d(np.asarray(epsilons, dtype=float)).reshape(-1)
    if eps.size < 1 or not np.all(np.isfinite(eps)) or np.any(eps < 0):
        raise ValueError(f"epsilons must all be in [0, inf), got {epsilons!r}")
    return eps


def exact_privacy_profile(
    values: Iterable[float],
    values_prime: Iterable[float],
    sigmas: Iterable[float] | float,
    epsilons: Iterable[float] | float,
) -> ExactProfile:
    """The exact (ε, δ(ε)) profile of report-noisy-max between query vectors f and f′.

    The output is discrete, so δ(ε) = max over the two directions of
    Σ_o max(0, P(o) − e^ε P′(o)) is exact up to the quadrature error of P (≈1e-13); the
    pure ε is max_o |log P(o) − log P′(o)|. f and f′ need not be neighbours.

    >>> pr = exact_privacy_profile([0.0, 0.0], [0.5, 0.0], 2 ** -0.5, [0.0, 0.2])
    >>> [round(float(x), 6) for x in pr.deltas]  # ε = 0: total variation Φ(1/2) − 1/2
    [0.191462, 0.123151]
    >>> round(pr.pure_epsilon, 6)  # log(Φ(1/2)/Φ(0))
    0.482765
    """
    f = _as_values("values", values)
    fp = _as_values("values_prime", values_prime)
    if fp.size != f.size:
        raise ValueError(f"values_prime must have {f.size} entries, got {fp.size}")
    sig = _as_positive("sigmas", sigmas, f.size)
    eps = _as_epsilons(epsilons)
    return _profile_from_logs(argmax_log_distribution(f, sig), argmax_log_distribution(fp, sig), eps)


def _epsilon_at(log_p: np.ndarray, log_q: np.ndarray, delta: float) -> float:
    """Smallest ε ≥ 0 with max-direction hockey-stick ≤ δ (δ(ε) is continuous, decreasing).

    Brent's method to 1e-14 (not :func:`dpaudit.numerics.bisect`: this is an exact value, not a
    certified side, and the worst-case search calls it thousands of times).
    """

    def excess(e: float) -> float:
        ea = np.array([e])
        return float(max(_hockey_stick(log_p, log_q, ea)[0], _hockey_stick(log_q, log_p, ea)[0])) - delta

    if excess(0.0) <= 0:
        return 0.0
    hi = float(np.max(np.abs(log_p - log_q)))  # δ(hi) = 0
    if not excess(hi) <= 0:
        return hi
    return float(optimize.brentq(excess, 0.0, hi, xtol=1e-14, rtol=1e-15, maxiter=500))


def exact_epsilon(
    values: Iterable[float], values_prime: Iterable[float], sigmas: Iterable[float] | float, delta: float
) -> float:
    """The smallest ε ≥ 0 such that the pair (f, f′) satisfies the (ε, δ) inequality both ways.

    >>> round(exact_epsilon([0.0, 0.0], [0.5, 0.0], 2 ** -0.5, 0.05), 4)
    0.3774
    """
    delta = check_probability("delta", delta)
    f = _as_values("values", values)
    fp = _as_values("values_prime", values_prime)
    if fp.size != f.size:
        raise ValueError(f"values_prime must have {f.size} entries, got {fp.size}")
    sig = _as_positive("sigmas", sigmas, f.size)
    return _epsilon_at(argmax_log_distribution(f, sig), argmax_log_distribution(fp, sig), delta)


# ---------------------------------------------------------------------------------------
# 3. worst case over neighbour pairs


@dataclass(frozen=True, eq=False)
class NeighbourPair:
    """An adversarial neighbour pair: ``values`` and ``values_prime`` differ only in
    coordinate ``changed``, by ``direction``·s_changed, and δ(ε) = D_ε(M(values)‖M(values_prime))
    (the pair is ordered so that this direction attains the maximum)."""

    values: np.ndarray
    values_prime: np.ndarray
    changed: int
    direction: int


@dataclass(frozen=True, eq=False)
class WorstCaseProfile:
    """Result of :func:`worst_case_profile` / :func:`worst_case_epsilon`.

    ``deltas[k]`` (or ``epsilons[k]`` for :func:`worst_case_epsilon`) is the best value found
    by the search, attained by ``pairs[k]`` — a certified *lower* bound on the true worst case
    (every pair is a valid neighbour pair whose exact profile is computed) and, for N = 2, the
    exact worst case. Convergence evidence: ``symmetric`` is the value of the best pair with
    all other candidates at one common value (stage 1), ``before_refinement`` the value after
    the multi-start local search (stage 2) and the final value is after a restarted, tighter
    local search (stage 3); ``relative_refinement_gain`` = final/before_refinement − 1.
    """

    epsilons: np.ndarray
    deltas: np.ndarray
    pairs: tuple[NeighbourPair, ...]
    symmetric: np.ndarray
    before_refinement: np.ndarray
    relative_refinement_gain: np.ndarray
    search: str


def _pair_from_gaps(k: int, gaps: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    f = np.insert(np.asarray(gaps, dtype=float), k, 0.0)
    fp = f.copy()
    fp[k] = s[k]
    return f, fp


def _maximise(
    score: Callable[[np.ndarray], float], n_free: int, scale: float, search: str, rng: np.random.Generator
) -> tuple[np.ndarray, float, float, float]:
    """Maximise score(gaps) over gaps ∈ R^{n_free}. Returns (gaps, best, symmetric, stage2)."""
    # stage 1: all other candidates at one common gap t: scan then bounded Brent refinement
    grid = np.linspace(-8.0, 8.0, 65) * scale
    vals = np.array([score(np.full(n_free, t)) for t in grid])
    j = int(np.argmax(vals))
    a, b = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
    res = optimize.minimize_scalar(lambda t: -score(np.full(n_free, t)), bounds=(a, b), method="bounded",
                                   options={"xatol": 1e-10 * scale})
    best_x = np.full(n_free, res.x if -res.fun >= vals[j] else grid[j])
    best = max(-res.fun, vals[j])
    symmetric = best
    if search == "symmetric" or n_free == 1:
        return best_x, best, symmetric, best

    # stage 2: multi-start Nelder–Mead over all gaps (starts: symmetric optimum; one
    # competitor at it and the rest far below, i.e. absent; two random perturbations)
    starts = [best_x.copy()]
    lone = np.full(n_free, -12.0 * scale)
    lone[0] = best_x[0]
    starts.append(lone)
    for _ in range(2):
        starts.append(best_x + rng.normal(0.0, scale, n_free))
    for x0 in starts:
        r = optimize.minimize(lambda x: -score(x), x0, method="Nelder-Mead",
                              options={"xatol": 1e-7 * scale, "fatol": 1e-13, "maxfev": 400 * n_free,
                                       "initial_simplex": x0 + np.vstack([np.zeros(n_free),
                                                                          0.5 * scale * np.eye(n_free)])})
        if -r.fun > best:
            best, best_x = -r.fun, r.x
    stage2 = best
    # stage 3: restart from the best point with a smaller simplex (refinement)
    r = optimize.minimize(lambda x: -score(x), best_x, method="Nelder-Mead",
                          options={"xatol": 1e-9 * scale, "fatol": 1e-15, "maxfev": 400 * n_free,
                                   "initial_simplex": best_x + np.vstack([np.zeros(n_free),
                                                                          0.05 * scale * np.eye(n_free)])})
    if -r.fun > best:
        best, best_x = -r.fun, r.x
    return best_x, best, symmetric, stage2


def _unique_changed(s: np.ndarray, sig: np.ndarray) -> list[int]:
    """Candidates whose (s_k, σ_k) differ: permuting the others leaves the worst case unchanged."""
    seen: dict[tuple[float, float], int] = {}
    for k in range(s.size):
        seen.setdefault((float(s[k]), float(sig[k])), k)
    return sorted(seen.values())


def _worst_case(
    sensitivities: Iterable[float] | float,
    sigmas: Iterable[float],
    targets: np.ndarray,
    measure: Callable[[np.ndarray, np.ndarray, float], float],
    search: str,
    seed: int,
) -> tuple[np.ndarray, list[NeighbourPair], np.ndarray, np.ndarray]:
    sig = _as_positive("sigmas", sigmas)
    if sig.size < 2:
        raise ValueError(f"sigmas must have at least 2 entries (one per candidate), got {sig.size}")
    s = _as_positive("sensitivities", sensitivities, sig.size)
    if search not in ("symmetric", "full"):
        raise ValueError(f"search must be 'symmetric' or 'full', got {search!r}")
    rng = np.random.default_rng(seed)
    n = sig.size
    out = np.zeros(targets.size)
    sym = np.zeros(targets.size)
    st2 = np.zeros(targets.size)
    pairs: list[NeighbourPair] = []
    for t_i, target in enumerate(targets):
        best: tuple[float, float, float, NeighbourPair] | None = None
        for k in _unique_changed(s, sig):
            scale = float(math.sqrt(sig[k] ** 2 + np.max(np.delete(sig, k)) ** 2) + s[k])

            def score(gaps: np.ndarray, k: int = k, target: float = target) -> float:
                f, fp = _pair_from_gaps(k, gaps, s)
                return measure(argmax_log_distribution(f, sig), argmax_log_distribution(fp, sig), target)

            x, val, v_sym, v2 = _maximise(score, n - 1, scale, search, rng)
            if best is None or val > best[0]:
                f, fp = _pair_from_gaps(k, x, s)
                lp, lq = argmax_log_distribution(f, sig), argmax_log_distribution(fp, sig)
                ea = np.array([target])
                forward = _hockey_stick(lp, lq, ea)[0] >= _hockey_stick(lq, lp, ea)[0]
                pair = NeighbourPair(f, fp, k, 1) if forward else NeighbourPair(fp, f, k, -1)
                best = (val, v_sym, v2, pair)
        assert best is not None
        out[t_i], sym[t_i], st2[t_i] = best[0], best[1], best[2]
        pairs.append(best[3])
    return out, pairs, sym, st2


def _log_delta_measure(lp: np.ndarray, lq: np.ndarray, eps: float) -> float:
    ea = np.array([eps])
    d = max(_hockey_stick(lp, lq, ea)[0], _hockey_stick(lq, lp, ea)[0])
    return math.log(d) if d > 0 else -1e300


def worst_case_profile(
    sensitivities: Iterable[float] | float,
    sigmas: Iterable[float],
    epsilons: Iterable[float] | float,
    *,
    search: str = "full",
    seed: int = 0,
) -> WorstCaseProfile:
    """Worst-case δ(ε) of report-noisy-max over all neighbour pairs, with the maximising pair.

    The output distribution depends on f only through the differences f_j − f_k, and the
    profile takes the max over both directions, so a change of −s_k at f is the change +s_k at
    f − s_k e_k: it suffices to search over the changed coordinate k (one per distinct
    (s_k, σ_k)) and the N − 1 gaps f_j − f_k with f′_k = f_k + s_k. For each ε the search
    maximises log δ (stage 1) over a common gap for all other candidates — a 65-point scan
    over ±8·(√(σ_k² + max σ_j²) + s_k) refined by bounded Brent — then (``search="full"``,
    stage 2) Nelder–Mead over all N − 1 gaps from the symmetric optimum, from "one
    competitor, the others absent" and from two random starts, then (stage 3) a restart with
    a 10× smaller simplex; the gains of stages 2 and 3 are reported as convergence evidence.
    Each returned δ is exact for its pair, so it is a lower bound on the worst case (exact
    for N = 2, where it equals δ_μ(ε) with μ = max_k s_k/√(σ_1² + σ_2²)).

    >>> wc = worst_case_profile(0.5, [2 ** -0.5, 2 ** -0.5], [1.0], search="symmetric")
    >>> from dpaudit.conversions import gdp_log_delta
    >>> bool(abs(wc.deltas[0] / np.exp(gdp_log_delta(0.5, 1.0)) - 1) < 1e-9)  # N = 2: exact
    True
    """
    eps = _as_epsilons(epsilons)
    logd, pairs, sym, st2 = _worst_case(sensitivities, sigmas, eps, _log_delta_measure, search, seed)
    with np.errstate(under="ignore"):
        deltas, symd, st2d = np.exp(logd), np.exp(sym), np.exp(st2)
    return WorstCaseProfile(
        epsilons=eps, deltas=deltas, pairs=tuple(pairs), symmetric=symd, before_refinement=st2d,
        relative_refinement_gain=np.expm1(logd - st2), search=search,
    )


def worst_case_epsilon(
    sensitivities: Iterable[float] | float,
    sigmas: Iterable[float],
    delta: float,
    *,
    search: str = "full",
    seed: int = 0,
) -> WorstCaseProfile:
    """Worst-case ε at δ: the largest exact ε(δ) over neighbour pairs found by the search of
    :func:`worst_case_profile` (objective: ε of the pair instead of log δ). ``epsilons[0]`` is
    the value, ``deltas[0]`` = δ, ``pairs[0]`` the maximising pair.

    >>> wc = worst_case_epsilon(0.5, [2 ** -0.5, 2 ** -0.5], 1e-6, search="symmetric")
    >>> from dpaudit.conversions import gdp_epsilon
    >>> bool(abs(wc.epsilons[0] - gdp_epsilon(0.5, 1e-6)) < 1e-6)  # N = 2: exact
    True
    """
    delta = check_probability("delta", delta)
    val, pairs, sym, st2 = _worst_case(sensitivities, sigmas, np.array([delta]), _epsilon_at, search, seed)
    return WorstCaseProfile(
        epsilons=val, deltas=np.array([delta]), pairs=tuple(pairs), symmetric=sym, before_refinement=st2,
        relative_refinement_gain=val / st2 - 1.0, search=search,
    )


# ---------------------------------------------------------------------------------------
# 4. the GDP bound (correct) and 5. the published bounds (false)


def gdp_bound(sensitivities: Iterable[float] | float, sigmas: Iterable[float]) -> float:
    """μ = max_i s_i/σ_i: heterogeneous Gaussian report-noisy-max is μ-GDP.

    Proof. Fix neighbours f, f′; they differ only in one coordinate k, |f_k − f′_k| ≤ s_k.
    Write the release as A(Y) with Y = f_k + X_k and the randomised map
    A(y) = argmax(y at position k, f_j + X_j for j ≠ k), whose randomness (X_j)_{j≠k} and
    inputs f_j (j ≠ k) are the same under f and f′. Y is the one-dimensional Gaussian
    mechanism with sensitivity s_k and noise σ_k, which is (s_k/σ_k)-GDP (Dong, Roth & Su
    2022, Theorem 2.7), and GDP is closed under (randomised) post-processing (ibid.,
    Proposition 2.8). So T(M(f), M(f′)) ≥ G_{s_k/σ_k} ≥ G_μ since G_μ decreases in μ, for
    every neighbour pair. ∎  Equivalently M is (ε, δ_μ(ε))-DP for all ε ≥ 0. For N = 2 and
    σ_j → 0 (j ≠ k) the bound is attained (the release is a threshold test of Y, and the
    optimal test between N(0,1) and N(μ,1) is a threshold), so it cannot be improved in general.

    >>> gdp_bound(0.5, [2 ** -0.5, 1.0, 0.25])
    2.0
    """
    sig = _as_positive("sigmas", sigmas)
    s = _as_positive("sensitivities", sensitivities, sig.size)
    return float(np.max(s / sig))


def published_bound_theorem6(
    sensitivities: Iterable[float] | float, sigmas: Iterable[float], delta: float
) -> float:
    """ε of seed 004, Theorem 6, *as published* — FALSE (see docs/finding-rnm-gaussian.md).

    Verbatim: "Algorithm 4 is (ϵ, δ)-differentially private for
    ϵ ≥ ½ √(log((n−1)/(2δ))) max_{i∈[n]} (s_i/σ_i)" (the last line of the proof puts the max
    inside the square root, a typo; the theorem statement is used here). Returns the
    smallest such ε. Requires (n − 1)/(2δ) > 1.

    >>> round(published_bound_theorem6(0.5, [2 ** -0.5] * 5, 1e-2), 4)
    0.8138
    """
    sig = _as_positive("sigmas", sigmas)
    if sig.size < 2:
        raise ValueError(f"sigmas must have at least 2 entries (one per candidate), got {sig.size}")
    s = _as_positive("sensitivities", sensitivities, sig.size)
    n = sig.size
    delta = check_probability("delta", delta)
    if not delta < (n - 1) / 2.0:
        raise ValueError(f"delta must be in (0, (n-1)/2) = (0, {(n - 1) / 2.0}) for the bound to be defined, "
                         f"got {delta!r}")
    return 0.5 * math.sqrt(math.log((n - 1) / (2.0 * delta))) * float(np.max(s / sig))


def published_bound_theorem7(num_arms: int, delta: float) -> float:
    """Per-round ε of Thompson sampling, seed 004, Theorem 7, *as published* — FALSE.

    Verbatim: "At timestep t, the action of Algorithm 1 is (ϵ, δ)-differentially private for
    ϵ = 1/(2√2) √(log((N−1)/(2δ)))", i.e. Theorem 6 with s_i/σ_i = 1/√(n_i + 1) ≤ 1/√2.

    >>> round(published_bound_theorem7(10, 1e-6), 4)
    1.3838
    """
    check_integer("num_arms", num_arms, 2)
    delta = check_probability("delta", delta)
    if not delta < (num_arms - 1) / 2.0:
        raise ValueError(f"delta must be in (0, (num_arms-1)/2) for the bound to be defined, got {delta!r}")
    return math.sqrt(math.log((num_arms - 1) / (2.0 * delta))) / (2.0 * math.sqrt(2.0))
