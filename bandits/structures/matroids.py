"""Matroids with pluggable independence oracles.

A :class:`Matroid` on the ground set ``{0, …, n−1}`` answers exact scalar questions
(:meth:`Matroid.rank_of`, :meth:`Matroid.independent`) and hands out an
:class:`IndependenceState` — an incremental "may element e join the set built so far?" test for
R independent sets at once — which is what the greedy algorithm of a bandit round needs
(:func:`bandits.structures.greedy.greedy`).

Oracles: :class:`UniformMatroid` (sets of ≤ k elements), :class:`PartitionMatroid` (at most
``caps[b]`` elements of block b), :class:`GraphicMatroid` (forests of a multigraph; union–find
labels), and :class:`bandits.structures.linear_matroid.LinearMatroid` (linearly independent
vectors, exact for integer vectors).

Example:
    >>> GraphicMatroid(3, ((0, 1), (1, 2), (0, 2))).independent([0, 1, 2])
    False
    >>> UniformMatroid(4, 2).rank
    2
"""

from __future__ import annotations

import abc
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpaudit.validation import check_integer

__all__ = [
    "TABLE_MAX",
    "Matroid",
    "IndependenceState",
    "UniformMatroid",
    "PartitionMatroid",
    "GraphicMatroid",
]

TABLE_MAX = 10
"""Largest ground set for which :func:`bandits.structures.greedy.greedy` uses the table of ranks of
all subsets."""


def _elements(subset: Iterable[int], n: int) -> list[int]:
    out = [int(e) for e in subset]
    for e in out:
        if e < 0 or e >= n:
            raise ValueError(f"elements must be in [0, {n}), got {e}")
    if len(set(out)) != len(out):
        raise ValueError(f"a subset must not repeat elements, got {out}")
    return out


class IndependenceState(abc.ABC):
    """R sets being built, one per row; all start empty."""

    @abc.abstractmethod
    def try_add(self, rows: np.ndarray, elems: np.ndarray) -> np.ndarray:
        """Add ``elems[k]`` to ``set[rows[k]]`` where the result stays independent; return which
        were added, shape (len(rows),). ``rows`` must not repeat."""


@dataclass(frozen=True)
class Matroid(abc.ABC):
    """A matroid on ``{0, …, n_elements − 1}`` (module docstring)."""

    _cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    @property
    @abc.abstractmethod
    def n_elements(self) -> int:
        """Size of the ground set."""

    @abc.abstractmethod
    def rank_of(self, subset: Iterable[int]) -> int:
        """Exact rank of a subset."""

    @abc.abstractmethod
    def new_state(self, reps: int) -> IndependenceState:
        """A vectorised incremental independence test for ``reps`` sets."""

    @property
    def rank(self) -> int:
        """The size K of every basis."""
        if "rank" not in self._cache:
            self._cache["rank"] = self.rank_of(range(self.n_elements))
        return self._cache["rank"]

    @property
    def loops(self) -> tuple[int, ...]:
        """Elements that belong to no independent set."""
        if "loops" not in self._cache:
            self._cache["loops"] = tuple(e for e in range(self.n_elements) if self.rank_of([e]) == 0)
        return self._cache["loops"]

    def independent(self, subset: Iterable[int]) -> bool:
        """Whether the subset is independent."""
        s = _elements(subset, self.n_elements)
        return self.rank_of(s) == len(s)

    def is_basis(self, subset: Iterable[int]) -> bool:
        """Whether the subset is a basis (independent, of size :attr:`rank`)."""
        s = _elements(subset, self.n_elements)
        return len(s) == self.rank and self.rank_of(s) == len(s)

    def rank_table(self) -> np.ndarray:
        """Ranks of all 2ⁿ subsets by bit mask (n ≤ :data:`TABLE_MAX`), computed once."""
        n = self.n_elements
        if n > TABLE_MAX:
            raise ValueError(f"rank_table needs at most {TABLE_MAX} elements, got {n}")
        if "table" not in self._cache:
            tab = np.zeros(1 << n, dtype=np.int16)
            for mask in range(1, 1 << n):
                tab[mask] = self.rank_of([e for e in range(n) if (mask >> e) & 1])
            tab.setflags(write=False)
            self._cache["table"] = tab
        return self._cache["table"]


# ---------------------------------------------------------------------------------------
# uniform and partition matroids


class _CountState(IndependenceState):
    def __init__(self, reps: int, block: np.ndarray, caps: np.ndarray) -> None:
        self.block, self.caps = block, caps
        self.counts = np.zeros((reps, caps.size), dtype=np.int64)

    def try_add(self, rows: np.ndarray, elems: np.ndarray) -> np.ndarray:
        b = self.block[elems]
        ok = self.counts[rows, b] < self.caps[b]
        self.counts[rows[ok], b[ok]] += 1
        return ok


@dataclass(frozen=True)
class UniformMatroid(Matroid):
    """All subsets of at most ``k`` of ``n`` elements (the decision set of top-K problems).

    >>> UniformMatroid(4, 2).rank_of([0, 1, 3])
    2
    """

    n: int = 1
    k: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "n", check_integer("n", self.n))
        object.__setattr__(self, "k", check_integer("k", self.k))
        if self.k > self.n:
            raise ValueError(f"k must be in [1, {self.n}] (the number of elements), got {self.k}")

    @property
    def n_elements(self) -> int:
        return self.n

    def rank_of(self, subset: Iterable[int]) -> int:
        return min(len(_elements(subset, self.n)), self.k)

    def new_state(self, reps: int) -> IndependenceState:
        return _CountState(reps, np.zeros(self.n, dtype=np.int64), np.array([self.k]))


@dataclass(frozen=True)
class PartitionMatroid(Matroid):
    """Element e belongs to block ``blocks[e]``; a set is independent if it holds at most
    ``caps[b]`` elements of each block b.

    >>> PartitionMatroid((0, 0, 1, 1, 1), (1, 2)).rank
    3
    """

    blocks: tuple[int, ...] = ()
    caps: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        blocks = tuple(check_integer(f"blocks[{i}]", b, 0) for i, b in enumerate(self.blocks))
        caps = tuple(check_integer(f"caps[{i}]", c, 0) for i, c in enumerate(self.caps))
        if not blocks:
            raise ValueError("blocks must assign a block to at least one element")
        if max(blocks) >= len(caps):
            raise ValueError(
                f"caps must have one entry per block (blocks go up to {max(blocks)}), got {len(caps)}"
            )
        object.__setattr__(self, "blocks", blocks)
        object.__setattr__(self, "caps", caps)

    @property
    def n_elements(self) -> int:
        return len(self.blocks)

    def rank_of(self, subset: Iterable[int]) -> int:
        counts: dict[int, int] = {}
        for e in _elements(subset, self.n_elements):
            counts[self.blocks[e]] = counts.get(self.blocks[e], 0) + 1
        return sum(min(c, self.caps[b]) for b, c in counts.items())

    def new_state(self, reps: int) -> IndependenceState:
        return _CountState(reps, np.array(self.blocks, dtype=np.int64), np.array(self.caps, dtype=np.int64))


# ---------------------------------------------------------------------------------------
# graphic matroid


class _ForestState(IndependenceState):
    def __init__(self, reps: int, ends: np.ndarray, n_vertices: int) -> None:
        self.ends = ends
        self.label = np.tile(np.arange(n_vertices, dtype=np.int64), (reps, 1))

    def try_add(self, rows: np.ndarray, elems: np.ndarray) -> np.ndarray:
        u, v = self.ends[elems, 0], self.ends[elems, 1]
        lu, lv = self.label[rows, u], self.label[rows, v]
        ok = lu != lv
        r, lu, lv = rows[ok], lu[ok], lv[ok]
        sub = self.label[r]
        self.label[r] = np.where(sub == lv[:, None], lu[:, None], sub)
        return ok


@dataclass(frozen=True)
class GraphicMatroid(Matroid):
    """Edges of a multigraph on ``n_vertices`` vertices; independent sets are forests.

    >>> GraphicMatroid(4, ((0, 1), (2, 3), (1, 1))).loops
    (2,)
    """

    n_vertices: int = 1
    edges: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        nv = check_integer("n_vertices", self.n_vertices)
        edges = []
        for i, e in enumerate(self.edges):
            try:
                u, v = (int(x) for x in e)
            except (TypeError, ValueError):
                raise ValueError(f"edges[{i}] must be a pair of vertices, got {e!r}") from None
            if not (0 <= u < nv and 0 <= v < nv):
                raise ValueError(f"edges[{i}] must join vertices in [0, {nv}), got {e!r}")
            edges.append((u, v))
        if not edges:
            raise ValueError("edges must contain at least one edge")
        object.__setattr__(self, "n_vertices", nv)
        object.__setattr__(self, "edges", tuple(edges))

    @property
    def n_elements(self) -> int:
        return len(self.edges)

    def rank_of(self, subset: Iterable[int]) -> int:
        parent = list(range(self.n_vertices))

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        r = 0
        for e in _elements(subset, self.n_elements):
            a, b = find(self.edges[e][0]), find(self.edges[e][1])
            if a != b:
                parent[a] = b
                r += 1
        return r

    def new_state(self, reps: int) -> IndependenceState:
        return _ForestState(reps, np.array(self.edges, dtype=np.int64), self.n_vertices)


# ---------------------------------------------------------------------------------------
# linear matroid
