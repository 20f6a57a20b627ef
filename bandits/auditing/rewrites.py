"""Rewrites proven to compute what the code a kept floor ran computed, so the floor still holds.

A kept floor (:mod:`bandits.auditing.kept_floors`) is a deterministic function of its
configuration and of the code its measurement ran (:mod:`bandits.auditing.code_trace`), and any
edit to a function that ran drops it until it is measured again: 6.9 h of CPU for all of them,
and an edit to a shared piece (the ledger's check, the accountant) touches nearly every one. A
rewrite that returns exactly what the old definition returned, for every input, cannot change a
floor. Such a rewrite is recorded in ``rewrites.json`` beside this module, one record each:

* ``module`` and ``function`` (a dotted path such as ``Class.method``) of the rewritten definition;
* ``old``: the source of the definition the measurements ran;
* ``new``: the fingerprint (:func:`~bandits.auditing.code_trace.definition_fingerprint`) of the rewrite, and
  ``helpers``: the fingerprints of the functions it added to the module;
* ``check``: the test that runs the old and the new definition side by side and requires equal
  results (``tests/test_rewrites.py``: exhaustively on small inputs, on random ones, and on the
  ledgers of real runs);
* ``why``: what the rewrite is for.

While the rewrite and its helpers are exactly as recorded, a floor's fingerprint reads the old
definition in their place (:func:`~bandits.auditing.code_trace.as_measured`); any later edit to
them drops the floors as any edit would. ``tests/test_rewrites.py`` fails on a record without a
check, on one that no longer applies and on a rewrite whose results differ. A record states equal
results on the inputs the measurements could give (its ``why`` names the domain); it is evidence
of the same kind as a test, not a proof, which is why a record is reviewed like code.

Record one (the old definition from a commit, the fingerprints from the code now)::

    python -m bandits.auditing.rewrites dpaudit.data_units:sweep_integer_units --old REV \\
        --helper _interval_ends --why "..." \\
        --check tests/test_rewrites.py::test_the_rewrite_computes_what_the_old_code_did

Example:
    >>> [r.function for r in module_rewrites("no.such.module")]
    []
"""

from __future__ import annotations

import ast
import functools
import json
import sys
from pathlib import Path
from typing import Any

from bandits.auditing.code_trace import ROOT, Rewrite, definition_fingerprint, source_path, statement_sites

__all__ = ["RECORDS", "records", "module_rewrites", "record"]

RECORDS = Path(__file__).resolve().with_name("rewrites.json")


@functools.lru_cache(maxsize=1)
def records() -> tuple[dict[str, Any], ...]:
    """The records of ``rewrites.json`` (none when it is missing)."""
    try:
        return tuple(json.loads(RECORDS.read_text(encoding="utf-8"))["rewrites"])
    except FileNotFoundError:
        return ()


@functools.lru_cache(maxsize=256)
def module_rewrites(module: str) -> tuple[Rewrite, ...]:
    """The recorded rewrites of ``module``, in the order they were recorded."""
    return tuple(
        Rewrite(r.get("function") or "", r.get("old") or "", r.get("new") or "",
                tuple((p, d) for p, d in r.get("helpers", {}).items()))  # fmt: skip
        for r in records()
        if r["module"] == module
    )


def _definition(source: str, path: str, where: str) -> tuple[ast.stmt, str]:
    """The statement at ``path`` (:func:`~bandits.auditing.code_trace.statement_sites`) and its source."""
    sites = statement_sites(ast.parse(source))
    if path in sites:
        segment = ast.get_source_segment(source, sites[path][0], padded=True)
        if segment is not None:
            return sites[path][0], segment
    raise ValueError(f"{path!r} is not a plain module- or class-level definition or assignment in {where}")


def record(
    module: str, function: str, old_rev: str, helpers: list[str], check: str, why: str
) -> dict[str, Any]:
    """The record of a rewrite of ``module``'s ``function`` (empty: additions only): its old
    source as of the commit ``old_rev``, the fingerprints of the code now (the rewrite and its
    ``helpers``, which must be additions: absent at ``old_rev``)."""
    import subprocess

    path = source_path(module)
    rel = path.relative_to(ROOT).as_posix()
    git = ["git", "-C", str(ROOT), "show", f"{old_rev}:{rel}"]
    shown = subprocess.run(git, capture_output=True, text=True)
    if shown.returncode != 0:
        raise ValueError(f"--old {old_rev!r}: git could not show {rel} there ({shown.stderr.strip()})")
    there = statement_sites(ast.parse(shown.stdout))
    changed = [h for h in helpers if h in there]
    if changed:
        raise ValueError(f"helper(s) {changed} exist in {rel} at {old_rev}: a helper must be an addition")
    now = path.read_text(encoding="utf-8")
    out: dict[str, Any] = {"module": module}
    if function:
        out["function"] = function
        out["old"] = _definition(shown.stdout, function, f"{rel} at {old_rev}")[1]
        out["new"] = definition_fingerprint(_definition(now, function, rel)[0])
    out["helpers"] = {h: definition_fingerprint(_definition(now, h, rel)[0]) for h in helpers}
    return {**out, "check": check, "why": why}


def _main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m bandits.auditing.rewrites", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument("target", help="MODULE:FUNCTION, the rewritten definition (MODULE: additions only)")
    parser.add_argument("--old", required=True, help="the commit whose definition the measurements ran")
    parser.add_argument("--helper", action="append", default=[], help="a function the rewrite added")
    parser.add_argument("--check", required=True, help="the test that compares old and new")
    parser.add_argument("--why", required=True, help="what the rewrite is for, and the domain compared")
    args = parser.parse_args(argv)
    module, _, function = args.target.partition(":")
    if not function and not args.helper:
        parser.error(f"target must be MODULE:FUNCTION, or MODULE with --helper, got {args.target!r}")
    try:
        new = record(module, function, args.old, args.helper, args.check, args.why)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    kept = [r for r in records() if (r["module"], r.get("function", "")) != (module, function)]
    RECORDS.write_text(json.dumps({"rewrites": [*kept, new]}, indent=1) + "\n", encoding="utf-8")
    print(f"recorded {module}:{function} in {RECORDS.name} ({len(kept) + 1} record(s))")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(_main(sys.argv[1:]))
