"""Optional compiled kernels (numba; the ``fast`` extra). Pure-NumPy code paths give the same
results bit for bit (tested both ways); these only make them faster.

:func:`greedy_linear_exact` is the greedy basis of an integer linear matroid for R score orders
(seed 000's movie instance: 100 items, rank 17), computed row by row with exact modular
elimination. Measured on this machine (``benchmarks/bench_combinatorial.py``): the NumPy
state engine needs one vectorised step per scanned position (≈ 25–55 positions, ≈ 10 ms per
round for R = 20); the kernel does the whole round in well under a millisecond.

Set the environment variable ``DPAUDIT_NUMBA=0`` to disable the kernels (the NumPy paths run).

>>> import numpy as np
>>> available() in (True, False)
True
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

__all__ = ["available", "greedy_linear_exact"]

_KERNEL: Any = None
_TRIED = False


def available() -> bool:
    """Whether numba is installed and not disabled by ``DPAUDIT_NUMBA=0``."""
    if os.environ.get("DPAUDIT_NUMBA", "1") == "0":
        return False
    return _kernel() is not None


def _kernel() -> Any:
    global _KERNEL, _TRIED
    if _TRIED:
        return _KERNEL
    _TRIED = True
    try:
        import numba
    except ImportError:  # pragma: no cover - the extra is not installed
        return None

    @numba.njit(cache=True)
    def modinv(a: int, p: int) -> int:  # pragma: no cover - compiled
        r = 1
        b = a % p
        e = p - 2
        while e > 0:
            if e & 1:
                r = r * b % p
            b = b * b % p
            e >>= 1
        return r

    @numba.njit(cache=True)
    def kernel(order, vecs, primes, K):  # pragma: no cover - compiled
        R, n = order.shape
        P, _, d = vecs.shape
        out = np.empty((R, K), dtype=np.int64)
        basis = np.zeros((P, K, d), dtype=np.int64)
        pivot = np.zeros((P, K), dtype=np.int64)
        size = np.zeros(P, dtype=np.int64)
        v = np.zeros((P, d), dtype=np.int64)
        nz = np.zeros(P, dtype=np.int64)
        for r in range(R):
            for j in range(P):
                size[j] = 0
            count = 0
            for pos in range(n):
                if count == K:
                    break
                e = order[r, pos]
                ok = False
                for j in range(P):
                    p = primes[j]
                    for c in range(d):
                        v[j, c] = vecs[j, e, c]
                    for i in range(size[j]):
                        coef = v[j, pivot[j, i]]
                        if coef != 0:
                            for c in range(d):
                                v[j, c] = (v[j, c] - coef * basis[j, i, c]) % p
                    nz[j] = -1
                    for c in range(d):
                        if v[j, c] != 0:
                            nz[j] = c
                            break
                    if size[j] == count and nz[j] >= 0:
                        ok = True
                if not ok:
                    continue
                for j in range(P):
                    c0 = nz[j]
                    if c0 < 0:
                        continue
                    p = primes[j]
                    inv = modinv(v[j, c0], p)
                    for c in range(d):
                        v[j, c] = v[j, c] * inv % p
                    for i in range(size[j]):
                        f = basis[j, i, c0]
                        if f != 0:
                            for c in range(d):
                                basis[j, i, c] = (basis[j, i, c] - f * v[j, c]) % p
                    s = size[j]
                    for c in range(d):
                        basis[j, s, c] = v[j, c]
                    pivot[j, s] = c0
                    size[j] = s + 1
                out[r, count] = e
                count += 1
        return out

    _KERNEL = kernel
    return _KERNEL


def greedy_linear_exact(
    order: np.ndarray, residues: np.ndarray, primes: tuple[int, ...], rank: int
) -> np.ndarray:
    """Greedy bases (R, rank) for the orders (R, n) of integer vectors given by their residues
    ``residues[j] = vectors mod primes[j]`` (shape (P, n, d); Π p > the Hadamard bound, each
    p < 2³¹ so products fit in int64). Raises ``RuntimeError`` if numba is unavailable."""
    k = _kernel()
    if k is None or not available():
        raise RuntimeError("numba is not available (pip install 'dpaudit[fast]'; DPAUDIT_NUMBA != 0)")
    pr = np.asarray(primes, dtype=np.int64)
    return k(np.ascontiguousarray(order, dtype=np.int64), residues, pr, int(rank))
