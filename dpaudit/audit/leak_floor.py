"""The detection floor of an audit measured on the audited algorithm itself.

A reference floor (:mod:`dpaudit.audit.procedure_floor`) asks how strong a *reference* pair
(Gaussian, Laplace, randomised response) must be for the audit's procedure to see it. An
algorithm's own pairs are not shaped like a reference pair: one bug moves many of its candidate
tests at once, and its outputs are a post-processing of its releases. The algorithm floor asks
the question of the algorithm itself, along one family of its own buggy variants: every privacy
noise draw of the run scaled by 1/L (the *leak factor* L; L = 1 is the algorithm as declared, L =
2 the "noise halved" bug). Scaling the noise of a Laplace or Gaussian mechanism by 1/L multiplies
its ε, or its μ, by L exactly, so the leak factor reads as a multiple of the certificate.

For each leak factor the caller's ``evaluate(L)`` runs the audit's own procedure on the scaled
variant (its pilot, its choice, its main-sample certification: replicated pilots, and the chosen
test's exact binomial detection probability on the main sample sizes) and returns, per replicate,
the probability that the audit's lower bound is positive and that it exceeds the certificate.
:func:`leak_floor` searches the leak factors where the averages cross ½:

* ``detect_leak`` — the smallest L whose audit shows a positive bound half of the time. Above 1
  the audit, at this size, would not see even the leak the certificate allows: its
  verdict is ``inconclusive``;
* ``violate_leak`` — the smallest L whose audit refutes the certificate half of the time: a
  noise-scale bug of that size is caught in half of the audits.

The search evaluates L = 1 and 2, widens by factors of 4 (within [1/16, 64]) until both crossings
are bracketed, then evaluates the widest bracket's interpolated crossing (linear in (log L,
Φ⁻¹(P)), kept a tenth of the bracket inside it) until both brackets are within a factor 1.25 or 7
factors have been evaluated, and interpolates the same way between the final points. Every
evaluation uses the same seeds (common random numbers), so the curve is smooth in L.

Example:
    >>> import numpy as np
    >>> from scipy.stats import norm
    >>> f = leak_floor(lambda L: (np.array([norm.cdf(4 * np.log(L))]),
    ...                          np.array([norm.cdf(4 * np.log(L / 3))])), replicates=1)
    >>> round(f.detect_leak, 2), round(f.violate_leak, 2)
    (1.0, 3.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["LeakPoint", "LeakFloor", "leak_floor", "LEAK_RANGE", "NOISE_FAMILY"]

LEAK_RANGE = (1.0 / 16.0, 64.0)
"""The leak factors the search may evaluate."""

NOISE_FAMILY = "every privacy noise draw of the run scaled by 1/L"

REFINED = 1.25
"""A crossing is refined until the evaluated factors around it are this close (a ratio)."""

Evaluator = Callable[[float], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class LeakPoint:
    """One evaluated leak factor: the mean probabilities (over replicated pilots) that the
    audit's bound is positive (``detected``) and above the certificate (``violated``)."""

    leak: float
    detected: float
    violated: float


@dataclass(frozen=True)
class LeakFloor:
    """The algorithm floor (module docstring): leak factors ``detect_leak`` and ``violate_leak``
    (``None``: not reached within :data:`LEAK_RANGE`; a crossing below the smallest evaluated
    factor is reported as that factor, an upper bound), the evaluated ``points``, the number of
    replicated pilots per point, the variant ``family`` and the certified quantity."""

    detect_leak: float | None
    violate_leak: float | None
    points: tuple[LeakPoint, ...]
    replicates: int
    family: str
    quantity: str
    certified: float

    @property
    def has_power(self) -> bool:
        """Whether the declared algorithm (L = 1) already shows a positive bound half the time."""
        return self.detect_leak is not None and self.detect_leak <= 1.0

    def describe(self) -> str:
        """One line for reports (the leak factors are estimates, not certified: shown to 3 digits)."""
        q, c = self.quantity, self.certified

        def part(leak: float | None, what: str) -> str:
            if leak is None:
                return f"{what} not reached up to L = {LEAK_RANGE[1]:g}"
            return f"{what} at L >= {leak:.3g} ({q} = {leak * c:.4g})"

        each = f", {self.replicates} pilots each" if self.replicates > 1 else ""
        return (f"measured on this algorithm ({self.family}; {len(self.points)} factors{each}): "
                f"{part(self.detect_leak, 'detected')}, "
                f"{part(self.violate_leak, 'violation caught')} with probability >= 1/2")  # fmt: skip

    def to_dict(self) -> dict[str, object]:
        return {
            "detect_leak": self.detect_leak,
            "violate_leak": self.violate_leak,
            "family": self.family,
            "quantity": self.quantity,
            "certified": self.certified,
            "replicates": self.replicates,
            "points": [[p.leak, p.detected, p.violated] for p in self.points],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LeakFloor:
        """The floor :meth:`to_dict` wrote (a kept floor, :mod:`bandits.auditing.kept_floors`).

        Example:
            >>> f = LeakFloor(0.5, 2.0, (LeakPoint(1.0, 0.7, 0.1),), 64, NOISE_FAMILY, "mu", 0.2)
            >>> LeakFloor.from_dict(f.to_dict()) == f
            True
        """
        leaks = tuple(None if d[k] is None else float(d[k]) for k in ("detect_leak", "violate_leak"))
        points = tuple(LeakPoint(float(a), float(b), float(c)) for a, b, c in d["points"])
        return cls(leaks[0], leaks[1], points, int(d["replicates"]), str(d["family"]), str(d["quantity"]),
                   float(d["certified"]))  # fmt: skip


def _probit(p: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(min(max(p, 1e-12), 1.0 - 1e-12))


def _crossing(points: list[LeakPoint], field: str) -> tuple[float | None, tuple[int, int] | None]:
    """The interpolated ½-crossing of ``field`` over the sorted ``points`` and its bracket
    (indices), or (smallest leak, None) if the first point is already at ½, (None, None) if none is."""
    vals = [getattr(p, field) for p in points]
    if vals[0] >= 0.5:
        return points[0].leak, None
    for i in range(len(points) - 1):
        if vals[i] < 0.5 <= vals[i + 1]:
            x0, x1 = math.log(points[i].leak), math.log(points[i + 1].leak)
            z0, z1 = _probit(vals[i]), _probit(vals[i + 1])
            x = x0 if z1 == z0 else x0 + (0.0 - z0) * (x1 - x0) / (z1 - z0)
            return math.exp(min(max(x, x0), x1)), (i, i + 1)
    return None, None


def leak_floor(
    evaluate: Evaluator,
    *,
    replicates: int,
    family: str = NOISE_FAMILY,
    quantity: str = "mu",
    certified: float = 1.0,
    max_evaluations: int = 7,
    refined: float = REFINED,
) -> LeakFloor:
    """Search the leak factors where the audit's detection and violation probabilities cross
    ½ (module docstring). ``evaluate(L)`` returns two arrays of per-replicate probabilities. A
    steep curve (a test fixed in advance on a large sample: no pilots to average over) needs a
    smaller ``refined`` ratio and more evaluations than the default."""
    lo_lim, hi_lim = LEAK_RANGE
    seen: dict[float, LeakPoint] = {}

    def at(leak: float) -> None:
        if leak not in seen and len(seen) < max_evaluations:
            det, vio = evaluate(leak)
            seen[leak] = LeakPoint(leak, float(np.mean(det)), float(np.mean(vio)))

    at(1.0)
    at(2.0)
    while len(seen) < max_evaluations:
        pts = sorted(seen.values(), key=lambda p: p.leak)
        if pts[0].detected >= 0.5 and pts[0].leak > lo_lim:
            at(max(pts[0].leak / 4.0, lo_lim))
        elif pts[-1].violated < 0.5 and pts[-1].leak < hi_lim:
            at(min(pts[-1].leak * 4.0, hi_lim))
        else:
            break
    while len(seen) < max_evaluations:  # refine the widest bracket, at its interpolated crossing
        pts = sorted(seen.values(), key=lambda p: p.leak)
        wide = []
        for field in ("detected", "violated"):
            x, bracket = _crossing(pts, field)
            if x is not None and bracket is not None:
                ratio = pts[bracket[1]].leak / pts[bracket[0]].leak
                inner = min(max(x, pts[bracket[0]].leak * ratio**0.1), pts[bracket[1]].leak / ratio**0.1)
                wide.append((ratio, float(f"{inner:.6g}")))
        if not wide or max(wide)[0] < refined:
            break
        at(max(wide)[1])
    pts = sorted(seen.values(), key=lambda p: p.leak)
    return LeakFloor(
        detect_leak=_crossing(pts, "detected")[0],
        violate_leak=_crossing(pts, "violated")[0],
        points=tuple(pts),
        replicates=int(replicates),
        family=family,
        quantity=quantity,
        certified=float(certified),
    )
