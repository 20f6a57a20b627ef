"""Re-run some algorithms' rows of a stored leaderboard, keeping every other row as it was.

A full-scale leaderboard takes over an hour; when one algorithm's tuning changes, only its rows
need running again. The other rows keep their stored runs: every row runs at the leaderboard's
root seed (common random numbers), so rows re-run later are paired with them exactly as in one
run. The winners and sentences are recomputed from all the rows, and a note records what was
re-run and when.

Run: ``python -m bandits.experiments.leaderboard_update docs/img/leaderboard_full-T100000.json
dp-ts-ucb`` (then ``python benchmarks/readme_tables.py --write``). With ``--stored-options`` the
rows run again with the options stored in them (no tuner): the same simulation, whose final
regrets must come out identical and its certified ε equal to 1e-12 relative (the conversions'
last bits have moved with their rounding; an error otherwise), and today's audit — how a board keeps up
with a change of the audit without its hours of tuning.

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
import math
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


def _again(d: dict[str, Any], cell: dict[str, Any], cfg: lb.LeaderboardConfig,
           done: dict[str, lb.Row]) -> lb.Row:  # fmt: skip
    """The stored row ``d`` run again with its stored options (once per options: a published row
    with the certified row's options is that run); its regrets must be the stored ones."""
    from bandits.environments import parse_env

    env, T = parse_env(cell["env"]), cell["horizon"]
    key = json.dumps([d["algorithm"], d["options"]], sort_keys=True)
    if key not in done:
        done[key] = lb.run_row(d["algorithm"], env, T, cfg, d["options"], cell["epsilon"])
    new = done[key]
    same_eps = math.isclose(new.certified_epsilon, d["certified_epsilon"], rel_tol=1e-12)  # last bits move
    if list(new.finals) != list(d["finals"]) or not same_eps:
        where = f"at T = {T}, mu = {cell['mu']:g} ({cell['instance']})"
        raise ValueError(f"{d['algorithm']} {where}: the stored run is not reproduced "
                         "(its final regrets or certified epsilon differ)")  # fmt: skip
    return dataclasses.replace(new, footing=d["footing"], tuning_seconds=d.get("tuning_seconds", 0.0))


def _stored(c: dict[str, Any], cfg: lb.LeaderboardConfig, algorithms: Sequence[str]) -> lb.Cell:
    done: dict[str, lb.Row] = {}

    def rows(key: str) -> tuple[lb.Row, ...]:
        stored = c.get(key, [])
        return tuple(_again(d, c, cfg, done) if d["algorithm"] in algorithms else _row(d) for d in stored)

    published = rows("published_rows")
    return lb.Cell(c["instance"], c["env"], c["horizon"], c["mu"], c["epsilon"], rows("rows"), published)


def update_rows(path: Path | str, algorithms: Sequence[str], figures: bool = False,
                stored_options: bool = False) -> dict[str, Any]:  # fmt: skip
    """Re-run ``algorithms``' rows (certified and published) of the leaderboard stored at ``path``
    with its own configuration — tuned again, or with ``stored_options`` the options stored in
    them — write it back (and, with ``figures``, its figures beside it) and return the new JSON
    (module docstring)."""
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
        if stored_options:
            cells.append(_stored(c, cfg, algorithms))
            continue
        fresh = lb.run_cell(only, c["instance"], c["horizon"], c["mu"])
        rows = _swap([_row(r) for r in c["rows"]], fresh.rows)
        published = _swap([_row(r) for r in c.get("published_rows", [])], fresh.published_rows)
        cells.append(lb.Cell(c["instance"], c["env"], c["horizon"], c["mu"], c["epsilon"], rows, published))
    seconds = time.perf_counter() - t0
    how = "with their stored options, the same regrets, today's audit" if stored_options else "tuned again"
    note = (f"re-run: {', '.join(algorithms)} rows, {how} ({seconds:.0f} s, {time.strftime('%Y-%m-%d')}); "
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
    stored = "--stored-options" in args
    args = [a for a in args if a != "--stored-options"]
    if len(args) < 2:
        print("usage: python -m bandits.experiments.leaderboard_update BOARD.json ALGORITHM [ALGORITHM ...] "
              "[--stored-options]", file=sys.stderr)  # fmt: skip
        return 2
    try:
        update_rows(args[0], args[1:], figures=True, stored_options=stored)
    except (OSError, ValueError) as exc:
        print(f"leaderboard_update: error: {exc}", file=sys.stderr)
        return 2
    print(f"re-ran {', '.join(args[1:])} in {args[0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
