"""A numba kernel that fills a typed ``List`` from a tuple: building the list of the audit's
generators (:func:`bandits.engine._drawing_kernels.generator_list`) in blocks.

Appending the generators one at a time from Python dispatches into compiled code once per
generator: 1.4 s for the audit's 36,000 trajectories on this machine. One call per block of
:data:`BLOCK` dispatches once per block; each generator is still unboxed (its bit generator's
ctypes interface, ~7 µs the first time), so the list costs 0.84–0.99 s. A block of 16 compiles
in 0.9 s, once (numba's on-disk cache keeps it); one of 64 saved no more and took 6 s.

Module-level, so that numba's on-disk cache (``cache=True``) is reused across processes.
Without numba the module still imports and nothing here runs.

>>> BLOCK
16
"""

from __future__ import annotations

from typing import Any

from bandits.engine._numba_kernels import _jit

__all__ = ["BLOCK", "append_block"]

BLOCK = 16
"""Items per call (one compiled variant: a last, shorter block is padded to it, not compiled again)."""


@_jit
def append_block(out: Any, block: Any, count: int) -> None:  # pragma: no cover - compiled
    """Append ``block[0 .. count−1]`` (a tuple of :data:`BLOCK` items) to the typed list ``out``."""
    for i in range(count):
        out.append(block[i])
