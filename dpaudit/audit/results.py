"""The results of the lower-bound procedures: ε at δ and GDP μ lower bounds, and their evidence.

Both bound types hold one :class:`BoundEvidence`: the confidence of the statement and the test
that achieved it (threshold, orientation, Clopper–Pearson upper bounds on its error rates, its
counts, the samples it used, the size of the family it was the best of, the procedure). Only
the bounded quantity differs: ``epsilon`` at ``delta``, or ``mu``.

Frozen dataclasses of plain Python values: ``json.dumps(dataclasses.asdict(b))`` works (an
infinite bound serialises as ``Infinity``).

Example:
    >>> ev = BoundEvidence(confidence=0.95, threshold=None, fpr_upper=0.1, fnr_upper=0.6,
    ...                    trials=2000, method="clopper-pearson, one pre-registered test")
    >>> b = MuLowerBound(mu=0.5, evidence=ev)
    >>> b.mu, b.evidence.tests, b.evidence.orientation
    (0.5, 1, 0)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BoundEvidence", "EpsilonLowerBound", "MuLowerBound"]


@dataclass(frozen=True)
class BoundEvidence:
    """What a lower bound rests on.

    ``confidence`` is the probability with which the statement holds; ``threshold`` and
    ``orientation`` identify the test that achieved it (``None``/``0`` for bounds from
    privacy-loss samples), ``fpr_upper``/``fnr_upper`` are the upper bounds on its error rates and
    ``false_positives``/``false_negatives`` its counts (``None`` where there is no test);
    ``trials`` counts every sample used, including selection samples; ``null_trials`` /
    ``alt_trials`` count the certification samples; ``tests`` is the size of the family the test
    was the best of, and ``method`` names the procedure.
    """

    confidence: float
    threshold: float | None
    fpr_upper: float | None
    fnr_upper: float | None
    trials: int
    method: str
    orientation: int = 0
    false_positives: int | None = None
    false_negatives: int | None = None
    null_trials: int = 0
    alt_trials: int = 0
    tests: int = 1


@dataclass(frozen=True)
class EpsilonLowerBound:
    """A valid lower bound: with probability ≥ ``evidence.confidence`` the mechanism is not
    (ε′, δ)-DP for any ε′ < ``epsilon``, with δ = ``delta``."""

    epsilon: float
    delta: float
    evidence: BoundEvidence


@dataclass(frozen=True)
class MuLowerBound:
    """A valid lower bound: with probability ≥ ``evidence.confidence`` the mechanism is not
    μ′-GDP for any μ′ < ``mu``."""

    mu: float
    evidence: BoundEvidence
