"""Reference pairs of known privacy, simulated the way an audit would see them.

The detection floor of an audit (:mod:`dpaudit.audit.procedure_floor`) is the smallest privacy
of a *reference pair* that the audit's own procedure detects half of the time. Each pair here
gives, for a privacy ``strength`` s, exactly what that procedure needs, without drawing the
pilot's samples one by one:

* :meth:`pilot_families` — the pilot's test family (:func:`~dpaudit.audit.thresholds.design_family`)
  on ``reps`` independent pilots, drawn from its exact distribution: the null sample's order
  statistics at the grid's ranks from Gamma spacings (the k-th of n uniform order statistics is
  S_k / S_{n+1}, S partial sums of standard exponentials; David & Nagaraja 2003, §2.5), the
  alternative sample's counts below those thresholds from a multinomial; for a finite support
  the counts of every support value (multinomial);
* :meth:`error_rates` — the exact false-positive and false-negative probabilities of a test
  (threshold, orientation), which make the certification's counts binomial.

The pairs (``leak=False`` gives the null design: both sides drawn from x's distribution):

* :class:`GaussianReference` — N(0, 1) vs N(s, 1), μ = s GDP (Dong, Roth & Su 2022, Def. 2.6),
  statistic the output (the Gaussian privacy loss is affine in it: the same tests);
* :class:`LaplaceReference` — Lap(0, 1) vs Lap(s, 1), ε = s, statistic the privacy loss
  |o − s| − |o| (clipped to [−s, s], with atoms — the statistic the Laplace audit uses);
* :class:`RandomizedResponseReference` — binary randomised response, the canonical ε-DP pair
  (Kairouz, Oh & Viswanath 2015, Theorem 2.1), ε = s, statistic its privacy loss on a declared
  support.

Example:
    >>> import numpy as np
    >>> fam = GaussianReference().pilot_families(1.0, 500, 500, 50, np.random.default_rng(0), 3)
    >>> fam.thresholds.shape, fam.discrete
    ((3, 100), False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dpaudit.audit.multiplicity import threshold_grid
from dpaudit.audit.pilot import FamilyBatch
from dpaudit.audit.thresholds import discrete_cut_counts

__all__ = [
    "ReferencePair",
    "GaussianReference",
    "LaplaceReference",
    "RandomizedResponseReference",
    "reference_pair",
    "uniform_order_statistics",
]


class ReferencePair(Protocol):
    """A pair of known privacy ``strength`` as an audit procedure sees it (module docstring)."""

    @property
    def name(self) -> str: ...

    def pilot_families(self, strength: float, n0: int, n1: int, grid_size: int, rng: np.random.Generator,
                       reps: int, leak: bool = True) -> FamilyBatch: ...  # fmt: skip

    def error_rates(self, strength: float, thresholds: np.ndarray, orientations: np.ndarray,
                    leak: bool = True) -> tuple[np.ndarray, np.ndarray]: ...  # fmt: skip


def uniform_order_statistics(n: int, ranks: np.ndarray, rng: np.random.Generator, reps: int
                             ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``(U, 1 − U)`` for the order statistics of the given 1-based increasing ``ranks`` of ``n``
    uniforms, on ``reps`` independent samples (shape (reps, len(ranks))); the upper tail is
    returned separately so that quantiles near 1 keep their precision.

    >>> u, v = uniform_order_statistics(9, np.array([5]), np.random.default_rng(0), 20_000)
    >>> abs(float(u.mean()) - 0.5) < 0.01 and bool(np.allclose(u + v, 1.0))
    True
    """
    shapes = np.diff(np.concatenate([[0], ranks, [n + 1]])).astype(float)
    g = rng.standard_gamma(shapes, size=(reps, shapes.size))
    below = np.cumsum(g, axis=1)
    above = np.cumsum(g[:, ::-1], axis=1)[:, ::-1]
    total = below[:, -1:]
    return below[:, :-1] / total, above[:, 1:] / total


def _counts_at_or_below(cdf: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Counts of ``n`` draws at or below each of a row's increasing cut points, given the CDF
    at the cuts (shape (reps, m)): one multinomial draw per row."""
    edge = np.zeros((cdf.shape[0], 1))
    p = np.diff(np.concatenate([edge, cdf, edge + 1.0], axis=1), axis=1)
    cells = rng.multinomial(n, np.clip(p, 0.0, 1.0))
    return np.cumsum(cells, axis=1)[:, :-1]


def _grid_ranks(n0: int, grid_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The grid's ranks f, and the 0-based sorted-null indices of its thresholds: (f, up, down)."""
    f = threshold_grid(n0, grid_size)
    return f, n0 - 1 - f, f


@dataclass(frozen=True)
class GaussianReference:
    """N(0, 1) vs N(μ, 1), statistic the output (module docstring)."""

    name: str = "gaussian"

    def pilot_families(self, strength: float, n0: int, n1: int, grid_size: int, rng: np.random.Generator,
                       reps: int, leak: bool = True) -> FamilyBatch:  # fmt: skip
        from scipy import stats

        shift = float(strength) if leak else 0.0
        f, up, dn = _grid_ranks(n0, grid_size)
        idx = np.unique(np.concatenate([up, dn]))
        u, v = uniform_order_statistics(n0, idx + 1, rng, reps)
        x = np.where(u < 0.5, stats.norm.ppf(u), stats.norm.isf(v))  # null order statistics
        below = _counts_at_or_below(stats.norm.cdf(x - shift), n1, rng)
        iu, idn = np.searchsorted(idx, up), np.searchsorted(idx, dn)
        t = np.concatenate([x[:, iu], x[:, idn]], axis=1)
        fn = np.concatenate([below[:, iu], n1 - below[:, idn]], axis=1)  # continuous: P(= t) = 0
        o = np.concatenate([np.ones(f.size, np.int64), -np.ones(f.size, np.int64)])
        fp = np.concatenate([f, f])
        return FamilyBatch(t, np.broadcast_to(o, t.shape), np.broadcast_to(fp, t.shape), fn, n0, n1, False)

    def error_rates(self, strength: float, thresholds: np.ndarray, orientations: np.ndarray,
                    leak: bool = True) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        from scipy import stats

        t, o = np.asarray(thresholds, float), np.asarray(orientations)
        shift = float(strength) if leak else 0.0
        fpr = np.where(o == 1, stats.norm.sf(t), stats.norm.cdf(t))
        fnr = np.where(o == 1, stats.norm.cdf(t - shift), stats.norm.sf(t - shift))
        return fpr, fnr


def _laplace_cdf(x: np.ndarray, loc: float) -> np.ndarray:
    z = np.asarray(x, float) - loc
    with np.errstate(over="ignore"):
        return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(z, 0.0)))


def _laplace_sf(x: np.ndarray, loc: float) -> np.ndarray:
    return _laplace_cdf(-np.asarray(x, float), -loc)


@dataclass(frozen=True)
class LaplaceReference:
    """Lap(0, 1) vs Lap(ε, 1), statistic the privacy loss L(o) = |o − ε| − |o| (module
    docstring). L is non-increasing in o: L = ε for o ≤ 0, ε − 2o on [0, ε], −ε for o ≥ ε, so
    every event about L is an event about o."""

    name: str = "laplace"

    def pilot_families(self, strength: float, n0: int, n1: int, grid_size: int, rng: np.random.Generator,
                       reps: int, leak: bool = True) -> FamilyBatch:  # fmt: skip
        eps = float(strength)
        loc1 = eps if leak else 0.0
        f, up, dn = _grid_ranks(n0, grid_size)
        # the j-th smallest loss is L(o_(n0 − 1 − j)): loss index i ↔ output index n0 − 1 − i
        o_up, o_dn = n0 - 1 - up, n0 - 1 - dn
        idx = np.unique(np.concatenate([o_up, o_dn]))
        u, v = uniform_order_statistics(n0, idx + 1, rng, reps)
        out = np.where(u < 0.5, np.log(2 * u), -np.log(2 * v))  # Lap(0, 1) quantiles
        a, b = out[:, np.searchsorted(idx, o_up)], out[:, np.searchsorted(idx, o_dn)]
        # "x' when L > t": FN = #{L' <= L(a)} = #{o' >= c}, c = -inf (a <= 0) or min(a, eps)
        c = np.where(a <= 0, -np.inf, np.minimum(a, eps))
        # "x' when L < t": FN = #{L' >= L(b)} = #{o' <= c'}, c' = +inf (b >= eps) or max(b, 0)
        cp = np.where(b >= eps, np.inf, np.maximum(b, 0.0))
        cuts = np.concatenate([c, cp], axis=1)
        order = np.argsort(cuts, axis=1, kind="stable")
        srt = np.take_along_axis(cuts, order, axis=1)
        below = np.empty_like(order)
        np.put_along_axis(below, order, _counts_at_or_below(_laplace_cdf(srt, loc1), n1, rng), axis=1)
        k = f.size
        fn = np.concatenate([n1 - below[:, :k], below[:, k:]], axis=1)  # continuous o': < c ≡ <= c
        t = np.concatenate([self._loss(a, eps), self._loss(b, eps)], axis=1)
        o = np.concatenate([np.ones(k, np.int64), -np.ones(k, np.int64)])
        fp = np.concatenate([f, f])
        return FamilyBatch(t, np.broadcast_to(o, t.shape), np.broadcast_to(fp, t.shape), fn, n0, n1, False)

    @staticmethod
    def _loss(o: np.ndarray, eps: float) -> np.ndarray:
        return np.clip(eps - 2.0 * np.asarray(o, float), -eps, eps)

    def error_rates(self, strength: float, thresholds: np.ndarray, orientations: np.ndarray,
                    leak: bool = True) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        eps = float(strength)
        t, o = np.asarray(thresholds, float), np.asarray(orientations)
        loc1 = eps if leak else 0.0
        cut = (eps - t) / 2.0  # L <= t  <=>  o >= cut, for -eps <= t < eps

        inside = (t >= -eps) & (t < eps)

        def le(loc: float) -> np.ndarray:  # P(L <= t) = P(o >= cut) inside [-eps, eps)
            return np.where(inside, _laplace_sf(cut, loc), np.where(t >= eps, 1.0, 0.0))

        def gt(loc: float) -> np.ndarray:  # P(L > t) = P(o < cut), computed directly (small tails)
            return np.where(inside, _laplace_cdf(cut, loc), np.where(t >= eps, 0.0, 1.0))

        within = (t > -eps) & (t <= eps)

        def ge(loc: float) -> np.ndarray:  # P(L >= t) = P(o <= cut) inside (-eps, eps]
            return np.where(within, _laplace_cdf(cut, loc), np.where(t <= -eps, 1.0, 0.0))

        def lt(loc: float) -> np.ndarray:  # P(L < t) = P(o > cut)
            return np.where(within, _laplace_sf(cut, loc), np.where(t <= -eps, 0.0, 1.0))

        fpr = np.where(o == 1, gt(0.0), lt(0.0))
        fnr = np.where(o == 1, le(loc1), ge(loc1))
        return np.clip(fpr, 0.0, 1.0), np.clip(fnr, 0.0, 1.0)


@dataclass(frozen=True)
class RandomizedResponseReference:
    """Binary randomised response at ε, the canonical ε-DP pair (Kairouz, Oh & Viswanath 2015,
    Theorem 2.1), on the support {−ε, ε} of its privacy loss: x gives loss ε with probability
    e^ε/(1 + e^ε), x′ the mirror image. (For ε claims at δ > 0 the floor uses the Gaussian pair:
    the canonical (ε, δ) pair's δ-atom would send the pilot after a test that certifies nothing.)"""

    name: str = "randomized-response"

    @staticmethod
    def _pmfs(eps: float, leak: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        hi = 1.0 / (1.0 + math.exp(-min(eps, 700.0)))
        p0 = np.array([1.0 - hi, hi])
        return np.array([-eps, eps]), p0, (p0[::-1].copy() if leak else p0)

    def pilot_families(self, strength: float, n0: int, n1: int, grid_size: int, rng: np.random.Generator,
                       reps: int, leak: bool = True) -> FamilyBatch:  # fmt: skip
        sup, p0, p1 = self._pmfs(float(strength), leak)
        c0, c1 = rng.multinomial(n0, p0, size=reps), rng.multinomial(n1, p1, size=reps)
        rows = [discrete_cut_counts(a, b) for a, b in zip(c0, c1, strict=True)]
        o, cut = rows[0][0], rows[0][1]
        thr = np.where(o == 1, sup[cut], sup[np.minimum(cut + 1, sup.size - 1)])
        fp = np.stack([r[2] for r in rows])
        fn = np.stack([r[3] for r in rows])
        return FamilyBatch(np.broadcast_to(thr, fp.shape), np.broadcast_to(o, fp.shape), fp, fn, n0, n1, True)

    def error_rates(self, strength: float, thresholds: np.ndarray, orientations: np.ndarray,
                    leak: bool = True) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        sup, p0, p1 = self._pmfs(float(strength), leak)
        t, o = np.asarray(thresholds, float)[..., None], np.asarray(orientations)[..., None]
        above, below = sup > t, sup < t
        fpr = np.where(o[..., 0] == 1, (p0 * above).sum(-1), (p0 * below).sum(-1))
        fnr = np.where(o[..., 0] == 1, (p1 * ~above).sum(-1), (p1 * ~below).sum(-1))
        return fpr, fnr


def reference_pair(name: str) -> ReferencePair:
    """The reference pair called ``name`` (``"gaussian"``, ``"laplace"``,
    ``"randomized-response"``).

    >>> reference_pair("laplace").name
    'laplace'
    """
    if name == "gaussian":
        return GaussianReference()
    if name == "laplace":
        return LaplaceReference()
    if name == "randomized-response":
        return RandomizedResponseReference()
    raise ValueError(f"reference must be 'gaussian', 'laplace' or 'randomized-response', got {name!r}")
