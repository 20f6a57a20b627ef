"""Dense privacy-loss PMFs in extended precision: composition by FFT with a bound on its error,
and the hockey-stick divergence of a PMF.

A :class:`Pmf` holds the probabilities of the losses (lower + i)·Δ, i = 0..n−1, the mass at +∞
and an upper bound on the ℓ₂ error of the probabilities from floating-point arithmetic. The
FFT of n points has normwise relative error ≤ c·log₂n·u (Higham 2002, Thm 24.2; c = 5 here, u
the unit roundoff of ``np.longdouble``); a k-fold power of the transform multiplies the input
error by at most k (|ŷ_j| ≤ 1), so a self-composition (:func:`self_compose`) has ℓ₂ error ≤
c·log₂n·u·(k‖x‖₂ + ‖x^{*k}‖₂); a product of two parts (:func:`compose`) adds
c·log₂n·u·(‖a‖₂ + ‖b‖₂ + ‖a*b‖₂) to the parts' own errors (Young: ‖Δa*b‖₂ ≤ ‖Δa‖₂); the stored
float64 probabilities add a relative 2^-53. Tails of mass ≤ :data:`TAIL_TRUNCATION` are moved
pessimistically (left into the first kept entry, right to +∞). :mod:`dpaudit.accounting.pld`
turns these errors into its certified margins.

Example (two steps of a loss that is 0 or Δ with probability ½ each):
    >>> import numpy as np
    >>> p = Pmf(0, np.array([0.5, 0.5]), 0.0, 0.0)
    >>> two = self_compose(p, 2, max_points=100)
    >>> two.lower, np.round(two.probs, 12).tolist()
    (0, [0.25, 0.5, 0.25])
    >>> round(delta_at(two, losses_of(two, 1.0), 0.5), 12)   # ½(1 − e^{−½}) + ¼(1 − e^{−3/2})
    0.390952130107
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.accounting.composition import NotApplicable
from dpaudit.numerics import geometric_suffix_sums, next_fast_len

__all__ = [
    "Pmf",
    "TAIL_TRUNCATION",
    "from_dp",
    "fft_error",
    "truncate",
    "self_compose",
    "self_convolve_bounds",
    "power_bound",
    "compose",
    "compose_all",
    "coarsen",
    "losses_of",
    "delta_at",
    "grid_deltas",
    "epsilon_for",
]

TAIL_TRUNCATION = 1e-15  # probability mass moved to +∞ loss (pessimistic) per truncation
_LD = np.longdouble
_U_LD = float(np.finfo(_LD).eps) / 2
_U_64 = 2.0**-53
_FFT_C = 5.0


@dataclass
class Pmf:
    """Probabilities of losses (lower + i)·Δ, i = 0..n−1, plus the mass at +∞, and an upper
    bound on the ℓ₂ error of ``probs`` from floating-point arithmetic."""

    lower: int
    probs: np.ndarray
    inf_mass: float
    err: float
    double: bool = False  # some FFT behind it ran in double precision (long double would err less)

    @property
    def l2(self) -> float:
        return float(np.sqrt(np.sum(self.probs.astype(float) ** 2)))


def from_dp(pmf: Any) -> Pmf:
    """The dense form of a dp-accounting ``PLDPmf`` (no floating-point error of our own yet)."""
    dense = pmf.to_dense_pmf()
    probs = np.asarray(dense._probs, dtype=float)  # noqa: SLF001 - dp-accounting's PMF layout
    return Pmf(int(dense._lower_loss), probs, float(dense._infinity_mass), 0.0)  # noqa: SLF001


def fft_error(n: int) -> float:
    """The normwise relative error bound c·log₂n·u of an FFT pair of ``n`` points in long double."""
    return _FFT_C * math.log2(max(n, 2)) * _U_LD


def truncate(p: Pmf) -> Pmf:
    """Drop tails of mass ≤ TAIL_TRUNCATION/2 each: left into the first kept entry, right to +∞."""
    c = np.cumsum(p.probs)
    left = int(np.searchsorted(c, TAIL_TRUNCATION / 2, side="right"))
    r = np.cumsum(p.probs[::-1])
    right = int(np.searchsorted(r, TAIL_TRUNCATION / 2, side="right"))
    left = min(left, p.probs.size - 1)
    right = min(right, p.probs.size - 1 - left)
    kept = p.probs[left:p.probs.size - right].copy()
    kept[0] += float(c[left - 1]) if left > 0 else 0.0
    moved = float(r[right - 1]) if right > 0 else 0.0
    return Pmf(p.lower + left, kept, p.inf_mass + moved, p.err, p.double)


def self_compose(p: Pmf, k: int, *, max_points: int, budget: float = 0.0) -> Pmf:
    """k-fold composition: the FFT of the probabilities to the k-th power (not applicable when the
    composed grid would need more than ``max_points`` points). Only the components that
    :func:`power_bound` finds not negligible are raised; the forward transform is in double
    precision when the error it brings (k-fold amplified) stays within ``budget`` (an ℓ₂ bound on
    the probabilities' error), in long double otherwise; the inverse transform (its error is not
    amplified) in double where its error fits half the budget, in long double otherwise."""
    lo_b, hi_b = self_convolve_bounds(p.probs, k, TAIL_TRUNCATION)
    out_len = hi_b - lo_b + 1
    if out_len > max_points:
        raise NotApplicable(f"the {k}-fold PLD would need {out_len} grid points (budget {max_points})")
    n = next_fast_len(max(out_len, p.probs.size))
    spec_err = math.inf
    double = budget > 0 and k * _fft_error_bound(n, _U_64, p) / math.sqrt(n) <= budget / 2  # (component 0)
    if double:
        spec = np.fft.rfft(p.probs, n)
        spec_err, keep = power_bound(spec, k, n, _U_64, p)
    if spec_err / math.sqrt(n) > budget / 2:
        spec = np.fft.rfft(p.probs.astype(_LD), n)
        spec_err, keep = power_bound(spec, k, n, _U_LD, p)
        double = False
    # raised in the transform's precision; inverted in double where the error of that (relative to
    # the result's norm, known from the spectrum by Parseval) fits half the budget, else kept and
    # inverted in long double, so a precise rebuild's floor stays ~1e-18·√L
    raised = _power(spec[keep], k)
    w = np.where((np.flatnonzero(keep) == 0) | (2 * np.flatnonzero(keep) == n), 1.0, 2.0)
    norm = math.sqrt(float(np.sum(w * np.abs(raised).astype(float) ** 2)) / n) * 1.01
    double_cost = _FFT_C * math.log2(max(n, 2)) * _U_64 * norm + 4 * _U_64 * norm  # inverse + rounding
    precise = not (budget > 0 and double_cost <= budget / 2)
    power = np.zeros(spec.size, dtype=np.clongdouble if precise else np.complex128)
    power[keep] = raised
    z = np.fft.irfft(power, n)
    probs = np.maximum(np.roll(z, -lo_b)[:out_len], 0).astype(float)
    inf_mass = TAIL_TRUNCATION - math.expm1(k * math.log1p(-p.inf_mass))
    out = Pmf(k * p.lower + lo_b, probs, min(1.0, inf_mass), 0.0, double or p.double)
    # the forward transform and the power (and the dropped components); the rounding of the power to
    # the inverse's precision (u relative in each of two parts; weight ≤ 2 per kept component); the
    # inverse transform, relative to the norm of everything it returned (window and rest)
    u_out = _U_LD if precise else _U_64
    top = float(np.max(np.abs(power))) if power.size else 0.0
    rounding = 4.0 * u_out * math.sqrt(float(np.count_nonzero(keep))) * top * (1 + 1e-9)
    inverse = _FFT_C * math.log2(max(n, 2)) * u_out * float(np.sqrt(np.dot(z, z))) * (1 + 1e-9)
    if precise:  # the long-double result rounded to double (as in compose)
        inverse += _U_64 * math.sqrt(float(np.dot(probs, probs))) * (1 + 1e-9)
    out.err = math.nextafter(((spec_err + rounding) / math.sqrt(n) + inverse) * (1 + 1e-12), math.inf)
    return out


NEGLIGIBLE_LOG = -700.0  # components whose k-th power is below e^-700 (in bound) are not raised


def power_bound(spec: np.ndarray, k: int, n: int, u: float, p: Pmf) -> tuple[float, np.ndarray]:
    """An ℓ₂ bound on the error of the k-th power of a computed real-input spectrum (``rfft`` of
    ``n`` points of ``p``, unit roundoff ``u``; each component but the first and the Nyquist stands
    for a conjugate pair), and which components are worth raising at all.

    Each computed component of the forward transform is within d = c·log₂n·u·‖x‖₁ + √m·err of the
    exact one (each of the log₂n butterfly stages errs by a few u times the modulus of its
    operands, at most ‖x‖₁; m inputs with ℓ₂ error err); so |ŷ^k − ŷ′^k| ≤ k·d·a^{k−1} with
    a = |ŷ′| + d, and the ≤ 2log₂k complex products of the power add 4.5·log₂k·u·a^k. A component
    with a < e^{NEGLIGIBLE_LOG/k} is set to 0 instead, which errs by at most a^k < e^{-700}. Unlike
    the normwise bound k·c·log₂n·u·‖x‖₂, this is small where |ŷ| < 1 — every frequency but the
    lowest — so a k-fold power of a spread PMF stays accurate (10⁶ steps: ≈ 1e-11 in double,
    5e-15 in long double), and only the few lowest frequencies are raised at all (≈ 100 of 4·10⁵
    for DP-SGD at 10⁶ steps). By Parseval the inverse transform maps the bound E to E/√n.

    >>> spec = np.array([1.0, 0.5, 0.0], dtype=complex)  # rfft of [0.5, 0.25, 0, 0.25]; 0.5^2000 < e^-700
    >>> err, keep = power_bound(spec, 2000, 4, 2.0**-53, Pmf(0, np.array([0.5, 0.25, 0.0, 0.25]), 0.0, 0.0))
    >>> keep.tolist(), 0 < err < 1e-9
    ([True, False, False], True)
    """
    d = _fft_error_bound(n, u, p)
    a = (np.abs(spec).astype(float) * (1.0 + 2.0**-51) + d) * (1.0 + 2.0**-52)  # ≥ |ŷ′| + d: 2 roundings up
    weights = np.full(a.size, 2.0)  # rfft keeps one of each conjugate pair
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    keep = a >= math.exp(NEGLIGIBLE_LOG / k)
    la = np.log(a[keep])
    log_kd = math.log(k) + math.log(d)
    with np.errstate(over="ignore", under="ignore"):
        b = np.exp(log_kd + (k - 1) * la) + 4.5 * math.log2(max(k, 2)) * u * np.exp(k * la)
    # a dropped component: a^k < thr^k ≤ e^{NEGLIGIBLE_LOG}·e^{k·2^-52} (thr = e^{NEGLIGIBLE_LOG/k}
    # rounded), and the same terms as a kept one on top (pessimistic)
    cap = (math.exp(log_kd + NEGLIGIBLE_LOG * (k - 1) / k) + 2.0 * math.exp(NEGLIGIBLE_LOG)) * math.exp(
        k * 2.0**-52 + 1e-6)
    kept = math.sqrt(float(np.sum(weights[keep] * b * b)))
    return kept + math.sqrt(float(np.sum(weights[~keep]))) * cap, keep


def _fft_error_bound(n: int, u: float, p: Pmf) -> float:
    """d of :func:`power_bound`: how far each computed component of the ``n``-point transform of
    ``p`` can be from the exact one."""
    return 2.0 * _FFT_C * math.log2(max(n, 2)) * u * float(np.sum(p.probs)) + math.sqrt(p.probs.size) * p.err


def _power(z: np.ndarray, k: int) -> np.ndarray:
    """z**k elementwise by repeated squaring (2.5× faster than ``**`` on long-double complex; the
    same error bound: each of the ≤ 2 log₂k products is one rounding)."""
    out = None
    base = z
    while k:
        if k & 1:
            out = base.copy() if out is None else out * base
        k >>= 1
        if k:
            base = base * base
    assert out is not None
    return out


def self_convolve_bounds(probs: np.ndarray, k: int, tail: float) -> tuple[int, int]:
    """Index bounds (lo, hi) of the k-fold self-convolution of ``probs`` outside which each tail
    has mass at most ``tail``/2, by Chernoff's bound: P(S ≥ t) ≤ e^{k·K(λ) − λt} for every λ > 0,
    K the cumulant generating function of one step (likewise below with λ < 0), so
    t(λ) = (k·K(λ) + log(2/tail))/λ bounds S for every λ and the smallest one found is kept.
    t(λ) is unimodal on each side (the numerator of its derivative, k(λK′(λ) − K(λ)) − log(2/tail),
    grows with |λ| since K is convex), so a golden-section search over log |λ| finds the best order
    to within 5 %: about 15 evaluations per side, from 1/64 of the smaller of 1/n and the optimum
    for a Gaussian of the same variance, sqrt(2 log(2/tail)/(k·var)), up to 20/n (as
    dp-accounting's ``compute_self_convolve_bounds``, whose 40 fixed orders ±1/n … ±20/n this
    replaces).

    >>> self_convolve_bounds(np.array([0.5, 0.5]), 100, 1e-15)[1] < 100
    True
    """
    n = probs.size
    hi, lo = (n - 1) * k, 0
    mass = float(np.sum(probs))
    if not mass > 0:
        return lo, hi
    i = np.arange(n, dtype=float)
    log_tail = math.log(2.0 / tail)

    def bound(lam: float) -> float:  # t(λ) in index units; ±inf where it is not finite
        expo = lam * i
        top = float(expo.max())
        with np.errstate(under="ignore"):
            m = float(np.exp(expo - top) @ probs)  # λi − top ≤ 0: no overflow
        t = (k * (math.log(m) + top) + log_tail) / lam if m > 0 else math.nan
        return t if math.isfinite(t) else math.copysign(math.inf, lam)

    mean = float(probs @ i) / mass
    var = float(probs @ (i - mean) ** 2) / mass
    start = min(1.0 / n, math.sqrt(2.0 * log_tail / (k * var)) if var > 0 else 1.0 / n) / 64.0
    for side in (1.0, -1.0):
        best = _golden_min(lambda x, s=side: s * bound(s * math.exp(x)), math.log(start), math.log(20.0 / n))
        if math.isfinite(best):
            if side > 0:
                hi = min(hi, math.ceil(best))
            else:
                lo = max(lo, math.floor(-best))
    return lo, hi


def _golden_min(f: Any, a: float, b: float, tol: float = math.log(1.05)) -> float:
    """The smallest value of f seen by a golden-section search on [a, b] down to width ``tol``
    (every value f takes is valid for the caller; the search only makes it small)."""
    g = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    best = min(fc, fd, f(b))
    while b - a > tol:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
            best = min(best, fc)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
            best = min(best, fd)
    return best


def compose(a: Pmf, b: Pmf, budget: float = 0.0) -> Pmf:
    """The product (convolution) of two PMFs by FFT with its error: in double precision when the
    error it adds stays within ``budget`` (an ℓ₂ bound), in long double otherwise."""
    n_out = a.probs.size + b.probs.size - 1
    n = next_fast_len(n_out)
    for dtype, u in ((np.float64, _U_64), (_LD, _U_LD)):
        if dtype is np.float64 and not budget > 0:
            continue
        spec = np.fft.rfft(a.probs.astype(dtype), n) * np.fft.rfft(b.probs.astype(dtype), n)
        probs = np.maximum(np.fft.irfft(spec, n)[:n_out], 0).astype(float)
        out = Pmf(a.lower + b.lower, probs, min(1.0, a.inf_mass + b.inf_mass - a.inf_mass * b.inf_mass), 0.0)
        added = _FFT_C * math.log2(max(n, 2)) * u * (a.l2 + b.l2 + out.l2) + 2**-53 * out.l2
        if added <= budget / 2 or dtype is _LD:
            break
    out.err = a.err + b.err + added
    out.double = a.double or b.double or dtype is np.float64
    return truncate(out)


def compose_all(parts: list[Pmf], budget: float = 0.0) -> Pmf:
    """The product of the parts, the two shortest first (Huffman's order: each FFT is as short
    as it can be, and a wide part — a Gaussian's — joins once, at the end); ties by position,
    so the order of the arithmetic is fixed by the parts alone. ``budget`` as in :func:`compose`."""
    heap = [(p.probs.size, i, p) for i, p in enumerate(parts)]
    heapq.heapify(heap)
    n = len(heap)
    while len(heap) > 1:
        _, _, a = heapq.heappop(heap)
        _, _, b = heapq.heappop(heap)
        c = compose(a, b, budget)
        heapq.heappush(heap, (c.probs.size, n, c))
        n += 1
    return heap[0][2]


def coarsen(p: Pmf, levels: int) -> Pmf:
    """The PMF on a grid 2^levels times coarser, every loss rounded *up* to it (pessimistic, as in
    the single-step construction: each loss only grows, so every δ(ε) can only grow).
    Summing 2^levels neighbours errs by one rounding each; their ℓ₂ error grows at most by
    2^{levels/2} (Cauchy–Schwarz) while the number of entries shrinks as much.

    >>> coarsen(Pmf(-1, np.array([0.25, 0.25, 0.5]), 0.0, 0.0), 1).probs.tolist()  # −1, 0, 1 → −0, 0, 1
    [0.5, 0.5]
    """
    if levels <= 0:
        return p
    f = 2**levels
    idx = -((-(np.arange(p.probs.size) + p.lower)) // f)  # ceil((lower + i)/f)
    lower = int(idx[0])
    probs = np.bincount(idx - lower, weights=p.probs)
    out = Pmf(lower, probs, p.inf_mass, 0.0, p.double)
    out.err = math.sqrt(f) * p.err + 2**-53 * levels * out.l2
    return out


def losses_of(p: Pmf, interval: float) -> np.ndarray:
    return (np.arange(p.probs.size, dtype=float) + p.lower) * interval


def delta_at(p: Pmf, losses: np.ndarray, eps: float) -> float:
    """inf_mass + Σ_{l > ε} p_l (1 − e^{ε − l})."""
    j = int(np.searchsorted(losses, eps, side="right"))
    if j >= losses.size:
        return p.inf_mass
    return p.inf_mass + float(np.dot(-np.expm1(eps - losses[j:]), p.probs[j:]))


def grid_deltas(p: Pmf, losses: np.ndarray) -> np.ndarray:
    """δ at every grid loss, approximately (float64 suffix recursion), to bracket ε quickly;
    every value that decides a certified answer is recomputed directly by :func:`_delta_at`.

    δ(l_j) = inf + Σ_{i>j} p_i − e^{−Δ} V_{j+1} with V_j = p_j + e^{−Δ} V_{j+1}.
    """
    r = math.exp(-(losses[1] - losses[0])) if losses.size > 1 else 0.0
    v = geometric_suffix_sums(p.probs, r)
    u = np.cumsum(p.probs[::-1])[::-1]
    return p.inf_mass + np.append(u[1:], 0.0) - r * np.append(v[1:], 0.0)


def epsilon_for(p: Pmf, losses: np.ndarray, target: float, grid: np.ndarray | None = None) -> float:
    """The smallest ε ≥ 0 with δ_p(ε) ≤ target (inf if even ε → ∞ leaves more than target)."""
    if p.inf_mass > target:
        return math.inf
    if delta_at(p, losses, 0.0) <= target:
        return 0.0
    first = int(np.searchsorted(losses, 0.0, side="left"))  # the first grid loss ≥ 0
    hi = -1
    if grid is not None:  # a guess from the approximate grid deltas, verified directly below
        above = np.nonzero(grid[first:] <= target)[0]
        if above.size:
            g = first + int(above[0])
            lo_ok = g == first or delta_at(p, losses, float(losses[g - 1])) > target
            if lo_ok and delta_at(p, losses, float(losses[g])) <= target:
                hi = g
    if hi < 0:  # the first grid loss l_j ≥ 0 with δ(l_j) ≤ target, by bisection over the index
        lo = first - 1  # δ(max(l_lo, 0)) > target
        hi = losses.size - 1  # δ(l_top) = inf_mass ≤ target
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if delta_at(p, losses, float(losses[mid])) <= target:
                hi = mid
            else:
                lo = mid
    # on (l_{hi−1}, l_hi] only the entries i ≥ hi count: inf + U − e^{ε − l_hi}·V = target
    u = float(np.sum(p.probs[hi:]))
    v = float(np.dot(p.probs[hi:], np.exp(losses[hi] - losses[hi:])))
    room = p.inf_mass + u - target
    e = float(losses[hi]) + math.log(room / v) if room > 0 and v > 0 else float(losses[hi])
    floor = max(0.0, float(losses[hi - 1])) if hi >= 1 else 0.0
    return min(max(e, floor), float(losses[hi]))
