"""Seeds of a simulation: one root ``SeedSequence``, three independent streams per repetition.

From one root ``SeedSequence(seed)``, repetition ``r`` owns ``SeedSequence(entropy,
spawn_key=(r,))`` and its three streams

* ``(r, 0)`` rewards — uniforms turned into outcomes by the environment's inverse CDF;
* ``(r, 1)`` the policy's own randomness (e.g. Thompson sampling's θ);
* ``(r, 2)`` the privacy noise of the mechanisms a policy holds.

Repetition r's streams do not depend on how many repetitions run, how they are grouped or which
executor runs them (common random numbers across policies and neighbouring inputs).

>>> a, b = rep_streams(7, 3), rep_streams(7, 3)
>>> a.policy.generate_state(1).tolist() == b.policy.generate_state(1).tolist()
True
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["RepStreams", "rep_streams", "root_seed"]


class RepStreams(NamedTuple):
    """The three seed sequences of one repetition."""

    rewards: np.random.SeedSequence
    policy: np.random.SeedSequence
    privacy: np.random.SeedSequence


def root_seed(seed: int | np.random.SeedSequence | None) -> np.random.SeedSequence:
    """``seed`` as a root ``SeedSequence`` (``ValueError`` for anything but a non-negative
    integer, a ``SeedSequence`` or None)."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer, a SeedSequence or None, got {seed!r}")
    return np.random.SeedSequence(seed)


def rep_streams(seed: int | np.random.SeedSequence, rep: int) -> RepStreams:
    """The seed sequences of repetition ``rep`` (fresh objects: nothing is shared or mutated)."""
    root = root_seed(seed)
    key = tuple(root.spawn_key) + (int(rep),)
    return RepStreams(
        *(
            np.random.SeedSequence(root.entropy, spawn_key=key + (k,), pool_size=root.pool_size)
            for k in range(3)
        )
    )
