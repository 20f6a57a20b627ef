"""Tables and sentences of the performance benchmarks, rendered from their stored runs
(``docs/img/growth.json`` from ``bench_growth.py``, ``docs/img/audit_workers.json`` from
``bench_audit_workers.py``, ``docs/img/families.json`` from ``bench_families.py``,
``docs/img/dask.json`` from ``bench_dask.py``,
``docs/img/horizon_memory.json`` from ``bench_horizon_memory.py``, and the detection-floor check
``docs/img/floor_check.json`` from ``bench_floor_check.py``, and the floor measured on the
algorithms, ``docs/img/leak_floor.json``, ``leak_floor_ts.json``, ``leak_floor_ts_outputs.json`` and
``leak_floor_spread.json`` from ``bench_leak_floor.py``, ``mechanism_floor.json`` from
``bench_mechanism_floor.py`` and ``default_floors.json`` from ``bench_default_floors.py``) into
the README and the docs by ``benchmarks/readme_tables.py``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["growth_table", "growth_sentence", "workers_table", "workers_sentence", "families_table",
           "families_sentence", "dask_sentence", "renderers"]


def _x(v: float | None) -> str:
    return "" if v is None else f"×{v:.1f}"


def growth_table(rows: list[dict[str, Any]]) -> str:
    """One row per (algorithm, N, T): CPU seconds, peak memory, growth from 10× less T and N."""
    out = ["| algorithm | arms N | horizon T | CPU s | peak MiB | from T/10 | from N/10 |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r['algorithm']} | {r['arms']} | {r['horizon']:,} | {r['cpu_s']:.2f} | "
                   f"{r['peak_mib']:.0f} | {_x(r['growth_T'])} | {_x(r['growth_N'])} |")
    return "\n".join(out)


def growth_sentence(rows: list[dict[str, Any]]) -> str:
    """The largest growth factor per 10× of T and of N, with the cells where it happens."""
    def worst(key: str) -> str:
        cells = [r for r in rows if r[key] is not None]
        r = max(cells, key=lambda c: c[key])
        return f"×{r[key]:.1f} ({r['algorithm']}, N = {r['arms']}, T = {r['horizon']:,})"

    top = max(rows, key=lambda r: r["peak_mib"])
    return (f"largest growth per 10× the horizon {worst('growth_T')}, per 10× the arms {worst('growth_N')}; "
            f"peak memory at most {top['peak_mib']:.0f} MiB")


def workers_table(rows: list[dict[str, Any]]) -> str:
    """One row per algorithm: one process, two workers, the speed-up, same numbers."""
    out = ["| algorithm | 1 process s | 2 workers s | speed-up | same numbers |", "|---|---:|---:|---:|---|"]
    for r in rows:
        out.append(f"| {r['algorithm']} | {r['serial_s']:.1f} | {r['two_workers_s']:.1f} | "
                   f"{r['speedup']:.2f}× | {'yes' if r['same'] else 'NO'} |")
    return "\n".join(out)


def workers_sentence(rows: list[dict[str, Any]]) -> str:
    """The range of the speed-ups and how many runs printed the same numbers."""
    s = [r["speedup"] for r in rows]
    same = sum(r["same"] for r in rows)
    return (f"two worker processes: {min(s):.2f}–{max(s):.2f}× the one-process speed over {len(rows)} "
            f"default runs, the same numbers in {same} of {len(rows)}")


def families_table(data: dict[str, Any]) -> str:
    """One row per case of ``bench_families.py``: toolkit and loop CPU seconds, ratios, regrets."""
    from benchmarks.bench_families import table

    return table(data["rows"])


def families_sentence(data: dict[str, Any]) -> str:
    """How many cases reach 3× the NumPy loop, the slowest, and the numba comparison."""
    rows = data["rows"]
    fam = sorted({r["family"] for r in rows})
    ok = [r for r in rows if r["ratio_numpy"] >= 3.0]
    slow = sorted(rows, key=lambda r: r["ratio_numpy"])[:3]
    slow_txt = ", ".join(f"{r['algorithm']} {r['ratio_numpy']:.2f}×" for r in slow)
    nb = [r for r in rows if "ratio_numba" in r]
    nb_txt = ", ".join(f"{r['algorithm']} {r['ratio_numba']:.2f}×" for r in nb)
    size = f"T × R = {rows[0]['horizon']:,} × {rows[0]['reps']}"
    return (f"{len(rows)} cases of {len(fam)} families at {size}: "
            f"the toolkit at least 3× its plain NumPy loop in {len(ok)} of {len(rows)}; slowest {slow_txt}; "
            f"against a numba loop of the same algorithm {nb_txt}")


def dask_sentence(rows: list[dict[str, Any]]) -> str:
    """Each job's one-process and two-worker Dask times, speed-up and same-numbers check."""
    parts = [f"{r['job']}: {r['one_process_s']:.1f} s in one process, {r['dask_s']:.1f} s on two Dask "
             f"workers ({r['speedup']:.2f}×; {r['cluster_start_s']:.1f} s more to start the cluster), "
             f"{'the same numbers' if r['same'] else 'DIFFERENT numbers'}" for r in rows]
    return "; ".join(parts)


def renderers(img: Path) -> dict[str, Callable[[], str]]:
    """Every table and sentence of this module whose stored run exists in ``img``."""
    out: dict[str, Callable[[], str]] = {}

    def load(name: str) -> Any:
        return json.loads((img / name).read_text()) if (img / name).exists() else None

    if (growth := load("growth.json")) is not None:
        out |= {"growth": lambda: growth_table(growth), "growth-summary": lambda: growth_sentence(growth)}
    if (families := load("families.json")) is not None:
        out |= {"families": lambda: families_table(families),
                "families-summary": lambda: families_sentence(families)}  # fmt: skip
    kept = Path(__file__).resolve().parents[1] / "bandits" / "auditing" / "kept_floors.json"
    if kept.exists():
        from benchmarks.bench_default_floors import other_engine_sentence, traced_sentence

        shipped = json.loads(kept.read_text())["floors"]
        out |= {"traced-floors": lambda: traced_sentence(shipped),
                "other-engine-floors": lambda: other_engine_sentence(shipped)}
    if (horizon := load("horizon_memory.json")) is not None:
        from benchmarks.bench_horizon_memory import sentence as horizon_sentence
        from benchmarks.bench_horizon_memory import table as horizon_table

        out |= {"horizon-memory": lambda: horizon_table(horizon),
                "horizon-memory-summary": lambda: horizon_sentence(horizon)}  # fmt: skip
    if (startup := load("startup.json")) is not None:
        from benchmarks.bench_startup import sentence as startup_sentence

        out |= {"startup-summary": lambda: startup_sentence(startup)}
    if (main_job := load("main_job.json")) is not None:
        from benchmarks.bench_main_job import sentence as main_job_sentence

        out |= {"main-job-summary": lambda: main_job_sentence(main_job)}
    if (dask := load("dask.json")) is not None:
        out |= {"dask-summary": lambda: dask_sentence(dask)}
    if (workers := load("audit_workers.json")) is not None:
        out |= {"workers": lambda: workers_table(workers),
                "workers-summary": lambda: workers_sentence(workers)}  # fmt: skip
    if (floors := load("floor_check.json")) is not None:
        from benchmarks.bench_floor_check import sentence, summary

        out |= {"floor-check": lambda: summary(floors["rows"]),
                "floor-check-summary": lambda: sentence(floors["rows"])}  # fmt: skip
    if (leak := load("leak_floor.json")) is not None:
        from benchmarks.bench_leak_floor import sentence as leak_sentence
        from benchmarks.bench_leak_floor import table

        out |= {"leak-floor": lambda: table(leak["rows"]),
                "leak-floor-summary": lambda: leak_sentence(leak["rows"])}  # fmt: skip
    if (mech := load("mechanism_floor.json")) is not None:
        from benchmarks.bench_default_floors import primary_names
        from benchmarks.bench_mechanism_floor import sentence as mech_sentence
        from benchmarks.bench_mechanism_floor import table as mech_table

        named = primary_names((load("default_floors.json") or {"rows": []})["rows"])
        out |= {"mechanism-floor": lambda: mech_table(mech["rows"], named),
                "mechanism-floor-summary": lambda: mech_sentence(mech["rows"], named)}  # fmt: skip
    if (leak_ts := load("leak_floor_ts.json")) is not None:
        from benchmarks.bench_leak_floor import table as ts_table

        out |= {"leak-floor-ts": lambda: ts_table(leak_ts["rows"])}
    if (leak_ts_out := load("leak_floor_ts_outputs.json")) is not None:
        from benchmarks.bench_leak_floor import table as ts_outputs_table

        out |= {"leak-floor-ts-outputs": lambda: ts_outputs_table(leak_ts_out["rows"])}
    if (defaults := load("default_floors.json")) is not None:
        from benchmarks.bench_default_floors import summary as defaults_summary
        from benchmarks.bench_default_floors import table as defaults_table

        out |= {"default-floors": lambda: defaults_table(defaults["rows"]),
                "default-floors-summary": lambda: defaults_summary(defaults["rows"])}  # fmt: skip
    if (spread := load("leak_floor_spread.json")) is not None:
        from benchmarks.bench_leak_floor import spread_sentence

        out |= {"leak-floor-spread": lambda: spread_sentence(spread["spread"])}
    return out
