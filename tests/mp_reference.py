"""High-precision (mpmath) reference values used by the tests as an oracle.

``log_delta_mp`` evaluates the GDP privacy profile at a working precision chosen from its
arguments (60 digits plus the digits that the difference of the two Gaussian tail terms
cancels), so it stays exact for tiny and subnormal μ, where a fixed precision would not.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
from scipy import special

mp.mp.dps = 60


def _digits(mu: float, eps: float) -> int:
    # digits cancelled ≈ log10((1 + ε/μ + μ)/μ), computed in logs (ε/μ may overflow); capped,
    # since beyond ε/μ ≈ 1e300 the value is e^{−1e600} and only its sign of magnitude matters
    log_c = math.log10(eps) - math.log10(mu) if eps > 0 else -math.inf
    lost = max(0.0, log_c, math.log10(mu)) + math.log10(3.0) - math.log10(mu)
    return 60 + min(1200, max(0, int(math.ceil(lost))))


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


def log_delta_mp(mu: float, eps: float) -> mp.mpf:
    """log δ_μ(ε) at a precision high enough for the difference not to cancel."""
    with mp.workdps(_digits(mu, eps)):
        mu_, eps_ = mp.mpf(mu), mp.mpf(eps)
        s2 = mp.sqrt(2)
        a = mu_ / 2 - eps_ / mu_
        b = a - mu_
        if a <= 0:  # ½ e^{−a²/2} [erfcx(−a/√2) − erfcx(−b/√2)]
            u, v = -a / s2, -b / s2
            out = -u * u + mp.log((_erfcx(u) - _erfcx(v)) / 2)
        else:  # [Φ(a) − Φ(b)] − (e^ε − 1) Φ(b)
            if a < 10**8 and -b < 10**8:
                gap = (mp.erf(a / s2) - mp.erf(b / s2)) / 2
            else:
                gap = 1 - mp.exp(_log_ncdf(-a)) - mp.exp(_log_ncdf(b))
            out = mp.log(gap - mp.exp(mp.log(mp.expm1(eps_)) + _log_ncdf(b)) if eps_ > 0 else gap)
    return +out


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
    out = np.empty_like(n)
    ns = n[small]
    out[small] = special.gammaln(ns + 1) - ((ns + 0.5) * np.log(ns) - ns + 0.5 * _LOG_2PI)
    nb = n[~small]
    nn = nb * nb
    out[~small] = (_S0 - (_S1 - (_S2 - (_S3 - _S4 / nn) / nn) / nn) / nn) / nb
    return out


def _bd0(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """x log(x/m) + m − x without cancellation (Loader 2000), x, m > 0."""
    x, m = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(m, dtype=float))
    out = x * np.log(x / m) + m - x
    near = np.abs(x - m) < 0.1 * (x + m)
    if np.any(near):
        xn, mn = x[near], m[near]
        v = (xn - mn) / (xn + mn)
        s = (xn - mn) * v
        ej = 2 * xn * v
        v2 = v * v
        for j in range(1, 200):
            ej = ej * v2
            s1 = s + ej / (2 * j + 1)
            if np.all(s1 == s):
                break
            s = s1
        out[near] = s
    return out


def log_binom_pmf(x: np.ndarray, n: float, log_p: float, log_q: float) -> np.ndarray:
    """log P(Bin(n, p) = x), relative-accurate to ~1e-14 also for n ~ 1e9 (Loader's saddle point).

    p and q = 1 − p are given by their logs so that p near ½ and p near 0 or 1 both keep full
    relative accuracy.
    """
    x = np.asarray(x, dtype=float)
    p, q = math.exp(log_p), math.exp(log_q)
    out = np.empty_like(x)
    lo = x == 0
    hi = x == n
    mid = ~(lo | hi)
    out[lo] = n * log_q
    out[hi] = n * log_p
    xm = x[mid]
    lc = (_stirlerr(np.array([n]))[0] - _stirlerr(xm) - _stirlerr(n - xm)
          - _bd0(xm, n * p) - _bd0(n - xm, n * q))
    lf = _LOG_2PI + np.log(xm) + np.log1p(-xm / n)
    out[mid] = lc - 0.5 * lf
    return out


def kov_delta(eps0: float, k: int, eps: float, max_terms: int = 200_000) -> float:
    """δ(ε) of the k-fold composition of binary randomized response RR_ε₀ — the exact optimal
    composition of k pure ε₀-DP steps (Kairouz, Oh & Viswanath 2015, Thm 3.3) — as a *lower*
    bound: the positive terms P(i)(1 − e^{ε − ε₀(k − 2i)}) over a window of at most
    ``max_terms`` indices around the largest ones, deflated by 1e-9 for rounding.

    With i ~ Bin(k, q), q = 1/(1 + e^{ε₀}) (the number of flipped answers under P), the
    privacy loss is ε₀(k − 2i), and δ(ε) = Σ_{i: ε₀(k−2i) > ε} P(i)(1 − e^{ε − ε₀(k−2i)}).
    """
    if eps0 <= 0 or eps >= eps0 * k:
        return 0.0
    log_p = -math.log1p(math.exp(-eps0))  # log e^ε₀/(1+e^ε₀)
    log_q = -eps0 + log_p
    i_star = (k - eps / eps0) / 2.0  # terms need i < i_star
    i_max = math.ceil(i_star) - 1
    if i_max < 0:
        return 0.0
    mode = k * math.exp(log_q)
    sd = math.sqrt(k * math.exp(log_p + log_q)) + 1.0
    centre = min(mode, i_max)
    lo = max(0, int(centre - 40 * sd))
    hi = min(i_max, int(centre + 40 * sd) + 1)
    if hi - lo + 1 > max_terms:
        lo = max(lo, hi - max_terms + 1) if centre >= hi - max_terms // 2 else lo
        hi = min(hi, lo + max_terms - 1)
    i = np.arange(lo, hi + 1, dtype=float)
    loss = eps0 * (k - 2 * i)
    with np.errstate(divide="ignore"):
        log_terms = log_binom_pmf(i, k, log_q, log_p) + np.log(-np.expm1(eps - loss))
    top = log_terms.max()
    if not math.isfinite(top):
        return 0.0
    return math.exp(top) * float(np.exp(log_terms - top).sum()) * (1 - 1e-9)
