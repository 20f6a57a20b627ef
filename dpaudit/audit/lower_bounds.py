"""The headline bounds: ε at δ and GDP μ lower bounds from threshold tests on a scalar statistic.

Each bound is a one-sided Clopper–Pearson bound on the two error rates of the best test of a
family of :mod:`dpaudit.audit.thresholds`, with the multiplicity control the caller chose in the
signature (:class:`~dpaudit.audit.multiplicity.Bonferroni` or
:class:`~dpaudit.audit.multiplicity.SampleSplit`), or of one test fixed before the data were
seen (``*_from_counts``).

Example (a μ = 1 Gaussian mechanism):
    >>> import numpy as np
    >>> from dpaudit.audit.multiplicity import Bonferroni, SampleSplit
    >>> rng = np.random.default_rng(0)
    >>> null, alt = rng.normal(0, 1, 100_000), rng.normal(1, 1, 100_000)
    >>> b = mu_lower_bound(null, alt, confidence=0.95, selection=Bonferroni())
    >>> 0.9 < b.mu <= 1.0
    True
    >>> e = epsilon_lower_bound(null, alt, delta=1e-5, confidence=0.95, selection=SampleSplit())
    >>> 0.0 < e.epsilon < 4.38   # true ε(1e-5) of 1-GDP is 4.377
    True
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, TypeVar

import numpy as np

from dpaudit.audit.clopper_pearson import check_counts, epsilon_from_rates, mu_from_rates
from dpaudit.audit.multiplicity import Bonferroni, SampleSplit, Selection
from dpaudit.audit.results import EpsilonLowerBound, MuLowerBound
from dpaudit.audit.thresholds import ThresholdRates, rates_from_counts, split_rates, threshold_rates
from dpaudit.validation import check_probability

__all__ = [
    "epsilon_lower_bound",
    "mu_lower_bound",
    "epsilon_lower_bound_from_counts",
    "mu_lower_bound_from_counts",
]

ArrayLike = Any


Bound = TypeVar("Bound", EpsilonLowerBound, MuLowerBound)


def _with_evidence(bound: Bound, **changes: Any) -> Bound:
    """``bound`` with some fields of its evidence replaced."""
    return replace(bound, evidence=replace(bound.evidence, **changes))


def epsilon_lower_bound(
    null_samples: ArrayLike,
    alt_samples: ArrayLike,
    *,
    delta: float,
    confidence: float,
    selection: Selection,
) -> EpsilonLowerBound:
    """ε lower bound at ``delta`` from threshold tests on a scalar statistic.

    ``selection`` is :class:`Bonferroni` (best of a pre-registered grid, all samples) or
    :class:`SampleSplit` (select on one part, certify on the other).

    >>> import numpy as np
    >>> rng = np.random.default_rng(2)
    >>> x = rng.normal(0, 1, 20_000)
    >>> epsilon_lower_bound(x[:10_000], x[10_000:], delta=0.0, confidence=0.95,
    ...                     selection=Bonferroni()).epsilon   # identical distributions
    0.0
    """
    d = check_probability("delta", delta, low_open=False)
    if isinstance(selection, Bonferroni):
        return threshold_rates(
            null_samples, alt_samples, confidence=confidence, selection=selection
        ).epsilon_lower_bound(d)
    if isinstance(selection, SampleSplit):
        r = split_rates(
            null_samples,
            alt_samples,
            confidence,
            selection,
            lambda p, q: np.asarray(epsilon_from_rates(p, q, d)),
        )
        trials = int(np.size(null_samples) + np.size(alt_samples))
        return _with_evidence(r.epsilon_lower_bound(d), trials=trials)
    raise ValueError(f"selection must be Bonferroni(...) or SampleSplit(...), got {selection!r}")


def mu_lower_bound(
    null_samples: ArrayLike, alt_samples: ArrayLike, *, confidence: float, selection: Selection
) -> MuLowerBound:
    """GDP μ lower bound from threshold tests on a scalar statistic (see
    :func:`~dpaudit.audit.clopper_pearson.mu_from_rates`).

    >>> import numpy as np
    >>> rng = np.random.default_rng(3)
    >>> b = mu_lower_bound(rng.normal(0, 1, 50_000), rng.normal(2, 1, 50_000),
    ...                    confidence=0.95, selection=SampleSplit())
    >>> 1.7 < b.mu < 2.0, b.evidence.tests
    (True, 1)
    """
    if isinstance(selection, Bonferroni):
        return threshold_rates(
            null_samples, alt_samples, confidence=confidence, selection=selection
        ).mu_lower_bound()
    if isinstance(selection, SampleSplit):
        r = split_rates(
            null_samples, alt_samples, confidence, selection, lambda p, q: np.asarray(mu_from_rates(p, q))
        )
        return _with_evidence(r.mu_lower_bound(), trials=int(np.size(null_samples) + np.size(alt_samples)))
    raise ValueError(f"selection must be Bonferroni(...) or SampleSplit(...), got {selection!r}")


def _single_test(fp: int, n_null: int, fn: int, n_alt: int, confidence: float) -> ThresholdRates:
    conf = check_probability("confidence", confidence)
    check_counts(fp, n_null)
    check_counts(fn, n_alt)
    return rates_from_counts(
        np.array([np.nan]),
        np.array([1]),
        np.array([fp]),
        np.array([fn]),
        int(n_null),
        int(n_alt),
        conf,
        (1.0 - conf) / 2.0,
        "single pre-registered test",
    )


def epsilon_lower_bound_from_counts(
    false_positives: int,
    null_trials: int,
    false_negatives: int,
    alt_trials: int,
    *,
    delta: float,
    confidence: float,
) -> EpsilonLowerBound:
    """ε lower bound at ``delta`` for ONE test fixed before seeing the data (level α/2 per rate).

    >>> b = epsilon_lower_bound_from_counts(20, 5000, 300, 5000, delta=1e-5, confidence=0.95)
    >>> round(b.epsilon, 4)   # = privacy-estimates compute_eps_lo(method="beta")
    5.0186
    """
    r = _single_test(false_positives, null_trials, false_negatives, alt_trials, confidence)
    return _with_evidence(r.epsilon_lower_bound(delta), threshold=None)


def mu_lower_bound_from_counts(
    false_positives: int, null_trials: int, false_negatives: int, alt_trials: int, *, confidence: float
) -> MuLowerBound:
    """GDP μ lower bound for ONE pre-registered test (level α/2 per rate).

    >>> round(mu_lower_bound_from_counts(0, 1000, 0, 1000, confidence=0.95).mu, 4)
    5.3598
    """
    r = _single_test(false_positives, null_trials, false_negatives, alt_trials, confidence)
    return _with_evidence(r.mu_lower_bound(), threshold=None)
