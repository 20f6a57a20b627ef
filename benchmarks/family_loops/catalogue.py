"""Every family's benchmark cases, collected (the family modules import only NumPy and, where
they have a compiled loop, numba)."""

from __future__ import annotations

from benchmarks.family_loops import Case

FAMILY_MODULES = ("thompson", "dp_ts_ucb", "lazy", "full_info", "matroid", "semibandits", "cascading",
                  "references")
"""The family modules, each defining ``CASES`` (filled in as the loops are written)."""


def cases() -> list[Case]:
    import importlib

    out: list[Case] = []
    for name in FAMILY_MODULES:
        out.extend(importlib.import_module(f"benchmarks.family_loops.{name}").CASES)
    return out
