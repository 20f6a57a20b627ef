"""The floor of a policy audit measured by running the whole audit again on the policy's own
noise-scaled variants.

Where an audit's procedure is cheap next to the cost of modelling it — the cascade audits'
pilot over designs and their main sample — the plainest honest floor is that audit itself,
replicated: for each leak factor L, the audit runs on
:class:`~bandits.auditing.leak_floor.NoiseScaled` (every privacy noise draw of the policy at 1/L of
its scale) under ``replicates`` seeds, the same seeds at every L (common random numbers), and the
fractions of those audits whose lower bound is positive and above the certificate are the points
:func:`dpaudit.audit.leak_floor.leak_floor` searches for the crossings of ½. The seeds are
``[floor_seed, SPAWN, r]``: apart from the audit's own, so the floor serves an audit at any seed.

Example:
    >>> import numpy as np
    >>> from dpaudit.audit import AuditReport, Certified, Empirical
    >>> from bandits.lazy.policies import LazyUCB
    >>> def audit(policy, seed):  # a stand-in whose bound grows with the leak factor
    ...     leak = 1.0 / policy.factor
    ...     emp = Empirical(epsilon_lower=0.8 * leak, mu_lower=None, delta=1e-6, confidence=0.95,
    ...                     trials=10, method="m", statistic="s")
    ...     return AuditReport.build(target="t", certified=Certified(epsilon=1.0, delta=1e-6), empirical=emp)
    >>> cert = Certified(epsilon=1.0, delta=1e-6)
    >>> f = replicated_leak_floor(audit, LazyUCB(epsilon=1.0), cert, replicates=2)
    >>> f.detect_leak, 1.0 < f.violate_leak < 1.6
    (0.0625, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from bandits.auditing.contract import AuditSettings
from bandits.auditing.kept_floors import algorithm_floor
from bandits.auditing.leak_floor import NoiseScaled
from bandits.auditing.mechanism_floor import with_measured_floor
from bandits.policy import Policy
from dpaudit.audit import AuditReport, Certified
from dpaudit.audit.leak_floor import NOISE_FAMILY, LeakFloor, leak_floor
from dpaudit.validation import check_integer

__all__ = ["replicated_leak_floor", "with_replicated_floor", "SPAWN", "REPLICATED_FAMILY"]

SPAWN = 0xF1B
"""The middle word of every replicate's seed ``[floor_seed, SPAWN, r]``."""

REPLICATED_FAMILY = NOISE_FAMILY + ", the whole audit replicated per pilot"
"""The variant family, as a report shows it."""


def replicated_leak_floor(
    audit: Callable[[Policy, list[int]], AuditReport],
    policy: Policy,
    certified: Certified,
    *,
    floor_seed: int = 0,
    replicates: int = 16,
    quantity: str | None = None,
) -> LeakFloor:
    """The leak factors at which ``audit(NoiseScaled(policy, 1/L), seed)`` shows a positive bound,
    and a bound above ``certified``, in half of ``replicates`` runs of it (module docstring).
    ``quantity``: ``"mu"`` or ``"epsilon"`` (default: μ when one is certified)."""
    n = check_integer("replicates", replicates, 1)
    kind = quantity or ("mu" if certified.mu is not None else "epsilon")
    if kind not in ("mu", "epsilon"):
        raise ValueError(f"quantity must be 'mu' or 'epsilon', got {quantity!r}")
    claim = certified.mu if kind == "mu" else certified.epsilon
    if claim is None:
        raise ValueError(f"the certificate gives no {kind}: there is no floor to measure against it")
    seeds = [[check_integer("floor_seed", floor_seed, 0), SPAWN, r] for r in range(n)]

    def evaluate(leak: float) -> tuple[np.ndarray, np.ndarray]:
        variant = NoiseScaled(policy, 1.0 / leak)
        lower = np.array([_bound(audit(variant, s), kind) for s in seeds])
        return (lower > 0.0).astype(float), (lower > claim).astype(float)

    return leak_floor(evaluate, replicates=n, family=REPLICATED_FAMILY, quantity=kind, certified=float(claim))


def with_replicated_floor(
    report: AuditReport,
    view: str,
    settings: AuditSettings,
    config: Sequence[object],
    audit: Callable[[Policy, list[int]], AuditReport],
    policy: Policy,
    quantity: str | None = None,
) -> AuditReport:
    """``report`` (the audit ``audit(policy, settings.seed)`` made) with the floor
    :func:`replicated_leak_floor` measures, or one kept from such a measurement at ``config``
    (:func:`bandits.auditing.kept_floors.algorithm_floor`: as ``settings.floor`` asks), in place of
    its reference floor."""
    measured, kept = algorithm_floor(view, settings, config, lambda: replicated_leak_floor(
        audit, policy, report.certified, floor_seed=settings.floor_seed, quantity=quantity))  # fmt: skip
    return with_measured_floor(report, measured, kept)


def _bound(report: AuditReport, kind: str) -> float:
    e = report.empirical
    return float(e.mu_lower or 0.0) if kind == "mu" else float(e.epsilon_lower)
