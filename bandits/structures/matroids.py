"""Matroids with pluggable independence oracles, and the greedy maximum-weight basis, vectorised.

A :class:`Matroid` on the ground set ``{0, …, n−1}`` answers exact scalar questions
(:meth:`Matroid.rank_of`, :meth:`Matroid.independent`) and hands out an
:class:`IndependenceState` — an incremental "may element e join the set built so far?" test for
R independent sets at once — which is what the greedy algorithm of a bandit round needs.

Oracles: :class:`UniformMatroid` (sets of ≤ k elements), :class:`PartitionMatroid` (at most
``caps[b]`` elements of block b), :class:`GraphicMatroid` (forests of a multigraph; union–find
labels), :class:`LinearMatroid` (linearly independent vectors).

**Exact arithmetic for linear matroids.** Integer vectors (e.g. 0/1 genre indicators, seed 000
§5.2, or the vectors of seed 000 Table 2) are tested exactly: a set S is independent over ℚ iff
some |S|×|S| minor is non-zero, and every minor is an integer of absolute value at most the
Hadamard bound H = Π (largest row norms) (Hadamard 1893). The state keeps a reduced row echelon
form of span(S) modulo primes p₁, p₂, … with Π p_j > H (rank_p ≤ rank_ℚ always). For an
independent S, S ∪ {v} is independent over ℚ iff for some j the form modulo p_j still has rank
|S| and v is not in its span: a non-zero (|S|+1)-minor is non-zero modulo at least one p_j
(Chinese remainder theorem: Π p_j would divide it otherwise), and that prime then sees rank
|S| + 1. The primes are below 2¹⁶, so every product fits in int64 and inverses come from a table. Scalar
questions use exact rational (``fractions.Fraction``) elimination. Non-integer vectors use
floating-point elimination with a relative tolerance (``arithmetic="float"``, documented as
approximate).

**Greedy** (seed 000 Algorithm 1, reconstructed in the digest; Kveton et al. 2014): scan the
elements by decreasing score and keep each one that preserves independence. Ties in the score
are broken by the ``order`` the caller passes (see :func:`bandits.structures.combinatorial.ranking`: lowest
index first, or a data-independent random key). Loops (zero vectors, self-loop edges, blocks of
capacity 0) are never kept. The result is returned in greedy order ``a_1, …, a_K``. Two
vectorised engines give identical results (tested):

* ground sets of at most :data:`TABLE_MAX` elements: element ``e_p`` of the order is kept iff
  ``rank(prefix_p) > rank(prefix_{p−1})`` (the greedy set spans every prefix), read off a
  precomputed table of ranks of all 2ⁿ subsets — no loop over positions;
* otherwise: one pass over positions, each testing R sets at once with the state.

Example:
    >>> import numpy as np
    >>> m = LinearMatroid.from_rows([[1, 0], [2, 0], [0, 1], [0, 0]])
    >>> m.rank, m.loops
    (2, (3,))
    >>> greedy(m, np.array([[1, 0, 2, 3], [0, 1, 2, 3]])).tolist()   # orders (best first)
    [[1, 2], [0, 2]]
    >>> GraphicMatroid(3, ((0, 1), (1, 2), (0, 2))).independent([0, 1, 2])
    False
"""

from __future__ import annotations

import abc
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from bandits.engine import compiled
from dpaudit.validation import check_integer

__all__ = [
    "TABLE_MAX",
    "Matroid",
    "IndependenceState",
    "UniformMatroid",
    "PartitionMatroid",
    "GraphicMatroid",
    "LinearMatroid",
    "greedy",
    "hadamard_bound",
    "primes_for",
]

TABLE_MAX = 10
"""Largest ground set for which :func:`greedy` uses the table of ranks of all subsets."""


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

    def cover_with_bases(self) -> tuple[tuple[int, ...], ...]:
        """Bases that together contain every element that is not a loop (data-independent):
        repeatedly the greedy basis that prefers uncovered elements (ties by index).

        >>> UniformMatroid(5, 2).cover_with_bases()
        ((0, 1), (2, 3), (4, 0))
        """
        n = self.n_elements
        need = set(range(n)) - set(self.loops)
        out: list[tuple[int, ...]] = []
        while need:
            order = np.array([sorted(range(n), key=lambda e: (e not in need, e))])
            basis = tuple(int(e) for e in greedy(self, order)[0])
            out.append(basis)
            need -= set(basis)
        return tuple(out)


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


def hadamard_bound(rows: np.ndarray) -> int:
    """An integer ≥ |det M| for every square submatrix M of the integer matrix ``rows``:
    the product of the min(n, d) largest row norms, rounded up (Hadamard's inequality).

    >>> hadamard_bound(np.array([[1, 0, 0], [2, 0, 0], [1, 1, 0]]))   # 2 · √2 · 1 → 3
    3
    """
    a = np.asarray(rows, dtype=float)
    norms = np.sort(np.sqrt((a * a).sum(axis=1)))[::-1]
    k = min(a.shape[0], a.shape[1])
    top = [max(1.0, float(x)) for x in norms[:k]]
    return int(math.ceil(math.prod(top) * (1 + 1e-12)))


def _is_prime(p: int) -> bool:
    if p < 2:
        return False
    for q in range(2, int(math.isqrt(p)) + 1):
        if p % q == 0:
            return False
    return True


def primes_for(bound: int, start: int = 65521) -> tuple[int, ...]:
    """Distinct primes ≤ ``start`` (downwards from it) whose product exceeds ``bound``.

    >>> primes_for(10), primes_for(5_400_000)
    ((65521,), (65521, 65519))
    """
    out: list[int] = []
    prod, p = 1, start
    while prod <= bound:
        while not _is_prime(p):
            p -= 1
        out.append(p)
        prod *= p
        p -= 1
    return tuple(out)


def _inverse_table(p: int) -> np.ndarray:
    """Modular inverses of 0..p−1 modulo the prime p (entry 0 unused), by Fermat."""
    x = np.arange(p, dtype=np.int64)
    out = np.ones(p, dtype=np.int64)
    base, e = x % p, p - 2
    while e:
        if e & 1:
            out = out * base % p
        base = base * base % p
        e >>= 1
    return out


class _ModPState(IndependenceState):
    """Reduced row echelon forms of span_p(S) for R sets, one per prime (module docstring)."""

    def __init__(
        self,
        reps: int,
        vectors: np.ndarray,
        primes: tuple[int, ...],
        inverses: tuple[np.ndarray, ...],
        k: int,
    ) -> None:
        d = vectors.shape[1]
        self.primes, self.inverses = primes, inverses
        self.vecs = [vectors % p for p in primes]
        self.basis = [np.zeros((reps, k, d), dtype=np.int64) for _ in primes]
        self.pivot = [np.zeros((reps, k), dtype=np.int64) for _ in primes]
        self.size = [np.zeros(reps, dtype=np.int64) for _ in primes]  # rank modulo each prime
        self.count = np.zeros(reps, dtype=np.int64)  # |S| (independent over Q)

    def _reduce(self, j: int, rows: np.ndarray, elems: np.ndarray) -> np.ndarray:
        p = self.primes[j]
        v = self.vecs[j][elems]  # (n, d)
        B = self.basis[j][rows]  # (n, k, d); unused slots are zero vectors with pivot 0
        c = np.take_along_axis(v, self.pivot[j][rows], axis=1)  # coefficient of each basis vector
        c = np.where(np.arange(B.shape[1])[None, :] < self.size[j][rows][:, None], c, 0)
        s = (c[:, :, None] * B % p).sum(axis=1) % p
        return (v - s) % p

    def try_add(self, rows: np.ndarray, elems: np.ndarray) -> np.ndarray:
        reduced = [self._reduce(j, rows, elems) for j in range(len(self.primes))]
        nonzero = [v.any(axis=1) for v in reduced]
        ok = np.zeros(rows.size, dtype=bool)
        for j, nz in enumerate(nonzero):
            ok |= (self.size[j][rows] == self.count[rows]) & nz
        for j, p in enumerate(self.primes):
            new = ok & nonzero[j]  # span modulo p grows (else rank is lost modulo p, kept elsewhere)
            if not new.any():
                continue
            r, v = rows[new], reduced[j][new]
            piv = np.argmax(v != 0, axis=1)
            inv = self.inverses[j][v[np.arange(r.size), piv]]
            v = v * inv[:, None] % p
            B = self.basis[j][r]
            B = (B - B[np.arange(r.size), :, piv][:, :, None] * v[:, None, :]) % p
            B[np.arange(r.size), self.size[j][r]] = v
            self.basis[j][r] = B
            self.pivot[j][r, self.size[j][r]] = piv
            self.size[j][r] += 1
        self.count[rows[ok]] += 1
        return ok


class _FloatState(IndependenceState):
    """Floating-point reduced row echelon forms (approximate; relative tolerance ``tol``)."""

    def __init__(self, reps: int, vectors: np.ndarray, k: int, tol: float) -> None:
        self.vecs, self.tol = vectors, tol
        d = vectors.shape[1]
        self.basis = np.zeros((reps, k, d))
        self.pivot = np.zeros((reps, k), dtype=np.int64)
        self.size = np.zeros(reps, dtype=np.int64)
        self.scale = float(np.abs(vectors).max()) if vectors.size else 1.0

    def _reduce(self, rows: np.ndarray, elems: np.ndarray) -> np.ndarray:
        v = self.vecs[elems]
        B = self.basis[rows]
        c = np.take_along_axis(v, self.pivot[rows], axis=1)
        c = np.where(np.arange(B.shape[1])[None, :] < self.size[rows][:, None], c, 0.0)
        out = v - np.einsum("nk,nkd->nd", c, B)
        out[np.abs(out) <= self.tol * max(1.0, self.scale)] = 0.0
        return out

    def try_add(self, rows: np.ndarray, elems: np.ndarray) -> np.ndarray:
        v = self._reduce(rows, elems)
        ok = v.any(axis=1)
        rows, v = rows[ok], v[ok]
        i = np.arange(rows.size)
        piv = np.argmax(np.abs(v), axis=1)
        v = v / v[i, piv][:, None]
        B = self.basis[rows]
        B = B - B[i, :, piv][:, :, None] * v[:, None, :]
        B[i, self.size[rows]] = v
        self.basis[rows] = B
        self.pivot[rows, self.size[rows]] = piv
        self.size[rows] += 1
        return ok


def _frac_rank(rows: Sequence[Sequence[Fraction]]) -> int:
    """Exact rank by rational Gaussian elimination."""
    m = [list(r) for r in rows]
    rank, col, d = 0, 0, (len(m[0]) if m else 0)
    while rank < len(m) and col < d:
        piv = next((i for i in range(rank, len(m)) if m[i][col] != 0), None)
        if piv is None:
            col += 1
            continue
        m[rank], m[piv] = m[piv], m[rank]
        for i in range(rank + 1, len(m)):
            if m[i][col] != 0:
                f = m[i][col] / m[rank][col]
                m[i] = [a - f * b for a, b in zip(m[i], m[rank])]
        rank += 1
        col += 1
    return rank


@dataclass(frozen=True)
class LinearMatroid(Matroid):
    """Vectors ``vectors[e]`` (all of one dimension); independent = linearly independent.

    ``arithmetic``: ``"auto"`` (exact modular arithmetic for integer vectors, else float),
    ``"exact"`` (integer vectors required) or ``"float"`` (tolerance ``tol``).

    >>> rows = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [0, 1, 1], [2, 0, 0], [0, 0, 0]]
    >>> m = LinearMatroid.from_rows(rows)
    >>> m.rank, m.loops, m.independent([3, 4, 5]), m.independent([0, 5])
    (3, (6,), True, False)
    """

    vectors: tuple[tuple[float, ...], ...] = ()
    arithmetic: str = "auto"
    tol: float = 1e-9

    def __post_init__(self) -> None:
        try:
            arr = np.array(self.vectors, dtype=float)
        except (TypeError, ValueError):
            raise ValueError("vectors must be a sequence of equal-length numeric vectors") from None
        if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
            raise ValueError(f"vectors must be a non-empty (n, d) array, got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError("vectors must be finite")
        if self.arithmetic not in ("auto", "exact", "float"):
            raise ValueError(f"arithmetic must be 'auto', 'exact' or 'float', got {self.arithmetic!r}")
        integral = bool(np.all(arr == np.round(arr))) and float(np.abs(arr).max(initial=0.0)) < 2**31
        if self.arithmetic == "exact" and not integral:
            raise ValueError("arithmetic='exact' needs integer vectors (|entries| < 2^31)")
        object.__setattr__(self, "vectors", tuple(tuple(float(x) for x in row) for row in arr))
        self._cache["array"] = arr
        self._cache["integral"] = integral and self.arithmetic != "float"

    @classmethod
    def from_rows(cls, rows: Iterable[Iterable[float]], **kw: Any) -> LinearMatroid:
        """Build from any nested sequence / 2-D array of vectors."""
        return cls(tuple(tuple(float(x) for x in r) for r in rows), **kw)

    @property
    def array(self) -> np.ndarray:
        return self._cache["array"]

    @property
    def exact(self) -> bool:
        """Whether the vectorised independence test is exact (integer vectors)."""
        return bool(self._cache["integral"])

    @property
    def n_elements(self) -> int:
        return len(self.vectors)

    @property
    def dimension(self) -> int:
        return self.array.shape[1]

    def rank_of(self, subset: Iterable[int]) -> int:
        s = _elements(subset, self.n_elements)
        if not s:
            return 0
        return _frac_rank([[Fraction(x) for x in self.vectors[e]] for e in s])

    def _modular(self) -> tuple[tuple[int, ...], tuple[np.ndarray, ...]]:
        if "primes" not in self._cache:
            primes = primes_for(hadamard_bound(self.array))
            self._cache["primes"] = primes
            self._cache["inverses"] = tuple(_inverse_table(p) for p in primes)
        return self._cache["primes"], self._cache["inverses"]

    def _kernel_args(self) -> tuple[np.ndarray, tuple[int, ...]]:
        """(vectors modulo each prime, stacked; the primes) for the compiled kernel: primes below
        2³¹ whose product exceeds the Hadamard bound (computed once)."""
        if "kernel" not in self._cache:
            primes = primes_for(hadamard_bound(self.array), start=2**31 - 1)
            vec = self.array.astype(np.int64)
            self._cache["kernel"] = (np.stack([vec % p for p in primes]), primes)
        return self._cache["kernel"]

    def new_state(self, reps: int) -> IndependenceState:
        k = max(1, self.rank)
        if self.exact:
            primes, inverses = self._modular()
            return _ModPState(reps, self.array.astype(np.int64), primes, inverses, k)
        return _FloatState(reps, self.array, k, self.tol)


# ---------------------------------------------------------------------------------------
# greedy


def greedy(matroid: Matroid, order: np.ndarray, *, engine: str = "auto") -> np.ndarray:
    """The greedy basis for each row of ``order`` (R, n) — a permutation of the ground set,
    best element first — in greedy order, shape (R, K) with K = ``matroid.rank``.

    ``engine``: ``"auto"`` (the rank table when n ≤ :data:`TABLE_MAX`; else, for an exact
    linear matroid, the compiled kernel of :mod:`bandits.engine.compiled` when numba is available; else
    the incremental state), ``"table"``, ``"state"`` or ``"numba"``. Every engine is exact and
    they give identical results (tested); the choice only changes speed.
    """
    if not isinstance(matroid, Matroid):
        raise ValueError(f"matroid must be a Matroid, got {type(matroid).__name__}")
    o = np.asarray(order, dtype=np.int64)
    if o.ndim == 1:
        o = o[None, :]
    n, K = matroid.n_elements, matroid.rank
    if o.ndim != 2 or o.shape[1] != n:
        raise ValueError(f"order must have shape (R, {n}), got {np.shape(order)}")
    if engine not in ("auto", "table", "state", "numba"):
        raise ValueError(f"engine must be 'auto', 'table', 'state' or 'numba', got {engine!r}")
    R = o.shape[0]
    if isinstance(matroid, UniformMatroid):
        return o[:, :K].copy()
    if engine == "table" or (engine == "auto" and n <= TABLE_MAX):
        table = matroid.rank_table()
        prefix = np.cumsum(np.left_shift(1, o), axis=1)
        ranks = table[prefix]
        keep = np.diff(ranks, axis=1, prepend=0) > 0
        return o[keep].reshape(R, K)
    linear = isinstance(matroid, LinearMatroid) and matroid.exact
    if engine == "numba" and not linear:
        raise ValueError("engine='numba' applies to exact (integer) linear matroids")
    if linear and (engine == "numba" or (engine == "auto" and compiled.available())):
        return compiled.greedy_linear_exact(o, *matroid._kernel_args(), K)
    state = matroid.new_state(R)
    chosen = np.empty((R, K), dtype=np.int64)
    size = np.zeros(R, dtype=np.int64)
    rows_all = np.arange(R)
    for p in range(n):
        active = rows_all[size < K]
        if active.size == 0:
            break
        e = o[active, p]
        ok = state.try_add(active, e)
        if not ok.any():
            continue
        r, e = active[ok], e[ok]
        chosen[r, size[r]] = e
        size[r] += 1
    return chosen
