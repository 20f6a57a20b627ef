"""Pinned numbers of ``dpaudit run ALG --json`` for every registered algorithm.

A refactoring must not change what a run computes. :func:`pin` runs one registered algorithm at a
fixed seed and a small horizon, audit included, and keeps every number of its JSON report
(regret curves, certified bounds, the ledger check, audit bounds and verdicts, configuration)
except the timings; prose is left out so that wording may change. ``tests/test_auditor_contract.py``
compares the numbers with ``tests/data/pinned_runs.json`` exactly.

Regenerate the file only when a change is *meant* to change what runs compute, and say so in
the commit::

    python tests/pinned_runs.py --write            # every algorithm
    python tests/pinned_runs.py --write ts lazy-ucb
"""

from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import Any

# the audits' simulated detection floors at the suite's size (tests/conftest.py), here too when run
# as a script to regenerate the file
os.environ.setdefault("DPAUDIT_FLOOR_REPS", "64")

DATA = Path(__file__).resolve().parent / "data" / "pinned_runs.json"
SETTINGS = {"horizon": 2000, "reps": 2, "seed": 3, "audit_trials": 2000}
"""Small enough for the suite (about 1 s per algorithm), large enough that every stage runs."""

_VERDICT_KEYS = ("verdict", "ok", "guarantee", "epsilon_method", "kind", "status")


def _numbers(obj: Any, prefix: str = "") -> dict[str, Any]:
    """Every number, boolean and verdict-like string of a JSON value, by its path."""
    out: dict[str, Any] = {}
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in ("timing", "seconds", "cpu_seconds"):  # timings (a kept floor's: its measurement's)
                continue
            path = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, str):
                if key in _VERDICT_KEYS:
                    out[path] = value.split(":")[0]
            else:
                out.update(_numbers(value, path))
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            out.update(_numbers(value, f"{prefix}[{i}]"))
    elif isinstance(obj, (bool, int, float)) or obj is None:
        out[prefix] = obj
    return out


@functools.cache
def report(key: str) -> Any:
    """``dpaudit run KEY`` at :data:`SETTINGS`, run once per test session (a
    :class:`bandits.report.RunReport`; the pinned test and the contract tests share it)."""
    from bandits.run import run_algorithm

    return run_algorithm(key, progress=False, **SETTINGS)


def pin(key: str) -> dict[str, Any]:
    """The pinned numbers of ``dpaudit run KEY`` at :data:`SETTINGS` (JSON round trip included,
    so floats compare as the CLI prints them)."""
    return _numbers(json.loads(json.dumps(report(key).to_dict())))


def keys() -> list[str]:
    from bandits.registry import algorithms

    return sorted(algorithms())


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "--write":
        print(__doc__)
        return 2
    wanted = argv[1:] or keys()
    data = json.loads(DATA.read_text()) if DATA.exists() else {}
    for key in wanted:
        data[key] = pin(key)
        print(f"{key}: {len(data[key])} numbers")
    DATA.write_text(json.dumps(dict(sorted(data.items())), indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    raise SystemExit(main(sys.argv[1:]))
