"""Many repetitions' generators at once: NumPy's ``SeedSequence`` mixing, vectorised over seeds.

A run makes one ``SeedSequence`` and one PCG64 generator per repetition and stream; each costs
about 9 µs and 5 µs in Python here, which an audit of short runs (the measured detection floors:
millions of runs of a few rounds) pays more than its simulation. The seeds of a block differ only
in their spawn keys, and ``SeedSequence``'s mixing (O'Neill 2015, "Developing a seed_seq
Alternative"; NumPy's ``numpy/random/bit_generator.pyx``) runs the same hash constants whatever
the words it mixes, so it vectorises over the block: :func:`seed_states` gives every seed's
``generate_state(4, numpy.uint64)`` — the words PCG64 is seeded from — in one pass of NumPy
``uint32`` arithmetic, and :func:`generators` hands each row to PCG64 through a
``numpy.random.bit_generator.ISeedSequence`` that returns it. The generators are the same, bit for
bit, as ``Generator(PCG64(SeedSequence(entropy, spawn_key=key, pool_size=pool)))`` (tested,
property-based). Seeds it cannot express (string entropy, a key word of 2³² or more) take NumPy's
own path.

>>> import numpy as np
>>> g = generators(7, [(3, 1), (4, 1)])
>>> ref = np.random.Generator(np.random.PCG64(np.random.SeedSequence(7, spawn_key=(4, 1))))
>>> bool(g[1].random() == ref.random())
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.random.bit_generator import ISeedSequence

__all__ = ["seed_states", "generators"]

_MASK = 0xFFFFFFFF
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_SHIFT = np.uint32(16)


class _Hash:
    """``SeedSequence``'s running hash constant (it evolves the same way whatever it mixes)."""

    def __init__(self, start: int, mult: int) -> None:
        self.c, self.mult = start, mult

    def __call__(self, value: np.ndarray) -> np.ndarray:
        value = value ^ np.uint32(self.c)
        self.c = (self.c * self.mult) & _MASK
        value = value * np.uint32(self.c)
        return value ^ (value >> _SHIFT)


def _mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    r = np.uint32(_MIX_L) * x - np.uint32(_MIX_R) * y
    return r ^ (r >> _SHIFT)


def _words(x: Any) -> list[int] | None:
    """``x`` (a non-negative int or a sequence of them) as NumPy's little-endian uint32 words
    (``[0]`` for 0), or None for anything else."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        v = int(x)
        if v < 0:
            return None
        out = [v & _MASK]
        while v > _MASK:
            v >>= 32
            out.append(v & _MASK)
        return out
    if isinstance(x, (list, tuple, range, np.ndarray)) and np.ndim(x) == 1:
        words = [_words(v) for v in x]
        return None if any(w is None for w in words) else [u for w in words for u in w]  # type: ignore[union-attr]
    return None


def seed_states(entropy: Any, keys: Sequence[Sequence[int]], pool_size: int = 4) -> np.ndarray | None:
    """``SeedSequence(entropy, spawn_key=keys[r], pool_size=pool_size).generate_state(4,
    numpy.uint64)`` for every r, shape (R, 4); None where the seeds are not all expressible here
    (keys of different lengths or with a word ≥ 2³², entropy other than ints)."""
    run = _words(entropy)
    try:
        K = np.array(keys)
    except (ValueError, OverflowError):  # ragged, or integers past 64 bits
        return None
    if run is None or K.ndim != 2 or pool_size < 4 or (K.size and K.dtype.kind not in "iu"):
        return None
    if K.size and (K.min() < 0 or K.max() > _MASK):
        return None
    R, k = K.shape
    if k and len(run) < pool_size:  # NumPy pads the run entropy before a spawn key
        run = run + [0] * (pool_size - len(run))
    cols = [np.full(R, w, dtype=np.uint32) for w in run] + [K[:, j].astype(np.uint32) for j in range(k)]
    h = _Hash(_INIT_A, _MULT_A)
    pool = [h(cols[i] if i < len(cols) else np.zeros(R, dtype=np.uint32)) for i in range(pool_size)]
    for src in range(pool_size):
        for dst in range(pool_size):
            if src != dst:
                pool[dst] = _mix(pool[dst], h(pool[src]))
    for src in range(pool_size, len(cols)):
        for dst in range(pool_size):
            pool[dst] = _mix(pool[dst], h(cols[src]))
    g = _Hash(_INIT_B, _MULT_B)
    words = np.stack([g(pool[i % pool_size]) for i in range(8)], axis=1)
    return np.ascontiguousarray(words.astype("<u4")).view("<u8").astype(np.uint64)


class _Seeded(ISeedSequence):
    """The words a PCG64 is seeded from, as a seed sequence that returns them."""

    __slots__ = ("_words",)

    def __init__(self, words: np.ndarray) -> None:
        self._words = words

    def generate_state(self, n_words: int, dtype: Any = np.uint32) -> np.ndarray:
        if n_words != 4 or np.dtype(dtype) != np.uint64:  # pragma: no cover - PCG64 asks for these
            raise ValueError("only PCG64's 4 uint64 words are stored")
        return self._words


def generators(entropy: Any, keys: Sequence[Sequence[int]], pool_size: int = 4) -> list[np.random.Generator]:
    """``Generator(PCG64(SeedSequence(entropy, spawn_key=key, pool_size=pool_size)))`` for every
    key, the seeds mixed at once (:func:`seed_states`) where they can be."""
    states = seed_states(entropy, keys, pool_size) if len(keys) else None
    if states is None:
        return [np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=tuple(k),
                                                                            pool_size=pool_size)))
                for k in keys]  # fmt: skip
    return [np.random.Generator(np.random.PCG64(_Seeded(row))) for row in states]  # type: ignore[arg-type]
