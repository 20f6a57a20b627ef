"""Run an audit: seeded, vectorised, batched sampling on a neighbour pair, then valid bounds.

An :class:`AuditTarget` bundles what is audited: a mechanism (anything with
``sample(x, rng, size=n)``), a :class:`~dpaudit.audit.neighbours.NeighbourPair`, the scalar
statistic of an output, the certified values (:class:`~dpaudit.audit.report.Certified`) and the
δ at which ε is audited. :func:`run_audit` then

1. splits ``trials`` (total mechanism runs, half on x and half on x′) into batches of at most
   ``batch_size``; batch i draws from ``default_rng(children[i])`` where
   ``children = SeedSequence(seed).spawn(#batches)``, so the result depends only on
   ``(seed, trials, batch_size)`` — the same with or without an ``executor`` (anything with the
   ``concurrent.futures.Executor.map`` interface: a process pool, ``dask.distributed``'s
   ``client.get_executor()``, …);
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
built in ``mechanisms.audit_targets``.

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

import time
from collections.abc import Iterable
from concurrent.futures import Executor
from typing import Any

import numpy as np

from dpaudit.audit.curves import audit_tradeoff_curve, epsilon_dp_tradeoff_curve, gdp_tradeoff_curve
from dpaudit.audit.report import AuditReport, Certified, Empirical
from dpaudit.audit.target import AuditTarget, RoundedLoss, choose_statistic, describe_statistic
from dpaudit.audit.thresholds import Bonferroni, ThresholdRates, support_rates, threshold_rates
from dpaudit.events import check_integer, check_probability

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
]

DEFAULT_BATCH = 1 << 18


def plan_batches(trials_per_side: int, batch_size: int) -> list[int]:
    """Batch sizes for one side: full batches then the remainder.

    >>> plan_batches(10, 4)
    [4, 4, 2]
    """
    n, b = check_integer("trials per side", trials_per_side), check_integer("batch_size", batch_size)
    return [b] * (n // b) + ([n % b] if n % b else [])


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
) -> tuple[np.ndarray, np.ndarray]:
    """Statistic values under x and under x′ (``trials // 2`` each; see the module docstring
    for the seeding scheme, which makes the result independent of ``executor``)."""
    per_side = check_integer("trials", trials, 2) // 2
    sizes = plan_batches(per_side, batch_size)
    root = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(int(seed))
    children = root.spawn(2 * len(sizes))
    tasks = [
        (target, side, sz, children[side * len(sizes) + i]) for side in (0, 1) for i, sz in enumerate(sizes)
    ]
    results: Iterable[np.ndarray] = (
        executor.map(sample_batch, tasks) if executor is not None else map(sample_batch, tasks)
    )
    if progress:
        from tqdm import tqdm

        results = tqdm(results, total=len(tasks), unit="batch", desc=f"audit {target.name}", leave=False)
    out = list(results)
    return np.concatenate(out[: len(sizes)]), np.concatenate(out[len(sizes) :])


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
) -> tuple[AuditReport, ThresholdRates]:
    """:func:`run_audit`, also returning the threshold family (for plots)."""
    conf = check_probability("confidence", confidence)
    t0 = time.perf_counter()
    null, alt = collect_statistics(
        target, trials, seed=seed, batch_size=batch_size, executor=executor, progress=progress
    )
    t1 = time.perf_counter()
    rates = audit_rates(null, alt, confidence=conf, support=target.support, grid_size=grid_size)
    eb = rates.epsilon_lower_bound(target.delta)
    mb = rates.mu_lower_bound()
    t2 = time.perf_counter()
    n_total = int(null.size + alt.size)
    empirical = Empirical(
        epsilon_lower=float(eb.epsilon),
        mu_lower=float(mb.mu),
        delta=target.delta,
        confidence=conf,
        trials=n_total,
        method=f"clopper-pearson, {rates.method}",
        statistic=describe_statistic(target.statistic),
    )
    details: dict[str, Any] = {
        "neighbours": target.pair.to_dict(),
        "tests": rates.tests,
        "best_epsilon_test": {
            "threshold": eb.threshold,
            "orientation": eb.orientation,
            "false_positives": eb.false_positives,
            "false_negatives": eb.false_negatives,
            "fpr_upper": eb.fpr_upper,
            "fnr_upper": eb.fnr_upper,
        },
        "best_mu_test": {
            "threshold": mb.threshold,
            "orientation": mb.orientation,
            "false_positives": mb.false_positives,
            "false_negatives": mb.false_negatives,
            "fpr_upper": mb.fpr_upper,
            "fnr_upper": mb.fnr_upper,
        },
        "curve_audit": _curve_check(rates, target.certified),
        "seed": int(seed) if not isinstance(seed, np.random.SeedSequence) else str(seed.entropy),
        "batch_size": int(batch_size),
        "executor": None if executor is None else type(executor).__name__,
        "seconds": {"sampling": t1 - t0, "bounds": t2 - t1},
    }
    details.update(dict(target.details))
    report = AuditReport.build(
        target=target.name, certified=target.certified, empirical=empirical, details=details
    )
    return report, rates


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
) -> AuditReport:
    """Audit ``target`` with ``trials`` mechanism runs (half on each neighbour); see the module
    docstring. The verdict is ``violated`` when the μ lower bound exceeds a certified μ or the
    ε lower bound at ``target.delta`` exceeds a certified ε at the same δ.
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
    )[0]
