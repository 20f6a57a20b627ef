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
    >>> from bandits.lazy.policies import LazyUCB
    >>> def bound(policy, seed):  # a stand-in whose bound grows with the leak factor
    ...     return 0.8 / policy.factor
    >>> f = replicated_leak_floor(bound, LazyUCB(epsilon=1.0), "epsilon", 1.0, replicates=2)
    >>> f.detect_leak, 1.0 < f.violate_leak < 1.6
    (0.0625, True)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from bandits.auditing.contract import AuditSettings
from bandits.auditing.kept_floors import algorithm_floor
from bandits.auditing.leak_floor import NoiseScaled
from bandits.auditing.mechanism_floor import EVALUATIONS, REFINED, with_measured_floor
from bandits.policy import Policy
from dpaudit.audit import AuditReport
from dpaudit.audit.leak_floor import NOISE_FAMILY, LeakFloor, leak_floor
from dpaudit.validation import check_integer

__all__ = ["replicated_leak_floor", "with_replicated_floor", "SPAWN", "REPLICATED_FAMILY"]

SPAWN = 0xF1B
"""The middle word of every replicate's seed ``[floor_seed, SPAWN, r]``."""

REPLICATED_FAMILY = NOISE_FAMILY + ", the whole audit replicated per pilot"
"""The variant family, as a report shows it."""


def replicated_leak_floor(
    bound: Callable[[Policy, list[int]], float],
    policy: Policy,
    quantity: str,
    certified: float,
    *,
    floor_seed: int = 0,
    replicates: int = 16,
) -> LeakFloor:
    """The leak factors at which the lower bound ``bound(NoiseScaled(policy, 1/L), seed)`` of a
    whole audit (on ``quantity``, ``"mu"`` or ``"epsilon"``) is positive, and above ``certified``,
    in half of ``replicates`` runs of it (module docstring)."""
    n = check_integer("replicates", replicates, 1)
    if quantity not in ("mu", "epsilon"):
        raise ValueError(f"quantity must be 'mu' or 'epsilon', got {quantity!r}")
    seeds = [[check_integer("floor_seed", floor_seed, 0), SPAWN, r] for r in range(n)]

    def evaluate(leak: float) -> tuple[np.ndarray, np.ndarray]:
        variant = NoiseScaled(policy, 1.0 / leak)
        lower = np.array([bound(variant, s) for s in seeds])
        return (lower > 0.0).astype(float), (lower > certified).astype(float)

    return leak_floor(evaluate, replicates=n, family=REPLICATED_FAMILY, quantity=quantity,
                      certified=certified, max_evaluations=EVALUATIONS, refined=REFINED)  # fmt: skip


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
    :func:`replicated_leak_floor` measures on ``audit``'s bound on ``quantity`` (default: μ when
    one is certified), or one kept from such a measurement at ``config``
    (:func:`bandits.auditing.kept_floors.algorithm_floor`: as ``settings.floor`` asks), in place of
    its reference floor."""
    cert = report.certified
    kind = quantity or ("mu" if cert.mu is not None else "epsilon")
    claim = cert.mu if kind == "mu" else cert.epsilon
    if claim is None:
        raise ValueError(f"the certificate gives no {kind}: there is no floor to measure against it")
    def bound(variant: Policy, seed: list[int]) -> float:
        return _bound(audit(variant, seed), kind)

    measured, kept = algorithm_floor(view, settings, config, lambda: replicated_leak_floor(
        bound, policy, kind, float(claim), floor_seed=settings.floor_seed))  # fmt: skip
    return with_measured_floor(report, measured, kept)


def _bound(report: AuditReport, kind: str) -> float:
    e = report.empirical
    return float(e.mu_lower or 0.0) if kind == "mu" else float(e.epsilon_lower)
