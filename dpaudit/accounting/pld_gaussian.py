"""The pessimistic connect-the-dots PMF of one Gaussian release, each mass at least its exact value.

The privacy loss of the Gaussian mechanism with μ = Δ/σ is L ~ N(μ²/2, μ²) under either
neighbour (both directions alike). Connect the dots (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi
2022, "Connect the Dots: Tighter Discrete Approximations of Privacy Loss Distributions",
Algorithm 1) places mass on the grid t_i = i·h so that the hockey-stick curve equals δ(t_i) at every
grid point and interpolates it linearly in e^t in between, which dominates the mechanism. The
same PMF is obtained by splitting each loss ℓ ∈ [t_i, t_{i+1}] between its two grid neighbours
with the shares that keep Σ p e^{−t} = e^{−ℓ}:

    a(ℓ) = (e^{t_{i+1} − ℓ} − 1)/(e^h − 1) to t_i,
    b(ℓ) = 1 − a(ℓ) = (1 − e^{t_i − ℓ})/(1 − e^{−h}) to t_{i+1},

so p_i = ∫ b dF over [t_{i−1}, t_i] + ∫ a dF over [t_i, t_{i+1}]: integrals of positive functions,
computed here to a few units of rounding *relative* to each mass (10-node Gauss–Legendre on
pieces of at most half a standard deviation), where the usual construction — second differences
of δ(t_i) divided by e^h − 1 ≈ h — loses ~u/h absolute and leaves masses below their exact value
(dp-accounting's curve falls below the exact δ at 9 of 60 grid points at σ = 5, h = 1e-4, by up
to 1.1e-12 relative: ``python benchmarks/pmf_rounding.py``). The loss outside
μ²/2 ± 10μ (mass 7.6e-24 each side) goes to the first grid point (below) and to +∞ (above), both
pessimistic. Every mass is then inflated past its error bound and rounded up, so the PMF dominates
the mechanism with no error term (``err`` 0): a PMF with larger masses has a larger hockey-stick
curve at every t, alone and composed (its total mass exceeds 1 by about 1e-13).

>>> p = gaussian_pmf(1.0, 1e-3)
>>> p.lower, p.probs.size, p.err, 0 <= float(p.probs.sum()) + p.inf_mass - 1 < 1e-12
(-9500, 20001, 0.0, True)
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.accounting.pld_pmf import Pmf

__all__ = ["gaussian_pmf", "normal_tail", "GL_X", "GL_W", "GL_REL"]

_Z_TAIL = 10.0  # standard deviations of the loss kept on the grid on each side

# 10-node Gauss–Legendre on (0, 1) (numpy.polynomial.legendre.leggauss(10), mapped; tested)
GL_X = np.array([0.013046735741414128, 0.06746831665550773, 0.16029521585048778, 0.2833023029353764,
                  0.4255628305091844, 0.5744371694908156, 0.7166976970646236, 0.8397047841495122,
                  0.9325316833444923, 0.9869532642585859])  # fmt: skip
GL_W = np.array([0.03333567215434407, 0.0747256745752902, 0.109543181257991, 0.13463335965499826,
                  0.1477621123573764, 0.1477621123573764, 0.13463335965499826, 0.109543181257991,
                  0.0747256745752902, 0.03333567215434407])  # fmt: skip
# The rule's error on a piece where the integrand's exponent moves by at most 0.5 (|z|·w ≤ ½ and
# w ≤ ½ in standard deviations): analytic in the Bernstein ellipse ρ = 8, where it is at most ~31
# times its integral, so the error is at most 64·31/(15(ρ² − 1)ρ²⁰) ≈ 2e-18 relative (Trefethen
# 2008, "Is Gauss quadrature better than Clenshaw–Curtis?", Theorem 4.5); counted as 1e-16.
GL_REL = 1e-16
_ROWS = 1 << 15  # grid intervals per slice (bounded temporaries)


def normal_tail(z: float) -> float:
    """P(Z > z) for a standard normal Z, relative to a few ulps (erfc, no cancellation)."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def gaussian_pmf(mu: float, interval: float) -> Pmf:
    """The pessimistic connect-the-dots PMF of one μ-GDP Gaussian release on the grid ``interval``
    (module docstring), every mass at least the exact one and at most ~1e-13 relative above it."""
    h, m, s = float(interval), 0.5 * mu * mu, float(mu)
    lower, upper = math.floor((m - _Z_TAIL * s) / h), math.ceil((m + _Z_TAIL * s) / h)
    w = h / s  # one grid interval in standard deviations of the loss
    z_max = max(abs(lower * h - m), abs(upper * h - m)) / s
    pieces = max(1, math.ceil(2.0 * max(w, (z_max + w) * w)))
    x = ((np.arange(pieces)[:, None] + GL_X) / pieces).ravel()  # nodes in (0, 1) of one grid interval
    weights = np.tile(GL_W / pieces, pieces) * (w / math.sqrt(2.0 * math.pi))  # ∫ f dℓ = w ∫_0^1 φ(z) dx
    to_low = weights * (np.expm1(h * (1.0 - x)) / math.expm1(h))
    to_high = weights * (np.expm1(-h * x) / math.expm1(-h))
    probs = np.zeros(upper - lower + 1)
    for k0 in range(lower, upper, _ROWS):
        k = np.arange(k0, min(k0 + _ROWS, upper))
        z = ((k[:, None] + x) * h - m) / s
        density = np.exp(-0.5 * z * z)
        probs[k0 - lower : k0 - lower + k.size] += density @ to_low
        probs[k0 - lower + 1 : k0 - lower + 1 + k.size] += density @ to_high
    probs[0] += normal_tail((m - lower * h) / s)  # the loss below t_lower, moved up to it
    inf_mass = normal_tail((upper * h - m) / s)
    # relative error of each mass: z (its terms up to |ℓ| + m in size), the density at |z| ≤ z_max,
    # shares and weights (8 u), the sums of 10·pieces positive terms, erfc; then the rule's
    u = 2.0**-53
    l_max = max(abs(lower), abs(upper)) * h + h
    rel = ((z_max + w) * (3.0 * l_max + m) / s + (z_max + w) ** 2 + 10.0 * pieces + 40.0) * u + GL_REL
    up = 1.0 + 2.0 * rel
    with np.errstate(under="ignore"):
        probs = np.nextafter(probs * up, np.inf)
    return Pmf(lower, probs, math.nextafter(inf_mass * up, math.inf), 0.0)
