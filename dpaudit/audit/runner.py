"""Run an audit: seeded, vectorised, batched sampling on a neighbour pair, then valid bounds.

An :class:`AuditTarget` bundles what is audited: a mechanism (anything with
``sample(x, rng, size=n)``), a :class:`~dpaudit.audit.neighbours.NeighbourPair`, the scalar
statistic of an output, the certified values (:class:`~dpaudit.audit.report.Certified`) and the
δ at which ε is audited. :func:`run_audit` then

1. splits ``trials`` (total mechanism runs, half on x and half on x′) into batches of at most
   ``batch_size``; batch i draws from ``default_rng(children[i])`` where
   ``children = SeedSequence(seed).spawn(#batches)``, so the result depends only on
   ``(seed, trials, batch_size)`` — the same with or without an ``executor`` (any
   ``concurrent.futures.Executor``: a process pool, ``dask.distributed``'s
   ``client.get_executor()``, …; the batches run through :func:`dpaudit.tasks.run_tasks`);
2. maps every batch of outputs to the statistic (vectorised), showing a tqdm progress bar when
   ``progress=True``;
3. builds one family of threshold tests with simultaneous Clopper–Pearson boxes: the
   pre-registered Bonferroni grid of :func:`dpaudit.audit.thresholds.threshold_rates` for continuous
   statistics, or — when the target declares the finite ``support`` of its statistic (discrete
   outputs) — every cut of that support, both orientations, Bonferroni over the cuts;
4. reads off the GDP μ lower bound and the ε lower bound at δ from that one family (all bounds
   hold simultaneously with probability ≥ ``confidence``), tests the claimed trade-off curve,
   and returns the frozen :class:`~dpaudit.audit.report.AuditReport`.

What is audited is declared in :mod:`dpaudit.audit.target`; the mechanism-specific targets are
built in ``mechanisms.auditing.targets``.

Example (an inline μ = 1 Gaussian mechanism, white-box privacy-loss statistic):
    >>> import numpy as np
    >>> from dpaudit.audit.claims import claim_mu
    >>> from dpaudit.audit.neighbours import scalar_pair
    >>> from dpaudit.audit.target import choose_statistic
    >>> class Shift:   # x + N(0, 1)
    ...     def sample(self, x, rng, size):
    ...         return x + rng.standard_normal(size)
    ...     def privacy_loss(self, o, x, x_prime):
    ...         return (x_prime - x) * (x + x_prime - 2 * np.asarray(o)) / 2
    >>> pair = scalar_pair(1.0)
    >>> target = AuditTarget("shift", Shift(), pair, choose_statistic(Shift(), pair), claim_mu(1.0), 1e-5)
    >>> report = run_audit(target, trials=200_000, seed=1)
    >>> report.verdict, report.empirical.statistic
    ('consistent', 'privacy loss of Shift')
    >>> 0.9 < report.empirical.mu_lower <= 1.0
    True
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from concurrent.futures import Executor
from dataclasses import replace
from typing import Any, Literal

import numpy as np

from dpaudit.audit.curves import audit_tradeoff_curve, epsilon_dp_tradeoff_curve, gdp_tradeoff_curve
from dpaudit.audit.estimate import MuInterval, mu_interval_from_counts
from dpaudit.audit.multiplicity import Bonferroni
from dpaudit.audit.pilot import NULL_SHARES, pilot_choice
from dpaudit.audit.power import DetectionFloor, floor_report
from dpaudit.audit.procedure_floor import Procedure, procedure_floor_report
from dpaudit.audit.report import AuditReport, Certified, Empirical
from dpaudit.audit.results import BoundEvidence
from dpaudit.audit.target import AuditTarget, Candidate, RoundedLoss, choose_statistic, describe_statistic
from dpaudit.audit.thresholds import (
    ThresholdRates,
    candidate_counts,
    single_test_rates,
    support_rates,
    threshold_rates,
)
from dpaudit.tasks import run_tasks
from dpaudit.validation import check_integer, check_probability

__all__ = [
    "AuditTarget",
    "RoundedLoss",
    "choose_statistic",
    "describe_statistic",
    "plan_batches",
    "sample_batch",
    "collect_statistics",
    "support_rates",
    "audit_rates",
    "epsilon_dp_tradeoff_curve",
    "DEFAULT_BATCH",
    "run_audit",
    "run_audit_with_rates",
    "trials_needed",
]

DEFAULT_BATCH = 1 << 18


def plan_batches(trials_per_side: int, batch_size: int) -> list[int]:
    """Batch sizes for one side: full batches then the remainder.

    >>> plan_batches(10, 4)
    [4, 4, 2]
    """
    n, b = check_integer("trials per side", trials_per_side), check_integer("batch_size", batch_size)
    return [b] * (n // b) + ([n % b] if n % b else [])


def _child(root: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The child of ``root`` with spawn key ``root.spawn_key + key`` (nothing mutated)."""
    key = tuple(root.spawn_key) + key
    return np.random.SeedSequence(root.entropy, spawn_key=key, pool_size=root.pool_size)


def _root(seed: int | np.random.SeedSequence) -> np.random.SeedSequence:
    return seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(int(seed))


def sample_batch(task: tuple[AuditTarget, int, int, np.random.SeedSequence]) -> np.ndarray:
    """One batch: ``(target, side, size, seed)`` → statistic values (side 0: x, side 1: x′).

    A module-level function of picklable arguments, so any ``Executor`` can run it.
    """
    target, side, size, seed = task
    rng = np.random.default_rng(seed)
    x = target.pair.x if side == 0 else target.pair.x_prime
    xv = np.asarray(x, dtype=float) if isinstance(x, tuple) else x
    outputs = target.mechanism.sample(xv, rng, size=size)
    return np.asarray(target.statistic(outputs), dtype=np.float64)


def collect_statistics(
    target: AuditTarget,
    trials: int,
    *,
    seed: int | np.random.SeedSequence = 0,
    batch_size: int = DEFAULT_BATCH,
    executor: Executor | None = None,
    progress: bool = False,
    sides: tuple[int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Statistic values under x and under x′ (``trials // 2`` each, or ``sides = (n0, n1)`` with
    n0 + n1 = ``trials``; see the module docstring for the seeding scheme, which makes the
    result independent of ``executor``)."""
    trials = check_integer("trials", trials, 2)
    n0, n1 = (trials // 2, trials // 2) if sides is None else sides
    if sides is not None and (min(check_integer("sides", n0), check_integer("sides", n1)) < 1
                              or n0 + n1 != trials):  # fmt: skip
        raise ValueError(f"sides must be two positive sizes adding up to trials = {trials}, got {sides!r}")
    plans = (plan_batches(n0, batch_size), plan_batches(n1, batch_size))
    children = _root(seed).spawn(len(plans[0]) + len(plans[1]))
    first = len(plans[0])  # side 0 takes children[:first], side 1 the rest
    tasks = [(target, side, sz, children[side * first + i])
             for side in (0, 1) for i, sz in enumerate(plans[side])]  # fmt: skip
    out = run_tasks(sample_batch, [(task,) for task in tasks], executor=executor, progress=progress,
                    desc=f"audit {target.name}", unit="batch")  # fmt: skip
    return np.concatenate(out[: len(plans[0])]), np.concatenate(out[len(plans[0]) :])


def _design(target: AuditTarget, c: Candidate) -> AuditTarget:
    """``target`` restricted to one candidate design."""
    return replace(target, pair=c.pair, statistic=c.statistic, support=c.support, candidates=())


def audit_rates(
    null: np.ndarray,
    alt: np.ndarray,
    *,
    confidence: float,
    support: Iterable[float] | None = None,
    grid_size: int = 300,
) -> ThresholdRates:
    """Support cuts if ``support`` is given, else the Bonferroni grid of ``threshold_rates``."""
    if support is not None:
        return support_rates(null, alt, support, confidence=confidence)
    return threshold_rates(null, alt, confidence=confidence, selection=Bonferroni(grid_size))


def _curve_check(rates: ThresholdRates, certified: Certified) -> dict[str, Any]:
    if certified.mu is not None:
        ca = audit_tradeoff_curve(rates, gdp_tradeoff_curve(certified.mu), claim=f"{certified.mu:g}-GDP")
    elif certified.epsilon is not None and certified.delta is not None:
        ca = audit_tradeoff_curve(
            rates,
            epsilon_dp_tradeoff_curve(certified.epsilon, certified.delta),
            claim=f"({certified.epsilon:g}, {certified.delta:g})-DP",
        )
    else:
        return {}
    return {
        "claim": ca.claim,
        "violated": ca.violated,
        "max_gap": ca.max_gap,
        "violating_tests": len(ca.violating_indices),
    }


def _bound_record(b: BoundEvidence) -> dict[str, Any]:
    return {
        "threshold": b.threshold,
        "orientation": b.orientation,
        "false_positives": b.false_positives,
        "false_negatives": b.false_negatives,
        "fpr_upper": b.fpr_upper,
        "fnr_upper": b.fnr_upper,
    }


def _pilot(
    target: AuditTarget,
    trials: int,
    root: np.random.SeedSequence,
    conf: float,
    pilot_fraction: float,
    batch_size: int,
    executor: Executor | None,
    progress: bool,
) -> tuple[ThresholdRates, dict[str, Any], int]:
    """Pilot selection (module docstring): returns the single-test rates on the main sample,
    the selection record and the main sample size per side."""
    fam = target.family
    k = len(fam)
    n_pilot = max(20, int(round(pilot_fraction * trials)) // (2 * k))
    n_main = (trials - 2 * k * n_pilot) // 2
    if n_main < 20:
        raise ValueError(
            f"trials = {trials} leaves {max(n_main, 0)} main samples per side after a pilot of {n_pilot} per "
            f"side on each of {k} candidate designs; use more trials or selection='grid'"
        )
    kind = "mu" if target.certified.mu is not None else "epsilon"
    pilots = []
    for i, c in enumerate(fam):
        x, y = collect_statistics(_design(target, c), 2 * n_pilot, seed=_child(root, 0, i),
                                  batch_size=batch_size, executor=executor, progress=progress)  # fmt: skip
        pilots.append((x, y, c.support))
    cert = target.certified
    claim = cert.mu if kind == "mu" else (cert.epsilon if cert.delta in (None, target.delta) else None)
    choice = pilot_choice(pilots, n_main, confidence=conf, kind=kind, delta=target.delta, claim=claim,
                          null_shares=NULL_SHARES)  # fmt: skip
    chosen = fam[choice.candidate]
    x, y = collect_statistics(_design(target, chosen), 2 * n_main, seed=_child(root, 1),
                              batch_size=batch_size, executor=executor, progress=progress,
                              sides=choice.sides(n_main))  # fmt: skip
    rates = single_test_rates(x, y, choice.threshold, choice.orientation, confidence=conf,
                              method=f"one test chosen on an independent pilot ({k} candidate "
                              "designs)")  # fmt: skip
    record = {
        "selection": "pilot",
        "pilot_fraction": pilot_fraction,
        "pilot_trials_per_side_per_candidate": n_pilot,
        "main_trials_per_side": n_main,
        "main_null_share": choice.null_share,
        "main_null_trials": int(x.size),
        "main_alt_trials": int(y.size),
        "candidates": [c.pair.description for c in fam],
        "chosen_candidate": choice.candidate,
        "chosen_threshold": choice.threshold,
        "chosen_orientation": choice.orientation,
        "predicted_bound": choice.predicted,
        "objective": kind,
        "statistic": describe_statistic(chosen.statistic),
        "neighbours": chosen.pair.to_dict(),
    }
    return rates, record, n_main


def _grid(
    target: AuditTarget,
    trials: int,
    root: np.random.SeedSequence,
    conf: float,
    grid_size: int,
    batch_size: int,
    executor: Executor | None,
    progress: bool,
) -> tuple[ThresholdRates, dict[str, Any], int]:
    """The pre-registered family: every candidate's threshold grid (or support cuts) on its own
    samples (``trials // (2K)`` per side each), one Bonferroni correction over all tests."""
    fam = target.family
    n = trials // (2 * len(fam))
    if n < 1:
        raise ValueError(f"trials = {trials} is too small for {len(fam)} candidate designs")
    parts = []
    for i, c in enumerate(fam):
        seed = root if len(fam) == 1 else _child(root, 2, i)  # one design: the historical seeding
        x, y = collect_statistics(_design(target, c), 2 * n, seed=seed, batch_size=batch_size,
                                  executor=executor, progress=progress)  # fmt: skip
        parts.append((x, y, c.support))
    if len(fam) == 1:
        x, y, sup = parts[0]
        rates = audit_rates(x, y, confidence=conf, support=sup, grid_size=grid_size)
    else:
        rates = candidate_counts(parts, confidence=conf, grid_size=grid_size)
    record = {
        "selection": "grid",
        "trials_per_side_per_candidate": n,
        "candidates": [c.pair.description for c in fam],
        "statistic": describe_statistic(fam[0].statistic),
        "neighbours": fam[0].pair.to_dict(),
    }
    return rates, record, n


def run_audit_with_rates(
    target: AuditTarget,
    *,
    trials: int,
    seed: int | np.random.SeedSequence = 0,
    confidence: float = 0.95,
    batch_size: int = DEFAULT_BATCH,
    executor: Executor | None = None,
    progress: bool = False,
    grid_size: int = 300,
    selection: Literal["pilot", "grid"] = "pilot",
    pilot_fraction: float = 0.1,
) -> tuple[AuditReport, ThresholdRates]:
    """:func:`run_audit`, also returning the certifying family of tests (for plots)."""
    conf = check_probability("confidence", confidence)
    trials = check_integer("trials", trials, 2)
    if selection not in ("pilot", "grid"):
        raise ValueError(f"selection must be 'pilot' or 'grid', got {selection!r}")
    frac = check_probability("pilot_fraction", pilot_fraction)
    root = _root(seed)
    t0 = time.perf_counter()
    if selection == "pilot":
        rates, record, n_main = _pilot(target, trials, root, conf, frac, batch_size, executor, progress)
    else:
        rates, record, n_main = _grid(target, trials, root, conf, grid_size, batch_size, executor, progress)
    t1 = time.perf_counter()
    eb = rates.epsilon_lower_bound(target.delta)
    mb = rates.mu_lower_bound()
    c = target.certified
    if selection == "pilot":
        floor = _procedure_floor(target, record, conf, grid_size)
    else:
        floor = floor_report(rates.null_trials, rates.alt_trials, rates.alpha_per_bound, certified_mu=c.mu,
                             certified_epsilon=c.epsilon, delta=target.delta, tests=rates.tests)  # fmt: skip
    i = rates.best_mu_index()
    if rates.tests == 1:
        estimate = mu_interval_from_counts(rates.false_positives[0], rates.null_trials,
                                           rates.false_negatives[0],
                                           rates.alt_trials, confidence=conf)  # fmt: skip
    else:  # the family's simultaneous two-sided boxes (both ends at alpha/(2T): 1 - 2 alpha)
        estimate = _family_interval(rates, i)
    t2 = time.perf_counter()
    empirical = Empirical(
        epsilon_lower=float(eb.epsilon),
        mu_lower=float(mb.mu),
        delta=target.delta,
        confidence=conf,
        trials=trials,
        method=f"clopper-pearson, {rates.method}",
        statistic=record["statistic"],
    )
    details: dict[str, Any] = {
        "neighbours": record["neighbours"],
        "tests": rates.tests,
        "selection": record,
        "best_epsilon_test": _bound_record(eb.evidence),
        "best_mu_test": _bound_record(mb.evidence),
        "curve_audit": _curve_check(rates, target.certified),
        "detection_floor": floor.describe(),
        "seed": int(seed) if not isinstance(seed, np.random.SeedSequence) else str(seed.entropy),
        "batch_size": int(batch_size),
        "executor": None if executor is None else type(executor).__name__,
        "seconds": {"sampling": t1 - t0, "bounds": t2 - t1},
    }
    details.update(dict(target.details))
    need = trials_needed(floor, target.certified, trials)
    if need is not None:
        details["would_need_trials"] = need
    report = AuditReport.build(
        target=target.name, certified=target.certified, empirical=empirical, details=details, floor=floor,
        estimate=estimate,
    )
    return report, rates


def trials_needed(floor: DetectionFloor, certified: Certified, trials: int) -> int | None:
    """When the certificate is below the floor: the trials at which the floor would reach it,
    assuming floors shrink as 1/√trials (two significant digits, rounded up); else ``None``
    (also beyond 10¹⁵ trials)."""
    have, want = (floor.mu, certified.mu) if certified.mu is not None else (floor.epsilon, certified.epsilon)
    if have is None or want is None or not want > 0 or not math.isfinite(have) or have <= want:
        return None
    log10_n = math.log10(trials) + 2.0 * (math.log10(have) - math.log10(want))
    if log10_n > 15:  # beyond any audit (and beyond float range for a tiny certificate)
        return None
    n = 10.0**log10_n
    scale = 10 ** max(0, math.floor(log10_n) - 1)
    return int(math.ceil(n / scale) * scale)


def _procedure_floor(target: AuditTarget, record: dict[str, Any], conf: float,
                     grid_size: int) -> DetectionFloor:  # fmt: skip
    """The floor of the pilot procedure this audit ran (:mod:`dpaudit.audit.procedure_floor`)."""
    c = target.certified
    kind = record["objective"]
    claim = c.mu if kind == "mu" else (c.epsilon if c.delta in (None, target.delta) else None)
    proc = Procedure(record["pilot_trials_per_side_per_candidate"], record["main_trials_per_side"],
                     len(record["candidates"]), conf, kind, target.delta, claim, grid_size)  # fmt: skip
    return procedure_floor_report(proc, target.reference, certified_mu=c.mu if kind == "mu" else None,
                                  certified_epsilon=claim if kind == "epsilon" else None)  # fmt: skip


def _family_interval(rates: ThresholdRates, i: int) -> MuInterval:
    """Two-sided μ_T interval of test ``i`` from the family's simultaneous boxes."""
    from scipy import stats

    with np.errstate(divide="ignore"):
        lo = float(stats.norm.isf(rates.fpr_upper[i]) - stats.norm.ppf(rates.fnr_upper[i]))
        hi = float(stats.norm.isf(rates.fpr_lower[i]) - stats.norm.ppf(rates.fnr_lower[i]))
    n0, n1 = rates.null_trials, rates.alt_trials
    fp, fn = rates.false_positives[i], rates.false_negatives[i]
    est = float(stats.norm.isf(fp / n0) - stats.norm.ppf(fn / n1)) if 0 < fp < n0 and 0 < fn < n1 else lo
    conf = 1.0 - 4.0 * rates.tests * rates.alpha_per_bound
    lo = max(0.0, lo)
    return MuInterval(lo, max(lo, est) if math.isfinite(est) else lo, max(lo, hi), conf, fp, n0, fn, n1,
                      method="simultaneous clopper-pearson boxes of the bonferroni family")  # fmt: skip


def run_audit(
    target: AuditTarget,
    *,
    trials: int,
    seed: int | np.random.SeedSequence = 0,
    confidence: float = 0.95,
    batch_size: int = DEFAULT_BATCH,
    executor: Executor | None = None,
    progress: bool = False,
    grid_size: int = 300,
    selection: Literal["pilot", "grid"] = "pilot",
    pilot_fraction: float = 0.1,
) -> AuditReport:
    """Audit ``target`` with ``trials`` mechanism runs in total (pilot included; half of the
    main runs on each neighbour); see the module docstring. The verdict is ``violated`` when the
    μ lower bound exceeds a certified μ or the ε lower bound at ``target.delta`` exceeds a
    certified ε at the same δ, ``inconclusive`` when the certificate is below the detection
    floor of the certifying test, else ``consistent``.
    """
    return run_audit_with_rates(
        target,
        trials=trials,
        seed=seed,
        confidence=confidence,
        batch_size=batch_size,
        executor=executor,
        progress=progress,
        grid_size=grid_size,
        selection=selection,
        pilot_fraction=pilot_fraction,
    )[0]
