"""The PLD's grid: the interval Δ it is asked for (:func:`accuracy`, :func:`accuracy_of`) and the
plan of one composition — Δ, widened where the composed loss range would not fit the memory
budget, the loss margin, the finer discretisation of steps of small ε, and what the report says
about it (:func:`plan`). The composition itself is built in :mod:`dpaudit.accounting.pld`."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

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
from dpaudit.accounting.pld_mixture import is_sampled_gaussian, leaf_parts, leaf_pmfs
from dpaudit.accounting.pld_pmf import TAIL_TRUNCATION, self_convolve_bounds
from dpaudit.accounting.pld_steps import SMALL_EPSILON
from dpaudit.events import (
    ApproxDpEvent,
    LaplaceEvent,
    PrivacyEvent,
    PureDpEvent,
    RandomizedResponseEvent,
    loaded_ml_events,
)

BASE_INTERVAL = 1e-4
GRID_BUDGET = 2_000_000
GAUSSIAN_GRID_BUDGET = 300_000
MAX_STEP_EPSILON = 500.0
MAX_INTERVAL = 100.0  # dp-accounting's connect-the-dots evaluates expm1(Δ): overflow near 709
MAX_SAMPLED_MU = 20.0  # a Poisson-subsampled Gaussian's composed width uses e^{μ²}
MIN_MU = 1e-100  # σ = 1/μ; σ² overflows near μ = 1e-154
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


def _check_copy_domain(leaf: PrivacyEvent) -> None:
    """Raise NotApplicable for a Gaussian on a batch drawn with replacement that has no copy parts
    although it reveals something: its μ per copy is beyond the PLD domain."""
    ml = loaded_ml_events()  # None: no event of dpaudit.events_ml exists
    if ml is None or not isinstance(leaf, ml.SampledWithReplacementEvent) or leaf_mu(leaf.event) <= 0:
        return
    from dpaudit.accounting.pld_with_replacement import MAX_COPY_MU

    raise NotApplicable(
        f"a Gaussian of mu={leaf_mu(leaf.event):.3g} per copy of the record, on a batch drawn with "
        f"replacement, is outside the PLD domain (mu per copy at most {MAX_COPY_MU:g})")


def _gauss_width(mu: float) -> float:
    return mu * mu + 20.0 * mu


def _sampled_widths(mu: float, q: float, count: int) -> tuple[float, float]:
    """(single-step width, composed width) of ``count`` Poisson-subsampled Gaussian steps: the
    single step's loss range is within the Gaussian's (μ² + 20μ); the composition's is sized by
    its central-limit GDP parameter q·sqrt(count·(e^{μ²} − 1)) (Bu, Dong, Long & Su 2020,
    Thm 5), at most the unsampled composition's μ·sqrt(count), plus one single step's range for
    the tails. A memory estimate only: the grid is
    checked again where it is built (:func:`~dpaudit.accounting.pld_pmf.self_compose`)."""
    with np.errstate(over="ignore"):
        clt = q * math.sqrt(count) * math.sqrt(math.expm1(mu * mu)) if mu < 26.0 else math.inf
    single = _gauss_width(mu)  # the loss never exceeds the unsampled Gaussian's: μ·sqrt(count) caps it
    return single, single + _gauss_width(min(clt, mu * math.sqrt(count)))


def _probed_width(leaf: PrivacyEvent, count: int, noise_multiplier: float, interval: float) -> float:
    """The loss range of ``count`` Poisson-subsampled Gaussian steps outside which each direction's
    composed PMF has tails of at most TAIL_TRUNCATION, measured on a grid of ``interval`` (Chernoff
    bounds of the single-step PMF, as where the composition is built), with 25 % to spare for a
    finer grid (the window is checked again where it is built)."""
    pmfs = leaf_pmfs(leaf, interval)
    bounds = [self_convolve_bounds(p.probs, count, TAIL_TRUNCATION) for p in pmfs]
    return 1.25 * max(hi - lo + 1 for lo, hi in bounds) * interval


def sampling_rate(leaf: PrivacyEvent) -> float:
    """The largest sampling probability of a sampled-Gaussian leaf's parts (for sizing)."""
    return max(part.sampling_probability for _, part in leaf_parts(leaf))


def composition_leaves(comp: Composition) -> tuple[float, list[tuple[PrivacyEvent, int, float, float]],
                                        list[tuple[PrivacyEvent, int, float, float]]]:
    """(Gaussian μ, [(leaf, count, ε, δ)], [(sampled leaf, count, noise multiplier, μ)]) with the
    domain checks; a sampled leaf is a Poisson-subsampled Gaussian or a mixture of them
    (:mod:`dpaudit.accounting.pld_mixture`), its noise multiplier and μ those of its part of
    largest μ."""
    check_private(comp)
    mu = comp.gaussian_mu()
    if 0 < mu < MIN_MU:
        raise NotApplicable(f"the composed Gaussian mu={mu:.3g} is below the PLD domain "
                            f"(at least {MIN_MU:g}); gdp is exact for Gaussian compositions")
    st = comp.steps()
    sampled: list[tuple[PrivacyEvent, int, float, float]] = []
    for leaf, count in st.other:
        if not is_sampled_gaussian(leaf):
            raise no_bound(leaf, "PLD")
        parts = leaf_parts(leaf)
        if not parts:  # a mixture whose every sensitivity is 0 reveals nothing
            _check_copy_domain(leaf)
            continue
        nm, m = math.inf, 0.0  # the part of largest mu (a mixture's parts are checked one by one)
        for _, part in parts:
            pnm, pm = sampled_noise_multiplier(part), leaf_mu(part.event)
            if not MIN_MU <= pm <= MAX_SAMPLED_MU:
                raise NotApplicable(
                    f"a Poisson-subsampled Gaussian with mu={pm:.3g} (sigma/sensitivity={pnm:.3g}) is "
                    f"outside the PLD domain (mu in [{MIN_MU:g}, {MAX_SAMPLED_MU:g}])"
                )
            nm, m = (pnm, pm) if pm > m else (nm, m)
        sampled.append((leaf, int(count), nm, m))
    sampled.sort(key=lambda x: (sampling_rate(x[0]), x[2], x[1], repr(x[0])))
    distinct = sum(g.eps.size for g in st.pure) + st.approx_eps.size  # every other leaf is sampled
    if distinct > MAX_LEAVES:
        rest = _binned_leaves(st)
    else:  # canonical order: the composed grid must not depend on the order of the leaves
        rest = [(leaf, c) for leaf, c in comp.gaussian_part()[2] if not is_sampled_gaussian(leaf)]
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
    mu, leaves, sampled = composition_leaves(comp)
    gw = _gauss_width(mu) if mu > 0 else 0.0
    sw = [_sampled_widths(m, sampling_rate(leaf), k) for leaf, k, _, m in sampled]
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
