"""Neighbouring input pairs for audits, with the neighbouring relation stated explicitly.

An audit distinguishes a mechanism's outputs on two inputs x (the *null*) and x′ (the
*alternative*). :class:`NeighbourPair` carries both inputs, the relation under which they are
neighbours (e.g. ``"replace: |x − x′| ≤ Δ"``) and a one-line description that goes into the
report. Generic constructors live here:

* :func:`identical` — x = x′ (a sanity check: every valid audit must give 0);
* :func:`scalar_pair` — 0 vs Δ for additive-noise mechanisms (Gaussian, Laplace).

Pairs that depend on one mechanism (report-noisy-max gaps, randomised response, the click
randomizer of the cascading bandits of Wang et al. (2021)) live beside their mechanisms, in
:mod:`mechanisms.auditing.pairs`.

Adversarial choices are made from *exact* output distributions and the planned number of
trials only (never from audit samples), so they do not affect the validity of the bounds:
:func:`predicted_bound` plugs the expected counts into the same Clopper–Pearson family the
runner uses and the pair with the best predicted bound wins. The most extreme pair (largest
exact privacy loss) is often useless for sampling, because its distinguishing event has
probability ~1e-7; the predicted bound trades loss against detectability.

:meth:`NeighbourPair.bind` turns a mechanism with ``privacy_loss(output, x, x′)`` into the
one-argument white-box statistic that :class:`dpaudit.audit.statistics.PrivacyLoss` expects.

Example:
    >>> p = scalar_pair(2.0)
    >>> p.x, p.x_prime, p.relation
    (0.0, 2.0, 'replace')
    >>> identical(0.0).exact_loss
    0.0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dpaudit.audit.clopper_pearson import cp_upper, epsilon_from_rates, mu_from_rates
from dpaudit.audit.thresholds import discrete_cut_counts
from dpaudit.validation import check_positive

__all__ = [
    "NeighbourPair",
    "PairLoss",
    "identical",
    "scalar_pair",
    "predicted_bound",
]


@dataclass(frozen=True)
class NeighbourPair:
    """Two inputs of a mechanism and the relation that makes them neighbours.

    ``x``/``x_prime`` are plain Python values (floats, tuples of floats, ints or ``None``) so the
    pair is hashable, picklable and JSON-ready. ``exact_loss`` is the largest absolute privacy
    loss of the pair when it is known exactly (``inf`` for disjoint supports), else ``None``.
    """

    x: Any
    x_prime: Any
    relation: str
    description: str
    exact_loss: float | None = None

    def swapped(self) -> NeighbourPair:
        """The same pair with the roles of x and x′ exchanged."""
        return NeighbourPair(
            self.x_prime, self.x, self.relation, f"{self.description} (swapped)", self.exact_loss
        )

    def bind(self, mechanism: Any) -> PairLoss:
        """The white-box statistic ``o ↦ log p(o | x) − log p(o | x′)`` of ``mechanism``."""
        if not callable(getattr(mechanism, "privacy_loss", None)):
            raise ValueError(f"{type(mechanism).__name__} has no privacy_loss(output, x, x_prime)")
        return PairLoss(mechanism, self.x, self.x_prime)

    def to_dict(self) -> dict[str, Any]:
        return {
            "x": _jsonable(self.x),
            "x_prime": _jsonable(self.x_prime),
            "relation": self.relation,
            "description": self.description,
            "exact_loss": self.exact_loss,
        }


def _jsonable(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_jsonable(e) for e in v]
    return v


@dataclass(frozen=True)
class PairLoss:
    """``privacy_loss(outputs)`` of ``mechanism`` for the fixed pair (x, x′) (picklable)."""

    mechanism: Any
    x: Any
    x_prime: Any

    def privacy_loss(self, outputs: Any) -> np.ndarray:
        return np.asarray(self.mechanism.privacy_loss(outputs, _arg(self.x), _arg(self.x_prime)), dtype=float)


def _arg(v: Any) -> Any:
    return np.asarray(v, dtype=float) if isinstance(v, tuple) else v


def identical(x: Any, relation: str = "identical inputs") -> NeighbourPair:
    """x = x′: nothing can be distinguished, so every audit must report 0.

    >>> identical(0.0).exact_loss
    0.0
    """
    return NeighbourPair(x, x, relation, "identical inputs (null check)", 0.0)


def scalar_pair(sensitivity: float = 1.0, relation: str = "replace") -> NeighbourPair:
    """0 vs Δ: the worst case of every additive-noise mechanism with sensitivity Δ.

    >>> scalar_pair(0.5).description
    'f(x) = 0 vs f(x′) = 0.5 (|f(x) − f(x′)| = sensitivity)'
    """
    s = check_positive("sensitivity", sensitivity)
    return NeighbourPair(0.0, s, relation, f"f(x) = 0 vs f(x′) = {s:g} (|f(x) − f(x′)| = sensitivity)")


# ---------------------------------------------------------------------------------------
# predicted bounds from exact distributions (used to pick adversarial pairs)


def predicted_bound(
    log_p: Sequence[float] | np.ndarray,
    log_q: Sequence[float] | np.ndarray,
    trials_per_side: int,
    *,
    confidence: float = 0.95,
    delta: float = 0.0,
    kind: Literal["epsilon", "mu"] = "epsilon",
) -> float:
    """The bound an audit of a discrete-output pair would report if every count equalled its
    expectation: the privacy-loss cut family with Bonferroni, as in the runner.

    ``log_p``/``log_q`` are the exact log output distributions under x and x′.

    >>> import math
    >>> b = predicted_bound([math.log(0.9), math.log(0.1)], [math.log(0.1), math.log(0.9)], 10**6)
    >>> 2.1 < b < math.log(81) / 2 + 0.05   # exact loss log 9 = 2.197
    True
    """
    lp = np.asarray(log_p, dtype=float)
    lq = np.asarray(log_q, dtype=float)
    with np.errstate(invalid="ignore"):
        loss = lp - lq
    loss = np.where(np.isnan(loss), 0.0, loss)  # both impossible
    order = np.argsort(loss, kind="stable")
    vals, inv = np.unique(loss[order], return_inverse=True)
    n = int(trials_per_side)
    c0 = np.bincount(inv, weights=np.exp(lp[order]), minlength=vals.size) * n
    c1 = np.bincount(inv, weights=np.exp(lq[order]), minlength=vals.size) * n
    o, _, fp, fn = discrete_cut_counts(np.round(c0).astype(np.int64), np.round(c1).astype(np.int64))
    n0, n1 = int(np.round(c0).sum()), int(np.round(c1).sum())
    alpha = (1.0 - confidence) / (2.0 * o.size)
    p, q = cp_upper(fp, n0, alpha), cp_upper(fn, n1, alpha)
    if kind == "mu":
        return float(np.max(mu_from_rates(p, q)))
    return float(np.max(epsilon_from_rates(p, q, delta)))
