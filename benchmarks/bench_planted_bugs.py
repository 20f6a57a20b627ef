"""Planted bugs in every registered private algorithm: how often ``dpaudit run``'s audit catches them.

Run ``python benchmarks/bench_planted_bugs.py [--seeds 20] [--only KEY ...] [--workers 2]
[--json FILE]``. For every registered private algorithm, at its default ``dpaudit run`` audit
settings (environment, audit horizon, trials, δ = 1e-6, 95 % confidence over both views), every
bug of :func:`benchmarks.planted_bugs.bugs_for` is planted in the running code and the audit
(:func:`bandits.auditing.views.audit_views`: the algorithm's own auditor on the outputs, the
releases audit beside it) is run with ``--seeds`` audit seeds; a bug is *caught* when the verdict
fails the run (``violated``, or ``model-mismatch`` for an audit that tests the implementation
against its model). The unbugged algorithm is run with the same seeds (``none``): its ``violated``
count is the false-alarm rate. Prints one row per (algorithm, bug) as soon as its audits are
done: caught / seeds, the view that saw it, the seconds per audit.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from bandits.auditing.contract import AuditSettings  # noqa: E402
from bandits.auditing.views import audit_views  # noqa: E402
from bandits.environments import parse_env  # noqa: E402
from bandits.registry import algorithms, get  # noqa: E402
from benchmarks.planted_bugs import bugs_for  # noqa: E402

CAUGHT = ("violated", "model-mismatch")
"""Verdicts that fail the run: the certificate is refuted, or the implementation is not its model."""


def _setting(key: str) -> tuple[Any, Any, int, int]:
    """The default ``dpaudit run KEY`` audit: (policy, env, audit horizon, trials)."""
    spec = get(key)
    env = (spec.env_parser or parse_env)(spec.default_env)
    policy = spec.configure({}, env, spec.default_horizon).policy
    T = spec.default_horizon
    Ta = spec.default_audit_horizon(policy, T, env.n_arms) if spec.default_audit_horizon else T
    return policy, env, Ta, spec.default_audit_trials


def _k(env: Any) -> int | None:
    st = env.structure
    for name in ("k", "size", "rank"):
        v = getattr(st, name, None)
        if isinstance(v, int):
            return v
    return None


def one_audit(key: str, bug: int | None, seed: int) -> dict[str, Any]:
    """Audit ``key`` with bug number ``bug`` (None: unbugged) planted, audit seed ``seed``."""
    policy, env, Ta, trials = _setting(key)
    settings = AuditSettings(trials=trials, seed=seed)
    t = time.perf_counter()
    if bug is None:
        audit = audit_views(get(key).auditor, policy, Ta, env, settings)
    else:
        with bugs_for(key, policy, env.n_arms, _k(env))[bug].plant():
            audit = audit_views(get(key).auditor, policy, Ta, env, settings)
    parts = {"outputs": audit.primary, **audit.components}
    seen = [name for name, r in parts.items() if r.verdict.value in CAUGHT]
    return {"verdict": audit.verdict, "seen_by": seen, "seconds": time.perf_counter() - t}


def _row(key: str, bug: int | None, res: list[dict[str, Any]]) -> dict[str, Any]:
    """Print and return one row of the table."""
    policy, env, _, _ = _setting(key)
    b = None if bug is None else bugs_for(key, policy, env.n_arms, _k(env))[bug]
    caught = sum(r["verdict"] in CAUGHT for r in res)
    views: dict[str, int] = {}
    for r in res:
        for v in r["seen_by"]:
            views[v] = views.get(v, 0) + 1
    secs = sum(r["seconds"] for r in res) / len(res)
    kind, what = ("none", "the correct implementation") if b is None else (b.kind, b.what)
    seen = ", ".join(f"{v} {n}" for v, n in sorted(views.items())) or "-"
    print(f"{key:26s} {kind:18s} {caught:>3d}/{len(res):<4d}  {seen:22s} {secs:7.1f}  {what}", flush=True)
    return {"algorithm": key, "bug": kind, "what": what, "caught": caught, "seeds": len(res),
            "seen_by": views, "seconds_per_audit": secs}  # fmt: skip


def _private_keys() -> list[str]:
    return [k for k, s in algorithms().items() if s.privacy != "none" and s.auditor is not None]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--only", nargs="*", default=None, help="algorithm keys (default: every private one)")
    ap.add_argument("--bugs", nargs="*", type=int, default=None, help="bug numbers 0-4 (default: all)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the unbugged runs")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--json", default=None)
    ap.add_argument("--update", action="store_true",
                    help="replace only these rows in the --json file (keeping the others and their seeds)")
    ap.add_argument("--markdown", default=None, help="also write the table as Markdown to this file")
    args = ap.parse_args(argv)
    cores = os.cpu_count() or 1
    if not 1 <= args.workers <= cores:
        ap.error(f"--workers must be in [1, {cores}] (the cores of this machine), got {args.workers}")
    if args.seeds < 1:
        ap.error(f"--seeds must be >= 1, got {args.seeds}")
    keys = args.only or _private_keys()
    tasks = []
    for key in keys:
        policy, env, _, _ = _setting(key)
        n_bugs = len(bugs_for(key, policy, env.n_arms, _k(env)))
        wanted = [b for b in range(n_bugs) if args.bugs is None or b in args.bugs]
        for bug in ([] if args.no_baseline else [None]) + wanted:
            tasks += [(key, bug, s) for s in range(args.seeds)]
    start = time.perf_counter()
    ex = ProcessPoolExecutor(args.workers) if args.workers > 1 else None
    results = ex.map(one_audit, *zip(*tasks)) if ex is not None else (one_audit(*t) for t in tasks)
    groups: dict[tuple[str, int | None], list[dict[str, Any]]] = {}
    table = []
    print(f"{'algorithm':26s} {'bug':18s} {'caught':>8s}  seen by                s/audit  what", flush=True)
    for (key, bug, _), res in zip(tasks, results):
        group = groups.setdefault((key, bug), [])
        group.append(res)
        if len(group) == args.seeds:
            table.append(_row(key, bug, group))
    if ex is not None:
        ex.shutdown()
    total = time.perf_counter() - start
    print(f"{len(tasks)} audits in {total:.0f} s with {args.workers} worker(s)")
    if args.json:
        out = {"seeds": args.seeds, "rows": table, "seconds": total}
        if args.update and os.path.exists(args.json):
            out = merge_rows(args.json, table)
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(markdown(table))
    return 0


def merge_rows(path: str, table: list[dict[str, Any]]) -> dict[str, Any]:
    """The table in ``path`` with the rows of ``table`` in place of those of the same (algorithm,
    bug) — new ones appended — each row keeping its own seed count."""
    with open(path) as fh:
        old = json.load(fh)
    new = {(r["algorithm"], r["bug"]): r for r in table}
    rows = [new.pop((r["algorithm"], r["bug"]), r) for r in old["rows"]]
    rows += list(new.values())
    return {**old, "rows": rows, "seeds": min(r["seeds"] for r in rows)}


def markdown(table: list[dict[str, Any]], seconds: bool = True) -> str:
    """The rows as a Markdown table (algorithm, bug, what, caught, seen by and, with ``seconds``,
    the seconds per audit)."""
    head = ["algorithm", "bug", "what was planted", "caught", "seen by"] + (["s / audit"] if seconds else [])
    out = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for r in table:
        seen = ", ".join(f"{v} {n}" for v, n in sorted(r["seen_by"].items())) or "-"
        rate = f"{r['caught']}/{r['seeds']}"
        cells = [r["algorithm"], r["bug"], r["what"], rate, seen]
        cells += [f"{r['seconds_per_audit']:.1f}"] if seconds else []
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
