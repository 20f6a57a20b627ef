"""Basic composition: (Σ ε_i, Σ δ_i).

Pure and (ε, δ) leaves contribute their parameters. A Gaussian-type step has a whole curve of
valid (ε_i, δ_i); the δ budget left after the (ε, δ) leaves is split evenly over the Gaussian
steps and each contributes its exact GDP ε at that δ. For long heterogeneous sequences the
per-step μ are grouped into geometric bins of relative width 1e-4 and every step is charged
the largest μ in its bin, which can only increase ε (monotone in μ).
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.accounting.composition import Composition, NotApplicable, pure_epsilon
from dpaudit.accounting.search import delta_from_epsilon
from dpaudit.conversions import gdp_epsilon
from dpaudit.events import ApproxDpEvent

NAME = "basic"


def binned_mus(mus: np.ndarray, counts: np.ndarray, rel_width: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    """Group μ values into geometric bins; each bin is represented by its *largest* member.

    Returns (representative μ, total multiplicity). Exact (no grouping) when there are few
    distinct values.
    """
    uniq, inv = np.unique(mus, return_inverse=True)
    if uniq.size <= 256:
        return uniq, np.bincount(inv, weights=counts, minlength=uniq.size)
    idx = np.floor(np.log(mus / mus.min()) / math.log1p(rel_width)).astype(np.int64)
    bins, binv = np.unique(idx, return_inverse=True)
    rep = np.zeros(bins.size)
    np.maximum.at(rep, binv, mus)
    return rep, np.bincount(binv, weights=counts, minlength=bins.size)


def split(comp: Composition, delta: float) -> tuple[float, float, np.ndarray, np.ndarray]:
    """(Σ pure/approx ε, Σ approx δ, Gaussian μ bins, multiplicities)."""
    mus, counts, rest = comp.gaussian_part()
    eps_sum, delta_sum = [], []
    for leaf, count in rest:
        e = pure_epsilon(leaf)
        if e is not None:
            eps_sum.append(count * e)
        elif isinstance(leaf, ApproxDpEvent):
            eps_sum.append(count * leaf.epsilon)
            delta_sum.append(count * leaf.delta)
        else:
            raise NotApplicable(f"no (epsilon, delta) bound is known for {type(leaf).__name__}")
    rep, mult = binned_mus(mus, counts) if mus.size else (mus, counts)
    return math.fsum(eps_sum), math.fsum(delta_sum), rep, mult


def epsilon(comp: Composition, delta: float) -> float:
    eps_fixed, delta_used, rep, mult = split(comp, delta)
    if rep.size == 0:
        if delta_used > delta:
            raise NotApplicable(
                f"the (epsilon, delta) events alone spend delta={delta_used:.3g} > {delta:.3g}"
            )
        return eps_fixed
    remaining = delta - delta_used
    if remaining <= 0:
        raise NotApplicable("the (epsilon, delta) events leave no delta for the Gaussian steps")
    per_step = remaining / math.fsum(mult.tolist())
    eps_g = gdp_epsilon(rep, per_step)
    return math.fsum([eps_fixed, *(mult * eps_g).tolist()]) * (1 + 1e-14)


def delta(comp: Composition, eps: float) -> float:
    eps_fixed, delta_used, rep, _ = split(comp, 0.5)
    if rep.size == 0:
        return min(1.0, delta_used) if eps_fixed <= eps else 1.0
    return delta_from_epsilon(lambda d: epsilon(comp, d), eps)
