"""Binning of many per-step parameters into few, each bin charged at its largest member.

A composition of 10⁶ distinct leaves is bounded by a method that composes a few hundred
parameters: :func:`binned_up` groups the values so that every step is charged at least its own
parameter, which can only increase any method's bound.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["binned_up"]


def binned_up(
    values: np.ndarray, counts: np.ndarray, max_bins: int, exact_top: int
) -> tuple[np.ndarray, np.ndarray]:
    """Group positive ``values`` into at most ``max_bins`` + 1 bins, each represented by its
    *largest* member, so that charging every step its bin's value can only increase the bound
    of any method, because each family is ordered by its parameter: the pair of output
    distributions at the smaller parameter is a post-processing of the pair at the larger one,
    so every divergence and every trade-off bound can only grow (Blackwell's theorem; Dong, Roth
    & Su 2022, Prop. 2.8). Gaussian (μ) and Laplace (ε) are location families with a monotone
    likelihood ratio, so the power of the Neyman-Pearson test at every level grows with the
    shift; k-ary randomized response at ε is randomized response at ε′ > ε followed by replacing
    the answer with a uniform one with a suitable probability.

    Returns (representative values, total multiplicities). Exact (no grouping) when there are
    at most ``2 * exact_top`` distinct values. Otherwise the ``exact_top`` largest distinct values
    stay exact and the rest fall into geometric bins of relative width
    max(1e-4, (cut/min)^(1/(max_bins − exact_top)) − 1) over their range.

    >>> rep, mult = binned_up(np.linspace(1.0, 2.0, 10**5), np.ones(10**5), 1024, 128)
    >>> rep.size <= 1025, float(mult.sum()), float(rep.max())
    (True, 100000.0, 2.0)
    """
    uniq, inv = np.unique(values, return_inverse=True)
    if uniq.size <= 2 * exact_top:
        return uniq, np.bincount(inv, weights=counts, minlength=uniq.size)
    top = max_bins - exact_top
    cut_index = uniq.size - exact_top  # uniq[cut_index:] stay exact
    cut = float(uniq[cut_index])
    spread = math.log(cut / float(uniq[0]))
    rel_width = max(1e-4, math.expm1(spread / top))
    with np.errstate(divide="ignore"):
        geo = np.floor(np.log(values / uniq[0]) / math.log1p(rel_width)).astype(np.int64)
    geo = np.minimum(geo, top)  # rounding of the log can put the last low value one bin up
    key = np.where(inv >= cut_index, top + 1 + (inv - cut_index), geo)
    bins, binv = np.unique(key, return_inverse=True)
    rep = np.zeros(bins.size)
    np.maximum.at(rep, binv, values)
    return rep, np.bincount(binv, weights=counts, minlength=bins.size)

