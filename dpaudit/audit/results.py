"""The results of the lower-bound procedures: ε at δ and GDP μ lower bounds.

Frozen dataclasses of plain Python values: ``json.dumps(dataclasses.asdict(b))`` works (an
infinite bound serialises as ``Infinity``).

Example:
    >>> b = MuLowerBound(mu=0.5, confidence=0.95, threshold=None, fpr_upper=0.1, fnr_upper=0.6,
    ...                  trials=2000, method="clopper-pearson, one pre-registered test")
    >>> b.mu, b.tests
    (0.5, 1)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EpsilonLowerBound", "MuLowerBound"]


@dataclass(frozen=True)
class EpsilonLowerBound:
    """A valid lower bound: with probability ≥ ``confidence`` the mechanism is not
    (ε′, δ)-DP for any ε′ < ``epsilon``.

    ``threshold``/``orientation`` identify the test that achieved it (``None``/``0`` for
    bounds from privacy-loss samples); ``trials`` counts every sample used, including
    selection samples; ``null_trials``/``alt_trials`` count the certification samples.
    """

    epsilon: float
    delta: float
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
class MuLowerBound:
    """A valid lower bound: with probability ≥ ``confidence`` the mechanism is not μ′-GDP for
    any μ′ < ``mu``. Fields as in :class:`EpsilonLowerBound`."""

    mu: float
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
