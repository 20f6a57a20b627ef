"""A Bernoulli environment's outcome tables, read one number at a time instead of drawn whole.

Repetition r's outcome table of a :class:`~bandits.environments.BernoulliEnv` is
``1{U[t, i] < p_i}``, its uniforms drawn row by row from the repetition's PCG64 generator
(:meth:`~bandits.environments.stochastic.StochasticEnv.reward_chunk`): every algorithm sees the
same outcomes (common random numbers). A single-arm bandit observes one entry of a row, so it
needs one of the row's N numbers. PCG64 is a linear congruential generator on 128 bits, and d
steps of it, s ↦ M^d·s + inc·(M^{d−1} + … + M + 1) mod 2^128, are one multiply-add (Brown 1994,
"Random number generation with arbitrary strides"): an agent can jump from the number it reads
in one round to the number it reads in the next and get exactly the outcome the table holds,
for one generator step a round instead of N, without writing the table
(:func:`bandits.engine._stream_kernels.gaussian_ts_stream_kernel`).

:class:`BernoulliStream` holds the repetitions' generator states while a simulation reads them
either way: drawing a chunk's table (:meth:`drawing`) hands its state to the NumPy generators
and takes it back, so the two ways interleave chunk by chunk and give the same numbers.

>>> rngs = [np.random.default_rng(s) for s in (1, 2)]
>>> stream = BernoulliStream.of((0.5, 0.25), rngs)
>>> with stream.drawing():  # the generators draw; the stream continues after them
...     u = rngs[0].random(3)
>>> int(stream.state[0, 0]) << 64 | int(stream.state[0, 1]) == rngs[0].bit_generator.state["state"]["state"]
True
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np

__all__ = ["BernoulliStream", "jump_constants"]

_MASK = (1 << 128) - 1
_LOW = (1 << 64) - 1
MULTIPLIER = (2549297995355413924 << 64) | 4865540595714422341
"""PCG64's 128-bit multiplier."""


def _words(values: Sequence[int]) -> np.ndarray:
    """128-bit integers as a (len, 2) array of (high, low) uint64 words."""
    return np.array([(v >> 64, v & _LOW) for v in values], dtype=np.uint64).reshape(len(values), 2)


def jump_constants(inc: int, max_jump: int) -> tuple[np.ndarray, np.ndarray]:
    """(multipliers, addends) of d = 0 .. max_jump steps of PCG64 with increment ``inc``, as
    (max_jump + 1, 2) word arrays: d steps take s to mul[d]·s + add[d] mod 2^128.

    >>> mul, add = jump_constants(3, 2)
    >>> [(int(h) << 64) | int(lo) for h, lo in mul] == [1, MULTIPLIER, MULTIPLIER**2 % 2**128]
    True
    >>> [(int(h) << 64) | int(lo) for h, lo in add] == [0, 3, (3 * MULTIPLIER + 3) % 2**128]
    True
    """
    mul, add = [1], [0]
    for _ in range(max_jump):
        mul.append(mul[-1] * MULTIPLIER & _MASK)
        add.append((add[-1] * MULTIPLIER + inc) & _MASK)
    return _words(mul), _words(add)


class BernoulliStream:
    """The outcome streams of R repetitions of a Bernoulli environment (module docstring).

    Attributes: ``probs`` (N,), ``state`` (R, 2) and ``inc`` (R, 2) words, and the jump
    constants ``jump_mul`` (2N, 2), ``jump_add`` (R, 2N, 2) of jumps of 0 .. 2N − 1 numbers.
    """

    def __init__(self, probs: np.ndarray, rngs: Sequence[np.random.Generator]) -> None:
        self.probs = np.ascontiguousarray(probs, dtype=float)
        self.rngs = list(rngs)
        N = self.probs.size
        incs = [int(g.bit_generator.state["state"]["inc"]) for g in self.rngs]
        self.inc = _words(incs)
        self.jump_mul = jump_constants(0, 2 * N - 1)[0]
        adds = [jump_constants(inc, 2 * N - 1)[1] for inc in incs]
        self.jump_add = np.stack(adds) if adds else np.empty((0, 2 * N, 2), dtype=np.uint64)
        self.state = np.empty((len(self.rngs), 2), dtype=np.uint64)
        self._take()

    @classmethod
    def of(
        cls, probs: Sequence[float] | np.ndarray, rngs: Sequence[np.random.Generator]
    ) -> BernoulliStream | None:
        """The stream of these generators, or None unless every one is a plain PCG64 ``Generator``."""
        if not all(type(g) is np.random.Generator and type(g.bit_generator) is np.random.PCG64 for g in rngs):
            return None
        return cls(np.asarray(probs, dtype=float), rngs)

    def _take(self) -> None:
        for r, g in enumerate(self.rngs):
            s = int(g.bit_generator.state["state"]["state"])
            self.state[r] = (s >> 64, s & _LOW)

    def _give(self) -> None:
        for r, g in enumerate(self.rngs):
            st = g.bit_generator.state
            hi, lo = (int(w) for w in self.state[r])
            st["state"]["state"] = (hi << 64) | lo
            g.bit_generator.state = st

    @contextmanager
    def drawing(self) -> Iterator[None]:
        """Draw from the NumPy generators inside the block (a whole table); the stream continues
        where they stop."""
        self._give()
        try:
            yield
        finally:
            self._take()
