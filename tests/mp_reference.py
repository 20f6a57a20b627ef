"""High-precision (mpmath, 60 digits) reference values used by the tests as an oracle."""

from __future__ import annotations

import mpmath as mp

mp.mp.dps = 60


def log_delta_mp(mu: float, eps: float) -> mp.mpf:
    """log δ_μ(ε), evaluated at 120 working digits in a form without catastrophic cancellation."""
    with mp.workdps(120):
        mu, eps = mp.mpf(mu), mp.mpf(eps)
        s2 = mp.sqrt(2)
        a = -eps / mu + mu / 2
        b = -eps / mu - mu / 2
        if a <= 0:  # ½ e^{−a²/2} [erfcx(−a/√2) − erfcx(−b/√2)]
            ex = lambda z: mp.erfc(z) * mp.exp(z * z)  # noqa: E731
            d = mp.exp(-a * a / 2) / 2 * (ex(-a / s2) - ex(-b / s2))
        else:  # [Φ(a) − Φ(b)] − (e^ε − 1) Φ(b)
            gap = (mp.erfc(b / s2) - mp.erfc(a / s2)) / 2 if b >= 0 else (mp.erf(a / s2) - mp.erf(b / s2)) / 2
            d = gap - mp.expm1(eps) * mp.ncdf(b)
        return +mp.log(d)


def epsilon_mp(mu: float, delta: float) -> mp.mpf:
    """ε with δ_μ(ε) = δ, by bisection on log δ (monotone), 60 digits."""
    target = mp.log(mp.mpf(delta))
    if log_delta_mp(mu, 0) <= target:
        return mp.mpf(0)
    lo, hi = mp.mpf(0), mp.mpf(mu) ** 2 / 2 + mp.mpf(mu) * mp.sqrt(2 * abs(target) + 2)
    for _ in range(200):
        mid = (lo + hi) / 2
        if log_delta_mp(mu, mid) > target:
            lo = mid
        else:
            hi = mid
    return hi


def mu_mp(eps: float, delta: float) -> mp.mpf:
    target = mp.log(mp.mpf(delta))
    lo, hi = mp.mpf(1), mp.mpf(1)
    while log_delta_mp(hi, eps) < target:
        hi *= 2
    while log_delta_mp(lo, eps) > target:
        hi, lo = lo, lo / 2
    for _ in range(120):
        mid = (lo + hi) / 2
        if log_delta_mp(mid, eps) <= target:
            lo = mid
        else:
            hi = mid
    return lo
