"""The pessimistic single-step PLDs of the Poisson-subsampled Gaussian and Laplace, never below the mechanism.

One step with noise multiplier σ (sensitivity 1) run on a Poisson subsample of rate q, with
c = log(1 − q) and s = +1 (remove) or −1 (add):

* remove: P = (1 − q)N(0, σ²) + qN(−1, σ²) against Q = N(0, σ²), loss ℓ = log(1 − q + q e^G),
  G = −(2x + 1)/(2σ²);
* add: P = N(0, σ²) against Q = (1 − q)N(0, σ²) + qN(1, σ²), loss ℓ = −log(1 − q + q e^G),
  G = (2x − 1)/(2σ²).

In both, d = sℓ − c > 0 is the distance to the end of the loss's range and
G = log((1 − q)/q) + log(e^d − 1). Under P the loss has density f = e^{ℓ[s = 1]} φ(z) σ/(1 − e^{−d})
with z = (½ + σ²G)/σ = ∓x/σ (for remove P = e^ℓ Q; Q's density at x is φ(x/σ)/σ), which in
u = log d is I(u) = e^{ℓ[s = 1]} φ(z) σ d/(1 − e^{−d}): smooth, z moving by σ·d e^d/(e^d − 1) per
unit of u — where dℓ/dx blows up near d = 0, u keeps the integrand tame.

Connect the dots (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022, Algorithm 1; Koskela, Jälkö
& Honkela 2020 for the subsampled Gaussian) splits each loss ℓ ∈ [t_k, t_{k+1}] of the grid t_i = iΔ
between its neighbours, a = (e^{t_{k+1} − ℓ} − 1)/(e^Δ − 1) to t_k and 1 − a to t_{k+1}, which keeps
the hockey-stick curve at every grid point; so the masses are integrals of positive functions,
computed here by 10-node Gauss–Legendre in u on pieces where z moves by at most ½/(1 + |z|)
(the Bernstein-ellipse bound of :mod:`dpaudit.accounting.pld_gaussian`). Rounding can only move
mass *up*: each share a is lowered by its error bound (mass moved from t_k to t_{k+1} raises the
curve at every t), a node whose computed loss lies past t_{k+1} goes to t_{k+2}, the grid
intervals share their computed edges (nothing is counted twice or lost), and each mass is inflated
past its relative error bound and rounded up — so each direction dominates the mechanism with no
error term (``err`` 0; total mass above 1 by ~1e-14). dp-accounting's construction
(``from_gaussian_mechanism(σ, sampling_prob=q)``: second differences of δ(t_i) divided by
e^Δ − 1) leaves masses ~u/Δ below their value: its hockey-stick curve fell below the exact δ at 32
of 60 grid points checked at σ = 2, q = 0.001, Δ = 1e-5, by up to 2.2e-12 relative
(``python benchmarks/pmf_rounding.py``).

The grid spans |x| ≤ Zσ on Q's side and |x ∓ 1| ≤ Zσ on P's, Φ(−Z) = e^{−50}/2 (dp-accounting's
truncation); the mass outside, at most Φ(−Z) + Φ(−Z − 1/σ), goes to +∞. The subsampled Laplace
(:func:`sampled_laplace_pmfs`) is the same construction with Laplace's density, whose loss is
constant outside the shift — two atoms, split on the grid like any loss.

>>> remove, add = sampled_gaussian_pmfs(1.0, 0.01, 1e-4)
>>> 0 <= float(remove.probs.sum()) + remove.inf_mass - 1 < 1e-10, remove.probs.size > 1000, add.err
(True, True, 0.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpaudit.accounting.pld_gaussian import GL_REL, GL_W, GL_X, normal_tail
from dpaudit.accounting.pld_pmf import Pmf
from dpaudit.normal_tails import ndtri_exp

__all__ = ["sampled_gaussian_pmfs", "sampled_laplace_pmfs"]

_U = 2.0**-53
_PIECES = 1 << 14  # pieces per slice (bounded temporaries: 10 nodes each)
_Z = -float(ndtri_exp(math.log(0.5) - 50.0))  # Φ(−Z) = e^{−50}/2


def _big_g(d: np.ndarray, q: float) -> np.ndarray:
    """G = log((1 − q)/q) + log(e^d − 1) (d > 0; e^d − 1 overflows past d ≈ 709, never reached)."""
    return math.log1p(-q) - math.log(q) + np.log(np.expm1(d))


def _g_terms(d: np.ndarray, q: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """G, κ = dG/du = d/(1 − e^{−d}) (also the density's Jacobian factor) and a bound on G's
    absolute rounding error (d carried u)."""
    big_g = _big_g(d, q)
    kappa = d / -np.expm1(-d)
    return big_g, kappa, _U * (2.0 * kappa + 4.0 * np.abs(big_g) + 8.0)


def _window(sigma: float, q: float) -> tuple[float, float, float]:
    """The range (d_min, d_max) of d on the grid and the mass outside it (rounded up)."""
    g_end = (_Z * sigma + 0.5) / sigma**2
    ends = [math.log1p(q * math.exp(sign * g_end) / (1.0 - q)) for sign in (-1.0, 1.0)]
    outside = normal_tail(_Z) + normal_tail(_Z + 1.0 / sigma)
    return ends[0], ends[1], math.nextafter(outside * (1.0 + 16.0 * _U), math.inf)


def _gaussian_integrand(d: np.ndarray, ell: np.ndarray, sigma: float, q: float,
                        s: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """I(u) at d = e^u with loss ``ell`` (module docstring), and a bound on its relative rounding
    error at each node (d carried u, ℓ 2u|ℓ|)."""
    big_g, kappa, d_g = _g_terms(d, q)
    z = (0.5 + sigma * sigma * big_g) / sigma
    e = (ell if s == 1 else 0.0) - 0.5 * z * z
    with np.errstate(under="ignore"):
        out = np.exp(e) * (sigma / math.sqrt(2.0 * math.pi)) * kappa
    d_z = sigma * d_g + 3.0 * _U * (np.abs(z) + 1.0 / sigma)
    d_e = 2.0 * _U * np.abs(ell) + np.abs(z) * d_z + _U * (z * z + np.abs(e))
    return out, d_e + 24.0 * _U


def _gaussian_rate(d_a: np.ndarray, d_b: np.ndarray, sigma: float, q: float) -> np.ndarray:
    """A bound on how fast the Gaussian's I moves per unit of u on [log d_a, log d_b], as
    σκ(1 + |z|) (z moves by σκ per unit of u)."""
    z_max = np.maximum(*(np.abs(0.5 + sigma * sigma * _big_g(d, q)) / sigma for d in (d_a, d_b)))
    return sigma * (d_b / -np.expm1(-d_b)) * (1.0 + z_max)  # κ increasing in d


def _pieces(u_a: np.ndarray, u_b: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """How many pieces each grid interval's range [u_a, u_b] of u is cut into: the integrand's
    exponent moves by at most ½ on each (``rate``: its speed per unit of u), and each is at most
    min(0.4, 1/d) wide — the singularities in u (where e^d − 1 = 0 or crosses the negative reals:
    Im e^u = 2πn) lie at least min(π/2, π/d) from the real axis, outside the Bernstein ellipse
    ρ = 8 of such a piece."""
    step = np.minimum(np.minimum(0.4, np.exp(-u_b)), 0.5 / rate)
    return np.maximum(1, np.ceil((u_b - u_a) / step)).astype(np.int64)


def _grid_pmf(fam: _Family, h: float, s: int) -> Pmf:
    """One direction's PMF (s = 1: remove, s = −1: add) of the loss family ``fam``: its density
    on d ∈ [d_min, d_max] integrated, its atoms placed, the mass outside at +∞."""
    c = math.log1p(-fam.q)
    # the window's ends, computed in floats, widened by 8 ulps: what lies between an end and its
    # rounding is counted (an extrapolated sliver more, never one less)
    d_lo, d_hi = fam.d_min * (1.0 - 8.0 * _U), fam.d_max * (1.0 + 8.0 * _U)
    l_ends = sorted((s * (c + d_lo), s * (c + d_hi)))
    lower, upper = math.floor(l_ends[0] / h), math.ceil(l_ends[1] / h)
    # the grid points' d = sℓ − c, in the window: consecutive grid intervals share each edge, so
    # every u is integrated exactly once
    edges = np.clip(s * (np.arange(lower, upper + 1) * h) - c, d_lo, d_hi)
    k = np.arange(lower, upper)
    d_a, d_b = np.minimum(edges[:-1], edges[1:]), np.maximum(edges[:-1], edges[1:])
    keep = d_b > d_a
    k, d_a, d_b = k[keep], d_a[keep], d_b[keep]
    u_a, u_b = np.log(d_a), np.log(d_b)
    m = _pieces(u_a, u_b, fam.rate(d_a, d_b, s))
    low, high, beyond, rel = _integrate(fam, k, u_a, u_b, m, h, s)
    rel += (10.0 * m + 8.0) * _U + GL_REL  # shares and weights, the sums, the rule
    probs = np.zeros(upper - lower + 3)
    bound = np.zeros(probs.size)
    for shift, part in ((0, low), (1, high), (2, beyond)):
        np.add.at(probs, k - lower + shift, part)
        np.maximum.at(bound, k - lower + shift, rel)
    for d_atom, mass in fam.atoms(s):
        ell, t_k = np.array([s * (c + d_atom)]), math.floor(s * (c + d_atom) / h)
        at = np.array([t_k * h])
        to_low, to_high, past = _split((ell - at) / h, ell, c, np.array([d_atom]), at, h)
        for shift, share in ((0, to_low), (1, to_high), (2, past)):
            probs[t_k - lower + shift] += mass * float(share[0])
            bound[t_k - lower + shift] = max(bound[t_k - lower + shift], 16.0 * _U)
    while probs.size > 1 and probs[-1] == 0.0:
        probs, bound = probs[:-1], bound[:-1]
    with np.errstate(under="ignore"):
        probs = np.nextafter(probs * (1.0 + 2.0 * bound + 2.0 * _U), np.inf)
    return Pmf(lower, probs, fam.outside, 0.0)


def _split(frac: np.ndarray, ell: np.ndarray, c: float, d: np.ndarray, t_k: np.ndarray,
           h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """The shares of losses at ``frac`` = (ℓ − t_k)/Δ sent to t_k, t_{k+1} and t_{k+2}: the hat's
    share to t_k lowered past its error (the position errs by ~u·(|ℓ| + |c| + d + |t_k|)/Δ, the
    share by 4 ulps more), so rounding only moves mass up; past t_{k+1}, all to t_{k+2}."""
    a_err = 4.0 * _U + 6.0 * _U * (np.abs(ell) + abs(c) + d + np.abs(t_k)) / h * (1.0 + h)
    share = np.clip(np.expm1(h * (1.0 - frac)) / math.expm1(h) * (1.0 - 4.0 * _U) - a_err, 0.0, 1.0)
    past = frac > 1.0
    return np.where(past, 0.0, share), np.where(past, 0.0, 1.0 - share), past.astype(float)


def _integrate(fam: _Family, k: np.ndarray, u_a: np.ndarray, u_b: np.ndarray, m: np.ndarray, h: float,
               s: int) -> tuple[np.ndarray, ...]:  # fmt: skip
    """Per grid interval k: the mass sent to t_k, to t_{k+1}, to t_{k+2} (:func:`_split`), and the
    largest relative error bound of the integrand on it."""
    low, high, beyond, rel = (np.zeros(k.size) for _ in range(4))
    first = np.cumsum(m) - m
    total = int(m.sum())
    c = math.log1p(-fam.q)
    for p0 in range(0, total, _PIECES):
        piece = np.arange(p0, min(p0 + _PIECES, total))
        owner = np.searchsorted(first, piece, side="right") - 1
        width = (u_b - u_a)[owner] / m[owner]
        u = (u_a[owner] + width * (piece - first[owner]))[:, None] + width[:, None] * GL_X
        d = np.exp(u)
        t_k = k[owner][:, None] * h
        frac = (s * (c + d) - t_k) / h
        ell = t_k + frac * h
        f, err = fam.integrand(d, ell, s)
        w = f * GL_W * width[:, None]
        to_low, to_high, past = _split(frac, ell, c, d, t_k, h)
        low += np.bincount(owner, (w * to_low).sum(axis=1), minlength=k.size)
        high += np.bincount(owner, (w * to_high).sum(axis=1), minlength=k.size)
        beyond += np.bincount(owner, (w * past).sum(axis=1), minlength=k.size)
        np.maximum.at(rel, owner, err.max(axis=1))
    return low, high, beyond, rel


@dataclass(frozen=True)
class _Family:
    """A subsampled loss: its density's range of d, the mass outside it, the density in u, how fast
    it moves, and its atoms (d, mass) per direction."""

    q: float
    d_min: float
    d_max: float
    outside: float
    integrand: Callable[[np.ndarray, np.ndarray, int], tuple[np.ndarray, np.ndarray]]
    rate: Callable[[np.ndarray, np.ndarray, int], np.ndarray]
    atoms: Callable[[int], list[tuple[float, float]]]


def _gaussian_family(sigma: float, q: float) -> _Family:
    d_min, d_max, outside = _window(sigma, q)
    return _Family(q, d_min, d_max, outside, lambda d, ell, s: _gaussian_integrand(d, ell, sigma, q, s),
                   lambda d_a, d_b, s: _gaussian_rate(d_a, d_b, sigma, q), lambda s: [])  # fmt: skip


def _laplace_family(b: float, q: float) -> _Family:
    """The Laplace mechanism of scale b (sensitivity 1) on a Poisson subsample: remove compares
    (1 − q)L(0, b) + qL(−1, b) with L(0, b), add L(0, b) with (1 − q)L(0, b) + qL(1, b). Outside
    (−1, 0) (remove) or (0, 1) (add) the loss is constant — atoms at d± = log(1 + q e^{±1/b}/(1 − q));
    inside, G = ∓(2x ± 1)/b and the density in u is I = ¼ e^{ℓ[s = 1] − (G + 1/b)/2} κ."""
    d_lo = math.log1p(q * math.exp(-1.0 / b) / (1.0 - q))
    d_hi = math.log1p(q * math.exp(1.0 / b) / (1.0 - q))
    half_tail = 0.5 * math.exp(-1.0 / b)

    def integrand(d: np.ndarray, ell: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray]:
        big_g, kappa, d_g = _g_terms(d, q)
        e = (ell if s == 1 else 0.0) - 0.5 * (big_g + 1.0 / b)
        err = 2.0 * _U * np.abs(ell) + 0.5 * d_g + _U * (np.abs(e) + 2.0 / b) + 16.0 * _U
        return 0.25 * np.exp(e) * kappa, err

    def atoms(s: int) -> list[tuple[float, float]]:
        if s == 1:  # x ≥ 0: the smallest loss; x ≤ −1: the largest
            return [(d_lo, (1.0 - q) * 0.5 + q * half_tail), (d_hi, (1.0 - q) * half_tail + q * 0.5)]
        return [(d_lo, 0.5), (d_hi, half_tail)]  # x ≤ 0 and x ≥ 1 under L(0, b)

    rate = lambda d_a, d_b, s: d_b + 0.5 * (d_b / -np.expm1(-d_b)) + 1.0  # noqa: E731 - ℓ, G/2, κ's own
    return _Family(q, d_lo, d_hi, 0.0, integrand, rate, atoms)


def sampled_gaussian_pmfs(noise_multiplier: float, q: float, interval: float) -> list[Pmf]:
    """The pessimistic connect-the-dots PMFs (remove, add) of one Poisson-subsampled Gaussian step
    with noise multiplier σ and sampling probability q < 1 on the grid interval Δ (module
    docstring)."""
    fam = _gaussian_family(float(noise_multiplier), float(q))
    return [_grid_pmf(fam, float(interval), s) for s in (1, -1)]


def sampled_laplace_pmfs(scale: float, q: float, interval: float) -> list[Pmf]:
    """The same for one Poisson-subsampled Laplace step of scale b (sensitivity 1: a release of
    sensitivity Δ and scale b is this with b/Δ); its two atoms split like any loss."""
    fam = _laplace_family(float(scale), float(q))
    return [_grid_pmf(fam, float(interval), s) for s in (1, -1)]
