"""Every default ``dpaudit run ALG``: the floor it reports (a reference floor) against the floor
measured on the algorithm (``--audit-floor algorithm``), view by view, and whether the verdict
changes.

A default run decides ``consistent`` against ``inconclusive`` with the reference floor of its
certification procedure (a reference pair, shipped with the package, free); the floor measured on
the algorithm itself (:mod:`bandits.auditing.leak_floor`, every privacy noise draw scaled by 1/L)
costs many times the audit. This runs both for every registered private algorithm at its default
settings and reports, per view, both floors as leak factors (floor / certificate: the audit sees
a leak of L times the certificate half of the time), the two verdicts, and the two times::

    python benchmarks/bench_default_floors.py --json docs/img/default_floors.json   # hours here
    python benchmarks/bench_default_floors.py --algorithms ts --keep --json docs/img/default_floors.json
    python benchmarks/bench_default_floors.py --algorithms lazy-ucb dp-se           # a subset
    python benchmarks/bench_default_floors.py --reference-only --json docs/img/default_floors.json
                                          # only the default runs again (minutes), measured columns kept
    python benchmarks/bench_default_floors.py --stale --json docs/img/default_floors.json --workers 2
                                          # the runs whose shipped floors the code no longer matches

A default run (``--audit-floor auto``) shows the floor measured on the algorithm when one is kept
for its configuration and code, at any seed (:mod:`bandits.auditing.kept_floors`); the reference runs here
ask for ``--audit-floor reference``. ``--keep`` ships the floors the measured runs computed
(``bandits/auditing/kept_floors.json``, replacing those of the same runs); re-run it for the
algorithms whose code changed (``tests/test_kept_floors.py`` names them; ``--stale`` chooses them
and keeps). The shipped floors and the ``--json`` file are written each time an algorithm
finishes, so an interrupted measurement (hours for all of them) loses only the algorithms that
were running.

Views without a measured floor (releases without noise: the cascade algorithms' raw initial
records) show ``-``: their reference floor decides either way.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

COMMAND = "python benchmarks/bench_default_floors.py"


def _run(argv: list[str]) -> tuple[dict[str, Any], float]:
    """``dpaudit`` in this process: its JSON report and the CPU seconds it took; a refusal (exit
    status 2: work that would not fit) as ``{"refused": its message}``."""
    from dpaudit.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    t = time.process_time()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    cpu = time.process_time() - t
    if code == 2:
        return {"refused": err.getvalue().strip().removeprefix("dpaudit: error: ")}, cpu
    if code not in (0, 1):
        raise SystemExit(f"dpaudit {' '.join(argv)} exited with {code}")
    return json.loads(out.getvalue()), cpu


def _views(audit: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The parts of an audit by name: the primary by its view (the outputs), else as a mechanism
    model or by its target (a white-box release), as the run's floor note names it."""
    details = audit.get("details", {})
    primary = details.get("view") or ("mechanism model" if details.get("model") else audit.get("target", ""))
    return {primary: audit, **details.get("components", {})}


def primary_names(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Each algorithm's primary view as the floors table names it (:func:`_views`), from its rows
    (``docs/img/default_floors.json``)."""
    return {r["algorithm"]: r["views"][0]["view"] for r in rows if r.get("views")}


def _as_leak(
    floor: dict[str, Any] | None, certified: float | None, quantity: str
) -> tuple[float | None, ...]:
    """A reference floor (detect, violate) as multiples of the certificate."""
    if not floor or not certified:
        return None, None
    d, v = (floor.get("mu"), floor.get("mu_violation")) if quantity == "mu" else (
        floor.get("epsilon"), floor.get("epsilon_violation"))
    return (None if d is None else d / certified), (None if v is None else v / certified)


def algorithm_row(key: str, kept: dict[str, Any] | None = None) -> dict[str, Any]:
    """Both runs of ``dpaudit run KEY`` and the per-view comparison; with ``kept`` (an earlier row
    of KEY) only the default run, the measured columns taken from ``kept``. The measured run goes
    first: a traced floor (:func:`_row`) then lists none of the functions only the reference run
    calls."""
    if kept is not None:
        ref, ref_cpu = _run(["run", key, "--audit-floor", "reference", "--json"])
        return _with_reference(kept, ref, ref_cpu)
    with _keeping() as entries:
        meas, meas_cpu = _run(["run", key, "--audit-floor", "algorithm", "--json"])
    ref, ref_cpu = _run(["run", key, "--audit-floor", "reference", "--json"])
    views = []
    refused = meas.get("refused")
    measured_views = {} if refused else _views(meas["audit"])
    for name, view in _views(ref["audit"]).items():
        cert = view.get("certified") or {}
        quantity = "mu" if cert.get("mu") is not None else "epsilon"
        certified = cert.get(quantity)
        ref_detect, ref_violate = _as_leak(view.get("detection_floor"), certified, quantity)
        m = measured_views.get(name, {})
        alg = m.get("details", {}).get("algorithm_floor")
        views.append({
            "view": name, "quantity": quantity, "certified": certified,
            "reference_detect": ref_detect, "reference_violate": ref_violate,
            "measured_detect": None if alg is None else alg.get("detect_leak"),
            "measured_violate": None if alg is None else alg.get("violate_leak"),
            "measured": alg is not None,
            "verdict_reference": view.get("verdict"), "verdict_measured": m.get("verdict"),
            "no_power_reference": bool(view.get("details", {}).get("no_power")),
        })
    # a floor measured but not kept (kept_floors.keep refused it: a module's source modified while
    # the run ran, or within a second before its trace began; or its configuration had no key):
    # ship() then leaves the run's shipped floors
    unkept = sum(v["measured"] for v in views) - len(entries)
    return {"algorithm": key, "verdict_reference": ref["audit"]["verdict"],
            "verdict_measured": None if refused else meas["audit"]["verdict"], "cpu_reference_s": ref_cpu,
            "cpu_measured_s": meas_cpu, "refused": refused, "views": views, "unkept": max(unkept, 0),
            "kept": {k: {**e, "run": f"dpaudit run {key}"} for k, e in entries.items()}}


@contextlib.contextmanager
def _keeping() -> Iterator[dict[str, Any]]:
    """A fresh on-disk store for the floors measured inside the block, read into the dict it
    yields when the block ends (:mod:`bandits.auditing.kept_floors`)."""
    found: dict[str, Any] = {}
    saved = os.environ.get("DPAUDIT_KEPT_FLOORS")
    with tempfile.TemporaryDirectory(prefix="dpaudit-kept-") as tmp:
        os.environ["DPAUDIT_KEPT_FLOORS"] = tmp
        try:
            yield found
        finally:
            if saved is None:
                os.environ.pop("DPAUDIT_KEPT_FLOORS", None)
            else:
                os.environ["DPAUDIT_KEPT_FLOORS"] = saved
            for f in sorted(Path(tmp).glob("*.json")):
                found[f.stem] = json.loads(f.read_text(encoding="utf-8"))


def ship(rows: list[dict[str, Any]]) -> int:
    """Merge the floors the rows measured into the shipped store (replacing those of the same
    runs; a run with a floor measured but not kept keeps its shipped ones, and is named) and return
    how many it holds."""
    from bandits.auditing.kept_floors import SHIPPED

    partial = [r for r in rows if r.get("unkept")]
    for r in partial:
        print(f"{r['algorithm']}: {r['unkept']} floor(s) measured but not kept (a module's source was "
              "modified while it ran or within a second before its trace began, or the configuration has no "
              "key): its shipped floors are left as they were", file=sys.stderr, flush=True)  # fmt: skip
    whole = [r for r in rows if "kept" in r and not r.get("unkept")]
    runs = {f"dpaudit run {r['algorithm']}" for r in whole}
    old = json.loads(SHIPPED.read_text(encoding="utf-8")).get("floors", {}) if SHIPPED.exists() else {}
    floors = {k: e for k, e in old.items() if e.get("run") not in runs}
    for r in whole:
        floors.update(r["kept"])
    SHIPPED.write_text(json.dumps({"command": f"{COMMAND} --keep", "floors": dict(sorted(floors.items()))},
                                  indent=1) + "\n", encoding="utf-8")  # fmt: skip
    return len(floors)


def _with_reference(row: dict[str, Any], ref: dict[str, Any], ref_cpu: float) -> dict[str, Any]:
    """``row`` with its reference columns (floors, verdicts, CPU) from a new default run ``ref``."""
    now = list(_views(ref["audit"]).items())  # the same parts in the same order (a name may be new)
    if len(now) != len(row["views"]):
        raise SystemExit(f"{row['algorithm']}: the default run's views changed; measure it again in full")
    views = []
    for v, (name, view) in zip(row["views"], now):
        ref_detect, ref_violate = _as_leak(view.get("detection_floor"), v["certified"], v["quantity"])
        views.append({**v, "view": name, "reference_detect": ref_detect, "reference_violate": ref_violate,
                      "verdict_reference": view.get("verdict"),
                      "no_power_reference": bool(view.get("details", {}).get("no_power"))})  # fmt: skip
    return {**row, "verdict_reference": ref["audit"]["verdict"], "cpu_reference_s": ref_cpu, "views": views}


Rows = list[dict[str, Any]]


def longest_first(keys: list[str]) -> list[str]:
    """``keys`` by the CPU their shipped floors took, most first (unknown ones last, in order):
    the pool starts the longest measurements first, so that its workers finish together."""
    from bandits.auditing.kept_floors import shipped_cpu_seconds

    cost = shipped_cpu_seconds()
    return sorted(keys, key=lambda k: -cost.get(f"dpaudit run {k}", 0.0))


def fresh_rows(jobs: list[Any], workers: int, on_row: Callable[[Rows], None] | None = None,
               measure: Callable[[Any], dict[str, Any]] | None = None) -> Rows:  # fmt: skip
    """:func:`algorithm_row` (or ``measure``, a module-level function) of each job in a fresh
    interpreter, as a user runs ``dpaudit run`` (its imports and compilation paid; a kept floor
    lists only the modules its own run loaded), in the jobs' order. ``on_row`` is given the rows
    done so far each time one finishes (in the order they finish), so that an interrupted
    measurement keeps what it had measured."""
    settle_sources()
    rows = []
    # numba's on-disk cache does not see edits to what a cached kernel calls in another file, nor to
    # the globals it froze: each measurement compiles the kernels of the code as it is
    saved = os.environ.get("NUMBA_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="dpaudit-numba-") as cache:
        os.environ["NUMBA_CACHE_DIR"] = cache
        try:
            with multiprocessing.get_context("spawn").Pool(max(1, workers), maxtasksperchild=1) as pool:
                for row in pool.imap_unordered(measure or _row, jobs, chunksize=1):
                    print(f"{row['algorithm']} done", file=sys.stderr, flush=True)
                    rows.append(row)
                    if on_row is not None:
                        on_row(rows)
        finally:
            if saved is None:
                os.environ.pop("NUMBA_CACHE_DIR", None)
            else:
                os.environ["NUMBA_CACHE_DIR"] = saved
    order = {job[0]: i for i, job in enumerate(jobs)}
    return sorted(rows, key=lambda r: order[r["algorithm"]])


SETTLE_S = 2.0
"""Seconds every source file must be older than the measurement: a floor whose code changed on
disk within a second before its trace began is measured and then not kept
(:func:`bandits.auditing.kept_floors.edited_since_loaded`), e.g. in a worktree just checked out."""


def settle_sources(
    clock: Callable[[], float] = time.time, sleep: Callable[[float], None] = time.sleep
) -> float:
    """Wait until the newest source file of the packages the measurements import is
    :data:`SETTLE_S` old, so that no measured floor is thrown away for it; the seconds waited."""
    import importlib.util

    newest = 0.0
    for pkg in ("dpaudit", "mechanisms", "bandits"):
        spec = importlib.util.find_spec(pkg)
        for where in (spec.submodule_search_locations or []) if spec else []:
            newest = max([newest, *(f.stat().st_mtime for f in Path(where).rglob("*.py"))])
    wait = newest + SETTLE_S - clock()
    if wait <= 0:
        return 0.0
    print(f"waiting {wait:.1f} s: a source file was written just now, and a floor measured on code "
          "written within a second before its trace began is not kept", file=sys.stderr, flush=True)
    sleep(wait)
    return wait


def save(rows: Rows, before: Rows, path: str | None, keep: bool) -> tuple[Rows, int | None]:
    """Ship the floors ``rows`` measured (with ``keep``) and write the ``--json`` file: ``rows``
    and the rows of ``before`` not re-run, by algorithm. Returns those rows without their floors
    and the number of floors shipped (None without ``keep``). Called after every finished
    algorithm, so an interrupted run loses only the ones running."""
    shipped = ship(rows) if keep else None
    done = {r["algorithm"] for r in rows}
    merged = sorted(rows + [r for r in before if r["algorithm"] not in done], key=lambda r: r["algorithm"])
    merged = [{k: v for k, v in r.items() if k not in ("kept", "unkept")} for r in merged]  # what ship() used
    if path:
        Path(path).write_text(json.dumps({"command": COMMAND, "rows": merged}, indent=1) + "\n")
    return merged, shipped


def _row(job: tuple[str, dict[str, Any] | None]) -> dict[str, Any]:
    """:func:`algorithm_row` traced: the floors it keeps fingerprint only the functions that ran
    (:mod:`bandits.auditing.code_trace`; 15 % more CPU over the shipped floors), so that an edit to code a
    measurement did not run leaves its floor shipped."""
    from bandits.auditing.code_trace import tracing

    with tracing():
        return algorithm_row(*job)


EDITS = (("dpaudit.accounting.pld_pmf", "self_compose"), ("dpaudit.audit.reference_pairs", "reference_pair"),
         ("bandits.auditing.text", "audit_lines"))  # fmt: skip
"""Edits whose cost :func:`traced_sentence` states (module, function)."""


def traced_sentence(floors: dict[str, Any]) -> str:
    """How many shipped floors were measured under the trace, what share of the functions they
    could leave out ran, and what an edit to each of :data:`EDITS` costs now (runs, CPU)."""
    import ast

    from bandits.auditing.code_trace import function_paths
    from bandits.auditing.kept_floors import _source_path, touching

    traced = [e for e in floors.values() if "executed" in e]
    removable: dict[str, int] = {}  # module -> how many functions a fingerprint may leave out

    def room(module: str) -> int:
        if module not in removable:
            tree = ast.parse(_source_path(module).read_text(encoding="utf-8"))
            removable[module] = len(function_paths(tree))
        return removable[module]

    shares = []
    for e in traced:
        ran = sum(len(p) for p in e["executed"].values())
        shares.append(ran / max(sum(room(m) for m in e["executed"]), 1))
    runs = {e["run"] for e in floors.values()}
    text = (f"{len(traced)} of the {len(floors)} shipped floors ({len({e['run'] for e in traced})} of the "
            f"{len(runs)} runs) were measured under the trace")  # fmt: skip
    if shares:
        text += (f"; their measurements ran {min(shares):.0%}–{max(shares):.0%} of the functions whose "
                 "bodies they could leave out")  # fmt: skip
    costs = []
    for module, function in EDITS:
        hit = touching(module, function)
        cost = f"{len(hit)} runs ({sum(hit.values()) / 3600:.1f} h of CPU)" if hit else "none"
        costs.append(f"`{module}.{function}`, {cost}")
    head = ". The runs whose floors an edit to a function's body drops, and what measuring them again costs: "
    return text + head + "; ".join(costs)


def other_engine_sentence(floors: dict[str, Any]) -> str:
    """For which runs the shipped floors hold where numba's availability differs from their
    measurement's (a NumPy-only installation, ``pip install -e .``, for floors measured with the
    kernels): there a floor measured on that engine too (``benchmarks/bench_other_engine_floors.py``)
    holds while the code that measurement ran is unchanged, any other while every module it loaded
    is as measured, whole."""
    from bandits.auditing.kept_floors import holds_on_the_other_engine

    runs = sorted({e["run"] for e in floors.values()})
    broken = sorted({e["run"] for e in floors.values() if not holds_on_the_other_engine(e)})
    engines = sorted({"with numba" if e.get("numba") else "without numba" for e in floors.values()})
    both = sum("other" in e for e in floors.values())
    also = f", {both} of them also on the other engine (identical floors)" if both else ""
    text = (f"All {len(floors)} shipped floors were measured {' and '.join(engines)}{also}; where that "
            "differs (`pip install -e .` has no numba) a floor measured there too holds while the code "
            "that measurement ran is unchanged, any other only while every module it loaded is as "
            "measured, whole: "
            f"now the floors of {len(runs) - len(broken)} of the {len(runs)} runs")  # fmt: skip
    if broken:
        names = ", ".join(r.removeprefix("dpaudit run ") for r in broken)
        text += f" (not {names}: code they loaded was edited after they were measured)"
    return text


def private_algorithms() -> list[str]:
    from bandits.registry import algorithms, get

    return [k for k in sorted(algorithms()) if get(k).privacy != "none"]


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if math.isinf(x):
        return "none up to the search's end"
    return f"{x:.3g}"


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table."""
    lines = [
        "| algorithm | view | certificate | reference floor as L (detect / violate) | measured on the "
        "algorithm (detect / violate) | verdict (first row: the run's): reference floor / measured | "
        "CPU: with the reference floor / "
        "measuring the floor |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        for i, v in enumerate(r["views"]):
            cost = f"{r['cpu_reference_s']:.1f} s / {r['cpu_measured_s']:.1f} s" if i == 0 else ""
            measured = "- (reference floor kept)"
            if r.get("refused"):
                measured = ("refused up front: " + r["refused"].replace("|", "/")) if i == 0 else "refused"
            elif v["measured"]:
                d, w = (("not reached" if x is None else _fmt(x))
                        for x in (v["measured_detect"], v["measured_violate"]))
                measured = f"{d} / {w}"
            name = r["algorithm"] if i == 0 else ""
            verdicts = f"{v['verdict_reference']} / {v['verdict_measured'] or '-'}"
            if v.get("no_power_reference") and v["verdict_reference"] != "inconclusive":
                verdicts += " (this view, default run: no power)"
            lines.append(
                f"| {name} | {v['view']} | {v['quantity']} {_fmt(v['certified'])} | "
                f"{_fmt(v['reference_detect'])} / {_fmt(v['reference_violate'])} | {measured} | "
                f"{'run: ' if i == 0 else ''}{verdicts} | {cost} |"
            )
    return "\n".join(lines)


def _view(rows: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """The view ``"ALG VIEW"`` of ``rows``."""
    key, view = name.split(" ", 1)
    return next(v for r in rows if r["algorithm"] == key for v in r["views"] if v["view"] == view)


def summary(rows: list[dict[str, Any]]) -> str:
    """One sentence over all rows (the README's and the docs' value)."""
    views = [v for r in rows for v in r["views"] if v["measured"]]
    changed = [f"{r['algorithm']} {v['view']}" for r in rows for v in r["views"]
               if not r.get("refused") and v["verdict_reference"] != v["verdict_measured"]]
    refused = [r["algorithm"] for r in rows if r.get("refused")]
    ratios = [v["measured_detect"] / v["reference_detect"] for v in views
              if v["measured_detect"] and v["reference_detect"] and not math.isinf(v["measured_detect"])]
    blind = [f"{r['algorithm']} {v['view']}" for r in rows for v in r["views"]
             if v["measured"] and (v["measured_detect"] is None or v["measured_detect"] >= 1)]
    cost = [r["cpu_measured_s"] / r["cpu_reference_s"] for r in rows
            if not r.get("refused") and any(v["measured"] for v in r["views"])]
    text = (f"{len(rows)} algorithms, {len(views)} views with a measured floor: the verdict changes in "
            f"{len(changed)} view(s){' (' + ', '.join(changed) + ')' if changed else ''}; ")
    if ratios:
        text += f"the measured detection factor is {min(ratios):.2g}-{max(ratios):.2g} times the reference; "
    text += (f"views that would not see the certificate's leak half of the time: "
             f"{', '.join(blind) if blind else 'none'}")
    if blind:
        said = [b for b in blind if _view(rows, b).get("no_power_reference")
                or _view(rows, b)["verdict_reference"] == "inconclusive"]  # fmt: skip
        seeing = [f"{r['algorithm']} {v['view']}" for r in rows for v in r["views"]
                  if v.get("no_power_reference") and v["measured"]
                  and v["measured_detect"] is not None and v["measured_detect"] < 1]  # fmt: skip
        text += (f" (the default run, where a bound of 0 reads as no power, calls {len(said)} of them "
                 f"inconclusive; it also reads no power in {len(seeing)} view(s) whose measured floor sees "
                 "the declared leak, its bound being one draw of that event"
                 f"{': ' + ', '.join(seeing) if seeing else ''})")
    if cost:
        text += f"; the measured floor costs {min(cost):.0f}-{max(cost):.0f} times the default run's CPU"
    if refused:
        text += f"; refused up front as too large: {', '.join(refused)}"
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--algorithms", nargs="*", default=None,
                    help="these registered algorithms (default: every private one)")
    ap.add_argument("--workers", type=int, default=1, help="processes (one algorithm each at a time)")
    ap.add_argument("--json", default=None, help="write the rows as JSON to this file")
    ap.add_argument("--reference-only", action="store_true",
                    help="re-run only the default runs, keeping the --json file's measured columns")
    ap.add_argument("--keep", action="store_true",
                    help="ship the measured floors with the package (bandits/auditing/kept_floors.json)")
    ap.add_argument("--stale", action="store_true",
                    help="measure and keep the runs whose shipped floors no longer describe the code")
    args = ap.parse_args(argv)
    if args.stale and (args.algorithms or args.reference_only):
        ap.error("--stale chooses the algorithms itself: not with --algorithms or --reference-only")
    if args.stale:
        from bandits.auditing.kept_floors import stale_runs

        stale = [r.removeprefix("dpaudit run ") for r in stale_runs()]
        args.keep, args.algorithms = True, longest_first(stale)
        if not args.algorithms:
            print("every shipped floor describes this code: nothing to measure", file=sys.stderr)
            return 0
    if args.keep and args.reference_only:
        ap.error("--keep needs the measured floors: not with --reference-only")
    keys = args.algorithms or private_algorithms()
    kept: dict[str, Any] = {}
    if args.reference_only:
        if not args.json or not Path(args.json).exists():
            ap.error("--reference-only needs an existing --json file to keep the measured columns of")
        kept = {r["algorithm"]: r for r in json.loads(Path(args.json).read_text())["rows"]}
        missing = [k for k in keys if k not in kept]
        if missing:
            ap.error(f"--reference-only: no measured row for {', '.join(missing)} in {args.json}")
    jobs = [(k, kept.get(k)) for k in keys]
    before = json.loads(Path(args.json).read_text())["rows"] if args.json and Path(args.json).exists() else []
    rows = fresh_rows(jobs, args.workers, lambda done: save(done, before, args.json, args.keep))
    rows, shipped = save(rows, before, args.json, args.keep)  # again in the jobs' order: the same content
    if shipped is not None:
        print(f"{shipped} measured floors shipped", file=sys.stderr)
    print(table(rows))
    print()
    print(summary(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
