"""Exact references (mpmath) for mixtures of Gaussians: Rényi and hockey-stick divergences of two
Gaussian mixtures by quadrature, the hockey-stick divergence of a mixture against N(0, σ²), the
subsampled Gaussian's closed form, the output mixtures of a Gaussian on a truncated Poisson
sample, and binomial tails."""

from __future__ import annotations

import mpmath as mp
import numpy as np


def certified_curve(leaf, orders: np.ndarray) -> np.ndarray:
    """dpaudit's certified RDP curve of a one-leaf event at ``orders`` (0 for a no-op)."""
    from dpaudit.accounting import normal_form, rdp

    comps = normal_form(leaf)
    return rdp.rdp_curve(comps[0], orders) if comps[0].items else np.zeros(orders.size)


def mixtures_renyi(p_parts, q_parts, sigma, alpha):
    """max(D_α(P‖Q), D_α(Q‖P)) for P = Σ w N(c, σ²) over the (w, c) of ``p_parts`` and Q likewise
    (each set of weights normalised to sum 1 exactly), by quadrature split at every mean, at 30
    digits (the quadrature's own error is below 1e-16 relative; every bound compared with it has
    a margin above 1e-13)."""
    with mp.workdps(30):
        return _mixtures_renyi(p_parts, q_parts, sigma, alpha)


def _mixtures_renyi(p_parts, q_parts, sigma, alpha):
    a = mp.mpf(alpha)
    pp, qq = _merged(p_parts), _merged(q_parts)
    densities = _densities(pp, qq, mp.mpf(sigma))

    def integrand(z, forward):
        p, q = densities(z)
        return p**a * q ** (1 - a) if forward else q**a * p ** (1 - a)

    pts = [-mp.inf] + sorted(set(pp) | set(qq)) + [mp.inf]
    fwd = mp.quad(lambda z: integrand(z, True), pts)
    bwd = mp.quad(lambda z: integrand(z, False), pts)
    return max(mp.log(fwd), mp.log(bwd)) / (a - 1)


def mixtures_delta(p_parts, q_parts, sigma, eps):
    """max of the two hockey-stick divergences at ε of P = Σ w N(c, σ²) over the (w, c) of
    ``p_parts`` and Q likewise (weights normalised), by quadrature of the positive part split at
    every mean and every sign change found on a fine grid (30 digits)."""
    with mp.workdps(30):
        s, e = mp.mpf(sigma), mp.e ** mp.mpf(eps)
        pp, qq = _merged(p_parts), _merged(q_parts)
        densities = _densities(pp, qq, s)
        means = sorted(set(pp) | set(qq))
        lo, hi = means[0] - 40 * s, means[-1] + 40 * s
        grid = [lo + (hi - lo) * i / 400 for i in range(401)]
        out = []
        for forward in (True, False):
            def f(z, forward=forward):
                p, q = densities(z)
                return p - e * q if forward else q - e * p

            cuts = [mp.findroot(f, (x, y), solver="anderson") for x, y in zip(grid, grid[1:])
                    if (f(x) > 0) != (f(y) > 0)]
            pts = sorted(set(means + cuts + [lo, hi]))
            out.append(mp.quad(lambda z, f=f: max(f(z), 0), pts))
        return max(out)


def _densities(pp, qq, s):
    """z ↦ (p(z), q(z)) for the merged mixtures ``pp`` and ``qq`` of σ = ``s``, each Gaussian
    density computed once per z (and remembered: the two directions ask at the same points)."""
    seen: dict = {}
    means = set(pp) | set(qq)

    def densities(z):
        if z not in seen:
            pdf = {c: mp.npdf(z, c, s) for c in means}
            seen[z] = (mp.fsum(w * pdf[c] for c, w in pp.items()), mp.fsum(w * pdf[c] for c, w in qq.items()))
        return seen[z]

    return densities


def _merged(parts):
    """{mean: weight} of a mixture, the weights of parts with one mean added (the same mixture)
    and normalised to sum 1 exactly; parts of weight 0 left out."""
    total = mp.fsum(mp.mpf(w) for w, _ in parts)
    out: dict = {}
    for w, c in parts:
        if w > 0:
            out[mp.mpf(c)] = out.get(mp.mpf(c), mp.mpf(0)) + mp.mpf(w) / total
    return out


def mixture_delta(w, cs, sigma, eps):
    """max of the two hockey-stick divergences at ε of P = Σ w_c N(c, σ²) (c ≥ 0, the weights
    normalised) against Q = N(0, σ²): the likelihood ratio P/Q is increasing in z, so each is one
    tail integral past a root (60 digits)."""
    with mp.workdps(60):
        return _mixture_delta(w, cs, sigma, eps)


def _mixture_delta(w, cs, sigma, eps):
    s, e = mp.mpf(sigma), mp.e ** mp.mpf(eps)
    total = mp.fsum(mp.mpf(x) for x in w)
    w = [mp.mpf(x) / total for x in w]
    cs = [mp.mpf(c) for c in cs]

    def ratio(z):
        return mp.fsum(wc * mp.e ** ((2 * c * z - c * c) / (2 * s * s)) for c, wc in zip(cs, w))

    def root(target):
        lo, hi = mp.mpf(-1e4), mp.mpf(1e4)
        for _ in range(300):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if ratio(mid) < target else (lo, mid)
        return (lo + hi) / 2

    z1 = root(e)  # P − e^ε Q > 0 above z1
    d1 = mp.fsum(wc * mp.ncdf(-(z1 - c) / s) for c, wc in zip(cs, w)) - e * mp.ncdf(-z1 / s)
    z2 = root(1 / e)  # Q − e^ε P > 0 below z2
    d2 = mp.ncdf(z2 / s) - e * mp.fsum(wc * mp.ncdf((z2 - c) / s) for c, wc in zip(cs, w))
    return max(d1, d2, mp.mpf(0))


def mixture_renyi(sigma: float, cs, ps, alpha: float):
    """max(D_α(P‖Q), D_α(Q‖P)) for P = Σ p_i N(c_i, σ²) (weights normalised), Q = N(0, σ²)."""
    return mixtures_renyi(list(zip(ps, cs)), [(1, 0)], sigma, alpha)


def sampled_gaussian_renyi(q: float, mu: float, alpha: int):
    """The closed form at an integer order of the Poisson-subsampled Gaussian, N(0, 1) against
    (1 − q)N(0, 1) + qN(μ, 1): log A_α/(α − 1), A_α = Σ_i C(α, i)(1 − q)^{α−i} q^i e^{(i² − i)μ²/2}
    (Mironov, Talwar & Zhang 2019, Sec. 3.3; the larger of the two orders, ibid. Thm 5)."""
    with mp.workdps(40):  # not mpmath's 15 digits (the default unless a module imported earlier raised it)
        q, mu = mp.mpf(q), mp.mpf(mu)
        a = mp.fsum(mp.binomial(alpha, i) * (1 - q) ** (alpha - i) * q**i
                    * mp.e ** ((i * i - i) * mu * mu / 2) for i in range(alpha + 1))
        return mp.log(a) / (alpha - 1)


def truncated_pair(n: int, q: float, b: int, other: int):
    """The exact output means' distributions of a Gaussian on a truncated Poisson sample for one
    neighbouring pair of scalar datasets: the record contributes 1, each of the n − 1 others
    ``other`` (0 or −1); (w, mean) lists for the dataset without the record and with it. K others
    are sampled (Binomial(n − 1, q)); the record, if sampled, survives a cut of K + 1 > b records
    with probability b/(K + 1), displacing one of the others."""
    q = mp.mpf(q)
    without, with_ = [], []
    for k in range(n):
        pk = mp.binomial(n - 1, k) * q**k * (1 - q) ** (n - 1 - k)
        kept = min(k, b)
        without.append((pk, other * kept))
        keep = mp.mpf(1) if k + 1 <= b else mp.mpf(b) / (k + 1)
        with_.append((pk * (1 - q + q * (1 - keep)), other * kept))
        with_.append((pk * q * keep, 1 + other * (min(k, b - 1))))
    return without, with_


def binomial_tail(n: int, q: float, b: int):
    """P(Binomial(n, q) ≥ b) at 40 digits: the pmf summed from b away from the mode (upwards if b
    is above it, else the lower tail downwards from b − 1, subtracted from 1) until a term is below
    1e-45 of the sum (the terms then shrink geometrically)."""
    with mp.workdps(40):
        q = mp.mpf(q)
        if b <= 0:
            return mp.mpf(1)
        if b > n or q == 0:
            return mp.mpf(0)
        if q == 1:
            return mp.mpf(1)
        lq, lr = mp.log(q), mp.log(1 - q)

        def pmf(k):
            log_c = mp.loggamma(n + 1) - mp.loggamma(k + 1) - mp.loggamma(n - k + 1)
            return mp.e ** (log_c + k * lq + (n - k) * lr)

        upper = b > n * q
        k, total = (b, mp.mpf(0)) if upper else (b - 1, mp.mpf(0))
        while 0 <= k <= n:
            term = pmf(k)
            total += term
            if term < total * mp.mpf(10) ** -45 and abs(k - n * q) > 1:
                break
            k += 1 if upper else -1
        return total if upper else 1 - total
