"""Numerical privacy-loss-distribution (PLD) composition, certified in floating point.

A composition whose only releases are Gaussian-type has a Gaussian privacy loss N(μ²/2, μ²) with
μ = sqrt(Σ μ_i²) (Dong, Roth & Su 2022, Cor. 3.3; Sommer, Meiser & Mohammadi 2019, §5: the PLD
of the Gaussian mechanism is Gaussian and closed under composition), so its hockey-stick
divergence is the GDP profile δ_μ(ε) exactly (ibid. Cor. 2.13; dp-accounting's
``GaussianPrivacyLoss.get_delta_for_epsilon`` is the same formula): it is answered in closed form
through :mod:`dpaudit.accounting.gdp` — no grid, no FFT, no dp-accounting import, milliseconds
for any μ and any number of steps. Everything below concerns compositions with other leaves.

Each leaf is turned into its single-step pessimistic PLD by dp-accounting (Meiser & Mohammadi
2018; Koskela, Jälkö & Honkela 2020; Doroshenko et al. 2022, "Connect the dots": in exact
arithmetic the discretised δ(ε) is an upper bound on the true hockey-stick divergence for every
ε). Gaussian-type leaves are first merged into one Gaussian with μ = sqrt(Σ μ_i²), which is exact
(Dong, Roth & Su 2022, Cor. 3.3); Laplace → ``from_laplace_mechanism``; k-ary randomized response
→ ``from_randomized_response``; discrete Laplace → ``from_discrete_laplace_mechanism``; binary
randomized response, any other pure leaf and any pure ε
below 1e-6 → ``from_privacy_parameters(ε, 0)`` (the randomized-response PLD, which dominates
every ε-DP mechanism); (ε, δ) leaves → ``from_privacy_parameters(ε, δ)``; a Poisson-subsampled
Gaussian (q < 1; never merged with the Gaussian part, whose closed form it does not have) →
dp-accounting's ``from_gaussian_mechanism(σ/s, sampling_prob=q)`` construction (Koskela, Jälkö &
Honkela 2020; its two directions differ, so both are composed), with its δ(ε) on the grid computed
vectorised by :mod:`dpaudit.accounting.pld_sampled` (6× faster; the same PMFs to 1e-11),
with the noise multiplier rounded down, μ = s/σ within
[1e-100, 20], and the composed width sized by the central-limit GDP parameter
q·sqrt(k(e^{μ²} − 1)) (Bu, Dong, Long & Su 2020, Thm 5) plus one step's range (a memory estimate;
the composed grid is checked where it is built). The compositions
themselves — a leaf repeated k times, and the product of the parts — are computed by FFT in
extended precision (``np.longdouble``, unit roundoff u = 2^-64 on x86-64) in
:mod:`dpaudit.accounting.pld_pmf`, separately for the "remove" and "add" directions; δ is the
larger of the two.

Bounded memory. The grid interval Δ is 1e-4 unless the composed loss range would need more
points than a budget: W/Δ ≤ 2·10⁶ with W = (μ² + 20μ) + Σ_i 2k_iε_i (an upper bound on the support
of the composition), and (μ² + 20μ)/Δ ≤ 3·10⁵ for the Gaussian's connect-the-dots construction.
Δ then widens (still pessimistic; the accuracy degrades to ≈ Σ_i k_iΔ), so one evaluation stays
below ~0.3 GB at any μ (0.16 GB peak measured at μ = 1000 and 5000; dp-accounting's own
construction needed 0.7 / 1.65 / 3.15 GB at μ = 300 / 1000 / 2000). In a composition with other
leaves, a Gaussian part above μ ≈ 5.5·10³ (Δ > 100) is outside the domain (a Gaussian-only
composition is answered in closed form at any μ). So is a composition without a Gaussian part
whose Δ, widened for memory, exceeds every per-step ε (e.g. 10⁸ Laplace steps of ε = 0.001:
Δ = 0.1): every step's loss would be rounded up to a whole interval (mean ≥ Δ/2 > ε_i/2 per
step), so the answer could not beat about half of basic composition; this is decided before any
single-step PLD is built.

Certified from floating point. Two margins absorb the rounding of the discretised arithmetic:

* a loss margin m ≥ the amount by which a discretised loss (index·Δ, the ceil of a rounded
  quotient) can fall below the true loss: a few ulps per step, m = 8e-16·(Σ_i k_iε_i + μ² + 20μ)
  + 4e-15·W + 1e-300; and
* a δ margin η. The FFT of n points has normwise relative error ≤ c·log₂n·u (Higham 2002,
  Thm 24.2; c = 5 here). A k-fold power of the transform multiplies the input error by at most k
  (|ŷ_j| ≤ 1), so a self-composition has ℓ₂ error ≤ c·log₂n·u·(k‖x‖₂ + ‖x^{*k}‖₂); a product of
  two parts adds c·log₂n·u·(‖a‖₂ + ‖b‖₂ + ‖a*b‖₂) to the parts' own errors (Young: ‖Δa*b‖₂ ≤
  ‖Δa‖₂); the stored float64 probabilities add a relative 2^-53. The δ sum over L entries then
  errs by at most √L times the ℓ₂ error (Cauchy–Schwarz), plus 1e-14 for the summation and the
  single-step constructions (measured ≤ 1e-16), plus a relative 1e-10.

A k-fold self-composition has a sharper, componentwise bound (:func:`~dpaudit.accounting.pld_pmf.power_bound`:
the power amplifies the transform's error only at frequencies where |ŷ| ≈ 1, and only those few
frequencies are raised at all), so each FFT runs in double precision (3–4× faster) where its
error costs at most 1e-6 of the query's δ and in long double elsewhere; the inverse transform of
a power, whose error is not amplified, always in double.

So ε(δ) = ε_PLD((δ − η)/(1 + 1e-10)) + m and δ(ε) = (1 + 1e-10)·δ_PLD(ε − m) + η. Domain: not
applicable when δ ≤ η (the numerical floor of the composition — e.g. δ = 1e-300; ≈ 1e-14 for
a single step and about k·1e-18·√L for k-fold compositions), for a per-step ε above 500
(dp-accounting overflows e^ε near 709), or where the (ε, δ) leaves alone spend δ.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from dpaudit.accounting import gdp, progress
from dpaudit.accounting.binning import binned_up
from dpaudit.accounting.composition import (
    Composition,
    NotApplicable,
    Steps,
    check_private,
    leaf_mu,
    no_bound,
    pure_epsilon,
    sampled_noise_multiplier,
)
from dpaudit.accounting.pld_pmf import (
    TAIL_TRUNCATION,
    Pmf,
    coarsen,
    compose_all,
    delta_at,
    epsilon_for,
    grid_deltas,
    losses_of,
    self_compose,
    self_convolve_bounds,
)
from dpaudit.accounting.pld_sampled import sampled_gaussian_pmfs
from dpaudit.accounting.pld_steps import SMALL_EPSILON, dense_pmfs, single_step_pmfs
from dpaudit.events import (
    ApproxDpEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    PureDpEvent,
    RandomizedResponseEvent,
)

NAME = "pld"

BASE_INTERVAL = 1e-4
GRID_BUDGET = 2_000_000
GAUSSIAN_GRID_BUDGET = 300_000
MAX_STEP_EPSILON = 500.0
MAX_INTERVAL = 100.0  # dp-accounting's connect-the-dots evaluates expm1(Δ): overflow near 709
MAX_SAMPLED_MU = 20.0  # a Poisson-subsampled Gaussian's composed width uses e^{μ²}
MIN_MU = 1e-100  # σ = 1/μ; σ² overflows near μ = 1e-154

_REL = 1e-10
_FLOOR_SHARE = 1e-6  # the share of δ the double-precision error floor may take
_ABS = 1e-14
MAX_LEAVES = 64  # distinct non-Gaussian leaves composed one by one; beyond, binned per family
_ACCURACY: ContextVar[float] = ContextVar("dpaudit_pld_accuracy", default=BASE_INTERVAL)


def accuracy() -> float:
    """The PLD grid interval asked for (:data:`BASE_INTERVAL` unless :func:`accuracy_of` is active)."""
    return _ACCURACY.get()


@contextmanager
def accuracy_of(interval: float) -> Iterator[None]:
    """Within the block the PLD grid interval — its accuracy in ε per composition, about — is
    ``interval`` (in [1e-6, 1]) instead of 1e-4; it still widens where memory requires.

    >>> from dpaudit.accounting import epsilon_under
    >>> from dpaudit.events import LaplaceEvent
    >>> with accuracy_of(1e-3):
    ...     coarse = epsilon_under("pld", LaplaceEvent.from_epsilon(0.1).repeat(100), 1e-5)
    >>> fine = epsilon_under("pld", LaplaceEvent.from_epsilon(0.1).repeat(100), 1e-5)
    >>> fine <= coarse < fine + 0.05
    True
    """
    if not 1e-6 <= interval <= 1.0:
        raise ValueError(f"pld accuracy must be in [1e-06, 1], got {interval!r}")
    token = _ACCURACY.set(float(interval))
    try:
        yield
    finally:
        _ACCURACY.reset(token)
MAX_BINS = 48
EXACT_TOP = 16


# ---------------------------------------------------------------------------------------
# the plan: interval, margins


def _gauss_width(mu: float) -> float:
    return mu * mu + 20.0 * mu


def _sampled_widths(mu: float, q: float, count: int) -> tuple[float, float]:
    """(single-step width, composed width) of ``count`` Poisson-subsampled Gaussian steps: the
    single step's loss range is within the Gaussian's (μ² + 20μ); the composition's is sized by
    its central-limit GDP parameter q·sqrt(count·(e^{μ²} − 1)) (Bu, Dong, Long & Su 2020,
    Thm 5), plus one single step's range for the tails. A memory estimate only: the grid is
    checked again where it is built (:func:`~dpaudit.accounting.pld_pmf.self_compose`)."""
    with np.errstate(over="ignore"):
        clt = q * math.sqrt(count) * math.sqrt(math.expm1(mu * mu)) if mu < 26.0 else math.inf
    single = _gauss_width(mu)
    return single, single + _gauss_width(clt)


def _probed_width(leaf: PoissonSampledEvent, count: int, noise_multiplier: float, interval: float) -> float:
    """The loss range of ``count`` Poisson-subsampled Gaussian steps outside which each direction's
    composed PMF has tails of at most TAIL_TRUNCATION, measured on a grid of ``interval`` (Chernoff
    bounds of the single-step PMF, as where the composition is built), with 25 % to spare for a
    finer grid (the window is checked again where it is built)."""
    pmfs = sampled_gaussian_pmfs(noise_multiplier, leaf.sampling_probability, interval)
    bounds = [self_convolve_bounds(p.probs, count, TAIL_TRUNCATION) for p in pmfs]
    return 1.25 * max(hi - lo + 1 for lo, hi in bounds) * interval


def _leaves(comp: Composition) -> tuple[float, list[tuple[PrivacyEvent, int, float, float]],
                                        list[tuple[PoissonSampledEvent, int, float, float]]]:
    """(Gaussian μ, [(leaf, count, ε, δ)], [(sampled leaf, count, noise multiplier, μ)]) with the
    domain checks."""
    check_private(comp)
    mu = comp.gaussian_mu()
    if 0 < mu < MIN_MU:
        raise NotApplicable(f"the composed Gaussian mu={mu:.3g} is below the PLD domain "
                            f"(at least {MIN_MU:g}); gdp is exact for Gaussian compositions")
    st = comp.steps()
    sampled = []
    for leaf, count in st.other:
        if not isinstance(leaf, PoissonSampledEvent):
            raise no_bound(leaf, "PLD")
        nm, m = sampled_noise_multiplier(leaf), leaf_mu(leaf.event)
        if not MIN_MU <= m <= MAX_SAMPLED_MU:
            raise NotApplicable(
                f"a Poisson-subsampled Gaussian with mu={m:.3g} (sigma/sensitivity={nm:.3g}) is outside "
                f"the PLD domain (mu in [{MIN_MU:g}, {MAX_SAMPLED_MU:g}])"
            )
        sampled.append((leaf, int(count), nm, m))
    sampled.sort(key=lambda x: (x[0].sampling_probability, x[2], x[1]))
    distinct = sum(g.eps.size for g in st.pure) + st.approx_eps.size  # every other leaf is sampled
    if distinct > MAX_LEAVES:
        rest = _binned_leaves(st)
    else:  # canonical order: the composed grid must not depend on the order of the leaves
        rest = [(leaf, c) for leaf, c in comp.gaussian_part()[2] if not isinstance(leaf, PoissonSampledEvent)]
        rest.sort(key=lambda lc: (type(lc[0]).__name__, repr(lc[0]), lc[1]))
    out = []
    for leaf, count in rest:
        e = pure_epsilon(leaf)
        d = 0.0
        if e is None and isinstance(leaf, ApproxDpEvent):
            e, d = leaf.epsilon, leaf.delta
        if e is None:
            raise NotApplicable(f"dp-accounting has no PLD for {type(leaf).__name__}")
        if e > MAX_STEP_EPSILON:
            raise NotApplicable(
                f"a per-step epsilon of {e:.6g} is outside the PLD domain (at most {MAX_STEP_EPSILON:g}: "
                "dp-accounting overflows e^eps near 709)"
            )
        out.append((leaf, int(count), float(e), float(d)))
    return mu, out, sampled


def _binned_leaves(st: Steps) -> list[tuple[PrivacyEvent, int]]:
    """More than :data:`MAX_LEAVES` distinct non-Gaussian leaves: each pure family in at most
    :data:`MAX_BINS` + 1 bins charged at their largest ε (:func:`binned_up`; every step's pair of
    outputs is a post-processing of its bin's, so the hockey-stick divergence only grows), as
    Laplace (scale rounded down), k-ary randomized response or pure ε-DP leaves."""
    if st.approx_eps.size > MAX_LEAVES:
        raise NotApplicable(f"more than {MAX_LEAVES} distinct (epsilon, delta > 0) events")
    out: list[tuple[PrivacyEvent, int]] = []
    for g in st.pure:
        eps, counts = binned_up(g.eps, g.counts, MAX_BINS, EXACT_TOP)
        for e, c in zip(eps.tolist(), counts.tolist()):
            if e == 0:
                continue
            if g.family == "laplace":
                leaf: PrivacyEvent = LaplaceEvent(scale=math.nextafter(1.0 / e, 0.0), sensitivity=1.0)
            elif g.family == "rr":
                leaf = RandomizedResponseEvent(e, g.k)
            else:
                leaf = PureDpEvent(e)
            out.append((leaf, int(c)))
    out.extend((ApproxDpEvent(e, d), int(c)) for e, d, c in
               zip(st.approx_eps.tolist(), st.approx_delta.tolist(), st.approx_counts.tolist()))
    return out


def _leaf_width(k: int, e: float) -> float:
    """The loss range that ``k`` steps of a leaf bounded by ε occupy, up to tails of 1e-30: the
    support 2kε, or (Hoeffding; each step's loss lies in [−ε, ε] with mean at most ε(e^ε − 1))
    the mean plus 12·ε·sqrt(k) on either side, whichever is smaller. A memory estimate only: the
    composition's grid is cut by Chernoff bounds where it is built."""
    with np.errstate(over="ignore"):
        mean = k * e * math.expm1(min(e, 700.0))
    return min(2.0 * k * e, mean + 24.0 * e * math.sqrt(k))


def _levels(e: float, width: float, interval: float) -> int:
    """How many halvings c of the grid interval a leaf of per-step ε gets for its single step (at
    least 8 points across [−ε, ε] when the composition fits 4·GRID_BUDGET points at Δ/2^c)."""
    if not e >= SMALL_EPSILON or e >= 4.0 * interval:  # (below 1e-6: randomized response's PLD)
        return 0
    want = math.ceil(math.log2(4.0 * interval / e))
    room = math.floor(math.log2(max(1.0, 2.0 * GRID_BUDGET * interval / max(width, interval))))
    return max(0, min(want, room, 30))


def plan(comp: Composition) -> dict[str, Any]:
    """The grid interval Δ, the support width W, the grid size W/Δ, the loss margin m, the halvings
    of Δ for each non-Gaussian leaf's single step (``levels``) and what the report should say
    about the grid (``notes``).

    >>> from dpaudit.accounting import normal_form
    >>> from dpaudit.events import GaussianEvent
    >>> p = plan(normal_form(GaussianEvent.from_mu(2000.0))[0])
    >>> round(p["interval"], 3), p["points"] <= 2_000_010  # (μ² + 20μ)/3·10⁵
    (13.467, True)
    """
    mu, leaves, sampled = _leaves(comp)
    gw = _gauss_width(mu) if mu > 0 else 0.0
    sw = [_sampled_widths(m, leaf.sampling_probability, k) for leaf, k, _, m in sampled]
    single = max([gw] + [w for w, _ in sw])
    lw = [_leaf_width(k, e) for _, k, e, _ in leaves]
    width = gw + sum(lw) + sum(w for _, w in sw)
    interval = max(accuracy(), width / GRID_BUDGET, single / GAUSSIAN_GRID_BUDGET)
    if sampled and width / GRID_BUDGET > max(accuracy(), single / GAUSSIAN_GRID_BUDGET):
        # widened for the estimated width, which spans the loss from 0 to past its mean: size the
        # subsampled parts by the window their composition really needs, probed on this grid
        sw = [(w, _probed_width(leaf, k, nm, interval)) for (leaf, k, nm, _), (w, _) in zip(sampled, sw)]
        width = gw + sum(lw) + sum(w for _, w in sw)
        interval = max(accuracy(), width / GRID_BUDGET, single / GAUSSIAN_GRID_BUDGET)
    if not interval <= MAX_INTERVAL:
        raise NotApplicable(
            f"the composed loss range {width:.3g} needs a grid interval of {interval:.3g} > {MAX_INTERVAL:g} "
            f"within the memory budget (outside the PLD domain: mu <= ~1e4, sum of k*eps <= ~1e8)"
        )
    levels = [_levels(e, w, interval) for (_, _, e, _), w in zip(leaves, lw)]
    coarse = [e for (_, _, e, _), c in zip(leaves, levels) if 0 < e < interval / 2**c]
    if gw == 0 and not sampled and coarse and len(coarse) == len(leaves) and interval > accuracy():
        raise NotApplicable(
            f"the grid interval {interval:.3g} that keeps the composed loss range {width:.3g} within the "
            f"memory budget exceeds every per-step epsilon (at most {max(coarse):.3g}) even refined "
            f"{2 ** max(levels)}x: each step's loss would be rounded up to a whole interval, and the answer "
            "could not beat about half of basic composition (outside the PLD domain)"
        )
    points = width / interval + 1.0 + len(leaves) + len(sampled) + 2
    per_step = sum(k * e for _, k, e, _ in leaves) + sum(k * w for (_, k, _, _), (w, _) in zip(sampled, sw))
    m = 8e-16 * (per_step + gw) + 4e-15 * width + 1e-300
    notes = []
    if interval > accuracy():
        notes.append(f"grid interval widened from {accuracy():g} to {interval:.3g} for memory "
                     f"(composed loss range {width:.3g}); accuracy about {interval:.2g} per composition")
    if any(levels):
        notes.append(f"steps of small epsilon discretised {2 ** max(levels)}x finer, then coarsened")
    return {"interval": interval, "width": width, "points": points, "loss_margin": m, "levels": levels,
            "notes": notes}



def _directions(comp: Composition, interval: float, budget: float, levels: list[int]) -> list[Pmf]:
    """The composed PMFs of ``comp`` for the remove and add directions (one if symmetric), each
    FFT in double precision where its error stays within ``budget`` (ℓ₂) and in long double
    elsewhere (``budget`` 0: all in long double). A leaf with ``levels[i]`` = c > 0 is discretised
    on Δ/2^c, composed there, and coarsened to Δ (each loss rounded *up* to the coarser grid:
    pessimistic) before it joins the others."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    mu, leaves, sampled = _leaves(comp)
    dense: list[tuple[list[Pmf], int, int]] = []  # (PMF per direction, or one if symmetric; count; levels)
    if mu > 0:
        dense.append((dense_pmfs(pld.from_gaussian_mechanism(
            standard_deviation=1.0 / mu, sensitivity=1.0, pessimistic_estimate=True,
            value_discretization_interval=interval)), 1, 0))
    for (leaf, count, e, d), c in zip(leaves, levels):
        if e == 0 and d == 0:
            continue
        dense.append((single_step_pmfs(leaf, e, d, interval / 2**c), count, c))
    for leaf, count, nm, _ in sampled:
        dense.append((sampled_gaussian_pmfs(nm, leaf.sampling_probability, interval), count, 0))
    if not dense:
        return []
    n_dir = max(len(d) for d, _, _ in dense)
    progress.expect(n_dir * len(dense))
    out = []
    for direction in range(n_dir):
        parts = []
        for pmfs, count, c in dense:
            part = pmfs[min(direction, len(pmfs) - 1)]
            if count > 1:
                part = self_compose(part, count, max_points=4 * GRID_BUDGET, budget=budget)
            parts.append(coarsen(part, c))
            progress.advance()
        out.append(compose_all(parts, budget))
    return out


# ---------------------------------------------------------------------------------------
# hockey-stick divergence of a PMF




# ---------------------------------------------------------------------------------------
# the method


class _Certified:
    """The composed PMFs of one composition with their margins, built at the first query: each
    FFT in double precision where the error it brings would cost at most 1e-6 of the query's δ
    (the numerical floor η = √L·ℓ₂ error), in long double elsewhere; built again, all in long
    double, when a later query's δ is within 10⁶·η."""

    def __init__(self, comp: Composition) -> None:
        pl = plan(comp)
        self.comp = comp
        self.interval = pl["interval"]
        self.loss_margin = pl["loss_margin"]
        self.levels = pl["levels"]
        self.notes = pl["notes"]
        self.points = pl["points"]
        self.floor = math.inf  # the δ error the last build was allowed (inf: not built)
        self.pmfs: list[Pmf] | None = None

    def _build(self, floor: float) -> None:
        try:
            pmfs = _directions(self.comp, self.interval, floor / math.sqrt(self.points), self.levels)
        except MemoryError as exc:  # pragma: no cover - depends on the machine
            raise NotApplicable(f"PLD discretisation needs more memory than available ({exc})") from None
        self.pmfs, self.floor = pmfs, floor
        self.losses = [losses_of(p, self.interval) for p in pmfs]
        self.grids = [grid_deltas(p, ls) for p, ls in zip(pmfs, self.losses)]
        self.eta = max((math.sqrt(p.probs.size) * p.err for p in pmfs), default=0.0) + _ABS

    def _for(self, delta: float) -> list[Pmf]:
        """The PMFs, (re)built so that η costs at most 1e-6 of ``delta`` if long double can."""
        need = _FLOOR_SHARE * delta
        if self.pmfs is None or (self.eta > need and self.floor > need):
            self._build(need)
        if self.eta > need and any(p.double for p in self.pmfs or ()):
            self._build(0.0)
        assert self.pmfs is not None
        return self.pmfs

    def epsilon(self, delta: float) -> float:
        pmfs = self._for(delta)
        if not pmfs:
            return 0.0
        target = (delta - self.eta) / (1.0 + _REL)
        if not target > 0:
            raise NotApplicable(
                f"delta={delta:.3g} is below the numerical floor {self.eta:.3g} of this PLD "
                "composition (its floating-point error bound)"
            )
        e = max(epsilon_for(p, ls, target, g) for p, ls, g in zip(pmfs, self.losses, self.grids))
        if math.isnan(e):
            raise NotApplicable("numerical failure: the PLD gave NaN")
        if math.isinf(e):
            raise NotApplicable(f"the PLD's mass at infinite loss exceeds delta={delta:.3g}")
        return math.nextafter(e + self.loss_margin, math.inf)

    def delta(self, eps: float) -> float:
        def raw() -> float:
            assert self.pmfs is not None
            return max((delta_at(p, ls, eps - self.loss_margin) for p, ls in zip(self.pmfs, self.losses)),
                       default=0.0)

        if self.pmfs is None:
            self._build(math.inf)  # all in double first: δ is not known yet
        d = raw()
        if self.eta > _FLOOR_SHARE * d and any(p.double for p in self.pmfs or ()):
            self._for(d)
            d = raw()
        if not self.pmfs:
            return 0.0
        if math.isnan(d):
            raise NotApplicable("numerical failure: the PLD gave NaN")
        return min(1.0, math.nextafter(max(0.0, d) * (1.0 + _REL) + self.eta, math.inf))


def _composed(comp: Composition) -> _Certified:
    """The composition, kept for the next query on the same composition (ε and δ, curves) at the
    same accuracy: on the object itself, and for small compositions also by value (an equal
    composition built again by another :func:`~dpaudit.accounting.normal_form` call)."""
    key = f"{NAME}@{accuracy()!r}"
    c = comp.memo.get(key)
    if c is None:
        small = len(comp.items) <= _BY_VALUE
        c = comp.memo[key] = _by_value(comp, accuracy()) if small else _Certified(comp)
    return c


_BY_VALUE = 4096  # items; hashing a composition costs ≈ 0.4 µs per item


@functools.lru_cache(maxsize=4)
def _by_value(comp: Composition, interval: float) -> _Certified:
    return _Certified(comp)


def notes(comp: Composition) -> list[str]:
    """What the report should say about the grid of the last query on ``comp`` (widened for
    memory, small steps discretised finer): empty when nothing was composed on a grid."""
    c = comp.memo.get(f"{NAME}@{accuracy()!r}")
    return list(c.notes) if c is not None else []


def is_gaussian(comp: Composition) -> bool:
    """True when every leaf that reveals anything is Gaussian-type: the composed privacy loss is
    then exactly N(μ²/2, μ²) and its PLD is known in closed form (no grid)."""
    st = comp.steps()
    return not st.approx_eps.size and not st.other and all(not np.any(g.eps > 0) for g in st.pure)


def _certified(comp: Composition) -> _Certified | None:
    check_private(comp)
    return None if comp.is_empty else _composed(comp)


def epsilon(comp: Composition, delta: float) -> float:
    check_private(comp)
    if not comp.is_empty and is_gaussian(comp):
        return gdp.epsilon(comp, delta)  # the closed-form PLD of a Gaussian: exactly the GDP profile
    c = _certified(comp)
    return 0.0 if c is None else c.epsilon(delta)


def delta(comp: Composition, eps: float) -> float:
    check_private(comp)
    if not comp.is_empty and is_gaussian(comp):
        return gdp.delta(comp, eps)
    c = _certified(comp)
    return 0.0 if c is None else c.delta(eps)


def epsilon_curve(comp: Composition, deltas: Sequence[float]) -> list[float | None]:
    """ε at each δ, composing once (None at a δ below the composition's numerical floor)."""
    check_private(comp)
    gaussian = not comp.is_empty and is_gaussian(comp)
    c = None if gaussian else _certified(comp)
    out: list[float | None] = []
    for d in deltas:
        try:
            if gaussian:
                out.append(gdp.epsilon(comp, d))
            else:
                out.append(0.0 if c is None else c.epsilon(d))
        except NotApplicable:
            out.append(None)
    return out

