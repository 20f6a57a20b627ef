"""Heterogeneous Gaussian report-noisy-max, exactly.

The mechanism of Ou, Avella Medina & Cummings (2024), Appendix C, Algorithm 4, releases
``argmax_i (f_i + X_i)`` with independent ``X_i ~ N(0, σ_i²)``. Neighbouring query vectors f, f′
differ in at most one coordinate k, by at most s_k.

On the output distribution P(argmax = i) (1-D quadrature in log space,
:mod:`dpaudit.analyses.gaussian_argmax`) this module computes, without sampling,

* the exact privacy profile δ(ε) (hockey-stick divergence of the two discrete output
  distributions, both directions) and the exact pure ε of one neighbour pair
  (:func:`exact_privacy_profile`, :func:`exact_epsilon`);
* the worst case over neighbour pairs, by optimisation over the query gaps
  (:func:`worst_case_profile`, :func:`worst_case_epsilon`), returning the maximising
  adversarial pair;
* the GDP bound μ = max_i s_i/σ_i (:func:`gdp_bound`), which is correct;
* the bounds of Ou, Avella Medina & Cummings (2024) *as published*
  (:func:`published_bound_theorem6`, :func:`published_bound_theorem7`), which the exact profile
  shows to be false (see ``docs/finding-rnm-gaussian.md``).

Example (one Thompson-sampling round, N = 2 arms each pulled once: s = 1/2, σ = 1/√2):
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

from dpaudit.analyses.gaussian_argmax import argmax_log_distribution
from dpaudit.validation import check_finite_array, check_integer, check_positive_array, check_probability

__all__ = [
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
    f = check_finite_array("values", values)
    fp = check_finite_array("values_prime", values_prime)
    if fp.size != f.size:
        raise ValueError(f"values_prime must have {f.size} entries, got {fp.size}")
    sig = check_positive_array("sigmas", sigmas, f.size)
    eps = _as_epsilons(epsilons)
    return _profile_from_logs(argmax_log_distribution(f, sig), argmax_log_distribution(fp, sig), eps)


def _epsilon_at(log_p: np.ndarray, log_q: np.ndarray, delta: float) -> float:
    """Smallest ε ≥ 0 with max-direction hockey-stick ≤ δ (δ(ε) is continuous, decreasing).

    Brent's method to 1e-14 (not :func:`dpaudit.numerics.bisect`: this is an exact value, not a
    certified side, and the worst-case search calls it thousands of times).
    """
    from scipy import optimize

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
    f = check_finite_array("values", values)
    fp = check_finite_array("values_prime", values_prime)
    if fp.size != f.size:
        raise ValueError(f"values_prime must have {f.size} entries, got {fp.size}")
    sig = check_positive_array("sigmas", sigmas, f.size)
    return _epsilon_at(argmax_log_distribution(f, sig), argmax_log_distribution(fp, sig), delta)


# ---------------------------------------------------------------------------------------
# 2. worst case over neighbour pairs


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
    from scipy import optimize
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
    sig = check_positive_array("sigmas", sigmas)
    if sig.size < 2:
        raise ValueError(f"sigmas must have at least 2 entries (one per candidate), got {sig.size}")
    s = check_positive_array("sensitivities", sensitivities, sig.size)
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
# 3. the GDP bound (correct) and 4. the published bounds (false)


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
    sig = check_positive_array("sigmas", sigmas)
    s = check_positive_array("sensitivities", sensitivities, sig.size)
    return float(np.max(s / sig))


def published_bound_theorem6(
    sensitivities: Iterable[float] | float, sigmas: Iterable[float], delta: float
) -> float:
    """ε of Ou, Avella Medina & Cummings (2024), Theorem 6, *as published* — FALSE.

    See ``docs/finding-rnm-gaussian.md``.

    Verbatim: "Algorithm 4 is (ϵ, δ)-differentially private for
    ϵ ≥ ½ √(log((n−1)/(2δ))) max_{i∈[n]} (s_i/σ_i)" (the last line of the proof puts the max
    inside the square root, a typo; the theorem statement is used here). Returns the
    smallest such ε. Requires (n − 1)/(2δ) > 1.

    >>> round(published_bound_theorem6(0.5, [2 ** -0.5] * 5, 1e-2), 4)
    0.8138
    """
    sig = check_positive_array("sigmas", sigmas)
    if sig.size < 2:
        raise ValueError(f"sigmas must have at least 2 entries (one per candidate), got {sig.size}")
    s = check_positive_array("sensitivities", sensitivities, sig.size)
    n = sig.size
    delta = check_probability("delta", delta)
    if not delta < (n - 1) / 2.0:
        raise ValueError(f"delta must be in (0, (n-1)/2) = (0, {(n - 1) / 2.0}) for the bound to be defined, "
                         f"got {delta!r}")
    return 0.5 * math.sqrt(math.log((n - 1) / (2.0 * delta))) * float(np.max(s / sig))


def published_bound_theorem7(num_arms: int, delta: float) -> float:
    """Per-round ε of Thompson sampling (Ou, Avella Medina & Cummings 2024, Theorem 7) *as published*: FALSE.

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

