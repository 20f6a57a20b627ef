"""The detection floor of the procedure an audit actually runs: pilot, split and certification.

:mod:`dpaudit.audit.power` computes what an *oracle* could see — one threshold test fixed in
advance, certified on all main samples. The audit does not know that test: it spends a pilot on
choosing it (:func:`~dpaudit.audit.pilot.pilot_choice`), chooses the split of the main sample,
and then certifies. Its real power is lower (a Gaussian placed at the oracle floor of a
2·10⁴-trial audit was detected in 18 % of 300 seeds, not 50 %). This module computes the power of
the procedure itself on a reference pair (:mod:`dpaudit.audit.reference_pairs`):

1. ``reps`` pilots are drawn from their exact distribution (the pilot's test family, not its
   samples — cost independent of the pilot size), for every pre-registered design: the first
   design carries the reference pair of the given strength, the others none (the leak sits in
   one unit, the least favourable place for the pilot);
2. the pilot's own selection code (:func:`~dpaudit.audit.pilot.choose_tests`) chooses, for each
   pilot, the design, the test and the split (above 50 000 runs per side with Clopper–Pearson
   bounds interpolated to within 3 % of a count's step, :func:`~dpaudit.audit.power.cp_upper_smooth`);
3. given that choice, the certification's counts are binomial with the test's exact error rates,
   and the probability that its bound exceeds ``target`` is an exact binomial sum
   (:func:`dpaudit.audit.power.conditional_detections`);
4. the detection probability is the mean over pilots (a conditional Monte-Carlo estimate, with
   its standard error); the floor is the strength where it crosses ½: a search on common pilots
   (the estimate is then a smooth function of the strength), polished with four times as many
   fresh pilots (:func:`procedure_floor`).

Floors are kept by :mod:`dpaudit.audit.floor_store` (shipped for the default audits, cached on
disk). ``benchmarks/bench_floor_check.py`` places mechanisms at their reported floors and counts
how often the audit detects them (docs/audit-bounds.md).

Example (a 2·10⁴-trial audit of a μ claim, one design):
    >>> p = Procedure(pilot_per_side=1000, main_per_side=9000, designs=1, confidence=0.95, kind="mu",
    ...               delta=1e-5, claim=1.0)
    >>> f = procedure_floor(GaussianReference(), p, reps=64)
    >>> from dpaudit.audit.power import detection_floor
    >>> oracle = detection_floor(9000, 9000, 0.025)
    >>> f.strength > oracle     # the pilot's choice costs power
    True
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
from dataclasses import dataclass

import numpy as np

from dpaudit.audit import floor_store
from dpaudit.audit.clopper_pearson import cp_upper_many
from dpaudit.audit.pilot import NULL_SHARES, choose_tests, main_splits
from dpaudit.audit.power import DetectionFloor, conditional_detections, cp_upper_smooth, detection_floor
from dpaudit.audit.reference_pairs import GaussianReference, ReferencePair, reference_pair
from dpaudit.conversions import gdp_epsilon, gdp_mu
from dpaudit.validation import check_integer, check_probability

__all__ = [
    "Procedure",
    "ProcedurePower",
    "procedure_detection",
    "procedure_floor",
    "procedure_floor_report",
]


@dataclass(frozen=True)
class Procedure:
    """The audit procedure whose power is computed: ``pilot_per_side`` samples per side on each
    of ``designs`` designs, a main sample of ``2·main_per_side`` runs split by one of
    ``null_shares``, Clopper–Pearson at (1 − ``confidence``)/2 per rate, bound ``kind`` (``"mu"``
    or ``"epsilon"`` at ``delta``); ``claim`` is the certified value the pilot's power rule
    aims at (``None``: none)."""

    pilot_per_side: int
    main_per_side: int
    designs: int
    confidence: float
    kind: str
    delta: float
    claim: float | None
    grid_size: int = 300
    null_shares: tuple[float, ...] = NULL_SHARES

    def __post_init__(self) -> None:
        check_integer("pilot_per_side", self.pilot_per_side)
        check_integer("main_per_side", self.main_per_side)
        check_integer("designs", self.designs)
        check_probability("confidence", self.confidence)
        if self.kind not in ("mu", "epsilon"):
            raise ValueError(f"kind must be 'mu' or 'epsilon', got {self.kind!r}")


@dataclass(frozen=True)
class ProcedurePower:
    """A floor of a :class:`Procedure`: the ``strength`` of the ``reference`` pair whose bound
    exceeds ``target`` with probability ½ (``inf`` when not reached below the search limit),
    the probability measured by the final ``reps`` pilots (``probability`` ±
    ``standard_error``, at the strength before the last secant step) and the evaluations."""

    reference: str
    target: float
    strength: float
    probability: float
    standard_error: float
    reps: int
    evaluations: int


def procedure_detection(
    reference: ReferencePair,
    strength: float,
    procedure: Procedure,
    *,
    target: float = 0.0,
    reps: int = 400,
    seed: int = 0,
) -> tuple[float, float]:
    """P[the procedure's bound > ``target``] on ``reference`` at ``strength`` (module
    docstring), as (estimate, standard error) over ``reps`` simulated pilots drawn from
    ``seed``.

    >>> p = Procedure(1000, 9000, 1, 0.95, "mu", 1e-5, None)
    >>> est, se = procedure_detection(GaussianReference(), 0.2, p, reps=64)
    >>> est > 0.9 and se < 0.05
    True
    """
    pr = procedure
    rng = np.random.default_rng(seed)
    fams = [reference.pilot_families(strength, pr.pilot_per_side, pr.pilot_per_side, pr.grid_size, rng, reps,
                                     leak=(i == 0)) for i in range(pr.designs)]  # fmt: skip
    splits = main_splits(pr.main_per_side, pr.null_shares)
    alpha = (1.0 - pr.confidence) / 2.0
    for n in {m for _, m0, m1 in splits for m in (m0, m1) if m <= 50_000}:
        cp_upper_many(np.arange(n + 1), n, alpha)  # every certification count's bound, once
    choices = choose_tests(fams, splits, alpha=alpha, kind=pr.kind, delta=pr.delta, claim=pr.claim,
                           cp=cp_upper_smooth)  # fmt: skip
    t = np.array([c.threshold for c in choices])
    o = np.array([c.orientation for c in choices])
    leak = np.array([c.candidate == 0 for c in choices])
    fpr, fnr = reference.error_rates(strength, t, o, leak=True)
    if not leak.all():  # a null design chosen: both sides from x
        f0, g0 = reference.error_rates(strength, t, o, leak=False)
        fpr, fnr = np.where(leak, fpr, f0), np.where(leak, fnr, g0)
    probs = np.empty(reps)
    share = np.array([c.null_share for c in choices])
    for s in np.unique(share):
        rows = np.flatnonzero(share == s)
        n0, n1 = choices[rows[0]].sides(pr.main_per_side)
        probs[rows] = conditional_detections(fpr[rows], fnr[rows], n0, n1, alpha, kind=pr.kind,
                                             delta=pr.delta, target=target)  # fmt: skip
    return float(probs.mean()), float(probs.std(ddof=1) / math.sqrt(reps)) if reps > 1 else 0.0


def procedure_floor(
    reference: ReferencePair,
    procedure: Procedure,
    *,
    target: float = 0.0,
    reps: int = 400,
    seed: int = 0,
    upper: float = 40.0,
    rtol: float = 1e-3,
    tol: float = 0.004,
) -> ProcedurePower:
    """The smallest strength detected with probability ½ by ``procedure`` (module docstring).
    The search uses ``reps/2`` pilots, the same at every strength: from a guess beside the oracle
    floor (never above the procedure's) it brackets ½, then regula falsi on the probit of the
    estimate until it is within ``tol`` (or half its standard error) of ½ or the bracket within
    ``rtol`` relative. The polish measures the answer and a strength 8 % (of the excess over
    ``target``) towards ½ with the same ``4·reps`` fresh pilots, and takes one secant step on the
    probit scale: the answer's error is that of the 4·reps pilots.

    >>> p = Procedure(1000, 9000, 1, 0.95, "mu", 1e-5, None)
    >>> f = procedure_floor(GaussianReference(), p, reps=64)
    >>> 0.4 < f.probability < 0.6
    True
    """
    key = (reference.name, procedure, float(target), int(reps), int(seed), float(upper), float(rtol),
           float(tol))  # fmt: skip
    name = floor_store.key_name([dataclasses.asdict(k) if isinstance(k, Procedure) else k for k in key])
    stored = floor_store.read(name)
    if stored is not None:
        return ProcedurePower(**stored)
    out = _floor(*key)
    floor_store.write(name, dataclasses.asdict(out))
    return out


@functools.lru_cache(maxsize=128)
def _floor(name: str, pr: Procedure, target: float, reps: int, seed: int, upper: float,
           rtol: float, tol: float) -> ProcedurePower:  # fmt: skip
    from scipy import special

    ref = reference_pair(name)
    alpha = (1.0 - pr.confidence) / 2.0
    evals = 0

    def p(s: float) -> tuple[float, float]:  # the search: half the pilots, common to every strength
        nonlocal evals
        evals += 1
        return procedure_detection(ref, s, pr, target=target, reps=max(reps // 2, 2), seed=seed)

    if name == "gaussian":  # strengths are mu; an epsilon target is the mu whose epsilon(delta) it is
        base = float(gdp_mu(target, pr.delta)) if pr.kind == "epsilon" and target > 0 else max(target, 0.0)
        start = detection_floor(pr.main_per_side, pr.main_per_side, alpha, target=base)
    else:
        base = max(target, 0.0)
        start = detection_floor(pr.main_per_side, pr.main_per_side, alpha, target=target,
                                pair="randomized-response", delta=pr.delta)  # fmt: skip
    oracle = start if math.isfinite(start) and start > base else base + max(0.25, base)
    # the pilot's choice costs about half the oracle's floor at 0 and a fifth of its excess at a claim
    guess = base + (1.5 if target <= 0 else 1.2) * (oracle - base)
    lo, pl, hi, ph = oracle, (0.0, 0.0), guess, p(guess)
    if ph[0] >= 0.5:
        mid = base + (guess - base) / 1.15
        pm = p(mid)
        lo, pl, hi, ph = (mid, pm, hi, ph) if pm[0] < 0.5 else (lo, pl, mid, pm)
    while ph[0] < 0.5:  # widen
        lo, pl, hi = hi, ph, base + 1.6 * (hi - base)
        if hi > upper:
            return ProcedurePower(name, target, math.inf, pl[0], pl[1], reps, evals)
        ph = p(hi)
    if pl == (0.0, 0.0):
        pl = p(lo)
    # regula falsi on the probit of the estimate (nearly linear in the strength), Illinois-style
    s, ps = hi, ph
    for _ in range(10):
        if abs(ps[0] - 0.5) <= max(tol, ps[1] / 2) or hi - lo <= rtol * (hi - base):
            break
        zl, zh = (float(special.ndtri(min(max(v[0], 1e-3), 1 - 1e-3))) for v in (pl, ph))
        w = min(max(-zl / (zh - zl), 0.05), 0.95) if zh > zl else 0.5
        s = lo + w * (hi - lo)
        ps = p(s)
        if ps[0] >= 0.5:
            hi, ph = s, ps
        else:
            lo, pl = s, ps
    # polish: 4x the pilots, fresh ones, at the search's answer and at a strength 8 % (of the
    # excess over the target) towards 1/2 — the same pilots at both, so their difference is the
    # slope — then one secant step on the probit scale; the error is that of 4x the pilots
    big = 4 * reps
    pf, se = procedure_detection(ref, s, pr, target=target, reps=big, seed=seed + 1)
    s2 = base + (s - base) * (1.08 if pf < 0.5 else 1 / 1.08)
    pf2, _ = procedure_detection(ref, s2, pr, target=target, reps=big, seed=seed + 1)
    evals += 2
    z1, z2 = (float(special.ndtri(min(max(v, 1e-3), 1 - 1e-3))) for v in (pf, pf2))
    slope = (z2 - z1) / (s2 - s)
    if slope > 0:
        s = min(max(s - z1 / slope, base + 0.5 * (s - base)), base + 1.5 * (s - base))
    return ProcedurePower(name, target, s, pf, se, big, evals)


def default_reps() -> int:
    """Simulated pilots of a floor's search (the polish uses four times as many): 400, or
    ``$DPAUDIT_FLOOR_REPS`` (the test suite uses fewer)."""
    raw = os.environ.get("DPAUDIT_FLOOR_REPS", "")
    try:
        return max(8, int(raw)) if raw else 400
    except ValueError:
        raise ValueError(f"DPAUDIT_FLOOR_REPS must be an integer >= 8, got {raw!r}") from None


def procedure_floor_report(
    procedure: Procedure,
    reference: str,
    *,
    certified_mu: float | None,
    certified_epsilon: float | None,
    reps: int | None = None,
) -> DetectionFloor:
    """The :class:`~dpaudit.audit.power.DetectionFloor` of ``procedure`` on a reference pair:
    the Gaussian pair's μ floors (ε via the GDP curve at ``procedure.delta``) for a μ claim
    and for an ε claim at δ > 0 (whose bound is then the ε bound at δ: the canonical (ε, δ)
    pair's δ-atom would send the pilot after a test that cannot certify anything); for an ε
    claim at δ = 0 the ε floors of ``reference`` (``"laplace"`` or ``"randomized-response"``).

    >>> p = Procedure(1000, 9000, 1, 0.95, "mu", 1e-5, 1.0)
    >>> f = procedure_floor_report(p, "gaussian", certified_mu=1.0, certified_epsilon=None, reps=64)
    >>> f.mu < 0.1 < 1.0 < f.mu_violation < 1.1
    True
    """
    pr = procedure
    reps = default_reps() if reps is None else reps
    n, k = pr.main_per_side, pr.designs
    if pr.kind == "mu" or pr.delta > 0 or reference == "gaussian":
        ref: ReferencePair = GaussianReference()
    else:
        ref = reference_pair(reference)
    low = procedure_floor(ref, pr, reps=reps)
    target = certified_mu if pr.kind == "mu" else certified_epsilon
    viol = procedure_floor(ref, pr, target=target, reps=reps) if target is not None else None
    defin = (
        f"the audit's own procedure on the {ref.name} reference pair (leak in 1 of {k} design(s)): "
        f"{pr.pilot_per_side} pilot runs per side per design choose the test and the split, "
        f"{2 * n} main runs certify it (Clopper-Pearson at {(1 - pr.confidence) / 2:.3g} per rate); "
        f"smallest strength whose bound is > 0 (floor) or > the certificate (violation) with "
        f"probability 1/2: exact binomial sums given the pilot's choice, averaged over {4 * reps} simulated "
        f"pilots (standard error {low.standard_error:.2g} at the floor)"
    )
    alpha = (1.0 - pr.confidence) / 2.0
    if ref.name == "gaussian":
        mu, mv = low.strength, (viol.strength if viol is not None else None)
        eps = float(gdp_epsilon(mu, pr.delta)) if pr.delta > 0 and math.isfinite(mu) else None
        ev = None
        if pr.delta > 0 and mv is not None and math.isfinite(mv):
            ev = float(gdp_epsilon(mv, pr.delta))
        return DetectionFloor(mu, eps, mv, ev, pr.delta, n, n, alpha, 1, defin)
    return DetectionFloor(None, low.strength, None, viol.strength if viol is not None else None, pr.delta,
                          n, n, alpha, 1, defin)  # fmt: skip
