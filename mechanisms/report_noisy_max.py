"""Report-noisy-max (RNM) with Laplace noise and with heterogeneous Gaussian noise.

RNM releases only ``argmax_i (f_i(x) + Z_i)``. Two noise families:

* :class:`LaplaceReportNoisyMax`: Z_i i.i.d. Lap(scale). With ℓ∞-sensitivity Δ it is
  (Δ/scale)-DP when the change is *monotone* under add/remove (all scores move the same way,
  Dwork & Roth Claim 3.9) and only (2Δ/scale)-DP otherwise, e.g. under *replace*, where one
  count can go down while another goes up. The factor 2 is approached:
  :func:`laplace_rnm_worst_case_loss` computes the exact worst-case loss for K = 2 and an
  epoch of n rounds of {0,1}-reward vectors (it grows with n towards 2ε, so RNM-FTNL with
  Lap(1/ε), Hu et al. (2024), Algorithm 4 and Theorem 8, is 2ε-DP under their replace relation).
* :class:`GaussianReportNoisyMax`: Z_i ~ N(0, σ_i²) independent, per-candidate
  sensitivities s_i, and neighbours change at most one score f_i, by at most s_i. It is
  (max_i s_i/σ_i)-GDP (post-processing of one Gaussian release).

Exact output distributions (the white-box statistic for auditors):

* Gaussian: P(argmax = i) = ∫ φ(z) Π_{j≠i} Φ((f_i + σ_i z − f_j)/σ_j) dz, by the toolkit's one
  Gaussian-argmax quadrature, :func:`dpaudit.analyses.gaussian_argmax.log_argmax_probability` (mode-centred
  composite 20-node Gauss–Legendre in log space, graded around sharp factors; σ ratios of 10^4
  are fine; ≤ 3e-15 relative error in log P against 60-digit mpmath).
* Laplace, K = 2: closed form through the CDF of a difference of two Laplaces.
* Laplace, K > 2: exact tails (the left tail is a single exponential, the right tail a
  polynomial integrated exactly by Gauss–Legendre) and adaptive quadrature on the pieces
  between sorted scores, each in units of the scale from its right end, where the integrand
  peaks, in log space (relative accuracy ~1e-15 for scales from 1e-12 to 1e12).

Used by: Hu et al. (2024) (RNM-FTNL: Laplace RNM over epoch sums of K actions, noise Lap(1/ε));
Ou, Avella Medina & Cummings (2024) (Thompson sampling: a round's Gaussian posterior draws
followed by argmax is exactly a heterogeneous Gaussian RNM, their Appendix C, Algorithm 4).

Example:
    >>> import numpy as np
    >>> from mechanisms.report_noisy_max import LaplaceReportNoisyMax, laplace_rnm_worst_case_loss
    >>> rnm = LaplaceReportNoisyMax(scale=1.0, num_candidates=2)     # replace, non-monotone
    >>> rnm.event.epsilon
    2.0
    >>> p = rnm.output_distribution([3.0, 2.0])
    >>> round(float(p[0]), 6), round(float(p.sum()), 12)
    (0.72409, 1.0)
    >>> rnm.sample([3.0, 2.0], np.random.default_rng(0), size=5).shape
    (5,)
    >>> round(laplace_rnm_worst_case_loss(1.0, 16), 3)        # K = 2, n = 16, replace: near 2ε
    1.882
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from dpaudit.analyses.gaussian_argmax import argmax_log_distribution
from dpaudit.events import GaussianReportNoisyMaxEvent, LaplaceReportNoisyMaxEvent, Neighbouring
from dpaudit.numerics import special
from dpaudit.validation import check_flag, check_integer, check_positive
from mechanisms.base import NoiseMechanism, Norm, Size, check_batch, check_neighbouring, check_rng

__all__ = [
    "LaplaceReportNoisyMax",
    "GaussianReportNoisyMax",
    "laplace_difference_logcdf",
    "laplace_rnm_log_output_distribution",
    "gaussian_rnm_log_output_distribution",
    "laplace_rnm_worst_case_loss",
]

_LOG_HALF = math.log(0.5)


# ---------------------------------------------------------------------------------------
# Laplace: exact pieces


def laplace_difference_logcdf(z: np.ndarray | float, scale: float) -> np.ndarray:
    """log P(L − L' ≤ z) for independent L, L' ~ Lap(scale), exactly, in log space.

    For z < 0 the CDF is ½ e^{−|z|/b}(1 + |z|/(2b)); for z ≥ 0 it is one minus that at −z.
    """
    b = check_positive("scale", scale)
    z = np.asarray(z, dtype=float)
    a = np.abs(z) / b
    log_tail = _LOG_HALF - a + np.log1p(0.5 * a)  # log P(D <= -|z|)
    return np.where(z < 0, log_tail, np.log1p(-np.exp(log_tail)))


def _laplace_logF(y: np.ndarray, b: float) -> np.ndarray:
    """log CDF of Lap(b) at y."""
    left = _LOG_HALF + np.minimum(y, 0.0) / b
    return np.where(y < 0, left, np.log1p(-0.5 * np.exp(-np.maximum(y, 0.0) / b)))


def _laplace_log_scaled_integrand(x: np.ndarray, i: int, s: np.ndarray, b: float) -> np.ndarray:
    """log b + h_i(x), h_i(x) = log f(x − s_i) + Σ_{j≠i} log F(x − s_j), vectorised over x: the
    integrand per unit of the scale, whose density term is log ½ − |x − s_i|/b (written as
    log b + log f, the two logarithms of ~690 at b ~ 1e-300 cancel, and their rounding put the
    winner's probability 2.8e-14 above 1)."""
    x = np.asarray(x, dtype=float)[..., None]
    logF = _laplace_logF(x - s, b)
    logF[..., i] = _LOG_HALF - np.abs(x[..., 0] - s[i]) / b
    return logF.sum(axis=-1)


@lru_cache(maxsize=64)
def _gl(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.polynomial.legendre.leggauss(n)


_CUT = 80.0  # drop of the log-integrand beyond which a piece's mass is dropped (relative error < e^-80)


def _laplace_log_middle_piece(i: int, s: np.ndarray, lo: float, hi: float, b: float) -> float:
    """log ∫_lo^hi f(x − s_i) Π_{j≠i} F(x − s_j) dx for consecutive distinct scores lo < hi.

    On the piece each score lies at or below lo or at or above hi, so the log-integrand is
    λx/b + Σ_{j≠i, s_j ≤ lo} log(1 − ½e^{−(x − s_j)/b}) plus a constant, with λ = (scores of
    other arms ≥ hi) ± 1 (+ when s_i ≥ hi) ≥ 0: it increases, and is largest at hi. In units of
    the scale from hi, w = (hi − x)/b, the integrand over its value at hi is
    exp(−λw + Σ_j [L(c_j − w) − L(c_j)]), L(y) = log(1 − ½e^{−y}), c_j = (hi − s_j)/b: no large
    terms cancel, so the quadrature sees a smooth function on a scale of 1 whatever b (in x, a
    scale of 1e-6 put the scores 10⁶ scales apart and left the integrand only 1e-10 of its
    precision; adaptive quadrature then exhausted its subdivisions). Beyond the point w_c where
    the log-integrand has dropped by 80 the mass is dropped: by concavity it is at most
    e^{−80}·w_c/80 times the piece's value at hi and the mass before w_c at least w_c(1 − e^{−80})/80
    times it, a relative error below e^{−80}.
    """
    from scipy import integrate, optimize
    others = np.delete(s, i)
    below = others[others <= lo]
    lam = float(np.count_nonzero(others >= hi) + (1 if s[i] >= hi else -1))
    c = (hi - below) / b
    log_at_c = np.log1p(-0.5 * np.exp(-c))

    def drop(w: float) -> float:  # log-integrand at hi minus at hi − b·w; convex, increasing
        return lam * w - float(np.sum(np.log1p(-0.5 * np.exp(w - c)) - log_at_c))

    width = (hi - lo) / b
    if not (math.isfinite(width) and np.all(np.isfinite(c))):
        raise OverflowError("the scores are more scales apart than a double holds")
    end = width
    if drop(width) > _CUT:  # the cut point's own precision does not matter: brentq's defaults
        end = optimize.brentq(lambda w: drop(w) - _CUT, 0.0, width)
    mass, _ = integrate.quad(lambda w: math.exp(-drop(w)), 0.0, end, epsabs=0.0, epsrel=1e-13, limit=200)
    return float(_laplace_log_scaled_integrand(np.array(hi), i, s, b)) + math.log(mass)


def _laplace_rnm_logp_quadrature(s: np.ndarray, b: float) -> np.ndarray:
    k = s.size
    t = np.unique(s)  # sorted breakpoints
    out = np.full(k, np.nan)
    nodes, weights = _gl(max(8, k))  # exact for the degree-(K−1) right-tail polynomial
    u = 0.5 * (nodes + 1.0)
    # arms with equal scores are exchangeable, so they win with equal probability: one integral
    # per distinct score (O(K) work per distinct score instead of O(K^2) in all)
    for i in range(k):
        if not np.isnan(out[i]):
            continue
        pieces = []
        # left tail (−∞, t_0]: h is affine with slope K/b
        pieces.append(float(_laplace_log_scaled_integrand(np.array(t[0]), i, s, b)) - math.log(k))
        # right tail [t_max, ∞): 0.5 e^{(s_i − t)/b} ∫_0^1 Π_{j≠i} (1 − 0.5 u e^{(s_j − t)/b}) du
        tm = t[-1]
        a = np.exp((np.delete(s, i) - tm) / b)
        log_poly = np.log1p(-0.5 * u[:, None] * a[None, :]).sum(axis=1)
        pieces.append(_LOG_HALF + (s[i] - tm) / b + float(special().logsumexp(log_poly, b=0.5 * weights)))
        pieces.extend(_laplace_log_middle_piece(i, s, lo, hi, b) for lo, hi in zip(t[:-1], t[1:]))
        out[s == s[i]] = float(special().logsumexp(pieces))
    return out


def laplace_rnm_log_output_distribution(scores: object, scale: float) -> np.ndarray:
    """log P(argmax_i (scores_i + Lap_i(scale)) = i) for every i (exact for K = 2).

    For K ≥ 3 by quadrature, one piece per interval between distinct scores, each in units of the
    scale and cut where its log-integrand has dropped by 80 below its value at the interval's
    right end (see :func:`_laplace_log_middle_piece`). Accuracy, against the closed form of two
    arms with a third 80 scales below (``tests/test_mechanisms_output.py``): relative error
    ≤ 1e-13 for every scale from 1e-12 to 1e12 (scores up to 16), and the same law for scores s·b
    at scale b as for s at scale 1 to 1e-14 for b from 1e-300 to 1e300. Integrated in x instead, scales
    ≤ 1e-6 once lost half of the probability, then were only 1.4e-8 accurate at 1e-9, and an
    audit's 127 three-arm distributions at 3e-6 took 100 s under a profiler (2.7 s now).
    """
    b = check_positive("scale", scale)
    s = np.asarray(scores, dtype=float).reshape(-1)
    if s.size < 2 or not np.all(np.isfinite(s)):
        raise ValueError(f"scores must be a finite vector with at least 2 entries, got shape {s.shape}")
    if s.size == 2:
        g = s[0] - s[1]  # P(0 wins) = P(L1 − L0 < g)
        return np.array([float(laplace_difference_logcdf(g, b)), float(laplace_difference_logcdf(-g, b))])
    spread = (float(s.max()) - float(s.min())) / b  # Python floats: inf, not a warning
    too_small = ValueError(f"scale={b:g} is too small for the quadrature of the output distribution: "
                           f"the scores are up to {spread:.3g} scales apart")  # fmt: skip
    if not math.isfinite(spread):  # refused before any work
        raise too_small
    order = np.argsort(s, kind="stable")  # i.i.d. noise: the law is permutation-equivariant
    out = np.empty(s.size)
    try:
        out[order] = _laplace_rnm_logp_cached(tuple(s[order].tolist()), b)
    except OverflowError:  # the scores are so many scales apart that the integrand overflows
        raise too_small from None
    return out


@lru_cache(maxsize=256)
def _laplace_rnm_logp_cached(s: tuple[float, ...], b: float) -> np.ndarray:
    """The quadrature of sorted scores, memoised: an audit asks for the same two score vectors once
    per batch, and its one-design-per-arm family for permutations of the same few."""
    return _laplace_rnm_logp_quadrature(np.asarray(s, dtype=float), b)


# ---------------------------------------------------------------------------------------
# Gaussian: mode-centred Gauss–Legendre in log space


def gaussian_rnm_log_output_distribution(
    scores: Iterable[float], sigmas: Iterable[float] | float
) -> np.ndarray:
    """log P(argmax_i (scores_i + σ_i Z_i) = i) for every i (see
    :func:`dpaudit.analyses.gaussian_argmax.argmax_log_distribution`, which this delegates to)."""
    return argmax_log_distribution(scores, sigmas)


def _scores(name: str, x: object, k: int) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.shape != (k,):
        raise ValueError(f"{name} must have shape ({k},), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


def _outputs(output: object, k: int) -> np.ndarray:
    o = np.asarray(output)
    if o.dtype.kind not in "iu" or np.any(o < 0) or np.any(o >= k):
        raise ValueError(f"output must hold integer candidate indices in [0, {k - 1}]")
    return o


# ---------------------------------------------------------------------------------------
# mechanisms


@dataclass(frozen=True)
class LaplaceReportNoisyMax(NoiseMechanism):
    """``argmax_i (x_i + Lap_i(scale))`` over ``num_candidates`` scores.

    Attributes:
        scale: Laplace scale b.
        num_candidates: K ≥ 2.
        sensitivity: ℓ∞-sensitivity Δ of the score vector.
        neighbouring: ``REPLACE`` (default; the relation of Hu et al. (2024),
            Definition 1) or ``ADD_REMOVE``.
        monotone: under ``ADD_REMOVE``, whether all scores move in the same direction (true for
            counts). The recorded event's ε is Δ/b if monotone under add/remove, else 2Δ/b.
    """

    scale: float
    num_candidates: int
    sensitivity: float = 1.0
    neighbouring: Neighbouring = Neighbouring.REPLACE
    monotone: bool = False

    norm = Norm.LINF

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive("scale", self.scale))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        object.__setattr__(self, "num_candidates", check_integer("num_candidates", self.num_candidates, 2))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))
        object.__setattr__(self, "monotone", check_flag("monotone", self.monotone))

    @property
    def event(self) -> LaplaceReportNoisyMaxEvent:
        return LaplaceReportNoisyMaxEvent(
            scale=self.scale,
            num_candidates=self.num_candidates,
            sensitivity=self.sensitivity,
            neighbouring=self.neighbouring,
            monotone=self.monotone,
        )

    @property
    def epsilon(self) -> float:
        return self.event.epsilon

    def sample(self, x: object, rng: np.random.Generator, size: Size = None) -> np.ndarray:
        """Winning indices (int64) of shape ``size``. Records nothing (use :meth:`release`)."""
        rng = check_rng(rng)
        s = _scores("x", x, self.num_candidates)
        noisy = rng.laplace(0.0, self.scale, size=check_batch(size) + (self.num_candidates,))
        noisy += s
        return np.argmax(noisy, axis=-1)

    def log_output_distribution(self, x: object) -> np.ndarray:
        return laplace_rnm_log_output_distribution(_scores("x", x, self.num_candidates), self.scale)

    def output_distribution(self, x: object) -> np.ndarray:
        """P(output = i | x) for i = 0..K−1."""
        return np.exp(self.log_output_distribution(x))

    def check_neighbours(self, x: object, x_prime: object) -> None:
        """Raise ``ValueError`` unless x, x' are neighbouring score vectors for this mechanism."""
        d = _scores("x_prime", x_prime, self.num_candidates) - _scores("x", x, self.num_candidates)
        if np.max(np.abs(d)) > self.sensitivity * (1 + 1e-12):
            raise ValueError(f"x and x_prime differ by more than sensitivity {self.sensitivity} in linf")
        if self.monotone and self.neighbouring is Neighbouring.ADD_REMOVE and np.any(d > 0) and np.any(d < 0):
            raise ValueError("monotone=True but x_prime − x has entries of both signs")

    def privacy_loss(self, output: object, x: object, x_prime: object) -> np.ndarray:
        """``log P(output|x) − log P(output|x')`` per output index (vectorised)."""
        self.check_neighbours(x, x_prime)
        o = _outputs(output, self.num_candidates)
        return (self.log_output_distribution(x) - self.log_output_distribution(x_prime))[o]


@dataclass(frozen=True)
class GaussianReportNoisyMax(NoiseMechanism):
    """``argmax_i (x_i + σ_i Z_i)``, Z_i i.i.d. N(0, 1), heterogeneous σ_i.

    Neighbours change at most one score x_i, by at most ``sensitivities[i]`` (a scalar is
    broadcast). The release is (max_i s_i/σ_i)-GDP under whichever ``neighbouring`` relation
    the sensitivities were computed for.
    """

    sigmas: tuple[float, ...]
    sensitivities: tuple[float, ...] | float = 1.0
    neighbouring: Neighbouring = Neighbouring.REPLACE

    norm = Norm.LINF

    def __post_init__(self) -> None:
        g = np.atleast_1d(np.asarray(self.sigmas, dtype=float))
        if g.ndim != 1 or g.size < 2:
            raise ValueError(f"sigmas must be a vector with at least 2 entries, got shape {g.shape}")
        for i, v in enumerate(g):
            check_positive(f"sigmas[{i}]", v)
        s = np.atleast_1d(np.asarray(self.sensitivities, dtype=float))
        if s.size == 1:
            s = np.repeat(s, g.size)
        if s.shape != g.shape:
            raise ValueError(f"sensitivities must have 1 or {g.size} entries, got {s.size}")
        for i, v in enumerate(s):
            check_positive(f"sensitivities[{i}]", v)
        object.__setattr__(self, "sigmas", tuple(float(v) for v in g))
        object.__setattr__(self, "sensitivities", tuple(float(v) for v in s))
        object.__setattr__(self, "neighbouring", check_neighbouring(self.neighbouring))

    @property
    def num_candidates(self) -> int:
        return len(self.sigmas)

    @property
    def per_candidate_sensitivities(self) -> tuple[float, ...]:
        """The sensitivity of every candidate's score (a scalar given to the constructor is
        broadcast by ``__post_init__``)."""
        s = self.sensitivities
        assert isinstance(s, tuple), "normalised to a tuple by __post_init__"
        return s

    @property
    def sensitivity(self) -> float:
        """The largest per-candidate sensitivity."""
        return max(self.per_candidate_sensitivities)

    @property
    def mu(self) -> float:
        return self.event.mu

    @property
    def event(self) -> GaussianReportNoisyMaxEvent:
        return GaussianReportNoisyMaxEvent(sensitivities=self.per_candidate_sensitivities, sigmas=self.sigmas)

    def sample(self, x: object, rng: np.random.Generator, size: Size = None) -> np.ndarray:
        """Winning indices (int64) of shape ``size``. Records nothing (use :meth:`release`)."""
        rng = check_rng(rng)
        s = _scores("x", x, self.num_candidates)
        noisy = rng.standard_normal(size=check_batch(size) + (self.num_candidates,))
        noisy *= np.asarray(self.sigmas)
        noisy += s
        return np.argmax(noisy, axis=-1)

    def log_output_distribution(self, x: object) -> np.ndarray:
        return gaussian_rnm_log_output_distribution(_scores("x", x, self.num_candidates), self.sigmas)

    def output_distribution(self, x: object) -> np.ndarray:
        """P(output = i | x) for i = 0..K−1 (1-D quadrature, ~1e-14 relative)."""
        return np.exp(self.log_output_distribution(x))

    def check_neighbours(self, x: object, x_prime: object) -> None:
        """Raise ``ValueError`` unless x' differs from x in at most one score i, by at most s_i."""
        d = np.abs(_scores("x_prime", x_prime, self.num_candidates) - _scores("x", x, self.num_candidates))
        changed = np.flatnonzero(d > 0)
        if changed.size > 1:
            raise ValueError(
                f"x and x_prime differ in {changed.size} scores; neighbours differ in at most one"
            )
        if changed.size == 1 and d[changed[0]] > self.per_candidate_sensitivities[changed[0]] * (1 + 1e-12):
            raise ValueError(f"score {changed[0]} changes by {d[changed[0]]:.6g} > its sensitivity")

    def privacy_loss(self, output: object, x: object, x_prime: object) -> np.ndarray:
        """``log P(output|x) − log P(output|x')`` per output index (vectorised)."""
        self.check_neighbours(x, x_prime)
        o = _outputs(output, self.num_candidates)
        return (self.log_output_distribution(x) - self.log_output_distribution(x_prime))[o]


# ---------------------------------------------------------------------------------------
# exact worst-case loss of Laplace RNM over an epoch, K = 2 (RNM-FTNL of Hu et al. (2024))


def laplace_rnm_worst_case_loss(
    epsilon: float,
    epoch_length: int,
    neighbouring: Neighbouring | str = Neighbouring.REPLACE,
) -> float:
    """Exact worst-case privacy loss of RNM-FTNL's selection step for K = 2 actions.

    Setting (Hu et al. (2024), Algorithm 4): an epoch has ``epoch_length`` = n rounds, each with a reward
    vector in {0,1}²; the counts Φ ∈ {0..n}² get i.i.d. Lap(1/ε) noise and the argmax is
    released. The output distribution depends only on g = Φ_1 − Φ_2 ∈ [−n, n], via the CDF of
    a difference of two Laplaces (closed form, log space).

    * ``"replace"``: one round's vector is replaced; g moves by at most 2 (e.g. (1,0) → (0,1)),
      and every g, g' ∈ [−n, n] with |g − g'| ≤ 2 is feasible. The worst loss tends to 2ε.
    * ``"add-remove"``: one round's vector is added/removed; the counts move monotonically
      (up by 0 or 1 each), so g moves by at most 1. The worst loss is < ε (Claim 3.9) and
      tends to ε.

    Returns max over feasible (g, g') and both outputs of |log P(out | g) − log P(out | g')|.
    """
    eps = check_positive("epsilon", epsilon)
    n = check_integer("epoch_length", epoch_length)
    nb = check_neighbouring(neighbouring)
    max_shift = 2 if nb is Neighbouring.REPLACE else 1
    b = 1.0 / eps
    g = np.arange(-n, n + 1, dtype=float)
    log_p0 = laplace_difference_logcdf(g, b)  # P(candidate 0 wins | g)
    log_p1 = laplace_difference_logcdf(-g, b)
    worst = 0.0
    for shift in range(1, max_shift + 1):
        if shift > 2 * n:
            break
        d0 = np.abs(log_p0[shift:] - log_p0[:-shift])
        d1 = np.abs(log_p1[shift:] - log_p1[:-shift])
        worst = max(worst, float(d0.max()), float(d1.max()))
    return worst
