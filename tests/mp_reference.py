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


def log_argmax_mp(f: list[float], s: list[float], i: int) -> mp.mpf:
    """log P(argmax = i) by 25-digit mpmath quadrature around the mode of the integrand."""
    with mp.workdps(25):
        n = len(f)
        fm = [mp.mpf(x) for x in f]
        sm = [mp.mpf(x) for x in s]

        def lg(z: mp.mpf) -> mp.mpf:
            x = fm[i] + sm[i] * z
            v = -z * z / 2 - mp.log(2 * mp.pi) / 2
            for j in range(n):
                if j != i:
                    v += mp.log(mp.ncdf((x - fm[j]) / sm[j]))
            return v

        lo, hi = mp.mpf(0), mp.mpf(1)
        while mp.diff(lg, hi) > 0:
            lo, hi = hi, 2 * hi
        for _ in range(45):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if mp.diff(lg, mid) > 0 else (lo, mid)
        zs = (lo + hi) / 2
        l0 = lg(zs)
        pts = [zs + k * mp.mpf(12) / 24 for k in range(-24, 25)]
        pts += [(fm[j] - fm[i]) / sm[i] + t * sm[j] / sm[i]
                for j in range(n) if j != i for t in (-4, -1, 0, 1, 4)]
        pts = sorted(p for p in pts if zs - 12 <= p <= zs + 12)
        return l0 + mp.log(mp.quad(lambda z: mp.exp(lg(z) - l0), pts))
