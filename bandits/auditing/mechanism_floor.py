"""The detection floor of a mechanism component, measured on the component's own mechanism.

Some audits of an algorithm audit one of its mechanisms directly — the local randomizer of
CUCB-LDP1/2, the tree of CUCB-DP — with :func:`dpaudit.audit.runner.run_audit` (white box, a
pilot that chooses the test, a certification on the main sample). The floor that audit computes
itself (:mod:`dpaudit.audit.procedure_floor`) is that of its procedure on a *reference* pair
(Gaussian, Laplace, randomised response) of the same strength; a K-coordinate randomizer or a
tree of Laplace nodes is not shaped like one. This module measures the floor on the mechanism
itself, along the same family as the algorithm floors of the other views
(:mod:`dpaudit.audit.leak_floor`): every noise draw of the mechanism scaled by 1/L. For each
leak factor L the component's own audit — the same call, trials, confidence and batches — runs
on the noise-scaled mechanism under ``replicates`` seeds (the same seeds at every L: common random
numbers), and the fractions of those audits whose lower bound is positive (detected) and above
the certificate (violation caught) are the points :func:`~dpaudit.audit.leak_floor.leak_floor`
searches for the crossings of ½. Each replicate is a whole audit, pilot and certification
included: the floor of the procedure actually run, by plain simulation.

The noise is scaled where it is drawn: the mechanism samples from :class:`ScaledDraws`, a
:class:`numpy.random.Generator` on the same bit stream whose Laplace, normal and standard normal
draws come at L⁻¹ times their scale (other draws pass through). A mechanism that makes no such
draw (randomised response) has no member of this family, and its floor is not measured
(:class:`NotScalable`).

Example:
    >>> import numpy as np
    >>> from mechanisms.laplace import LaplaceMechanism
    >>> m = NoiseScaledMechanism(LaplaceMechanism(scale=2.0, sensitivity=1.0), 0.5)
    >>> a = m.sample(np.zeros(1), np.random.default_rng(3), size=4)
    >>> b = LaplaceMechanism(scale=1.0, sensitivity=1.0).sample(np.zeros(1), np.random.default_rng(3), size=4)
    >>> bool(np.allclose(a, b))
    True
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpaudit.audit import AuditReport
from dpaudit.audit.leak_floor import LeakFloor, leak_floor
from dpaudit.audit.runner import AuditTarget, run_audit
from dpaudit.validation import check_integer, check_positive

__all__ = ["ScaledDraws", "NoiseScaledMechanism", "NotScalable", "mechanism_leak_floor",
           "with_measured_floor", "MECHANISM_FAMILY", "FLOOR_SPAWN_KEY", "REFINED",
           "EVALUATIONS"]  # fmt: skip

MECHANISM_FAMILY = "every noise draw of the audited mechanism scaled by 1/L, a whole audit per pilot"
"""The variant family of a mechanism component's measured floor (shown in its report)."""

REFINED = 1.03
"""Whole-audit floors refine each crossing until the factors around it are this close (a ratio):
their curves are steep (a white-box test on 10⁵ samples per side goes from never to always
refuting within a few per cent of L), where the default 1.25 would leave the crossing anywhere
in a bracket of 25 %."""

EVALUATIONS = 12
"""The most leak factors a whole-audit floor evaluates (the search's widening takes up to 4)."""

FLOOR_SPAWN_KEY = 0xF1A
"""The floor's audits are seeded from ``SeedSequence(floor_seed, spawn_key=(FLOOR_SPAWN_KEY, r))``:
apart from the audit's own seed, so one measured floor serves an audit at every seed."""


class NotScalable(ValueError):
    """The mechanism drew no Laplace or normal noise: the noise-scaled family does not exist."""


class ScaledDraws(np.random.Generator):
    """A generator on ``bit_generator`` whose Laplace, normal and standard normal draws come at
    ``factor`` times their scale (location kept); every other draw is the plain one.
    ``scaled_draws`` counts the calls that were scaled."""

    def __init__(self, bit_generator: np.random.BitGenerator, factor: float) -> None:
        super().__init__(bit_generator)
        self.factor = float(factor)
        self.scaled_draws = 0

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        self.scaled_draws += 1
        return super().laplace(loc, np.multiply(scale, self.factor), size)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        self.scaled_draws += 1
        return super().normal(loc, np.multiply(scale, self.factor), size)

    def standard_normal(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        self.scaled_draws += 1
        z = super().standard_normal(size, dtype, out)
        if out is not None:
            out *= self.factor
            return out
        return z * self.factor


@dataclass(frozen=True)
class NoiseScaledMechanism:
    """``mechanism`` with every Laplace or normal noise draw at ``factor`` times its scale (its
    ``sample`` only: the audit's statistic stays that of the declared mechanism)."""

    mechanism: Any
    factor: float

    def sample(self, x: Any, rng: np.random.Generator, size: Any = None) -> np.ndarray:
        draws = ScaledDraws(rng.bit_generator, self.factor)
        out = self.mechanism.sample(x, draws, size=size)
        if draws.scaled_draws == 0:
            raise NotScalable(f"{type(self.mechanism).__name__} drew no Laplace or normal noise: "
                              "its floor cannot be measured by scaling the noise")  # fmt: skip
        return np.asarray(out)


def mechanism_leak_floor(
    target: AuditTarget,
    *,
    trials: int,
    confidence: float,
    batch_size: int,
    floor_seed: int = 0,
    replicates: int = 64,
) -> LeakFloor:
    """The leak factors at which ``run_audit(target, trials=…, confidence=…, batch_size=…)`` on
    the noise-scaled mechanism shows a positive bound, and refutes ``target.certified``, in half of
    ``replicates`` audits (module docstring). Raises :class:`NotScalable` for a mechanism without
    Laplace or normal noise."""
    n = check_integer("replicates", replicates, 1)
    check_positive("trials", trials)
    cert = target.certified
    quantity = "mu" if cert.mu is not None else "epsilon"
    claim = cert.mu if cert.mu is not None else cert.epsilon
    if claim is None:
        raise ValueError("the target certifies neither mu nor epsilon: there is no floor to measure")
    seeds = [np.random.SeedSequence(int(floor_seed), spawn_key=(FLOOR_SPAWN_KEY, r)) for r in range(n)]

    def evaluate(leak: float) -> tuple[np.ndarray, np.ndarray]:
        scaled = replace(target, mechanism=NoiseScaledMechanism(target.mechanism, 1.0 / leak))
        lower = np.array([_bound(run_audit(scaled, trials=trials, seed=s, confidence=confidence,
                                           batch_size=batch_size), quantity) for s in seeds])  # fmt: skip
        return (lower > 0.0).astype(float), (lower > claim).astype(float)

    return leak_floor(evaluate, replicates=n, family=MECHANISM_FAMILY, quantity=quantity, certified=claim,
                      max_evaluations=EVALUATIONS, refined=REFINED)  # fmt: skip


def _bound(report: Any, quantity: str) -> float:
    e = report.empirical
    return float(e.mu_lower or 0.0) if quantity == "mu" else float(e.epsilon_lower)


def with_measured_floor(
    report: AuditReport, measured: LeakFloor | None, kept: dict[str, Any] | None
) -> AuditReport:
    """``report`` with the floor measured on its mechanism in place of its reference floor (its
    text, ``details["algorithm_floor"]``, where a kept one came from), and ``inconclusive`` when
    that floor says the audit would not see even the certified loss half of the time; ``report``
    itself when nothing was measured."""
    if measured is None:
        return report
    details = {**report.details, "detection_floor": measured.describe(),
               "algorithm_floor": measured.to_dict(),
               "reference_floor": report.details.get("detection_floor")}  # fmt: skip
    if kept is not None:
        details["algorithm_floor_kept"] = kept
    return AuditReport.build(target=report.target, certified=report.certified, empirical=report.empirical,
                             details=details, estimate=report.estimate, published=report.published,
                             inconclusive=not measured.has_power)  # fmt: skip
