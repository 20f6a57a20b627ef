"""numba kernels that draw Gaussian Thompson sampling's posterior noise inside the round loop.

numba passes a ``numpy.random.Generator`` to compiled code by unboxing it, about 9 µs a call on
this machine; a kernel called once per repetition and chunk pays that R times a chunk (the
audit's 8192-trajectory blocks of 51-round chunks: more than the draws themselves). A numba typed
``List`` of the repetitions' generators is unboxed once, when it is built
(:func:`generator_list`), and shares their bit generators: a draw inside the kernel advances the
very generator object Python holds, so the streams continue exactly where NumPy would have them.

Module-level functions, so that numba's on-disk cache (``cache=True``) is reused across processes.
Without numba the module still imports (``NUMBA`` is False) and nothing here runs.

>>> isinstance(NUMBA, bool)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bandits.engine._numba_kernels import NUMBA, _jit

__all__ = ["NUMBA", "generator_list", "gaussian_ts_drawing_kernel"]


def generator_list(generators: Sequence[np.random.Generator]) -> Any:
    """A numba typed ``List`` of ``generators`` (plain ``numpy.random.Generator`` objects), sharing
    their bit generators."""
    from numba import typed, typeof

    out = typed.List.empty_list(typeof(generators[0]))
    for g in generators:  # not extend: it types a Python list as a reflected list (deprecated)
        out.append(g)
    return out


@_jit
def gaussian_ts_drawing_kernel(  # pragma: no cover - compiled; a flat kernel signature
    gens: Any, S: Any, n: Any, table: Any, start: Any, scale: Any, actions: Any, watch: Any, drawn: Any,
    factor: Any,
) -> None:
    """Local rounds ``start .. C−1`` of every repetition r of Gaussian Thompson sampling, the N
    posterior draws of a round taken from ``gens[r]`` in the order of
    ``Generator.standard_normal`` filling a (C, N) array and multiplied by ``factor`` (1: as
    drawn; else a noise-scaled stream's ``z * factor``): the arithmetic of
    :func:`bandits.engine._numba_kernels.gaussian_ts_kernel` on the noise it would have read."""
    R, N = S.shape
    C = actions.shape[1]
    mu = np.empty(N)
    sc = np.empty(N)
    for r in range(R):
        gen = gens[r]
        for i in range(N):  # the step loop's caches: mu = S/(n+1), scale[n] = sqrt(c)/sqrt(n+1)
            mu[i] = S[r, i] / (n[r, i] + 1.0)
            sc[i] = scale[int(n[r, i])]
        w = watch[r] if watch.size else -1
        for k in range(start, C):
            # theta = Z*scale, then += mu: two roundings, as NumPy (no fused multiply-add)
            best = 0
            bv = (gen.standard_normal() * factor) * sc[0]
            bv = bv + mu[0]
            if w == 0:
                drawn[r, k] = bv
            for i in range(1, N):
                v = (gen.standard_normal() * factor) * sc[i]
                v = v + mu[i]
                if i == w:
                    drawn[r, k] = v
                if v > bv:  # the first maximum, as numpy.argmax
                    bv = v
                    best = i
            actions[r, k] = best
            s = S[r, best] + table[r, k, best]
            m = n[r, best] + 1.0
            S[r, best] = s
            n[r, best] = m
            mu[best] = s / (m + 1.0)
            sc[best] = scale[int(m)]
