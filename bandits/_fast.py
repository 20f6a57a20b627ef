"""Optional compiled kernels (numba; the ``fast`` extra). Pure-NumPy code paths give the same
results bit for bit (tested both ways); these only make them faster.

:func:`greedy_linear_exact` is the greedy basis of an integer linear matroid for R score orders
(seed 000's movie instance: 100 items, rank 17), computed row by row with exact modular
elimination. Measured on this machine (``benchmarks/bench_combinatorial.py``): the NumPy
state engine needs one vectorised step per scanned position (≈ 25–55 positions, ≈ 10 ms per
round for R = 20); the kernel does the whole round in well under a millisecond.

:func:`csb_chunk` plays a whole chunk of rounds of CUCB, CUCB-LDP1 or CUCB-LDP2 on a top-k
problem (seed 003): the NumPy step loop pays ≈ 40 array operations per round (≈ 100 µs for
R = 4 here), the kernel ≈ 2 µs.

Set the environment variable ``DPAUDIT_NUMBA=0`` to disable the kernels (the NumPy paths run).

>>> import numpy as np
>>> available() in (True, False)
True
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

__all__ = ["available", "greedy_linear_exact", "csb_chunk"]

_KERNEL: Any = None
_CSB: Any = None
_TRIED = False


def available() -> bool:
    """Whether numba is installed and not disabled by ``DPAUDIT_NUMBA=0``."""
    if os.environ.get("DPAUDIT_NUMBA", "1") == "0":
        return False
    return _kernel() is not None


def _kernel() -> Any:
    global _KERNEL, _CSB, _TRIED
    if _TRIED:
        return _KERNEL
    _TRIED = True
    from bandits import _numba_kernels as nk

    if not nk.NUMBA:  # pragma: no cover - the 'fast' extra is not installed
        return None
    _KERNEL, _CSB = nk.greedy_kernel, nk.csb_kernel
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


def csb_chunk(
    mode: int,
    mu: np.ndarray,
    n: np.ndarray,
    table: np.ndarray,
    keys: np.ndarray | None,
    z: np.ndarray | None,
    coef: np.ndarray,
    scale: float,
    k: int,
) -> np.ndarray:
    """One chunk of CUCB (mode 0), CUCB-LDP1 (1) or CUCB-LDP2 (2) on a top-k problem, updating
    ``mu`` and ``n`` (R, m) in place; returns the actions (R, C, k). ``coef[c]`` is round c's
    bonus coefficient (bonus = coef/sqrt(n)); ``keys`` (R, C, m) the tie keys (None: lower index);
    ``z`` (R, C, ·) the standard Laplace draws of the reports; ``scale`` their scale. Identical,
    bit for bit, to :meth:`bandits.csb._CSBAgent.select`/``update`` (tested)."""
    _kernel()
    if _CSB is None or not available():
        raise RuntimeError("numba is not available (pip install 'dpaudit[fast]'; DPAUDIT_NUMBA != 0)")
    R, C, m = table.shape
    out = np.empty((R, C, k), dtype=np.int64)
    kk = np.zeros((1, 1, 1)) if keys is None else np.ascontiguousarray(keys, dtype=float)
    zz = np.zeros((1, 1, 1)) if z is None else np.ascontiguousarray(z, dtype=float).reshape(R, C, -1)
    _CSB(int(mode), mu, n, np.ascontiguousarray(table, dtype=float), kk, keys is not None, zz,
         np.ascontiguousarray(coef, dtype=float), float(scale), int(k), out)  # fmt: skip
    return out
