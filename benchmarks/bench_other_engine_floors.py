"""The shipped floors measured again on the other engine: where numba's availability differs from
the measurement's, a floor then holds while the code that engine ran is unchanged, instead of only
while every module it loaded is whole.

A shipped floor (:mod:`bandits.auditing.kept_floors`) is measured under a trace that lists the
functions that ran, so an edit to code the measurement did not run keeps it. That trace saw one
engine: the compiled kernels, for the shipped floors. On an installation without numba the
NumPy paths run instead, which the trace did not see, so there the floor holds only while every
module it loaded is as measured, and an edit anywhere in those modules (a function of the
accountant that four runs ran) drops the floors of every run on such an installation (all 21,
whose measurement is hours of CPU). This measures the same runs with the engine switched
(``DPAUDIT_NUMBA=0``, or on, for floors measured without numba), under the trace, and attaches
what that measurement ran to each shipped floor (:func:`bandits.auditing.kept_floors.with_other_engine`).
The two engines are bit-identical, so the floors must come out equal, number for number; a run
with one that does not is named, gets nothing attached, and the command exits with status 1: a
defect of an engine, unless the shipped floor was measured under another NumPy or SciPy (the
message says which), whose last bits may differ; measure such a run again here first. ::

    python benchmarks/bench_other_engine_floors.py --workers 2               # every run lacking it
    python benchmarks/bench_other_engine_floors.py --algorithms cascade-dp lazy-ucb

The runs whose shipped floors no longer describe the code on their own engine are refused (measure
them again first: ``python benchmarks/bench_default_floors.py --stale``). The shipped floors are
written each time a run finishes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_default_floors import _keeping, _run, fresh_rows, longest_first  # noqa: E402


def measure_on(job: tuple[str, bool]) -> dict[str, Any]:
    """The floors of ``dpaudit run KEY`` measured with numba's kernels on or off (``job``), traced,
    in this (fresh) interpreter: the entries it kept, by floor key, and its CPU seconds."""
    key, numba = job
    os.environ["DPAUDIT_NUMBA"] = "1" if numba else "0"  # read when the engine is first imported
    from bandits.auditing.code_trace import tracing

    with tracing(), _keeping() as entries:
        report, cpu = _run(["run", key, "--audit-floor", "algorithm", "--json"])
    return {"algorithm": key, "entries": entries, "cpu_s": cpu, "refused": report.get("refused")}


def lacking() -> list[str]:
    """The runs with a shipped floor that does not hold on the other engine as measured there."""
    from bandits.auditing.kept_floors import _shipped, holds_on_the_other_engine

    return sorted({e["run"].removeprefix("dpaudit run ") for e in _shipped().values()
                   if not (e.get("other") and holds_on_the_other_engine(e))})  # fmt: skip


def attach(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Attach each row's floors to the shipped ones of the same key and write the store; a run
    whose measurement was refused, measured other floors than the shipped ones or a floor that
    differs in any number (an engine's defect) gets none attached: returned, by run, with why."""
    from bandits.auditing import kept_floors as kf

    data = json.loads(kf.SHIPPED.read_text(encoding="utf-8"))
    floors = data["floors"]
    failed: dict[str, str] = {}
    for r in rows:
        alg = r["algorithm"]
        theirs = {k for k, e in floors.items() if e.get("run") == f"dpaudit run {alg}"}
        if r.get("refused"):
            failed[alg] = f"the run refused its measurement on the other engine: {r['refused']}"
        elif set(r["entries"]) != theirs:
            failed[alg] = (f"the other engine measured the floors {sorted(r['entries'])}, the shipped ones "
                           f"are {sorted(theirs)}: measure the run again first")
        else:
            try:
                both = {k: kf.with_other_engine(floors[k], e) for k, e in r["entries"].items()}
            except ValueError as exc:
                failed[alg] = str(exc)
            else:
                floors.update(both)
    kf.SHIPPED.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    kf._shipped.cache_clear()
    return failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--algorithms", nargs="*", default=None,
                    help="these runs (default: each run with a floor not measured on the other engine)")
    ap.add_argument("--workers", type=int, default=1, help="processes (one algorithm each at a time)")
    args = ap.parse_args(argv)
    from bandits.auditing import kept_floors as kf

    stale = {r.removeprefix("dpaudit run ") for r in kf.stale_runs()}
    keys = longest_first(args.algorithms if args.algorithms is not None else lacking())
    shipped = {e["run"].removeprefix("dpaudit run "): e for e in kf._shipped().values()}
    unknown = [k for k in keys if k not in shipped]
    if unknown or stale & set(keys):
        missing = ", ".join(unknown + sorted(stale & set(keys)))
        ap.error(f"no shipped floor that describes this code for {missing}: measure them first "
                 "(python benchmarks/bench_default_floors.py --stale)")
    jobs = [(k, not shipped[k].get("numba")) for k in keys]
    if any(numba for _, numba in jobs) and not kf.compiled_installed():
        ap.error("floors measured without numba are measured again with it: install numba "
                 "(pip install -e '.[fast]')")
    if not jobs:
        print("every shipped floor was measured on both engines: nothing to measure", file=sys.stderr)
        return 0
    rows = fresh_rows(jobs, args.workers, attach, measure=measure_on)
    failed = attach(rows)
    for r in rows:
        alg = r["algorithm"]
        print(f"{alg}: {failed[alg]}" if alg in failed else
              f"{alg}: {len(r['entries'])} floor(s), identical on both engines, {r['cpu_s']:.0f} s of CPU")
    both = sum("other" in e for e in kf._shipped().values())
    print(f"{both} shipped floors measured on both engines", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
