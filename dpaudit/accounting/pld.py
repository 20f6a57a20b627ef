"""Numerical privacy-loss-distribution composition through dp-accounting.

Leaves are turned into dp-accounting PLDs with pessimistic discretisation (an upper bound on
the true hockey-stick divergence for every ε) and composed by FFT: Gaussian-type leaves are
first merged into one Gaussian mechanism with μ = sqrt(Σ μ_i²), which is exact (Gaussian
composition is Gaussian) and what dp-accounting itself does for homogeneous Gaussians;
Laplace → ``from_laplace_mechanism``; randomized response → ``from_randomized_response``;
other pure and (ε, δ) leaves → ``from_privacy_parameters``; a leaf repeated k times is
``self_compose(k)``. The value-discretisation interval is 1e-4 unless the loss range of the
merged Gaussian would need more than ~3·10^5 grid points (large μ), in which case it is
widened (still pessimistic) so that memory stays bounded — dp-accounting's own Gaussian PLD
allocates GiBs at μ ≳ 200.
"""

from __future__ import annotations

import math

from dpaudit.accounting.composition import Composition, NotApplicable, pure_epsilon
from dpaudit.events import ApproxDpEvent, LaplaceEvent, RandomizedResponseEvent

NAME = "pld"


def _interval(mu_total: float) -> float:
    return max(1e-4, 30.0 * mu_total / 3e5)


def build(comp: Composition):
    """The pessimistic dp-accounting PLD of one composition, or None for an empty one."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    mu_sq = comp.gaussian_mu_squared()
    interval = _interval(math.sqrt(mu_sq))
    _, _, rest = comp.gaussian_part()
    parts = []
    if mu_sq > 0:
        parts.append(pld.from_gaussian_mechanism(
            standard_deviation=1.0 / math.sqrt(mu_sq), sensitivity=1.0, pessimistic_estimate=True,
            value_discretization_interval=interval))
    for leaf, count in rest:
        if isinstance(leaf, LaplaceEvent):
            p = pld.from_laplace_mechanism(
                leaf.scale, sensitivity=leaf.sensitivity, pessimistic_estimate=True,
                value_discretization_interval=interval)
        elif isinstance(leaf, RandomizedResponseEvent):
            k = leaf.num_categories
            noise = k / (math.exp(leaf.epsilon) + k - 1)
            p = pld.from_randomized_response(noise, k, pessimistic_estimate=True,
                                             value_discretization_interval=interval)
        else:
            e = pure_epsilon(leaf)
            d = 0.0
            if e is None and isinstance(leaf, ApproxDpEvent):
                e, d = leaf.epsilon, leaf.delta
            if e is None:
                raise NotApplicable(f"dp-accounting has no PLD for {type(leaf).__name__}")
            p = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(e, d),
                                            value_discretization_interval=interval)
        parts.append(p.self_compose(count) if count > 1 else p)
    if not parts:
        return None
    out = parts[0]
    for p in parts[1:]:
        out = out.compose(p)
    return out


def epsilon(comp: Composition, delta: float) -> float:
    try:
        p = build(comp)
    except MemoryError as exc:  # pragma: no cover - depends on the machine
        raise NotApplicable(f"PLD discretisation needs more memory than available ({exc})") from None
    return 0.0 if p is None else max(0.0, float(p.get_epsilon_for_delta(delta)))


def delta(comp: Composition, eps: float) -> float:
    try:
        p = build(comp)
    except MemoryError as exc:  # pragma: no cover
        raise NotApplicable(f"PLD discretisation needs more memory than available ({exc})") from None
    return 0.0 if p is None else min(1.0, float(p.get_delta_for_epsilon(eps)))


def epsilon_curve(comp: Composition, deltas) -> list[float]:
    """ε at each δ, building the PLD once."""
    p = build(comp)
    return [0.0 if p is None else max(0.0, float(p.get_epsilon_for_delta(d))) for d in deltas]
