"""What an audit compares against, and what it could have seen: shared by the auditors.

:func:`certified_claim` is the toolkit's certificate of a policy at a horizon (the claim an
audit tests), :func:`published_claim` the paper's (compared beside it, never certified).
:func:`detection_floor` and :func:`max_provable_epsilon` state what a design with n trials per
side can detect at all, so that "consistent" is read against what could have been seen. A run
whose audit has several components (a white-box audit of a mechanism beside the black-box audit
of the action sequences) reports them as one :class:`~bandits.auditing.contract.PolicyAudit`.

Example:
    >>> floor = max_provable_epsilon(1000, delta=1e-6, confidence=0.95)
    >>> round(floor, 2)
    5.6
"""

from __future__ import annotations

from bandits.environments import Environment
from bandits.policy import Policy
from dpaudit.accounting import account
from dpaudit.audit import (
    Certified,
)
from dpaudit.audit.power import floor_report, largest_provable_epsilon
from dpaudit.validation import check_integer

__all__ = [
    "max_provable_epsilon",
    "detection_floor",
    "certified_claim",
    "published_claim",
    "DEFAULT_MECHANISM_TRIALS",
]

DEFAULT_MECHANISM_TRIALS = 200_000
"""Mechanism samples (both neighbours together) for the randomizer and tree audits."""


def max_provable_epsilon(trials: int, *, delta: float, confidence: float) -> float:
    """The largest ε lower bound one pre-registered test can give with ``trials`` runs per side
    (:func:`dpaudit.audit.power.largest_provable_epsilon`): the audit's detection ceiling."""
    n = check_integer("trials", trials)
    return largest_provable_epsilon(n, n, (1.0 - confidence) / 2.0, delta)


def detection_floor(trials: int, *, delta: float, confidence: float) -> str:
    """One line for the report: the design's floor (:func:`dpaudit.audit.power.floor_report`: the
    smallest ε of the canonical (ε, δ) pair that ``trials`` runs per side detect with probability
    ≥ 1/2) and its ceiling (the most any test can prove)."""
    n = check_integer("trials", trials)
    alpha = (1.0 - confidence) / 2.0
    floor = floor_report(n, n, alpha, certified_mu=None, certified_epsilon=1.0, delta=delta)
    top = largest_provable_epsilon(n, n, alpha, delta)
    return (f"{trials} runs per side: epsilon >= {floor.epsilon:.3g} at delta = {delta:g} is detected with "
            f"probability >= 1/2; no test can prove epsilon above {top:.3g}")


def certified_claim(policy: Policy, horizon: int, env: Environment, delta: float) -> Certified:
    """What the toolkit certifies for ``policy`` at ``horizon`` (ε at δ; the pure ε when δ = 0)."""
    decl = policy.declare(horizon, env.n_arms, env.structure)
    if decl is None:
        return Certified(source="none: the policy declares no privacy")
    if delta > 0:
        eps = account(decl.event, delta=delta).best.value
    else:  # δ = 0: the pure ε of basic composition (independent of δ for pure leaves)
        eps = account(decl.event, delta=1e-12).bounds["basic"].value
    return Certified(epsilon=eps, delta=delta, source="dpaudit")


def published_claim(policy: Policy, horizon: int, env: Environment, delta: float) -> Certified | None:
    """The paper's claimed ε for ``policy`` at ``horizon``, if its declaration carries one."""
    decl = policy.declare(horizon, env.n_arms, env.structure)
    if decl is None or decl.published is None or decl.published.epsilon is None:
        return None
    return Certified(epsilon=float(decl.published.epsilon), delta=delta, source=decl.published.source)


