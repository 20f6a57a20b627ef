"""What the lazy-epoch algorithms' engines share: the table of log(t + 1) every engine reads,
and the order in which ties between arms are broken (index order, or a random order drawn once
per repetition)."""

from __future__ import annotations

import numpy as np

from bandits.policy import RunContext

__all__ = ["LOGS", "log_table", "priority_order", "argmax_in_order"]

LOGS = {"ln": np.log, "log2": np.log2, "log10": np.log10}


def log_table(horizon: int, log: str) -> np.ndarray:
    """``log(t + 1)`` for 0-based rounds t < T, computed once (every engine reads the same floats)
    in place: 8 bytes a round, not 16 while it is computed.

    >>> log_table(3, "log2").tolist()
    [0.0, 1.0, 1.584962500721156]
    """
    table = np.arange(1, horizon + 1, dtype=float)
    return LOGS[log](table, out=table)


def priority_order(run: RunContext, ties: str) -> np.ndarray:
    """Each repetition's order of the arms for breaking ties, shape (R, K): ``"lowest"`` the
    index order, ``"random"`` a uniformly random order drawn once per run from the policy stream
    (its child 1, so that it does not shift the policy's other draws).

    >>> from bandits.environments import BernoulliEnv
    >>> run = RunContext.create(BernoulliEnv((0.5,) * 3), 4, np.random.SeedSequence(0).spawn(2))
    >>> priority_order(run, "lowest").tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    if ties == "random":
        return np.argsort(run.random.child(1).random((run.n_arms,)), axis=1, kind="stable")
    return np.tile(np.arange(run.n_arms), (run.reps, 1))


def argmax_in_order(values: np.ndarray, perm: np.ndarray | None) -> np.ndarray:
    """argmax over the last axis of ``values`` (R, ..., K): the first maximum in each
    repetition's priority order ``perm`` (R, K) (:func:`priority_order`), or in index order
    when ``perm`` is None.

    >>> v = np.array([[1.0, 3.0, 3.0]])
    >>> argmax_in_order(v, None).tolist(), argmax_in_order(v, np.array([[2, 1, 0]])).tolist()
    ([1], [2])
    """
    if perm is None:
        return values.argmax(axis=-1)
    perm = perm.reshape(perm.shape[:1] + (1,) * (values.ndim - 2) + perm.shape[1:])
    perm = np.broadcast_to(perm, values.shape)
    k = np.take_along_axis(values, perm, axis=-1).argmax(axis=-1)
    return np.take_along_axis(perm, k[..., None], axis=-1)[..., 0]
