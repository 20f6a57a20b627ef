"""High-precision (mpmath) reference values used by the tests as an oracle.

``log_delta_mp`` evaluates the GDP privacy profile at a working precision chosen from its
arguments (60 digits plus the digits that the difference of the two Gaussian tail terms
cancels), so it stays exact for tiny and subnormal μ, where a fixed precision would not. The others work
at the precision the test runs at: 60 digits (``MP_DIGITS`` in ``tests/conftest.py``).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
from scipy import special

from tests.mixture_reference import mixture_delta, mixtures_renyi


def _log10(x) -> float:
    return float(mp.log10(x)) if isinstance(x, mp.mpf) else math.log10(x)


def _digits(mu, eps) -> int:
    """Working digits: 34, plus the digits the difference of the two tail terms cancels,
    log10((1 + ε/μ + μ)/μ), plus those that a = μ/2 − ε/μ cancels, log10(max(ε/μ, μ)/|a|) (a is
    a difference of doubles over 2μ, so |a| ≥ 1e-35·max(ε/μ, μ) unless it is 0)."""
    log_c = _log10(eps) - _log10(mu) if eps > 0 else -math.inf
    lost = max(0.0, log_c, _log10(mu)) + math.log10(3.0) - _log10(mu)
    c, m = float(eps) / float(mu) if float(mu) > 0 else math.inf, float(mu)
    big = max(c, m / 2)
    if math.isfinite(big) and big > 0:
        a_est = abs(m / 2 - c)
        lost += max(0.0, math.log10(big / max(a_est, 1e-35 * big)))
    return 34 + min(1200, max(0, int(math.ceil(lost))))


def _erfcx(x: mp.mpf) -> mp.mpf:
    """e^{x²} erfc(x); the asymptotic series beyond 1e8 (mpmath's erfc fails near 1e150)."""
    if x < 10**8:
        return mp.erfc(x) * mp.exp(x * x)
    s = 1 / (2 * x * x)
    return (1 - s * (1 - 3 * s * (1 - 5 * s * (1 - 7 * s * (1 - 9 * s))))) / (x * mp.sqrt(mp.pi))


def _log_ncdf(x: mp.mpf) -> mp.mpf:
    """log Φ(x), also for x ≪ −1e8."""
    if x > -(10**8):
        return mp.log(mp.ncdf(x))
    z = -x / mp.sqrt(2)
    return -z * z + mp.log(_erfcx(z) / 2)


def log_delta_mp(mu, eps) -> mp.mpf:
    """log δ_μ(ε) at a precision high enough for the difference not to cancel (μ and ε may be
    floats or mpf, e.g. an exact μ = sqrt(k)·s/σ); doubled if the difference still vanishes."""
    dps = _digits(mu, eps)
    for _ in range(6):
        val = _log_delta_at(mu, eps, dps)
        if val is not None:
            return val
        dps *= 2
    raise ArithmeticError(f"log_delta_mp did not converge at mu={mu!r}, eps={eps!r}")


def _log_delta_at(mu, eps, dps: int) -> mp.mpf | None:
    with mp.workdps(dps):
        mu_, eps_ = mp.mpf(mu), mp.mpf(eps)
        s2 = mp.sqrt(2)
        a = mu_ / 2 - eps_ / mu_
        b = a - mu_
        if a <= 0:  # ½ e^{−a²/2} [erfcx(−a/√2) − erfcx(−b/√2)]
            u, v = -a / s2, -b / s2
            d = (_erfcx(u) - _erfcx(v)) / 2
            out = -u * u + mp.log(d) if d > 0 else None
        else:  # [Φ(a) − Φ(b)] − (e^ε − 1) Φ(b)
            if a < 10**8 and -b < 10**8:
                gap = (mp.erf(a / s2) - mp.erf(b / s2)) / 2
            else:
                gap = 1 - mp.exp(_log_ncdf(-a)) - mp.exp(_log_ncdf(b))
            d = gap - mp.exp(mp.log(mp.expm1(eps_)) + _log_ncdf(b)) if eps_ > 0 else gap
            out = mp.log(d) if d > 0 else None
    return +out if out is not None else None


def epsilon_mp(mu: float, delta: float) -> mp.mpf:
    """ε with δ_μ(ε) = δ, by bisection on log δ (monotone), 60 digits."""
    target = mp.log(mp.mpf(delta))
    if log_delta_mp(mu, 0) <= target:
        return mp.mpf(0)
    lo, hi = mp.mpf(0), mp.mpf(mu) ** 2 / 2 + mp.mpf(mu) * mp.sqrt(2 * abs(target) + 2)
    for _ in range(200):
        mid = (lo + hi) / 2
        if log_delta_mp(mu, float(mid)) > target:
            lo = mid
        else:
            hi = mid
    return hi


def mu_mp(eps: float, delta: float) -> mp.mpf:
    target = mp.log(mp.mpf(delta))
    lo, hi = mp.mpf(1), mp.mpf(1)
    while log_delta_mp(float(hi), eps) < target:
        hi *= 2
    while log_delta_mp(float(lo), eps) > target:
        hi, lo = lo, lo / 2
    for _ in range(120):
        mid = (lo + hi) / 2
        if log_delta_mp(float(mid), eps) <= target:
            lo = mid
        else:
            hi = mid
    return lo


def log_argmax_mp(f: list[float], s: list[float], i: int) -> mp.mpf:
    """log P(argmax = i) by 25-digit mpmath quadrature around the mode of the integrand (found by
    bisection on its derivative, written out), split every 4 standard units and at ±4, ±1, 0
    standard units of every other arm's mean."""
    with mp.workdps(25):
        n = len(f)
        fm = [mp.mpf(x) for x in f]
        sm = [mp.mpf(x) for x in s]
        others = [j for j in range(n) if j != i]

        def lg(z: mp.mpf) -> mp.mpf:
            x = fm[i] + sm[i] * z
            cdfs = mp.fsum(mp.log(mp.ncdf((x - fm[j]) / sm[j])) for j in others)
            return -z * z / 2 - mp.log(2 * mp.pi) / 2 + cdfs

        def slope(z: mp.mpf) -> mp.mpf:  # d lg / dz: −z + Σ (σ_i/σ_j) φ(u_j)/Φ(u_j)
            x = fm[i] + sm[i] * z
            return -z + mp.fsum(sm[i] / sm[j] * mp.exp(mp.log(mp.npdf(u)) - mp.log(mp.ncdf(u)))
                                for j in others for u in [(x - fm[j]) / sm[j]])  # fmt: skip

        lo, hi = mp.mpf(0), mp.mpf(1)
        while slope(hi) > 0:
            lo, hi = hi, 2 * hi
        for _ in range(45):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if slope(mid) > 0 else (lo, mid)
        zs = (lo + hi) / 2
        l0 = lg(zs)
        pts = [zs + 4 * k for k in range(-3, 4)]
        pts += [(fm[j] - fm[i]) / sm[i] + t * sm[j] / sm[i] for j in others for t in (-4, -1, 0, 1, 4)]
        pts = sorted(p for p in pts if zs - 12 <= p <= zs + 12)
        return l0 + mp.log(mp.quad(lambda z: mp.exp(lg(z) - l0), pts))


def pure_dp_to_gdp_mp(eps: float) -> mp.mpf:
    """μ = 2Φ^{-1}(e^ε/(1 + e^ε)) = 2√2·erfinv(tanh(ε/2)), at a precision that resolves tiny ε."""
    with mp.workdps(60 + max(0, int(-math.log10(eps)) if eps > 0 else 0)):
        e = mp.mpf(eps)
        if e > 50:  # solve log Φ(−z) = −softplus(ε) by Newton in z (log Φ via the erfcx series)
            logq = -(e + mp.log1p(mp.exp(-e)))
            z = mp.sqrt(-2 * logq)
            for _ in range(200):
                f = _log_ncdf(-z) - logq
                fp = -mp.sqrt(2 / mp.pi) / _erfcx(z / mp.sqrt(2))  # d/dz log Φ(−z) = −φ(z)/Φ(−z)
                step = f / fp
                z -= step
                if abs(step) <= abs(z) * mp.mpf(10) ** (-mp.mp.dps + 5):
                    break
            out = 2 * z
        else:
            out = 2 * mp.sqrt(2) * mp.erfinv(mp.tanh(e / 2))
    return +out


# ---------------------------------------------------------------------------------------
# exact composition of pure ε-DP steps (Kairouz, Oh & Viswanath 2015), vectorised in NumPy

_S0, _S1, _S2, _S3, _S4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
_LOG_2PI = math.log(2 * math.pi)


def _stirlerr(n: np.ndarray) -> np.ndarray:
    """log(n!) − [(n + ½) log n − n + ½ log 2π] (Loader 2000), n ≥ 1."""
    n = np.asarray(n, dtype=float)
    small = n <= 15
    ns = np.where(small, n, 16.0)
    direct = special.gammaln(ns + 1) - ((ns + 0.5) * np.log(ns) - ns + 0.5 * _LOG_2PI)
    nb = np.where(small, 16.0, n)
    nn = nb * nb
    series = (_S0 - (_S1 - (_S2 - (_S3 - _S4 / nn) / nn) / nn) / nn) / nb
    return np.where(small, direct, series)


def _bd0(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """x log(x/m) + m − x without cancellation (Loader 2000), x, m > 0."""
    x, m = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(m, dtype=float))
    direct = x * np.log(x / m) + m - x
    near = np.abs(x - m) < 0.1 * (x + m)
    v = np.where(near, (x - m) / (x + m), 0.0)  # |v| < 0.1: 12 terms reach v^26 < 1e-26
    s = (x - m) * v
    ej = 2 * x * v
    v2 = v * v
    for j in range(1, 13):
        ej = ej * v2
        s = s + ej / (2 * j + 1)
    return np.where(near, s, direct)


def log_binom_pmf(x: np.ndarray, n, log_p: float, log_q: float) -> np.ndarray:
    """log P(Bin(n, p) = x), relative-accurate to ~1e-14 also for n ~ 1e9 (Loader's saddle point);
    x and n broadcast.

    p and q = 1 − p are given by their logs so that p near ½ and p near 0 or 1 both keep full
    relative accuracy.
    """
    x, n = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(n, dtype=float))
    p, q = math.exp(log_p), math.exp(log_q)
    lo = x == 0
    hi = x == n
    mid = ~(lo | hi)
    xm = np.where(mid, x, 1.0)
    nm = np.where(mid, n, 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        lc = (_stirlerr(nm) - _stirlerr(xm) - _stirlerr(nm - xm)
              - _bd0(xm, nm * p) - _bd0(nm - xm, nm * q))
        lf = _LOG_2PI + np.log(xm) + np.log1p(-xm / nm)
    out = np.where(mid, lc - 0.5 * lf, 0.0)
    out = np.where(lo, n * log_q, out)
    return np.where(hi & ~lo, n * log_p, out)


def kov_delta(eps0: float, k: int, eps: float, max_terms: int = 200_000) -> float:
    """δ(ε) of the k-fold composition of binary randomized response RR_ε₀ — the exact optimal
    composition of k pure ε₀-DP steps (Kairouz, Oh & Viswanath 2015, Thm 3.3) — as a *lower*
    bound: the positive terms P(i)(1 − e^{ε − ε₀(k − 2i)}) over a window of at most
    ``max_terms`` indices around the largest ones, each loss rounded down, and the sum deflated
    by a bound on the binomial's rounding (1e-9 + 1e-15·|i − kq| relative, Loader 2000).

    With i ~ Bin(k, q), q = 1/(1 + e^{ε₀}) (the number of flipped answers under P), the
    privacy loss is ε₀(k − 2i), and δ(ε) = Σ_{i: ε₀(k−2i) > ε} P(i)(1 − e^{ε − ε₀(k−2i)}).
    """
    if eps0 <= 0 or k <= 0:
        return 0.0
    with np.errstate(over="ignore"):
        if eps >= eps0 * k:
            return 0.0
    log_p = -math.log1p(math.exp(-eps0))  # log e^ε₀/(1+e^ε₀)
    log_q = -eps0 + log_p
    i_star = (k - eps / eps0) / 2.0  # terms need i < i_star
    i_max = min(k, math.ceil(i_star) - 1)
    if i_max < 0:
        return 0.0
    mode = k * math.exp(log_q)
    sd = math.sqrt(k * math.exp(log_p + log_q)) + 1.0
    centre = min(mode, i_max)
    lo = max(0, int(centre - 40 * sd))
    hi = min(i_max, int(centre + 40 * sd) + 1)
    if hi - lo + 1 > max_terms:  # keep the part nearest the centre
        lo = max(lo, int(centre) - max_terms // 2)
        hi = min(hi, lo + max_terms - 1)
    i = np.arange(lo, hi + 1, dtype=float)
    with np.errstate(over="ignore"):
        loss = np.nextafter(eps0 * (k - 2 * i), -np.inf)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_terms = log_binom_pmf(i, k, log_q, log_p) + np.log(-np.expm1(np.minimum(eps - loss, 0.0)))
    top = float(np.max(log_terms))
    if not math.isfinite(top):
        return 0.0
    deflate = 1e-9 + 1e-15 * float(np.max(np.abs(i - mode)))
    return math.exp(top) * float(np.exp(log_terms - top).sum()) * (1 - deflate)


def three_point_delta(eps0: float, n: int, log_zero: float, eps: float, cap: int = 100) -> float:
    """A lower bound on δ(ε) of n steps whose privacy loss is +ε₀, 0 or −ε₀ with P-probabilities
    proportional to (e^{ε₀}, ·, 1) on the non-zero part and e^{log_zero} at 0 — k-ary randomized
    response (exactly) and the post-processing {x ≤ 0, 0 < x < 1, x ≥ 1} of the Laplace mechanism.

    Given the number m of non-zero steps, m ~ Bin(n, 1 − p₀), the loss is that of m-fold binary
    randomized response, so δ(ε) = Σ_m Bin(n, 1 − p₀)(m)·KOV(ε₀, m, ε), summed here on the full
    (m, i) grid. Exact for n ≤ ``cap``; for larger n it is the value of ``cap`` steps (dropping
    steps can only lower δ).
    """
    n = min(n, cap)
    if n <= 0 or not eps0 > 0:
        return 0.0
    p0 = math.exp(log_zero)
    m = np.arange(0, n + 1, dtype=float)[:, None]
    i = np.arange(0, n + 1, dtype=float)[None, :]
    log_p = -math.log1p(math.exp(-eps0))
    log_q = -eps0 + log_p
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_w = log_binom_pmf(m, n, math.log1p(-p0), log_zero) if p0 > 0 else np.where(m == n, 0.0, -np.inf)
        loss = np.nextafter(eps0 * (m - 2 * i), -np.inf)
        valid = (i <= m) & (loss > eps)
        log_t = (log_binom_pmf(np.minimum(i, m), m, log_q, log_p)
                 + np.log(-np.expm1(np.minimum(eps - loss, 0))))
        log_t = np.where(valid, log_t + log_w, -np.inf)
    top = float(np.max(log_t))
    if not math.isfinite(top):
        return 0.0
    return math.exp(top) * float(np.exp(log_t - top).sum()) * (1 - 1e-9)


def rr_delta(eps0: float, categories: int, n: int, eps: float) -> float:
    """A lower bound (exact for n ≤ 100) on δ(ε) of n steps of k-ary randomized response."""
    if categories == 2:
        return kov_delta(eps0, n, eps)
    # P(output = neither x nor x′) = (k − 2)/(e^ε₀ + k − 1)
    log_zero = math.log(categories - 2) - float(np.logaddexp(eps0, math.log(categories - 1)))
    return three_point_delta(eps0, n, log_zero, eps)


def laplace_delta(eps0: float, n: int, eps: float) -> float:
    """A lower bound on δ(ε) of n Laplace steps with ε₀ = sensitivity/scale: the larger of one
    step's exact δ = 1 − e^{(ε − ε₀)/2} and the exact δ of n steps post-processed to
    {x ≤ 0, 0 < x < 1, x ≥ 1} (losses ε₀, 0, −ε₀; P(0) = (1 − e^{−ε₀})/2)."""
    if not eps0 > 0:
        return 0.0
    one = -math.expm1((eps - eps0) / 2) if eps < eps0 else 0.0
    log_zero = math.log(0.5) + math.log(-math.expm1(-eps0)) if eps0 < 700 else math.log(0.5)
    return max(one * (1 - 1e-12), three_point_delta(eps0, n, log_zero, eps))


def repeat_select_rr(eps: float, mean: float, shape: float) -> tuple[list, list]:
    """The exact output distributions (over ⊥, 0, 1) of repeat-and-select of binary randomized
    response at ``eps`` on two neighbours, releasing the largest bit of K runs (⊥ if K = 0): K
    truncated negative binomial (``shape`` ≥ 0, P(K = k) ∝ binom(k + η − 1, k)(1 − γ)^k, k ≥ 1)
    or Poisson (``shape`` = inf) of mean ``mean``, γ solved from the mean at 60 digits.
    P(max = 0) = G(1 − p) − P(K = 0), G the probability generating function."""
    p_hi = mp.e ** mp.mpf(eps) / (1 + mp.e ** mp.mpf(eps))
    m = mp.mpf(mean)
    if math.isinf(shape):
        def pgf(s):
            return mp.e ** (-m * (1 - s))
    elif mean == 1.0:
        def pgf(s):
            return s
    else:
        eta = mp.mpf(shape)

        def mean_of(g):
            if shape == 0:
                return (1 - g) / (g * mp.log(1 / g))
            return eta * (1 - g) / (g * -mp.expm1(eta * mp.log(g)))

        lo, hi = mp.mpf("1e-300"), mp.mpf(1) - mp.mpf("1e-40")
        for _ in range(400):  # E[K] decreases in γ
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if mean_of(mid) > m else (lo, mid)
        gamma = (lo + hi) / 2

        def pgf(s):
            if shape == 0:
                return mp.log(1 - (1 - gamma) * s) / mp.log(gamma)
            return mp.expm1(-eta * mp.log(1 - (1 - gamma) * s)) / mp.expm1(-eta * mp.log(gamma))

    def dist(p):
        none = pgf(mp.mpf(0))
        return [none, pgf(1 - p) - none, 1 - pgf(1 - p)]

    return dist(p_hi), dist(1 - p_hi)


def renyi_mp(p: list, q: list, alpha: float):
    """D_α(P‖Q) of finite distributions, exactly (mpmath)."""
    a = mp.mpf(alpha)
    return mp.log(mp.fsum(x**a * y ** (1 - a) for x, y in zip(p, q) if x > 0)) / (a - 1)


def hockey_stick_mp(p: list, q: list, eps: float, count: int = 1):
    """δ(ε) = Σ max(0, P − e^ε Q) of the ``count``-fold products of finite distributions."""
    from collections import Counter as _Counter
    from itertools import combinations_with_replacement

    total = mp.mpf(0)
    e = mp.e ** mp.mpf(eps)
    for combo in combinations_with_replacement(range(len(p)), count):
        c = _Counter(combo)
        mult = mp.factorial(count)
        for v in c.values():
            mult /= mp.factorial(v)
        pp = mult * mp.fprod(p[i] ** k for i, k in c.items())
        qq = mult * mp.fprod(q[i] ** k for i, k in c.items())
        total += max(mp.mpf(0), pp - e * qq)
    return total


def with_replacement_pair(n: int, m: int, sigma: float):
    """(weights, σ): one record contributing 1 to a sum over m draws with replacement from n
    records, the other records 0, against the neighbour where it contributes 0: P = Σ_c w_c
    N(c, σ²) (C ~ Binomial(m, 1/n)) and Q = N(0, σ²)."""
    p = mp.mpf(1) / n
    return [mp.binomial(m, c) * p**c * (1 - p) ** (m - c) for c in range(m + 1)], mp.mpf(sigma)


def with_replacement_renyi(n: int, m: int, sigma: float, alpha: float):
    """max(D_α(P‖Q), D_α(Q‖P)) of :func:`with_replacement_pair`, by quadrature."""
    w, s = with_replacement_pair(n, m, sigma)
    return mixtures_renyi(list(zip(w, range(m + 1))), [(1, 0)], s, alpha)


def with_replacement_delta(n: int, m: int, sigma: float, eps: float):
    """max of the two hockey-stick divergences of :func:`with_replacement_pair` at ε."""
    w, s = with_replacement_pair(n, m, sigma)
    return mixture_delta(w, list(range(m + 1)), s, eps)


def pmf_curve(pmf, interval: float, t) -> float:
    """The hockey-stick curve Σ_j p_j (1 − e^{t − ℓ_j})₊ + p_∞ of a PLD PMF at loss ``t`` (a
    float, or a grid index given as an int: t = iΔ in long double), each term in long double and
    the sum exact (fsum): rounded once, so a construction that undershoots δ by more than ~2e-16
    relative shows."""
    losses = (np.arange(pmf.probs.size) + pmf.lower) * np.longdouble(interval)
    at = np.longdouble(t) * np.longdouble(interval) if isinstance(t, (int, np.integer)) else np.longdouble(t)
    k = int(np.searchsorted(losses, at, side="right"))  # the terms at losses ≤ t are 0
    terms = (pmf.probs[k:] * -np.expm1(at - losses[k:])).astype(float)
    return math.fsum([pmf.inf_mass, *terms.tolist()])
