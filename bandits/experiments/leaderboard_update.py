"""Re-run some algorithms' rows of a stored leaderboard, keeping every other row as it was.

A full-scale leaderboard takes over an hour; when one algorithm's tuning changes, only its rows
need running again. The other rows keep their stored runs: every row runs at the leaderboard's
root seed (common random numbers), so rows re-run later are paired with them exactly as in one
run. The winners and sentences are recomputed from all the rows, and a note records what was
re-run and when.

Run: ``python -m bandits.experiments.leaderboard_update docs/img/leaderboard_full-T100000.json
dp-ts-ucb`` (then ``python benchmarks/readme_tables.py --write``).

Example (a tiny stored board, re-run in place):
    >>> import json, tempfile, pathlib
    >>> from bandits.experiments import leaderboard as lb
    >>> cfg = lb.LeaderboardConfig(("bernoulli",), (300,), (2.0,), reps=2, tuner_reps=1, tuner_candidates=1,
    ...                            algorithms=("dp-se", "lazy-ucb"), published=False)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "board.json"
    >>> _ = path.write_text(json.dumps(lb.run_leaderboard(cfg).to_dict()))
    >>> new = update_rows(path, ("dp-se",))
    >>> [r["algorithm"] for r in new["cells"][0]["rows"]], new["notes"][-1].startswith("re-run: dp-se")
    (['dp-se', 'lazy-ucb'], True)
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bandits.experiments import leaderboard as lb

__all__ = ["update_rows"]


def _config(d: dict[str, Any]) -> lb.LeaderboardConfig:
    fields = {f.name for f in dataclasses.fields(lb.LeaderboardConfig)}
    kw: dict[str, Any] = {k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items() if k in fields}
    return lb.LeaderboardConfig(**kw)


def _row(d: dict[str, Any]) -> lb.Row:
    fields = {f.name for f in dataclasses.fields(lb.Row)}
    kw: dict[str, Any] = {k: (tuple(v) if k == "finals" else v) for k, v in d.items() if k in fields}
    return lb.Row(**kw)


def _swap(old: Sequence[lb.Row], new: Sequence[lb.Row]) -> tuple[lb.Row, ...]:
    fresh = {r.algorithm: r for r in new}
    return tuple(fresh.get(r.algorithm, r) for r in old)


def update_rows(path: Path | str, algorithms: Sequence[str], figures: bool = False) -> dict[str, Any]:
    """Re-run ``algorithms``' rows (certified and published) of the leaderboard stored at ``path``
    with its own configuration, write it back (and, with ``figures``, its figures beside it) and
    return the new JSON (module docstring)."""
    path = Path(path)
    data = json.loads(path.read_text())
    cfg = _config(data["config"])
    unknown = [k for k in algorithms if k not in cfg.algorithms]
    if unknown or not algorithms:
        raise ValueError(f"algorithms must be among the board's {', '.join(cfg.algorithms)}, got {unknown}")
    only = dataclasses.replace(cfg, algorithms=tuple(algorithms))
    t0 = time.perf_counter()
    cells = []
    for c in data["cells"]:
        fresh = lb.run_cell(only, c["instance"], c["horizon"], c["mu"])
        rows = _swap([_row(r) for r in c["rows"]], fresh.rows)
        published = _swap([_row(r) for r in c.get("published_rows", [])], fresh.published_rows)
        cells.append(lb.Cell(c["instance"], c["env"], c["horizon"], c["mu"], c["epsilon"], rows, published))
    seconds = time.perf_counter() - t0
    note = (f"re-run: {', '.join(algorithms)} rows ({seconds:.0f} s, {time.strftime('%Y-%m-%d')}); "
            "every other row is the stored run")
    board = lb.Leaderboard(cfg, tuple(cells), float(data.get("seconds", 0.0)), (*data.get("notes", ()), note))
    out = board.to_dict()
    path.write_text(json.dumps(out, indent=1) + "\n")
    if figures:
        for instance in cfg.instances:
            lb.plot_instance(out, instance, path.parent)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2:
        print("usage: python -m bandits.experiments.leaderboard_update BOARD.json ALGORITHM [ALGORITHM ...]",
              file=sys.stderr)
        return 2
    try:
        update_rows(args[0], args[1:], figures=True)
    except (OSError, ValueError) as exc:
        print(f"leaderboard_update: error: {exc}", file=sys.stderr)
        return 2
    print(f"re-ran {', '.join(args[1:])} in {args[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
