"""Tables and sentences of the performance benchmarks, rendered from their stored runs
(``docs/img/growth.json`` from ``bench_growth.py``, ``docs/img/audit_workers.json`` from
``bench_audit_workers.py``) into the README and the docs by ``benchmarks/readme_tables.py``."""

from __future__ import annotations

from typing import Any

__all__ = ["growth_table", "growth_sentence", "workers_table", "workers_sentence"]


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
