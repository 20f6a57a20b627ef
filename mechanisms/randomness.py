"""Randomness for vectorised runs: one generator per repetition, consumed without per-round loops.

A simulation vectorised across R repetitions must still give repetition r the *same* random
numbers whatever R is, however repetitions are grouped into blocks, and whichever executor runs
them — otherwise results depend on bookkeeping. So every repetition owns its generator, and
two helpers turn "R generators" into array operations:

* :class:`RepRandom` — R generators, and block draws of shape ``(R, *shape)`` where row r comes
  from generator r (one Python call per repetition per *block*, not per round). ``child(k)``
  derives independent per-repetition streams without mutating anything (``SeedSequence.spawn``
  mutates its parent, which made two agents built from the same seeds see different streams).
* :class:`ScaledRandom` — the same generators with every Laplace and normal draw scaled by a
  factor: the noise of a run at another scale, for the audit floor measured on an algorithm's own
  runs (:mod:`bandits.auditing.leak_floor`) and for planted noise-scale bugs.
* :class:`NoiseTape` — per-repetition streams of standard noise that are *consumed in order*
  at irregular times by whichever repetitions need noise now (an epoch that completes, a user
  who reports): ``take(rows, width)`` is vectorised over ``rows``; refills are per repetition
  and rare. Repetition r's k-th draw is the k-th value of its own stream, so the values a
  mechanism gets do not depend on the other repetitions.

Example:
    >>> import numpy as np
    >>> seeds = [np.random.SeedSequence(7, spawn_key=(r,)) for r in range(3)]
    >>> rr = RepRandom(seeds)
    >>> rr.random((2,)).shape
    (3, 2)
    >>> bool((RepRandom(seeds[1:]).random((2,)) == RepRandom(seeds).random((2,))[1:]).all())
    True
    >>> tape = NoiseTape(RepRandom(seeds), "laplace", block=4)
    >>> a = tape.take(np.array([0, 2]), 3)      # rows 0 and 2 consume 3 values each
    >>> b = tape.take(np.array([2]), 2)         # row 2 continues its own stream
    >>> whole = NoiseTape(RepRandom(seeds), "laplace", block=16).take(np.array([2]), 5)
    >>> bool((np.concatenate([a[1], b[0]]) == whole[0]).all())
    True
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpaudit.numerics import unique
from dpaudit.validation import check_integer

__all__ = ["RepRandom", "ScaledRandom", "NoiseTape", "SAMPLERS"]

SAMPLERS = ("standard_normal", "laplace", "random", "standard_exponential")
"""Standard distributions a :class:`NoiseTape` can hold (Laplace has scale 1)."""


def _child(seed: np.random.SeedSequence, k: int) -> np.random.SeedSequence:
    """The k-th child of ``seed`` as ``seed.spawn`` would make it first, without mutating ``seed``."""
    return np.random.SeedSequence(
        seed.entropy, spawn_key=tuple(seed.spawn_key) + (int(k),), pool_size=seed.pool_size
    )


def _generators(seeds: Sequence[np.random.SeedSequence]) -> tuple[np.random.Generator, ...]:
    return tuple(np.random.Generator(np.random.PCG64(s)) for s in seeds)


def _checked_seeds(seeds: Sequence[np.random.SeedSequence]) -> tuple[np.random.SeedSequence, ...]:
    out = tuple(seeds)
    for s in out:
        if not isinstance(s, np.random.SeedSequence):
            raise ValueError(f"seeds must be numpy.random.SeedSequence values, got {type(s).__name__}")
    return out


class RepRandom:
    """One :class:`numpy.random.Generator` (PCG64) per repetition.

    Args:
        seeds: one ``SeedSequence`` per repetition (row r of every draw comes from ``seeds[r]``).
    """

    _make: Callable[[], Sequence[np.random.SeedSequence]]

    def __init__(self, seeds: Sequence[np.random.SeedSequence]) -> None:
        self.seeds = _checked_seeds(seeds)
        self._n = len(self.seeds)

    @classmethod
    def deferred(cls, n: int, make: Callable[[], Sequence[np.random.SeedSequence]]) -> RepRandom:
        """``RepRandom(make())`` for ``n`` repetitions, ``make`` called only when a seed or a
        generator is first needed (a stream a run never draws from costs nothing; ``make``
        must be picklable where the object is). Plain :class:`RepRandom` only: a subclass's own
        state (a :class:`ScaledRandom`'s factor) would be skipped."""
        if cls is not RepRandom:
            raise TypeError(f"{cls.__name__}.deferred is not supported: build it from seeds")
        out = cls.__new__(cls)
        out._n, out._make = check_integer("n", n), make
        return out

    @functools.cached_property
    def seeds(self) -> tuple[np.random.SeedSequence, ...]:
        """One ``SeedSequence`` per repetition."""
        seeds = _checked_seeds(self._make())
        if len(seeds) != self._n:
            raise ValueError(f"the seed maker gave {len(seeds)} seeds for {self._n} repetitions")
        return seeds

    @functools.cached_property
    def generators(self) -> tuple[np.random.Generator, ...]:
        """The generators, made on first use (a run that never draws from a stream — a
        deterministic policy's own, say — does not pay ~10 µs a repetition for them); from a
        deferred maker that makes them itself (``make.generators()``, the same generators as
        from its seeds: :mod:`mechanisms.seeding`) without making the seeds."""
        return self._plain_generators()

    def _plain_generators(self) -> tuple[np.random.Generator, ...]:
        fast = getattr(getattr(self, "_make", None), "generators", None)
        if fast is not None and "seeds" not in self.__dict__:
            return tuple(fast())
        return _generators(self.seeds)

    def __len__(self) -> int:
        return self._n

    def child(self, k: int) -> RepRandom:
        """Independent per-repetition streams number ``k`` (deterministic, nothing mutated); of a
        deferred maker that makes its children (``make.child(k)``), deferred too."""
        k = check_integer("k", k, 0)
        make = getattr(getattr(self, "_make", None), "child", None)
        if make is not None and "seeds" not in self.__dict__:
            return RepRandom.deferred(self._n, make(k))
        return RepRandom([_child(s, k) for s in self.seeds])

    def _fill(self, method: str, shape: tuple[int, ...]) -> np.ndarray:
        out = np.empty((len(self),) + tuple(shape))
        for r, g in enumerate(self.generators):
            if method == "laplace":
                out[r] = g.laplace(0.0, 1.0, size=shape)
            elif method == "standard_normal":
                g.standard_normal(out=out[r])
            elif method == "random":
                g.random(out=out[r])
            else:
                g.standard_exponential(out=out[r])
        return out

    def standard_normal(self, shape: tuple[int, ...] = ()) -> np.ndarray:
        """Shape ``(R, *shape)``; row r from repetition r's generator (filled in place)."""
        return self._fill("standard_normal", tuple(shape))

    def random(self, shape: tuple[int, ...] = ()) -> np.ndarray:
        """Uniforms on [0, 1), shape ``(R, *shape)``."""
        return self._fill("random", tuple(shape))

    def laplace(self, shape: tuple[int, ...] = ()) -> np.ndarray:
        """Standard Laplace (scale 1), shape ``(R, *shape)``."""
        return self._fill("laplace", tuple(shape))

    def beta(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Beta(a[r], b[r]) draws, row r from generator r; ``a``, ``b`` of shape ``(R, ...)``."""
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        out = np.empty(np.broadcast_shapes(a.shape, b.shape))
        for r, g in enumerate(self.generators):
            out[r] = g.beta(a[r], b[r])
        return out


class NoiseTape:
    """Per-repetition streams of i.i.d. standard noise, consumed in order (module docstring).

    Args:
        random: the per-repetition generators the streams are drawn from (use a dedicated
            ``RepRandom.child(k)`` per tape so that tapes do not share streams).
        sampler: one of :data:`SAMPLERS`.
        block: values drawn per refill of one repetition's buffer (does not change the values).
    """

    def __init__(self, random: RepRandom, sampler: str = "laplace", block: int = 256) -> None:
        if not isinstance(random, RepRandom):
            raise ValueError(f"random must be a RepRandom, got {type(random).__name__}")
        if sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {list(SAMPLERS)}, got {sampler!r}")
        self.random, self.sampler = random, sampler
        self.block = check_integer("block", block)
        R = len(random)
        self._buf = np.empty((R, 0))
        self._cur = np.zeros(R, dtype=np.int64)  # next unread value of each row
        self._end = np.zeros(R, dtype=np.int64)  # end of each row's valid values
        self.drawn = np.zeros(R, dtype=np.int64)  # values consumed so far, per repetition

    def _draw(self, r: int, n: int) -> np.ndarray:
        g = self.random.generators[r]
        if self.sampler == "laplace":
            return g.laplace(0.0, 1.0, size=n)
        return getattr(g, self.sampler)(size=n)

    def _refill(self, rows: np.ndarray, need: int) -> None:
        """Move each row's unread values to the front and append fresh draws (stream order kept)."""
        width = max(self.block, need)
        if width > self._buf.shape[1]:
            grown = np.empty((self._buf.shape[0], width))
            grown[:, : self._buf.shape[1]] = self._buf
            self._buf = grown
        for r in rows.tolist():
            keep = self._buf[r, self._cur[r] : self._end[r]].copy()
            self._buf[r, : keep.size] = keep
            self._buf[r, keep.size : width] = self._draw(r, width - keep.size)
            self._cur[r], self._end[r] = 0, width

    def take(self, rows: np.ndarray, width: int = 1) -> np.ndarray:
        """The next ``width`` values of each listed repetition's stream, shape (len(rows), width).

        ``rows`` must not repeat (each row consumes its own stream once per call).
        """
        rows = np.asarray(rows, dtype=np.intp).reshape(-1)
        width = check_integer("width", width)
        if rows.size == 0:
            return np.empty((0, width))
        if unique(rows).size != rows.size:
            raise ValueError("rows must not repeat within one take()")
        short = rows[self._cur[rows] + width > self._end[rows]]
        if short.size:
            self._refill(short, width)
        cols = self._cur[rows][:, None] + np.arange(width)
        out = self._buf[rows[:, None], cols]
        self._cur[rows] += width
        self.drawn[rows] += width
        return out


class _ScaledGenerator:
    """A numpy Generator whose Laplace and normal draws are ``factor`` times their scale."""

    def __init__(self, g: np.random.Generator, factor: float) -> None:
        self._g, self._f = g, factor

    def __getattr__(self, name: str) -> Any:
        return getattr(self._g, name)

    def laplace(self, loc: float = 0.0, scale: float = 1.0, size: Any = None) -> Any:
        return self._g.laplace(loc, scale * self._f, size)

    def normal(self, loc: float = 0.0, scale: float = 1.0, size: Any = None) -> Any:
        return self._g.normal(loc, scale * self._f, size)

    def standard_normal(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        res = self._g.standard_normal(size=size, dtype=dtype, out=out)
        if out is not None:
            out *= self._f
            return out
        return res * self._f


class ScaledRandom(RepRandom):
    """A :class:`RepRandom` (and every child of it) whose Laplace and normal draws are ``factor``
    times their scale; uniforms and exponentials are unchanged, and a factor of 1 gives exactly
    the draws of :class:`RepRandom`.

    >>> seeds = [np.random.SeedSequence(0)]
    >>> half = ScaledRandom(seeds, 0.5).standard_normal((3,))
    >>> bool(np.allclose(half, RepRandom(seeds).standard_normal((3,)) / 2))
    True
    """

    def __init__(self, seeds: Sequence[np.random.SeedSequence], factor: float) -> None:
        super().__init__(seeds)
        self.factor = _factor(factor)

    @classmethod
    def scaling(cls, random: RepRandom, factor: float) -> ScaledRandom:
        """``ScaledRandom(random.seeds, factor)``, keeping a deferred ``random``'s maker (its
        generators are then made without making the seeds first: the same generators)."""
        make = getattr(random, "_make", None)
        if make is None or "seeds" in random.__dict__:
            return cls(random.seeds, factor)
        out = cls.__new__(cls)
        out._n, out._make, out.factor = len(random), make, _factor(factor)
        return out

    @functools.cached_property
    def generators(self) -> tuple[np.random.Generator, ...]:
        return tuple(_ScaledGenerator(g, self.factor) for g in self._plain_generators())  # type: ignore[misc]

    @property
    def unscaled_generators(self) -> tuple[np.random.Generator, ...]:
        """The plain generators behind :attr:`generators` (the same objects, so their states move
        together): a draw z from one, times :attr:`factor`, is the scaled draw (compiled loops
        that draw in place use them)."""
        return tuple(g._g for g in self.generators)  # type: ignore[attr-defined]

    def child(self, k: int) -> RepRandom:
        return ScaledRandom.scaling(RepRandom.child(self, k), self.factor)


def _factor(factor: float) -> float:
    if not (isinstance(factor, (int, float)) and 0.0 < float(factor) < float("inf")):
        raise ValueError(f"factor must be a positive finite number, got {factor!r}")
    return float(factor)
