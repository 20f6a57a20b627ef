"""The global doubling epochs of FTNL (Hu et al. 2024, Algorithms 3 and 4): epoch s holds the
paper's rounds 2^s .. 2^{s+1} − 1. One place for the rule, shared by the policies and their audit's
pre-registered pairs (:mod:`bandits.full_info.audit`)."""

from __future__ import annotations

__all__ = ["epoch_bounds"]


def epoch_bounds(s: int) -> tuple[int, int]:
    """0-based rounds [start, stop) of global epoch s (paper rounds 2^s .. 2^{s+1} − 1).

    >>> [epoch_bounds(s) for s in range(4)]
    [(0, 1), (1, 3), (3, 7), (7, 15)]
    >>> from mechanisms.continual.epoch_sums import GlobalEpochSums
    >>> GlobalEpochSums.epoch_of(7 + 1)   # the mechanism's 1-based rule agrees: round 8 -> epoch 3
    3
    """
    return (1 << s) - 1, (1 << (s + 1)) - 1
