"""Linear matroids: linearly independent vectors, tested exactly for integer vectors.

A set S of integer vectors is independent over ℚ iff some |S|×|S| minor is non-zero, and every
minor is an integer of absolute value at most the Hadamard bound H = Π (largest row norms)
(Hadamard 1893). The incremental state keeps a reduced row echelon form of span(S) modulo primes
p₁, p₂, … with Π p_j > H (rank_p ≤ rank_ℚ always). For an independent S, S ∪ {v} is independent
over ℚ iff for some j the form modulo p_j still has rank |S| and v is not in its span: a non-zero
(|S|+1)-minor is non-zero modulo at least one p_j (Chinese remainder theorem: Π p_j would divide it
otherwise), and that prime then sees rank |S| + 1. The primes are below 2¹⁶, so every product fits
in int64 and inverses come from a table. Scalar questions use exact elimination on integers
(each row scaled by a power of two, fraction-free, reduced by the gcd of its entries).
Non-integer vectors use floating-point elimination with a
relative tolerance (``arithmetic="float"``, documented as approximate).

>>> m = LinearMatroid.from_rows([[1, 0], [2, 0], [0, 1], [0, 0]])
>>> m.rank, m.loops
(2, (3,))
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bandits.structures.matroids import IndependenceState, Matroid, _elements

__all__ = [
    "hadamard_bound",
    "primes_for",
    "LinearMatroid",
]


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
        return np.asarray(ok)


def _integer_rows(rows: Sequence[Sequence[float]]) -> list[list[int]]:
    """Each row scaled by a power of two to integers, exactly (a double is n / 2^k): the rank is
    that of the rows."""
    out = []
    for row in rows:
        ratios = [float(x).as_integer_ratio() for x in row]
        den = max((d for _, d in ratios), default=1)  # powers of two: a multiple of every other
        out.append([n * (den // d) for n, d in ratios])
    return out


def _exact_rank(rows: Sequence[Sequence[float]]) -> int:
    """Exact rank over ℚ of rows of doubles: fraction-free elimination on the integer rows of
    :func:`_integer_rows`, each new row divided by the gcd of its entries (a row scaled by a
    non-zero number spans the same line, so the rank is unchanged and the integers stay small)."""
    m = _integer_rows(rows)
    rank, d = 0, (len(m[0]) if m else 0)
    for col in range(d):
        if rank == len(m):
            break
        piv = next((i for i in range(rank, len(m)) if m[i][col] != 0), None)
        if piv is None:
            continue
        m[rank], m[piv] = m[piv], m[rank]
        p, top = m[rank][col], m[rank]
        for i in range(rank + 1, len(m)):
            f = m[i][col]
            if f != 0:
                row = [p * a - f * b for a, b in zip(m[i], top)]
                g = math.gcd(*row)
                m[i] = [a // g for a in row] if g > 1 else row
        rank += 1
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
        return _exact_rank([self.vectors[e] for e in s])

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
