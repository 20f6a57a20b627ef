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

from bandits.engine._numba_kernels import NUMBA, _jit, gaussian_ts_kernel

__all__ = ["NUMBA", "generator_list", "gaussian_ts_drawing_kernel"]


def generator_list(generators: Sequence[np.random.Generator]) -> Any:
    """A numba typed ``List`` of ``generators`` (plain ``numpy.random.Generator`` objects), sharing
    their bit generators."""
    from numba import typed, typeof

    from bandits.engine._list_kernels import BLOCK, append_block

    gens = list(generators)
    out = typed.List.empty_list(typeof(gens[0]))
    for s in range(0, len(gens), BLOCK):  # a compiled call per block: one append from Python costs ~35 µs
        block = gens[s : s + BLOCK]
        append_block(out, tuple(block + block[:1] * (BLOCK - len(block))), len(block))
    return out


# numba keys this kernel's cache on this file's time stamp alone, yet gaussian_ts_kernel is compiled
# into it: when that kernel changes, edit this file too (a cache from before the change read the
# old per-count scale table out of bounds: 039c584)
@_jit
def gaussian_ts_drawing_kernel(  # pragma: no cover - compiled; a flat kernel signature
    gens: Any, S: Any, n: Any, table: Any, start: Any, scale: Any, actions: Any, watch: Any, drawn: Any,
    factor: Any,
) -> None:
    """Local rounds ``start .. C−1`` of every repetition r of Gaussian Thompson sampling: the
    repetition's noise drawn from ``gens[r]`` in the order of ``Generator.standard_normal``
    filling a (C, N) array, each draw times ``factor`` (1: as drawn; else a noise-scaled stream's
    ``z * factor``), into a buffer of one repetition, which
    :func:`bandits.engine._numba_kernels.gaussian_ts_kernel` then plays — the one round loop."""
    R, N = S.shape
    Z = np.empty((1, max(actions.shape[1] - start, 0), N))
    first = np.full(1, start, dtype=np.intp)
    for r in range(R):
        gen = gens[r]
        for k in range(Z.shape[1]):
            for i in range(N):
                Z[0, k, i] = gen.standard_normal() * factor
        if watch.size:
            gaussian_ts_kernel(S[r : r + 1], n[r : r + 1], Z, start, table[r : r + 1], first, scale,
                               actions[r : r + 1], watch[r : r + 1], drawn[r : r + 1])  # fmt: skip
        else:
            gaussian_ts_kernel(S[r : r + 1], n[r : r + 1], Z, start, table[r : r + 1], first, scale,
                               actions[r : r + 1], watch, drawn)  # fmt: skip
