"""Rényi DP of the subsampled Gaussian mechanism (Poisson sampling, and sampling without
replacement), certified at integer and fractional orders.

The mechanism adds N(0, σ²) (σ the noise multiplier, sensitivity 1) to a sum over a Poisson
subsample with rate q; under the add/remove relation its Rényi divergence of order α is at most
log A_α/(α − 1) with A_α = E_{z∼N(0,σ²)}[((1 − q) + q L(z))^α], L(z) = e^{(2z − 1)/(2σ²)}
(Mironov, Talwar & Zhang 2019, "Rényi Differential Privacy of the Sampled Gaussian Mechanism",
Thm 4 and Sec. 3; the other direction is never larger, ibid. Thm 5). Computed here, in log space:

* integer α: the finite binomial sum A_α = Σ_{i=0}^{α} C(α,i)(1 − q)^{α−i} q^i e^{(i²−i)/(2σ²)}
  (ibid. Sec. 3.3), all terms positive — exact up to rounding;
* fractional α: A_α = A_{α,0} + A_{α,1}, the binomial series of the integrand on either side of
  z₀ = σ² log(1/q − 1) + ½ (where q L = 1 − q; ibid. Sec. 3.3):
  t_{0,i} = C(α,i) q^i (1 − q)^{α−i} e^{(i²−i)/(2σ²)} Φ((z₀ − i)/σ) and t_{1,i} the same with
  q ↔ 1 − q, i ↔ α − i. C(α,i) > 0 for i ≤ ⌊α⌋ + 1 and alternates in sign after, and |t_{·,i}|
  decreases there (|C(α,i+1)/C(α,i)| = (i − α)/(i + 1) < 1, and t_{0,i}/C(α,i) =
  (1−q)^α E[x(z)^i; z ≤ z₀] with x = qL/(1 − q) ≤ 1 on that side), so every partial sum that ends
  just before a negative term is an upper bound on the series (Leibniz) — the sum is cut there,
  never extrapolated. Where Φ is tiny, e^{(i²−i)/(2σ²)}Φ((z₀−i)/σ) is rewritten with erfcx as
  (1 − q)^α e^{−z₀²/(2σ²)} erfcx((i − z₀)/(√2σ))/2 · (q/(1−q))^{−i}·… so no two large exponents cancel.

Every term carries a relative margin for its own rounding (10⁻¹⁴ times the magnitude of its
logarithm's parts), positive terms rounded up and negative ones down. Unlike dp-accounting's
fractional series (a sum of |terms|: 4.7e-4 where the exact value is 5.5e-5, at α = 1.1, q = 0.1,
σ = 10) this is Opacus' signed series (up to the margin) with a certified cut, so it is never above
Opacus' RDP at its orders by more than that margin.

Orders: :data:`FRACTIONAL_ORDERS` (α − 1 geometric in [1e-3, 255], 160 points, plus the fractional orders of
Opacus and dp-accounting) and :data:`INTEGER_ORDERS` (2 … 256, then 24 geometric to 2¹⁵). Between
them the lower convex hull of the certified points is used (log A_α is convex in α, Hölder, and
log A_1 = 0, so every chord between upper bounds is an upper bound), capped by the Gaussian's
α/(2σ²) by the caller.

Sampling without replacement (fixed-size batches, replace-one relation):
:func:`log_a_without_replacement` (Wang, Balle & Kasiviswanathan 2019, Thm 9) at the integer
orders, the same hull between them.

>>> x, la = sampled_gaussian_log_a(0.01, 1.0)
>>> float(x[0]), float(la[0]), bool(np.all(np.diff(la) >= 0)), len(x) > 100
(0.0, 0.0, True, True)
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dpaudit.numerics import special, unique

__all__ = ["FRACTIONAL_ORDERS", "INTEGER_ORDERS", "log_a_integer", "log_a_fractional",
           "sampled_gaussian_log_a", "lower_hull", "log_a_without_replacement", "without_replacement_log_a"]

_OPACUS_FRACTIONAL = [1 + x / 10.0 for x in range(1, 100) if x % 10]
FRACTIONAL_ORDERS = unique(np.concatenate([
    1.0 + np.geomspace(1e-3, 255.0, 160), np.array(_OPACUS_FRACTIONAL)]))
FRACTIONAL_ORDERS = FRACTIONAL_ORDERS[FRACTIONAL_ORDERS != np.round(FRACTIONAL_ORDERS)]
INTEGER_ORDERS = unique(np.concatenate([np.arange(2, 257), np.round(np.geomspace(256, 2**15, 24))]))
_REL = 4e-15  # error of a term's logarithm per unit of the magnitudes of its parts (≈ 18 ulps)
_ABS = 1e-15  # and absolute (the final exponential's rounding, ≈ 9 ulps)
_U = 2.0**-53
_MAX_TERMS = 2**14
_CHUNK = 2**17  # elements per block of (orders × terms): ≈ 1 MiB per array
_SQRT2 = math.sqrt(2.0)


def _log_sum_signed(log_t: np.ndarray, sign: np.ndarray, err: np.ndarray) -> np.ndarray:
    """Per row, an upper bound on log Σ sign·e^{log_t}: positive terms inflated by e^{err},
    negative ones deflated by e^{−err}, the two sums inflated / deflated by their rounding."""
    top = np.max(np.where(np.isfinite(log_t), log_t, -np.inf), axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(under="ignore", over="ignore"):
        pos = np.sum(np.where(sign > 0, np.exp(log_t + err - top), 0.0), axis=1)
        neg = np.sum(np.where(sign < 0, np.exp(log_t - err - top), 0.0), axis=1)
    m = log_t.shape[1]
    pairwise = 1.2 * _U * (math.log2(max(m, 2)) + 4)  # numpy's pairwise summation, with room
    pos = pos * (1.0 + pairwise)
    neg = neg * (1.0 - pairwise)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(pos - neg) + top[:, 0]
    return out + 1e-15 * np.abs(out) + 1e-300


def log_a_integer(q: float, sigma: float, alphas: np.ndarray) -> np.ndarray:
    """An upper bound on log A_α at integer orders (the finite binomial sum).

    >>> exact = 0.25 + 0.5 + 0.25 * math.e  # α = 2, q = ½, σ = 1
    >>> 0 <= float(np.exp(log_a_integer(0.5, 1.0, np.array([2.0]))[0])) - exact < 1e-13
    True
    """
    a = np.asarray(alphas, dtype=float)
    out = np.empty(a.size)
    lq, l1q = math.log(q), math.log1p(-q)
    inv2v = 1.0 / (2.0 * sigma * sigma)
    small = np.flatnonzero(a <= 512)
    groups = [small] if small.size else []
    groups += [np.array([k]) for k in np.flatnonzero(a > 512).tolist()]
    for rows in groups:  # orders ≤ 512 in one matrix (terms beyond α are −inf), larger ones alone
        al = a[rows][:, None]
        i = np.arange(int(al.max()) + 1, dtype=float)[None, :]
        log_c, err_c = _log_binomial(a[rows], i.shape[1])
        parts = [i * lq, (al - i) * l1q, (i * i - i) * inv2v]
        with np.errstate(invalid="ignore"):
            log_t = np.where(i <= al, log_c + sum(parts), -np.inf)
        with np.errstate(invalid="ignore"):
            err = np.where(i <= al, _REL * sum(np.abs(p) for p in parts) + err_c + _ABS, 0.0)
        out[rows] = _log_sum_signed(log_t, np.ones(log_t.shape), err)
    return out


def _log_binomial(a: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """(log |C(α,i)|, a bound on its rounding error) for i < m, per order: the cumulative sum of
    log|α − k| − log(k + 1), each step within 2 ulps of its magnitude, each addition within one of
    the partial sum."""
    i = np.arange(m, dtype=float)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        steps = np.log(np.abs(a[:, None] - i + 1.0)) - np.log(np.maximum(i, 1.0))
    steps[:, 0] = 0.0
    log_c = np.cumsum(steps, axis=1)
    mag = np.cumsum(np.abs(steps), axis=1)
    return log_c, 3.0 * _U * (mag + np.cumsum(np.abs(log_c), axis=1))


def _fractional_terms(q: float, sigma: float, a: np.ndarray, m: int) -> tuple[np.ndarray, ...]:
    """(log |t_{0,i}|, log |t_{1,i}|, sign of C(α,i), the error bounds of the two logs) for i < m,
    per order."""
    i = np.arange(m, dtype=float)[None, :]
    al = a[:, None]
    log_c, err_c = _log_binomial(a, m)
    n = np.floor(al)
    sign = np.where(i <= n + 1, 1.0, np.where((i - n) % 2 == 0, -1.0, 1.0))
    lq, l1q = math.log(q), math.log1p(-q)
    logit = l1q - lq  # log(1/q − 1)
    v = sigma * sigma
    z0 = v * logit + 0.5
    shared = al * l1q - z0 * z0 / (2.0 * v)  # log[(1 − q)^α e^{−z₀²/(2σ²)}]
    out = []
    for idx, arg in ((i, (z0 - i) / sigma), (al - i, (al - i - z0) / sigma)):  # t_0; t_1 with j = α − i
        lp = idx * lq + (al - idx) * l1q
        direct = lp + (idx * idx - idx) / (2.0 * v) + special().log_ndtr(arg)
        with np.errstate(over="ignore", divide="ignore"):
            via_erfcx = shared + np.log(special().erfcx(-np.minimum(arg, -5.0) / _SQRT2) / 2.0)
        use_x = arg < -5.0  # Φ(arg) tiny: (i² − i)/(2σ²) and log Φ would cancel
        log_t = log_c + np.where(use_x, via_erfcx, direct)
        mag = np.where(use_x, np.abs(shared) + np.abs(via_erfcx - shared),
                       np.abs(lp) + np.abs((idx * idx - idx) / (2.0 * v)) + np.abs(direct - lp))
        out.append((log_t, _REL * mag + err_c + _ABS))
    (t0, e0), (t1, e1) = out
    return t0, t1, sign, e0, e1


def log_a_fractional(q: float, sigma: float, alphas: np.ndarray) -> np.ndarray:
    """An upper bound on log A_α at fractional orders: the signed series of both halves, cut just
    before a negative term (Leibniz), with up to 2¹⁴ terms (more only tightens the bound).

    >>> a = log_a_fractional(0.5, 1.0, np.array([2.0 - 1e-9, 2.5]))
    >>> abs(float(a[0]) - float(log_a_integer(0.5, 1.0, np.array([2.0]))[0])) < 1e-8
    True
    """
    a = np.asarray(alphas, dtype=float)
    out = np.full(a.size, np.inf)
    todo = np.arange(a.size)
    m = 64
    while todo.size:
        width = int(np.ceil(a[todo].max())) + 2 + m
        rows = max(1, _CHUNK // width)
        done = np.concatenate([_cut_sums(q, sigma, a, todo[s:s + rows], width, m, out)
                               for s in range(0, todo.size, rows)])
        todo = todo[~done]
        m *= 4
    return out


def _cut_sums(q: float, sigma: float, a: np.ndarray, rows: np.ndarray, width: int, m: int,
              out: np.ndarray) -> np.ndarray:
    """The series of the orders ``a[rows]`` cut within ``width`` terms into ``out`` (kept where
    smaller); True where the first omitted term is below 1e-7 of log A (or no more terms will be
    tried)."""
    sub = a[rows]
    t0, t1, sign, e0, e1 = _fractional_terms(q, sigma, sub, width)
    n = np.floor(sub)
    # the last cut N ≥ ⌊α⌋ + 1 with N − (⌊α⌋ + 1) even (term N + 1 is negative), N + 1 < width
    last = (n + 1 + 2 * np.floor((width - 2 - (n + 1)) / 2)).astype(int)
    keep = np.arange(width)[None, :] <= last[:, None]
    log_t = np.concatenate([np.where(keep, t0, -np.inf), np.where(keep, t1, -np.inf)], axis=1)
    val = _log_sum_signed(log_t, np.concatenate([sign, sign], axis=1), np.concatenate([e0, e1], axis=1))
    nxt = np.logaddexp(np.take_along_axis(t0, last[:, None] + 1, 1)[:, 0],
                       np.take_along_axis(t1, last[:, None] + 1, 1)[:, 0])
    with np.errstate(divide="ignore", invalid="ignore"):
        small = nxt < np.log(1e-7 * np.maximum(val, 1e-300))
    out[rows] = np.minimum(out[rows], val)
    return small | (m >= _MAX_TERMS) | ~np.isfinite(val)


@functools.lru_cache(maxsize=256)
def sampled_gaussian_log_a(q: float, noise_multiplier: float) -> tuple[np.ndarray, np.ndarray]:
    """(α − 1, an upper bound on log A_α) on the lower convex hull of the certified values at
    :data:`FRACTIONAL_ORDERS` and :data:`INTEGER_ORDERS`, starting with (0, 0). Cached per (q, σ)."""
    with np.errstate(all="ignore"):
        frac = log_a_fractional(q, noise_multiplier, FRACTIONAL_ORDERS)
        ints = log_a_integer(q, noise_multiplier, INTEGER_ORDERS)
    orders = np.concatenate([FRACTIONAL_ORDERS, INTEGER_ORDERS])
    vals = np.maximum(np.concatenate([frac, ints]), 0.0)  # A_α ≥ 1 (Jensen)
    ok = np.isfinite(vals)
    order = np.argsort(orders[ok])
    xs = np.concatenate([[0.0], orders[ok][order] - 1.0])
    ys = np.concatenate([[0.0], vals[ok][order]])
    return lower_hull(xs.tolist(), ys.tolist())


def lower_hull(xs: list[float], ys: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """The lower convex hull of the points (x sorted). Each point is an upper bound on a convex
    function f at x, so every chord between two of them bounds f from above between them.

    >>> [list(map(float, v)) for v in lower_hull([0.0, 1.0, 2.0, 3.0], [0.0, 5.0, 2.0, 4.0])]
    [[0.0, 2.0, 3.0], [0.0, 2.0, 4.0]]
    """
    hx: list[float] = []
    hy: list[float] = []
    for x, y in zip(xs, ys):
        while len(hx) >= 2 and (hx[-1] - hx[-2]) * (y - hy[-2]) - (hy[-1] - hy[-2]) * (x - hx[-2]) <= 0:
            hx.pop()
            hy.pop()
        hx.append(x)
        hy.append(y)
    return np.array(hx), np.array(hy)


def log_a_without_replacement(gamma: float, mu: float, alphas: np.ndarray) -> np.ndarray:
    """An upper bound on log A_α = (α − 1)·D_α at integer orders for a Gaussian mechanism (RDP
    ε(j) = jμ²/2) on a uniformly random subset of a fraction γ of the records, replace-one relation
    (Wang, Balle & Kasiviswanathan 2019, Thm 9 with ε(∞) = ∞):
    A_α ≤ 1 + γ²C(α,2)·min{4(e^{ε(2)} − 1), 2e^{ε(2)}} + Σ_{j=3}^{α} 2γ^j C(α,j) e^{(j−1)ε(j)}.

    >>> la = float(log_a_without_replacement(1e-3, 1.0, np.array([2.0]))[0])  # α = 2: log(1 + γ²·2e)
    >>> 0 <= la - math.log1p(2 * math.e * 1e-6) < 1e-13
    True
    """
    a = np.asarray(alphas, dtype=float)
    out = np.empty(a.size)
    lg = math.log(gamma)
    half = mu * mu / 2.0
    eps2 = 2.0 * half
    second = min(math.log(4.0) + eps2 + math.log(-math.expm1(-eps2)), eps2 + math.log(2.0))
    for rows in ([np.flatnonzero(a <= 512)] if np.any(a <= 512) else []) + [
            np.array([k]) for k in np.flatnonzero(a > 512).tolist()]:
        al = a[rows][:, None]
        j = np.arange(int(al.max()) + 1, dtype=float)[None, :]
        log_c, err_c = _log_binomial(a[rows], j.shape[1])
        body = np.where(j == 2, second, math.log(2.0) + (j - 1.0) * j * half)
        parts = [j * lg, body]
        with np.errstate(invalid="ignore"):
            log_t = np.where((j <= al) & (j >= 2), log_c + sum(parts), np.where(j == 0, 0.0, -np.inf))
            err = np.where(j <= al, _REL * sum(np.abs(p) for p in parts) + err_c + _ABS, 0.0)
        out[rows] = _log_sum_signed(log_t, np.ones(log_t.shape), err)
    return out


@functools.lru_cache(maxsize=256)
def without_replacement_log_a(gamma: float, mu: float) -> tuple[np.ndarray, np.ndarray]:
    """(α − 1, upper bound on log A_α) on the lower convex hull of :func:`log_a_without_replacement`
    at :data:`INTEGER_ORDERS`, from (0, 0) (log A_α is convex in α; WBK 2019, Cor. 10)."""
    with np.errstate(all="ignore"):
        vals = np.maximum(log_a_without_replacement(gamma, mu, INTEGER_ORDERS), 0.0)
    ok = np.isfinite(vals)
    xs = np.concatenate([[0.0], INTEGER_ORDERS[ok] - 1.0])
    return lower_hull(xs.tolist(), np.concatenate([[0.0], vals[ok]]).tolist())
