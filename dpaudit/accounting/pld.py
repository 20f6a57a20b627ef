"""Numerical privacy-loss-distribution (PLD) composition, certified in floating point.

A composition whose only releases are Gaussian-type has a Gaussian privacy loss N(μ²/2, μ²) with
μ = sqrt(Σ μ_i²) (Dong, Roth & Su 2022, Cor. 3.3; Sommer, Meiser & Mohammadi 2019, §5: the PLD
of the Gaussian mechanism is Gaussian and closed under composition), so its hockey-stick
divergence is the GDP profile δ_μ(ε) exactly (ibid. Cor. 2.13; dp-accounting's
``GaussianPrivacyLoss.get_delta_for_epsilon`` is the same formula): it is answered in closed form
through :mod:`dpaudit.accounting.gdp` — no grid, no FFT, no dp-accounting import, milliseconds
for any μ and any number of steps. Everything below concerns compositions with other leaves.

Each leaf is turned into its single-step pessimistic PLD (Meiser & Mohammadi 2018; Koskela, Jälkö
& Honkela 2020; Doroshenko et al. 2022, "Connect the dots": in exact arithmetic the discretised
δ(ε) is an upper bound on the true hockey-stick divergence for every ε). Gaussian-type leaves are
first merged into one Gaussian with μ = sqrt(Σ μ_i²), which is exact (Dong, Roth & Su 2022,
Cor. 3.3), whose PMF :mod:`dpaudit.accounting.pld_gaussian` builds; a Poisson-subsampled
Gaussian (q < 1; never merged with the Gaussian part, whose closed form it does not have) →
:mod:`dpaudit.accounting.pld_sampled` (Koskela, Jälkö & Honkela 2020; its two directions differ, so
both are composed); Laplace → :func:`~dpaudit.accounting.pld_steps.laplace_pmf`; binary randomized
response, any other pure leaf and any pure ε below 1e-6 → the randomized-response PLD of (ε, 0),
which dominates every ε-DP mechanism, and (ε, δ) leaves → that of (ε, δ)
(:func:`~dpaudit.accounting.pld_steps.dp_parameters_pmf`). These round every mass *up* past its
rounding error (or, for the subsampled Gaussian, move mass up), so they dominate in floating point
too: the usual construction, second differences of δ divided by e^Δ − 1, leaves masses up to ~u/Δ
below their value, and dp-accounting's hockey-stick curves fall up to 3.9e-12 (relative) below the
exact δ; k-ary randomized response → :func:`~dpaudit.accounting.pld_steps.k_ary_pmf` (three atoms,
masses rounded up). From dp-accounting, taken as computed: discrete Laplace →
``from_discrete_laplace_mechanism``, and with ``sampling_prob=q`` when Poisson-subsampled. A
Poisson-subsampled Laplace → :func:`~dpaudit.accounting.pld_sampled.sampled_laplace_pmfs` (its
two atoms and continuous part split like the subsampled Gaussian's, rounding only moving mass
up); any other Poisson-subsampled
ε-DP release → the toolkit's sampled randomized-response pair. The
subsampled Gaussian has its noise multiplier rounded down, μ = s/σ within
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
below ~0.3 GB at any μ (a Gaussian of μ = 1000 or 5000 with one Laplace step: 0.03 GB peak for
the whole process; dp-accounting's construction of the Gaussian, used before, needed 0.7 / 1.65 /
3.15 GB at μ = 300 / 1000 / 2000). In a composition with other
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
a power (its error is not amplified) in double where that fits too, else in long double — a
double inverse errs by ~1e-16 of the result's norm, which after the √L factor would put the floor
of a 4·10⁴-point grid near 1e-12.

So ε(δ) = ε_PLD((δ − η)/(1 + 1e-10)) + m and δ(ε) = (1 + 1e-10)·δ_PLD(ε − m) + η. Domain: not
applicable when δ ≤ η (the numerical floor of the composition — e.g. δ = 1e-300; ≈ 1e-14 for
a single step and about k·1e-18·√L for k-fold compositions), for a per-step ε above 500
(dp-accounting overflows e^ε near 709), or where the (ε, δ) leaves alone spend δ.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from dpaudit.accounting import gdp, progress
from dpaudit.accounting.composition import (
    Composition,
    NotApplicable,
    check_private,
)
from dpaudit.accounting.pld_mixture import leaf_pmfs
from dpaudit.accounting.pld_plan import (  # noqa: F401 - accuracy, accuracy_of, plan and the budgets are pld's API
    BASE_INTERVAL,
    GRID_BUDGET,
    accuracy,
    accuracy_of,
    composition_leaves,
    plan,
)
from dpaudit.accounting.pld_pmf import (
    Pmf,
    coarsen,
    compose_all,
    delta_at,
    epsilon_for,
    grid_deltas,
    losses_of,
    self_compose,
)
from dpaudit.accounting.pld_steps import gaussian_pmfs, single_step_pmfs

NAME = "pld"

_REL = 1e-10
_FLOOR_SHARE = 1e-6  # the share of δ the double-precision error floor may take
_ABS = 1e-14
def _directions(comp: Composition, interval: float, budget: float, levels: list[int]) -> list[Pmf]:
    """The composed PMFs of ``comp`` for the remove and add directions (one if symmetric), each
    FFT in double precision where its error stays within ``budget`` (ℓ₂) and in long double
    elsewhere (``budget`` 0: all in long double). A leaf with ``levels[i]`` = c > 0 is discretised
    on Δ/2^c, composed there, and coarsened to Δ (each loss rounded *up* to the coarser grid:
    pessimistic) before it joins the others."""
    mu, leaves, sampled = composition_leaves(comp)
    dense: list[tuple[list[Pmf], int, int]] = []  # (PMF per direction, or one if symmetric; count; levels)
    if mu > 0:
        dense.append((gaussian_pmfs(1.0 / mu, interval), 1, 0))
    for (leaf, count, e, d), c in zip(leaves, levels):
        if e == 0 and d == 0:
            continue
        dense.append((single_step_pmfs(leaf, e, d, interval / 2**c), count, c))
    for leaf, count, _, _ in sampled:
        dense.append((leaf_pmfs(leaf, interval), count, 0))
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

