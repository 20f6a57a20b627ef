"""An independent plain-loop implementation of DP-TS-UCB, written from the reconstruction in
``docs/dp-ts-ucb.md`` (Hu, Huang, Zhang, Lécuyer & Hegde 2025).

One run at a time, plain Python lists and the ``math`` module, 1-based rounds as in a pseudocode.
It shares no code with :mod:`bandits.dp_ts_ucb`: it is handed the run's reward table and the
standard normals of its noise stream (one row of K per sampling round, in order) and returns the
arms it plays and how many samples it drew from each epoch mean, so that the two implementations
can be compared action for action on the same random numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def budget(T: int, alpha: float, c0: float, rounding: str) -> int:
    """φ = c₀·T^{(1−α)/2}·(ln T)^{(3−α)/2}, rounded up (or down, at least 1)."""
    x = c0 * math.pow(T, (1 - alpha) / 2) * math.pow(math.log(T), (3 - alpha) / 2)
    return math.ceil(x) if rounding == "ceil" else max(1, math.floor(x))


def dp_ts_ucb_run(
    table: Sequence[Sequence[float]],
    normals: Sequence[Sequence[float]],
    *,
    alpha: float = 1.0,
    c0: float = 1.0,
    first_epoch: int = 1,
    rounding: str = "ceil",
    index: str = "sample",
    design_horizon: int | None = None,
    priority: Sequence[int] | None = None,
) -> tuple[list[int], list[tuple[int, int, int, int]]]:
    """(the arms played in rounds 1..T, and per epoch mean (arm, epoch, its size n, samples drawn)).

    ``table[t-1][i]``: the reward of arm i in round t; ``normals[k]``: the K standard normals of
    the k-th round after the initial pulls; ``priority``: the arms in tie-breaking order (default
    0, 1, ...)."""
    T, K = len(table), len(table[0])
    Td = design_horizon or T
    L = math.log(Td) ** alpha  # the variance factor ln^alpha(T)
    phi = budget(Td, alpha, c0, rounding)
    order = list(priority) if priority is not None else list(range(K))
    mean = [0.0] * K
    size = [0] * K  # observations in the mean in use
    left = [0] * K  # samples left in its budget
    drawn = [0] * K
    best = [-math.inf] * K  # the largest sample of the mean in use
    epoch = [-1] * K  # the epoch of the mean in use
    pending: list[list[float]] = [[] for _ in range(K)]  # observations of the epoch in progress
    log: list[tuple[int, int, int, int]] = []
    played: list[int] = []
    for t in range(1, T + 1):
        if t <= first_epoch * K:  # initial pulls, round robin
            j = (t - 1) % K
        else:
            z = normals[t - first_epoch * K - 1]
            idx = [0.0] * K
            for i in range(K):
                if left[i] > 0:  # TS phase: a fresh sample of N(mean, L/n)
                    theta = mean[i] + math.sqrt(L / size[i]) * z[i]
                    left[i] -= 1
                    drawn[i] += 1
                    best[i] = max(best[i], theta)
                    idx[i] = theta if index == "sample" else best[i]
                else:  # UCB phase: the largest sample, reused
                    idx[i] = best[i]
            top = max(idx)
            j = next(i for i in order if idx[i] == top)
        played.append(j)
        pending[j].append(table[t - 1][j])
        if len(pending[j]) == first_epoch * 2 ** (epoch[j] + 1):  # the epoch is complete
            if epoch[j] >= 0:
                log.append((j, epoch[j], size[j], drawn[j]))
            mean[j] = sum(pending[j]) / len(pending[j])
            size[j] = len(pending[j])
            left[j], drawn[j], best[j] = phi, 0, -math.inf
            epoch[j] += 1
            pending[j] = []
    log += [(i, epoch[i], size[i], drawn[i]) for i in range(K) if epoch[i] >= 0]
    return played, log
