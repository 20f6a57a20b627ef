"""A compiled chunk of CUCB-DP (Chen et al. 2020, Algorithm 3) on a top-k problem (numba, optional).

CUCB-DP's tree changes every arm's noisy prefix sum every round, so no round can be computed
ahead of the previous one; the NumPy step loop of
:class:`bandits.semibandits.policies._CSBAgent` pays ≈ 60 array operations per round (UCBs,
``lexsort``, the tree step of :class:`mechanisms.continual.tree_batch.BatchTreeSums`, the means).
:func:`tree_chunk_kernel` does a whole chunk of rounds in one call, making exactly the float
operations of that loop in the same order (the UCB ``clip(μ̃ + (a/√n + p/n), 0, 1)``; top-k by
score, then tie key, then lower index, as ``lexsort``; the node ``((x + α₀) + α₁) + …`` plus
``b·z``; the prefix update ``prefix + (hat − ((α̂₀ + α̂₁) + …))``, the order NumPy's ``sum`` over
the level axis uses when the arms are the inner axis, m ≥ 2), so the actions, estimates, tree
state, noise consumed and ledgers are bit-identical to the NumPy loop, which stays the fallback
(numba absent or ``DPAUDIT_NUMBA=0``; tested both ways). Audits that keep transcripts need every
released node, including the right children the prefix sums skip: they use the NumPy loop.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from bandits.engine import compiled

if TYPE_CHECKING:  # pragma: no cover
    from bandits.policy import Outcomes

njit: Any
try:
    from numba import njit
except ImportError:  # pragma: no cover - the 'fast' extra is not installed
    njit = None

__all__ = ["NUMBA", "applies", "play_chunk", "tree_chunk_kernel"]

NUMBA = njit is not None


def _jit(f: Any) -> Any:
    return f if njit is None else njit(cache=True)(f)


@_jit
def tree_chunk_kernel(  # pragma: no cover - compiled
    mu: Any, n: Any, table: Any, keys: Any, use_keys: Any, z: Any, z0: Any, scale: Any,
    c_root: Any, c_lin: Any, k: Any, t0: Any, alpha: Any, alpha_hat: Any, prefix: Any,
    covered: Any, ucb: Any, out: Any,
) -> int:
    """Rounds t0 .. t0+C−1 of CUCB-DP (module docstring), updating ``mu``, ``n``, the tree's
    ``alpha``, ``alpha_hat``, ``prefix`` and ``covered`` and the last round's ``ucb`` in place;
    ``z`` (R, nodes, m) the standard Laplace draws of the chunk's nodes from index ``z0``.
    Returns the number of nodes drawn, or −1 if a UCB is NaN (the caller raises)."""
    R, C, m = table.shape
    taken = np.zeros(m, dtype=np.bool_)
    acc = np.empty(m)
    zi = z0
    for c in range(C):
        s = t0 + c + 1  # the tree's 1-based step
        i = 0
        while (s >> i) & 1 == 0:
            i += 1
        for r in range(R):
            for a in range(m):  # μ̄ = clip(μ̃ + (a/sqrt(n) + p/n), 0, 1); +inf bonus at n = 0
                if n[r, a] > 0:
                    v = mu[r, a] + (c_root / math.sqrt(n[r, a]) + c_lin / (n[r, a] * 1.0))
                else:
                    v = mu[r, a] + np.inf
                if v != v:
                    return -1
                v = v if v > 0.0 else 0.0
                ucb[r, a] = v if v < 1.0 else 1.0
                taken[a] = False
                acc[a] = 0.0
            for q in range(k):  # top-k: score desc, then tie key asc, then lower index
                best = -1
                for a in range(m):
                    if taken[a]:
                        continue
                    if best < 0 or ucb[r, a] > ucb[r, best]:
                        best = a
                    elif use_keys and ucb[r, a] == ucb[r, best] and keys[r, c, a] < keys[r, c, best]:
                        best = a
                taken[best] = True
                out[r, c, q] = best
                x = table[r, c, best]  # the leaf X_t ⊙ 1[S_t], rewards clipped to [0, 1]
                if x == x:
                    x = x if x > 0.0 else 0.0
                    x = x if x < 1.0 else 1.0
                acc[best] = x
                n[r, best] += 1
            for a in range(m):  # the node completed at level i: leaf + the nodes below it
                for j in range(i):
                    acc[a] += alpha[r, j, a]
                hat = acc[a] + scale * z[r, zi + i, a]  # z[zi .. zi+i-1]: right children, unused
                below = 0.0
                if i > 0:
                    below = alpha_hat[r, 0, a]
                    for j in range(1, i):
                        below += alpha_hat[r, j, a]
                prefix[r, a] += hat - below
                for j in range(i):
                    alpha[r, j, a] = 0.0
                    alpha_hat[r, j, a] = 0.0
                alpha[r, i, a] = acc[a]
                alpha_hat[r, i, a] = hat
            for q in range(k):
                a = out[r, c, q]
                mu[r, a] = prefix[r, a] / n[r, a]
        for j in range(i + 1):
            covered[j] = s
        zi += i + 1
    return zi - z0


def applies(agent: Any) -> bool:
    """Whether :func:`play_chunk` can play this CUCB-DP agent: a top-k problem with m ≥ 2 arms,
    no transcripts kept, the tree's noise drawn by ``prepare`` and numba available."""
    prob, tree = agent.problem, agent.tree
    return (
        tree is not None
        and prob.matroid is None
        and prob.candidates is None
        and agent.n_arms >= 2
        and agent.run.ledgers.transcripts is None
        and NUMBA
        and compiled.available()
    )


def play_chunk(agent: Any, t0: int, t1: int, outcomes: Outcomes) -> np.ndarray:
    """Rounds ``t0 .. t1-1`` of a CUCB-DP agent (:func:`applies`) with :func:`tree_chunk_kernel`;
    the actions (R, t1−t0, k)."""
    agent.prepare(t0, t1)
    tree, pol = agent.tree, agent.policy
    if tree.t != t0 or tree.closed:
        raise ValueError(f"the tree is at step {tree.t}, the chunk starts at round {t0}")
    R, C, m = outcomes.table.shape
    c_root, c_lin = pol.bonus_coefficients(agent.horizon, agent.n_arms, agent.k)
    out = np.empty((R, C, agent.k), dtype=np.int64)
    keys = np.zeros((1, 1, 1)) if agent._k is None else np.ascontiguousarray(agent._k, dtype=float)
    ucb = agent.ucb.copy()
    used = tree_chunk_kernel(
        agent.mu, agent.n, np.ascontiguousarray(outcomes.table, dtype=float), keys, agent._k is not None,
        np.ascontiguousarray(tree._z), tree._zi, float(tree.scale), float(c_root), float(c_lin), agent.k,
        t0, tree.alpha, tree.alpha_hat, tree.prefix, tree.covered, ucb, out,
    )  # fmt: skip
    if used < 0:
        raise ValueError("scores must not be NaN")
    agent.ucb = ucb
    tree.t += C
    tree._zi += used
    tree.released += used
    return out
