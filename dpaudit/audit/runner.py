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
   pre-registered Bonferroni grid of :func:`dpaudit.audit.bounds.threshold_rates` for continuous
   statistics, or — when the target declares the finite ``support`` of its statistic (discrete
   outputs) — every cut of that support, both orientations, Bonferroni over the cuts;
4. reads off the GDP μ lower bound and the ε lower bound at δ from that one family (all bounds
   hold simultaneously with probability ≥ ``confidence``), tests the claimed trade-off curve,
   and returns the frozen :class:`~dpaudit.audit.report.AuditReport`.

Example (a μ = 1 Gaussian mechanism, white-box privacy-loss statistic):
    >>> from dpaudit.audit.targets import gaussian_target
    >>> report = run_audit(gaussian_target(sigma=1.0), trials=200_000, seed=1)
    >>> report.verdict, report.empirical.statistic
    ('consistent', 'privacy loss of GaussianMechanism')
    >>> 0.9 < report.empirical.mu_lower <= 1.0
    True
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.audit.bounds import (
    Bonferroni,
    ThresholdRates,
    audit_tradeoff_curve,
    clopper_pearson_lower,
    clopper_pearson_upper,
    gdp_tradeoff_curve,
    threshold_rates,
)
from dpaudit.audit.neighbours import NeighbourPair, discrete_cut_counts
from dpaudit.audit.report import AuditReport, Certified, Empirical
from dpaudit.audit.statistics import Identity, Indicator, PrivacyLoss

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
    "run_audit",
    "run_audit_with_rates",
]

DEFAULT_BATCH = 1 << 18


@dataclass(frozen=True)
class AuditTarget:
    """What to audit.

    Attributes:
        name: short name for the report (e.g. ``"gaussian"``).
        mechanism: samples outputs with ``sample(x, rng, size=n)`` (the implementation under
            audit; it may differ from what ``certified`` was computed for — a planted bug).
        pair: the neighbouring inputs; outputs on ``pair.x`` are the null sample.
        statistic: maps an array of ``n`` outputs to ``n`` floats.
        certified: the claim under audit.
        delta: the δ at which the ε lower bound is computed (must equal ``certified.delta``
            for the ε comparison to enter the verdict).
        support: the finite set of values the statistic can take, fixed before sampling (for
            discrete outputs); ``None`` for continuous statistics (Bonferroni grid).
        details: extra JSON-ready facts for the report (exact values, parameters).
    """

    name: str
    mechanism: Any
    pair: NeighbourPair
    statistic: Callable[[Any], np.ndarray]
    certified: Certified
    delta: float = 0.0
    support: tuple[float, ...] | None = None
    details: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not callable(getattr(self.mechanism, "sample", None)):
            raise ValueError("mechanism must expose sample(x, rng, size=n)")
        d = float(self.delta)
        if not (0.0 <= d < 1.0):
            raise ValueError(f"delta must be in [0, 1), got {self.delta!r}")
        object.__setattr__(self, "delta", d)
        if self.support is not None:
            sup = np.unique(np.asarray(self.support, dtype=float))
            if sup.size == 0 or np.isnan(sup).any():
                raise ValueError("support must be a non-empty set of numbers (no NaN)")
            object.__setattr__(self, "support", tuple(sup.tolist()))


def choose_statistic(
    mechanism: Any, pair: NeighbourPair, prefer: str = "auto"
) -> Callable[[Any], np.ndarray]:
    """White-box privacy loss when the mechanism exposes ``privacy_loss(output, x, x′)`` (the
    Neyman–Pearson-optimal statistic), else the black-box identity (``prefer="identity"``) or
    the indicator of the output ``x`` would most likely produce (``prefer="indicator"``).

    >>> from mechanisms import GaussianMechanism
    >>> from dpaudit.audit.neighbours import scalar_pair
    >>> describe_statistic(choose_statistic(GaussianMechanism(1.0), scalar_pair()))
    'privacy loss of GaussianMechanism'
    >>> describe_statistic(choose_statistic(GaussianMechanism(1.0), scalar_pair(), "identity"))
    'identity'
    """
    if prefer not in ("auto", "privacy-loss", "identity", "indicator"):
        raise ValueError(
            f"statistic must be 'auto', 'privacy-loss', 'identity' or 'indicator', got {prefer!r}"
        )
    white = callable(getattr(mechanism, "privacy_loss", None))
    if prefer == "privacy-loss" and not white:
        raise ValueError(f"{type(mechanism).__name__} exposes no privacy_loss: use a black-box statistic")
    if prefer in ("auto", "privacy-loss") and white:
        return RoundedLoss(PrivacyLoss(pair.bind(mechanism)))
    if prefer == "indicator":
        dist = getattr(mechanism, "output_distribution", None)
        if not callable(dist):
            raise ValueError("the indicator statistic needs a discrete mechanism with output_distribution(x)")
        return Indicator((int(np.argmax(dist(pair.x))),))
    return Identity()


@dataclass(frozen=True)
class RoundedLoss:
    """A white-box privacy loss rounded to ``decimals`` decimals.

    Rounding is post-processing, so any test on it is still valid; it removes floating-point
    noise in the *computation* of the loss (e.g. ``|o − 1| − |o|`` is 1 or 1 + 2⁻⁵² depending
    on the low bits of ``o``), which otherwise lets the auditor detect the low-order bits of
    the float sampler — a real but different (floating-point) leak, not the one audited here.

    >>> import numpy as np
    >>> class Shift:
    ...     def privacy_loss(self, o):
    ...         return 0.5 - np.asarray(o, dtype=float)
    >>> RoundedLoss(PrivacyLoss(Shift()))(np.array([0.1 + 0.2]))
    array([0.2])
    """

    loss: PrivacyLoss
    decimals: int = 9

    def __call__(self, outputs: Any) -> np.ndarray:
        return np.round(self.loss(outputs), self.decimals)

    def describe(self) -> str:
        inner = getattr(self.loss.mechanism, "mechanism", self.loss.mechanism)
        return f"privacy loss of {type(inner).__name__}"


def describe_statistic(statistic: Any) -> str:
    """``statistic.describe()`` if available, else the class name."""
    d = getattr(statistic, "describe", None)
    return str(d()) if callable(d) else type(statistic).__name__


def plan_batches(trials_per_side: int, batch_size: int) -> list[int]:
    """Batch sizes for one side: full batches then the remainder.

    >>> plan_batches(10, 4)
    [4, 4, 2]
    """
    n, b = int(trials_per_side), int(batch_size)
    if n < 1 or b < 1:
        raise ValueError(f"trials per side and batch_size must be >= 1, got {n} and {b}")
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
    if isinstance(trials, bool) or int(trials) != trials or trials < 2:
        raise ValueError(f"trials must be an integer >= 2, got {trials!r}")
    per_side = int(trials) // 2
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


def support_rates(
    null: np.ndarray, alt: np.ndarray, support: Iterable[float], *, confidence: float
) -> ThresholdRates:
    """The cut family on a pre-registered finite support (Bonferroni over its 2(m − 1) tests).

    >>> import numpy as np
    >>> r = support_rates(np.zeros(1000), np.ones(1000), [0.0, 1.0], confidence=0.95)
    >>> r.tests, r.false_positives, r.false_negatives
    (2, (0, 1000), (0, 1000))
    """
    sup = np.unique(np.asarray(list(support), dtype=float))
    x, y = np.asarray(null, dtype=float), np.asarray(alt, dtype=float)
    ix, iy = np.searchsorted(sup, x), np.searchsorted(sup, y)
    for name, v, i in (("null", x, ix), ("alternative", y, iy)):
        ok = (i < sup.size) & (sup[np.minimum(i, sup.size - 1)] == v)
        if not ok.all():
            raise ValueError(f"{name} statistic takes value {v[~ok][0]!r} outside the declared support")
    c0 = np.bincount(ix, minlength=sup.size)
    c1 = np.bincount(iy, minlength=sup.size)
    orient, cut, fp, fn = discrete_cut_counts(c0, c1)
    conf = float(confidence)
    alpha_each = (1.0 - conf) / (2.0 * orient.size)
    lvl = 1.0 - alpha_each
    n0, n1 = int(x.size), int(y.size)
    thr = np.where(orient == 1, sup[cut], sup[np.minimum(cut + 1, sup.size - 1)])

    def tup(a: Any) -> tuple:
        return tuple(np.asarray(a).tolist())

    return ThresholdRates(
        thresholds=tup(thr.astype(float)),
        orientations=tup(orient),
        false_positives=tup(fp),
        false_negatives=tup(fn),
        fpr_lower=tup(np.atleast_1d(clopper_pearson_lower(fp, n0, confidence=lvl))),
        fpr_upper=tup(np.atleast_1d(clopper_pearson_upper(fp, n0, confidence=lvl))),
        fnr_lower=tup(np.atleast_1d(clopper_pearson_lower(fn, n1, confidence=lvl))),
        fnr_upper=tup(np.atleast_1d(clopper_pearson_upper(fn, n1, confidence=lvl))),
        null_trials=n0,
        alt_trials=n1,
        confidence=conf,
        alpha_per_bound=alpha_each,
        method=f"cuts of a pre-registered support of {sup.size} values, bonferroni over {orient.size} tests",
    )


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


def epsilon_dp_tradeoff_curve(epsilon: float, delta: float) -> Callable[[Any], np.ndarray]:
    """The (ε, δ)-DP trade-off curve ``max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α))``.

    >>> f = epsilon_dp_tradeoff_curve(math.log(2.0), 0.0)
    >>> f([0.0, 0.2, 1.0]).round(6).tolist()
    [1.0, 0.6, 0.0]
    """
    e, d = float(epsilon), float(delta)

    def f(alpha: Any) -> np.ndarray:
        a = np.asarray(alpha, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            v = np.maximum(1.0 - d - math.exp(min(e, 700.0)) * a, math.exp(-min(e, 700.0)) * (1.0 - d - a))
        return np.maximum(0.0, np.nan_to_num(v, nan=0.0))

    return f


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
    conf = float(confidence)
    if not (0.0 < conf < 1.0):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
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
