"""The privacy of Thompson sampling with Gaussian priors, certified and as published.

Setting (Ou, Avella Medina & Cummings (2024), Algorithms 1–2): N arms, horizon T, rewards in
[0, 1]; neighbouring reward streams differ in one reward r_τ; the released output is the action
sequence. The (b, c) variant pre-pulls every arm b times (deterministic outputs) and then samples
θ_i ~ N(μ̂_i, c/(n_i + 1)) with μ̂_i = S_i/(n_i + 1), playing argmax_i θ_i.

**Per-round privacy.** Changing r_τ (observed on arm j) changes only S_j, by at most 1, so
μ̂_j moves by at most 1/(n_j + 1) while θ_j has standard deviation sqrt(c/(n_j + 1)); the
round's action is post-processing of that one Gaussian coordinate, hence
(1/sqrt(c(n_j + 1)))-GDP given the history. Rounds before r_τ is observed do not depend on it.

**Tight count (the toolkit's certified μ).** With b ≥ 1 the worst case puts r_τ in the
pre-pull phase of an arm that is never pulled again: n_j = b in every one of the T − bN
sampling rounds, so by adaptive GDP composition the algorithm is

    μ_tight = sqrt((T − bN)/(c(b + 1)))-GDP.

If r_τ instead falls in the sampling phase, at most T − bN − 1 later rounds see it, each with
n_j ≥ b + 1: sqrt((T − bN − 1)/(c(b + 2))), which is smaller. The pre-pull rounds release
nothing that depends on the data, so they cost nothing. With b = 0 the changed reward is
seen only after its own round, when n_j ≥ 1: at most T − 1 rounds at 1/sqrt(2c) each, so
μ_tight = sqrt((T − 1)/(2c)). Both cases are attained (up to the post-processing of the argmax)
by a stream in which arm j is never pulled after r_τ, so the count cannot be improved
without using the argmax structure.

**As published.** Theorem 4 states μ_paper = sqrt(T/(c(b + 1))): it counts the pre-pull
rounds as private and, at b = 0, allows n_j = 0 — so at (b, c) = (0, 1) it gives sqrt(T),
a factor √2 above the paper's own Theorem 3 (sqrt(T/2)) and the count above (sqrt((T−1)/2)).
Theorem 8 (RDP) states ε = αT/4 + log(1/δ)/(α − 1) for Algorithm 1 (per-round RDP α/4 with
Mironov's conversion); here it is generalised to (b, c) with per-round α·r²/2 and T
rounds, minimised over α in closed form. Corollary 1 ("standard DP") composes Theorem 7's
per-round ε₀ = ½·sqrt(log((N−1)/(2δ₀)))·r by advanced composition (r the per-round ratio,
1/√2 for Algorithm 1),
ε_TS = ε₀ sqrt(2T log(1/(δ_TS − Tδ₀))) + Tε₀(e^{ε₀} − 1), minimised over δ₀. Theorem 7
rests on Theorem 6, which :mod:`dpaudit.analyses.rnm_gaussian` checks against the exact privacy
profile of arbitrary score vectors; Theorem 7 itself is checked in its own setting — one round
of Algorithm 1 at the states it can reach — by :func:`theorem7_reachable_check`
(docs/finding-rnm-gaussian.md). The published numbers are reported for comparison only and
never certified.

Example:
    >>> from dpaudit.analyses.thompson_sampling import ThompsonConfig, thompson_report
    >>> cfg = ThompsonConfig(horizon=100_000, arms=5, prepulls=100, variance_scale=10)
    >>> round(cfg.mu_paper, 4), round(cfg.mu_tight, 4)
    (9.9504, 9.9255)
    >>> r = thompson_report(cfg, delta=1e-6)
    >>> r.best.method, round(r.best.value, 3), round(r.extras["paper"], 3)
    ('gdp', 95.621, 95.987)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.accounting import AccountingReport, account
from dpaudit.accounting.search import delta_from_epsilon
from dpaudit.conversions import gdp_delta, gdp_epsilon
from dpaudit.events import ComposedEvent, GaussianReportNoisyMaxEvent, NoOpEvent, PrivacyEvent
from dpaudit.numerics import minimise_zoom
from dpaudit.validation import check_integer, check_nonnegative, check_probability

__all__ = [
    "ThompsonConfig",
    "thompson_report",
    "theorem8_epsilon",
    "theorem8_delta",
    "corollary1_epsilon",
    "corollary1_delta",
    "epsilon_curves",
    "RoundState",
    "round_privacy",
    "Theorem7Check",
    "theorem7_reachable_check",
]


@dataclass(frozen=True)
class ThompsonConfig:
    """A (b, c)-modified Gaussian Thompson-sampling configuration (b = 0, c = 1: Algorithm 1)."""

    horizon: int
    arms: int
    prepulls: int = 0
    variance_scale: float = 1.0

    def __post_init__(self) -> None:
        T = check_integer("horizon", self.horizon, 1)
        N = check_integer("arms", self.arms, 2)
        b = check_integer("prepulls", self.prepulls, 0)
        c = check_nonnegative("variance_scale", self.variance_scale)
        if not c >= 1.0 or math.isinf(c):
            raise ValueError(f"variance_scale must be in [1, inf), got {self.variance_scale!r}")
        if b * N >= T:
            raise ValueError(
                f"prepulls*arms must be < horizon (pre-pulls leave no sampling rounds): "
                f"{b}*{N} >= {T}"
            )
        if b == 0 and T < 2:
            raise ValueError("horizon must be >= 2 when prepulls = 0")
        object.__setattr__(self, "horizon", T)
        object.__setattr__(self, "arms", N)
        object.__setattr__(self, "prepulls", b)
        object.__setattr__(self, "variance_scale", c)

    # -- per-round worst case --------------------------------------------------------------
    @property
    def worst_case_count(self) -> int:
        """n_j in the worst case: the changed arm's number of observations when it leaks."""
        return max(self.prepulls, 1)

    @property
    def per_round_mu(self) -> float:
        scale = self.variance_scale * (self.worst_case_count + 1)
        if math.isinf(scale):  # c near the largest double: the product overflows, its roots do not
            return 1.0 / math.sqrt(self.variance_scale) / math.sqrt(self.worst_case_count + 1) * (1 + 1e-15)
        return 1.0 / math.sqrt(scale)

    @property
    def private_rounds(self) -> int:
        """Rounds whose output can depend on the changed reward, in the worst case."""
        if self.prepulls == 0:
            return self.horizon - 1
        return self.horizon - self.prepulls * self.arms

    @property
    def mu_tight(self) -> float:
        """The toolkit's certified GDP μ (see the module docstring for the proof)."""
        return math.sqrt(self.private_rounds) * self.per_round_mu * (1 + 1e-15)

    @property
    def mu_paper(self) -> float:
        """Ou, Avella Medina & Cummings (2024), Theorem 4: sqrt(T/(c(b+1)))."""
        scale = self.variance_scale * (self.prepulls + 1)
        if math.isinf(scale):  # c near the largest double: the product overflows, its roots do not
            return math.sqrt(self.horizon) / math.sqrt(self.variance_scale) / math.sqrt(self.prepulls + 1)
        return math.sqrt(self.horizon / scale)

    @property
    def published_mu(self) -> tuple[float, str]:
        """The paper's own GDP claim for this configuration and where it is stated: Theorem 3's
        sqrt(T/2) for Algorithm 1 ((b, c) = (0, 1)), Theorem 4's sqrt(T/(c(b+1))) otherwise."""
        if self.prepulls == 0 and self.variance_scale == 1.0:
            return math.sqrt(self.horizon / 2.0), "Theorem 3"
        return self.mu_paper, "Theorem 4"

    def round_event(self) -> GaussianReportNoisyMaxEvent:
        """One sampling round in the worst case: Gaussian report-noisy-max over the arms with
        sensitivities 1/(n+1) and σ = sqrt(c/(n+1)), n = the changed arm's count."""
        n = self.worst_case_count
        return GaussianReportNoisyMaxEvent(
            sensitivities=(1.0 / (n + 1),) * self.arms,
            sigmas=(math.sqrt(self.variance_scale / (n + 1)),) * self.arms,
        )

    def event(self) -> PrivacyEvent:
        """The whole run: data-independent pre-pulls, then the private sampling rounds."""
        rounds = self.round_event().repeat(self.private_rounds)
        if self.prepulls == 0:
            return rounds
        return ComposedEvent((NoOpEvent().repeat(self.prepulls * self.arms), rounds))

# ---------------------------------------------------------------------------------------
# published bounds (for comparison only)


def _rdp_coefficient(cfg: ThompsonConfig) -> float:
    """Per-round RDP γ(α) = k·α with the per-round ratio of Lemma 2/4: k = ratio²/2, i.e. 1/4 for
    Algorithm 1 (ratio 1/√2, Theorem 8) and 1/(2c(b+1)) for b ≥ 1."""
    return cfg.per_round_mu**2 / 2.0


def theorem8_epsilon(cfg: ThompsonConfig, delta: float) -> float:
    """Theorem 8: ε = min_α kαT + log(1/δ)/(α − 1) = kT + 2 sqrt(kT log(1/δ))."""
    delta = check_probability("delta", delta)
    kt = _rdp_coefficient(cfg) * cfg.horizon
    return kt + 2.0 * math.sqrt(kt * math.log(1.0 / delta))


def theorem8_delta(cfg: ThompsonConfig, epsilon: float) -> float:
    """Inverse of :func:`theorem8_epsilon`: δ = exp(−(ε − kT)²/(4kT)) for ε ≥ kT, else 1 (0 when
    the exponent is below the smallest float, without squaring a huge ε)."""
    epsilon = check_nonnegative("epsilon", epsilon)
    kt = _rdp_coefficient(cfg) * cfg.horizon
    if epsilon <= kt:
        return 1.0
    z = (epsilon - kt) / (2.0 * math.sqrt(kt))
    return 0.0 if z > 40.0 else math.exp(-z * z)


def _theorem7_eps0(cfg: ThompsonConfig, delta0: float) -> float:
    """Theorem 6 with max s_i/σ_i = the per-round ratio (Theorem 7: 1/(2√2)·sqrt(log((N−1)/(2δ₀))))."""
    return 0.5 * math.sqrt(math.log((cfg.arms - 1) / (2.0 * delta0))) * cfg.per_round_mu


def corollary1_epsilon(cfg: ThompsonConfig, delta: float) -> float:
    """Corollary 1 ("standard DP"), minimised over the per-round δ₀ ∈ (0, δ/T) (a grid of log δ₀,
    then zoomed: :func:`dpaudit.numerics.minimise_zoom`)."""
    delta = check_probability("delta", delta)
    T = cfg.horizon
    hi = min(delta / T, (cfg.arms - 1) / 2.0) * (1 - 1e-12)
    if not hi > 0.0:  # δ/T underflows (δ near 5e-324): no per-round δ₀ is left, the bound is vacuous
        return math.inf

    def value(log_d0: float) -> float:
        d0 = math.exp(log_d0)
        slack = delta - T * d0
        if not (d0 > 0.0 and slack > 0.0):  # subnormal rounding at the ends of the search
            return math.inf
        e0 = _theorem7_eps0(cfg, d0)
        return e0 * math.sqrt(2.0 * T * math.log(1.0 / slack)) + T * e0 * math.expm1(e0)

    grid = np.linspace(math.log(hi) - 80.0, math.log(hi), 400)
    _, best = minimise_zoom(lambda xs: np.array([value(float(x)) for x in xs]), grid)
    return best


def corollary1_delta(cfg: ThompsonConfig, epsilon: float) -> float:
    """Smallest δ_TS at which :func:`corollary1_epsilon` reaches ``epsilon`` (1.0 if none)."""
    return delta_from_epsilon(lambda d: corollary1_epsilon(cfg, d), epsilon, iters=60)


# ---------------------------------------------------------------------------------------
# reports


def thompson_report(
    cfg: ThompsonConfig,
    *,
    delta: float | None = None,
    epsilon: float | None = None,
    methods: list[str] | None = None,
) -> AccountingReport:
    """Every certified bound for ``cfg`` plus the published ones as extras
    (``paper`` = Theorem 4 GDP, ``paper_rdp`` = Theorem 8, ``paper_standard`` = Corollary 1)."""
    if delta is not None:
        delta = check_probability("delta", delta)
        extras = {
            "paper": float(gdp_epsilon(cfg.mu_paper, delta)),
            "paper_rdp": theorem8_epsilon(cfg, delta),
            "paper_standard": corollary1_epsilon(cfg, delta),
        }
    elif epsilon is not None:
        epsilon = check_nonnegative("epsilon", epsilon)
        extras = {
            "paper": float(gdp_delta(cfg.mu_paper, epsilon)),
            "paper_rdp": theorem8_delta(cfg, epsilon),
            "paper_standard": corollary1_delta(cfg, epsilon),
        }
    else:
        raise ValueError("give exactly one of delta (to get epsilon) or epsilon (to get delta)")
    return account(cfg.event(), delta=delta, epsilon=epsilon, methods=methods, extras=extras)


def epsilon_curves(cfg: ThompsonConfig, deltas: np.ndarray) -> dict[str, np.ndarray]:
    """ε(δ) for the certified GDP (tight μ), the paper's GDP, Theorem 8 and Corollary 1 —
    the curves of Figures 1 and 4 of Ou, Avella Medina & Cummings (2024)."""
    deltas = np.asarray(deltas, dtype=float)
    return {
        "gdp": np.array([gdp_epsilon(cfg.mu_tight, d) for d in deltas]),
        "paper": np.array([gdp_epsilon(cfg.mu_paper, d) for d in deltas]),
        "paper_rdp": np.array([theorem8_epsilon(cfg, d) for d in deltas]),
        "paper_standard": np.array([corollary1_epsilon(cfg, d) for d in deltas]),
    }


# ---------------------------------------------------------------------------------------
# Ou, Avella Medina & Cummings (2024), Theorem 7, in its own setting: one round of Algorithm 1
# over reachable states


@dataclass(frozen=True)
class RoundState:
    """A state of Algorithm 1 (Gaussian-prior Thompson sampling) before one round, as seen by
    two neighbouring reward streams that differ in one reward of arm 0.

    ``counts[i]`` = n_i (arm i's pulls so far; n_0 ≥ 1 since the changed reward was observed),
    ``means[i]`` = μ̂_i = S_i/(n_i + 1) with rewards in [0, 1], so μ̂_i ∈ [0, n_i/(n_i + 1)]. The
    neighbour has S′_0 = S_0 + 1 (the largest change of one reward), hence
    μ̂′_0 = μ̂_0 + 1/(n_0 + 1) ≤ n_0/(n_0 + 1). The round samples θ_i ~ N(μ̂_i, 1/(n_i + 1)) and
    releases argmax_i θ_i: Gaussian report-noisy-max with s_i = 1/(n_i + 1), σ_i = 1/√(n_i + 1)
    (Ou, Avella Medina & Cummings (2024), Algorithm 1 and Appendix C).
    """

    counts: tuple[int, ...]
    means: tuple[float, ...]

    def __post_init__(self) -> None:
        counts = tuple(check_integer(f"counts[{i}]", c, 0) for i, c in enumerate(self.counts))
        if len(counts) < 2:
            raise ValueError(f"counts must have at least 2 entries (one per arm), got {len(counts)}")
        if counts[0] < 1:
            raise ValueError(
                f"counts[0] must be >= 1 (arm 0 holds the changed, observed reward), got {counts[0]}")
        means = tuple(float(m) for m in self.means)
        if len(means) != len(counts):
            raise ValueError(f"means must have {len(counts)} entries, got {len(means)}")
        for i, (n, m) in enumerate(zip(counts, means)):
            top = (n - 1) / (n + 1) if i == 0 else n / (n + 1)
            if not 0.0 <= m <= top + 1e-12:
                raise ValueError(f"means[{i}] must be in [0, {top:.6g}] to be reachable, got {m!r}")
        object.__setattr__(self, "counts", counts)
        object.__setattr__(self, "means", means)

    def release(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(f, f′, σ): the report-noisy-max values on the two streams and the noise."""
        n = np.array(self.counts, dtype=float)
        f = np.array(self.means)
        fp = f.copy()
        fp[0] += 1.0 / (n[0] + 1.0)
        return f, fp, 1.0 / np.sqrt(n + 1.0)


def round_privacy(state: RoundState, epsilon: float) -> tuple[float, float]:
    """(δ at ``epsilon``, pure ε) of one round between the two neighbouring streams of ``state``,
    exactly (both directions; :func:`dpaudit.analyses.rnm_gaussian.exact_privacy_profile`).

    >>> d, e = round_privacy(RoundState((1, 10**6), (0.0, 0.999999)), 0.6993)
    >>> round(d, 4), round(e, 4)  # the competitor at its largest reachable mean
    (0.0815, 1.1146)
    """
    from dpaudit.analyses.rnm_gaussian import exact_privacy_profile

    f, fp, sig = state.release()
    prof = exact_privacy_profile(f, fp, sig, check_nonnegative("epsilon", epsilon))
    return float(prof.deltas[0]), float(prof.pure_epsilon)


@dataclass(frozen=True)
class Theorem7Check:
    """The largest exact δ (at the published ε) and pure ε found over reachable states, with
    the states that attain them; ``gdp_delta`` is the proved upper bound δ_{1/√2}(ε)."""

    num_arms: int
    delta_claimed: float
    epsilon_published: float
    delta_exact: float
    witness: RoundState
    pure_epsilon: float
    pure_witness: RoundState
    gdp_delta: float

    @property
    def violated(self) -> bool:
        return self.delta_exact > self.delta_claimed


def theorem7_reachable_check(
    num_arms: int,
    delta: float,
    *,
    other_counts: tuple[int, ...] = (0, 1, 2, 3, 5, 10, 20, 50, 100, 10**3, 10**4, 10**6),
    changed_counts: tuple[int, ...] = (1, 2),
    starts: int = 2,
    seed: int = 0,
) -> Theorem7Check:
    """Theorem 7 of Ou, Avella Medina & Cummings (2024) checked in its own setting: one round of
    Algorithm 1 over the states the algorithm can reach (:class:`RoundState`), not arbitrary
    score vectors.

    The search: for every count n_0 of the changed arm in ``changed_counts`` and every two-group
    count profile of the other arms — a first competitor with count a and the remaining N − 2
    arms sharing a count b, a, b ∈ ``other_counts`` — the posterior means (μ̂_0, the first
    competitor's, the group's) are optimised inside their reachable box by L-BFGS-B, for δ at the
    published ε and for the pure ε, from the corner where the competitors sit at their largest
    means and from ``starts`` − 1 random points; the best state for δ is then refined with every
    arm's mean free. Every reported value is exact for its witness state (a certified lower
    bound on the worst case over reachable states).

    >>> chk = theorem7_reachable_check(2, 1e-2, other_counts=(10**6,), changed_counts=(1,), starts=1)
    >>> round(chk.delta_exact, 5), chk.violated, round(chk.gdp_delta, 5)
    (0.08205, True, 0.08205)
    """
    from scipy import optimize as opt

    from dpaudit.analyses.rnm_gaussian import published_bound_theorem7

    n_arms = check_integer("num_arms", num_arms, 2)
    delta = check_probability("delta", delta)
    eps = published_bound_theorem7(n_arms, delta)
    rng = np.random.default_rng(seed)
    best: dict[int, tuple[float, RoundState]] = {}

    def consider(st: RoundState) -> None:
        for which, value in enumerate(round_privacy(st, eps)):
            if which not in best or value > best[which][0]:
                best[which] = (value, st)

    profiles = sorted({(a,) + (b,) * (n_arms - 2) for a in other_counts for b in other_counts})
    for n0 in changed_counts:
        for prof in profiles:
            counts = (int(n0),) + tuple(int(c) for c in prof)
            n = np.array(counts, dtype=float)
            top = np.concatenate([[(n[0] - 1) / (n[0] + 1)], n[1:] / (n[1:] + 1)])
            groups = 3 if n_arms > 2 else 2
            gtop = top[:groups]

            def state(x: np.ndarray, counts: tuple[int, ...] = counts, top: np.ndarray = top) -> RoundState:
                x = np.clip(x, 0.0, top[: x.size])
                full = np.concatenate([x, np.full(len(counts) - x.size, x[-1])])
                return RoundState(counts, tuple(np.minimum(full, top)))

            x0s = [np.concatenate([[0.0], gtop[1:]])]
            x0s += [rng.uniform(0.0, 1.0, groups) * gtop for _ in range(max(starts, 1) - 1)]
            for which in (0, 1):
                for x0 in x0s:
                    res = opt.minimize(lambda x, w=which: -round_privacy(state(x), eps)[w], x0,
                                       method="L-BFGS-B", bounds=list(zip(np.zeros(groups), gtop)),
                                       options={"maxiter": 40})
                    consider(state(res.x))
                    consider(state(x0))
    # refine the best δ state with every mean free
    st0 = best[0][1]
    n = np.array(st0.counts, dtype=float)
    top = np.concatenate([[(n[0] - 1) / (n[0] + 1)], n[1:] / (n[1:] + 1)])
    res = opt.minimize(lambda x: -round_privacy(RoundState(st0.counts, tuple(np.clip(x, 0, top))), eps)[0],
                       np.array(st0.means), method="L-BFGS-B", bounds=list(zip(np.zeros(n.size), top)),
                       options={"maxiter": 40})
    consider(RoundState(st0.counts, tuple(np.clip(res.x, 0, top))))
    return Theorem7Check(
        num_arms=n_arms, delta_claimed=delta, epsilon_published=eps,
        delta_exact=best[0][0], witness=best[0][1], pure_epsilon=best[1][0], pure_witness=best[1][1],
        gdp_delta=float(gdp_delta(1.0 / math.sqrt(2.0), eps)),
    )
