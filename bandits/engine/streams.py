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

from dataclasses import dataclass
from typing import Any

import numpy as np

from mechanisms.seeding import generators

__all__ = ["RepStreams", "StreamSeeds", "rep_streams", "root_seed"]


class RepStreams:
    """The three seed sequences of one repetition (``rewards``, ``policy``, ``privacy``), each
    made when first asked for: a ``SeedSequence`` costs ~9 µs, and a short audit run of a table
    environment uses one or two of the three."""

    __slots__ = ("_entropy", "_key", "_pool_size", "_made")

    def __init__(self, entropy: Any, key: tuple[int, ...], pool_size: int) -> None:
        self._entropy, self._key, self._pool_size = entropy, key, pool_size
        self._made: list[np.random.SeedSequence | None] = [None, None, None]

    def _stream(self, k: int) -> np.random.SeedSequence:
        made = self._made[k]
        if made is None:
            key, pool = self._key + (k,), self._pool_size
            made = self._made[k] = np.random.SeedSequence(self._entropy, spawn_key=key, pool_size=pool)
        return made

    @property
    def rewards(self) -> np.random.SeedSequence:
        return self._stream(0)

    @property
    def policy(self) -> np.random.SeedSequence:
        return self._stream(1)

    @property
    def privacy(self) -> np.random.SeedSequence:
        return self._stream(2)


_NAMES = ("rewards", "policy", "privacy")


@dataclass(frozen=True)
class StreamSeeds:
    """The ``name`` stream (``"rewards"``, ``"policy"`` or ``"privacy"``) of every repetition of
    ``streams``: a picklable maker for :meth:`mechanisms.randomness.RepRandom.deferred`."""

    streams: tuple[RepStreams, ...]
    name: str
    suffix: tuple[int, ...] = ()
    """Child streams: spawn-key words after the stream's own (``RepRandom.child``)."""

    def __call__(self) -> list[np.random.SeedSequence]:
        seeds = [getattr(s, self.name) for s in self.streams]
        if not self.suffix:
            return seeds
        sfx = self.suffix
        return [np.random.SeedSequence(q.entropy, spawn_key=tuple(q.spawn_key) + sfx, pool_size=q.pool_size)
                for q in seeds]  # fmt: skip

    def child(self, k: int) -> StreamSeeds:
        """The maker of every seed's child ``k`` (as ``mechanisms.randomness.RepRandom.child``)."""
        return StreamSeeds(self.streams, self.name, self.suffix + (int(k),))

    def generators(self) -> list[np.random.Generator]:
        """``Generator(PCG64(seed))`` of every seed, without making the seeds: the repetitions of a
        block share their root's entropy and pool, so the seeds are mixed at once
        (:func:`mechanisms.seeding.generators`, the same generators bit for bit)."""
        k = _NAMES.index(self.name)
        if not self.streams:
            return []
        s0 = self.streams[0]
        if any(s._entropy != s0._entropy or s._pool_size != s0._pool_size for s in self.streams):
            return [np.random.Generator(np.random.PCG64(seed)) for seed in self()]
        return generators(s0._entropy, [s._key + (k,) + self.suffix for s in self.streams], s0._pool_size)


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
    return RepStreams(root.entropy, tuple(root.spawn_key) + (int(rep),), root.pool_size)
