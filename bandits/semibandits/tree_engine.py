"""A compiled chunk of CUCB-DP (Chen et al. 2020, Algorithm 3) on a top-k problem (numba, optional).

CUCB-DP's tree changes every arm's noisy prefix sum every round, so no round can be computed
ahead of the previous one; the NumPy step loop of
:class:`bandits.semibandits.policies._CSBAgent` pays ≈ 60 array operations per round (UCBs,
``lexsort``, the tree step of :class:`mechanisms.continual.tree_batch.BatchTreeSums`, the means);
the kernel (:func:`bandits.engine.compiled.cucb_dp_chunk`) does a whole chunk of rounds in one
call, making exactly the float operations of that loop in the same order (the UCB
``clip(μ̃ + (a/√n + p/n), 0, 1)``; top-k by score, then tie key, then lower index, as
``lexsort``; the node ``((x + α₀) + α₁) + …`` plus ``b·z``; the prefix update
``prefix + (hat − ((α̂₀ + α̂₁) + …))``, the order NumPy's ``sum`` over the level axis uses when
the arms are the inner axis, m ≥ 2), so the actions, estimates, tree state, noise consumed and
ledgers are bit-identical to the NumPy loop, which stays the fallback
(numba absent or ``DPAUDIT_NUMBA=0``; tested both ways). Audits that keep transcripts need every
released node, including the right children the prefix sums skip: they use the NumPy loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from bandits.engine import compiled

if TYPE_CHECKING:  # pragma: no cover
    from bandits.policy import Outcomes

__all__ = ["applies", "play_chunk"]

_REPLAYED = ("_noise", "step", "prepare")
"""The tree methods whose arithmetic the kernel replays: if one is replaced (a planted bug, a
user's patch), the NumPy loop runs so that the replacement takes effect."""


def _originals() -> dict[str, Any]:
    from mechanisms.continual.tree_batch import BatchTreeSums

    return {name: BatchTreeSums.__dict__[name] for name in _REPLAYED}


_ORIGINAL = _originals()

def applies(agent: Any) -> bool:
    """Whether :func:`play_chunk` can play this CUCB-DP agent: a top-k problem with m ≥ 2 arms,
    no transcripts kept, the tree's replayed methods not replaced, and a run long enough for the
    compiled kernel (numba available)."""
    prob, tree = agent.problem, agent.tree
    return (
        tree is not None
        and prob.matroid is None
        and prob.candidates is None
        and agent.n_arms >= 2
        and agent.run.ledgers.transcripts is None
        and all(getattr(type(tree), name) is fn for name, fn in _ORIGINAL.items())
        and compiled.worth_compiling(agent.reps * agent.horizon)
    )


def play_chunk(agent: Any, t0: int, t1: int, outcomes: Outcomes) -> np.ndarray:
    """Rounds ``t0 .. t1-1`` of a CUCB-DP agent (:func:`applies`) with the compiled kernel;
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
    used = compiled.cucb_dp_chunk(
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
