"""Recorded rewrites (bandits/auditing/rewrites.py): each computes what the code the kept floors
ran computed, and a floor's fingerprint reads it as that code only while it is exactly as
recorded."""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import itertools
import json
import random
import subprocess
import sys
import textwrap
from collections.abc import Callable

import numpy as np
import pytest

from bandits.auditing import code_trace as ct
from bandits.auditing import rewrites as rw
from dpaudit import data_units as du

RECORDS = rw.records()


def _old_definition(record: dict) -> Callable:
    """The old definition, defined in a copy of its module's namespace (its imports and helpers)."""
    module = importlib.import_module(record["module"])
    namespace = dict(vars(module))
    where = f"<old {record['module']}:{record['function']}>"
    exec(compile(textwrap.dedent(record["old"]), where, "exec"), namespace)
    return namespace[record["function"].rsplit(".", 1)[-1]]


def _as_forms(units: frozenset[int]) -> list:
    """Every way a ledger can hold ``units``: a frozenset, runs and (if gap-free) a range."""
    forms: list = [units, du.UnitRuns.from_units(np.array(sorted(units)))]
    if max(units) - min(units) == len(units) - 1:
        forms.append(range(min(units), max(units) + 1))
    return forms


def _check_sweep(old: Callable, new: Callable) -> None:
    def same(named: list) -> None:
        a, b = old(named), new(named)
        assert list(a.items()) == list(b.items()), named  # the same groups, in the same order
        assert all(type(n) is int and type(first) is int for n, first in b.values())

    subsets = [frozenset(c) for r in range(1, 6) for c in itertools.combinations(range(5), r)]
    for s1, s2 in itertools.product(subsets, subsets):  # every pair of entries over five units
        for f1, f2 in itertools.product(_as_forms(s1), _as_forms(s2)):
            same([(0, f1), (1, f2)])
    rng = random.Random(2026)
    for _ in range(800):  # up to nine entries, far apart and near the ends of int64
        named = []
        for i in range(rng.randint(1, 9)):
            base = rng.choice([0, -50, 10**12, -(2**62), 2**62])
            units = frozenset(base + rng.randint(0, 40) for _ in range(rng.randint(1, 15)))
            named.append((3 * i + rng.randint(0, 2), rng.choice(_as_forms(units))))
        same(named)
    same([(5, du.UnitRuns(np.array([0, 2]), np.array([2, 4]))), (2, range(1, 3))])  # adjacent runs
    windows = du._sorted_windows
    du._sorted_windows = functools.partial(windows, target=4)  # many windows, some refused as too full
    try:
        for _ in range(800):
            bases = [rng.choice([0, 10**9]) for _ in range(5)]
            units = [frozenset(base + rng.randint(0, 300) for _ in range(60)) for base in bases]
            same([(i, rng.choice(_as_forms(u))) for i, u in enumerate(units)])
    finally:
        du._sorted_windows = windows

    import dpaudit.ledger as ledger
    from bandits.run import run_algorithm

    seen = []

    def both(named: list) -> dict:
        seen.append(len(named))
        same(named)
        return new(named)

    original = ledger.sweep_integer_units
    ledger.sweep_integer_units = both
    try:  # the ledgers of real runs: a cascade's hybrid counters and LDP reports, the matroid epochs
        for key in ("cascade-dp", "cascade-ldp-laplace", "dpts-mat"):
            run_algorithm(key, horizon=3000, reps=2, audit_trials=0, progress=False)
    finally:
        ledger.sweep_integer_units = original
    assert len(seen) >= 6 and max(seen) > 100, seen  # one check per repetition of the runs that name units


def _check_guard_inserted(record: dict, old: Callable, new: Callable) -> None:
    """The new definition is the old one with statements inserted that only call the record's
    helpers (their results unused), and each helper only reads and raises: where it does not raise,
    the two run the same statements on the same values."""
    helpers = {path.rsplit(".", 1)[-1] for path in record["helpers"]}

    def is_guard(stmt: ast.stmt) -> bool:
        return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id in helpers)  # fmt: skip

    def tree(source: str, drop: bool) -> str:
        node = ast.parse(textwrap.dedent(source)).body[0]
        for holder in ast.walk(node):
            for field in ("body", "orelse", "finalbody"):
                stmts = getattr(holder, field, None)
                if isinstance(stmts, list) and drop and any(map(is_guard, stmts)):
                    stmts[:] = [st for st in stmts if not is_guard(st)] or [ast.Pass()]
        return ast.dump(ct.without_docstrings(node), include_attributes=False)

    now = inspect.getsource(new)
    assert tree(now, True) == tree(record["old"], False)
    assert tree(now, False) != tree(record["old"], False)  # (a record of nothing is refused as dead)
    module = importlib.import_module(record["module"])
    readers = {"sum", "getattr", "len", "max", "min", "memory_limit", "estimated_bytes", "math.prod",
               "ValueError"}  # fmt: skip
    for path in record["helpers"]:
        body = ast.parse(textwrap.dedent(inspect.getsource(getattr(module, path)))).body[0]
        stores = [n for n in ast.walk(body) if isinstance(n, (ast.Attribute, ast.Subscript))
                  and isinstance(n.ctx, ast.Store)]  # fmt: skip
        calls = {ast.unparse(n.func) for n in ast.walk(body) if isinstance(n, ast.Call)}
        assert not stores and calls <= readers, (path, stores, calls - readers)


def _run_check(record: dict, old: Callable, new: Callable) -> None:
    _check_sweep(old, new)


def _check_hybrid_flush(record: dict, old: Callable, new: Callable) -> None:
    """The same ledger entries (events, units, labels, order) after any number of steps, for rows
    with different budgets and factors (all a flush reads: the steps taken and the rows' scales)."""
    from dpaudit.ledger import RunLedgers
    from mechanisms.continual import hybrid_batch as hb

    def ledgers(flush: Callable, steps: int) -> list[str]:
        led = RunLedgers(3)
        mech = hb.BatchHybridSums(3, 2, epsilon=np.array([1.0, 1.0, 0.5]), sensitivity=1.0,
                                  noise_factor=np.array([1.0, 1.0, 2.0]), ledgers=led)  # fmt: skip
        mech.t = steps  # what flush reads: the number of steps
        flush(mech)
        return [one.to_json() for one in led]

    rng = random.Random(7)
    horizons = [*range(130), *(2**k + d for k in range(7, 15) for d in (-1, 0, 1)),
                *(rng.randint(1000, 100_000) for _ in range(3))]  # fmt: skip
    for steps in horizons:
        assert ledgers(old, steps) == ledgers(new, steps), steps
    counts = hb._count_runs
    hb._count_runs = functools.partial(counts, chunk=7)  # runs cut by chunks' edges join again
    try:
        for steps in [*range(70), *(rng.randint(1000, 20_000) for _ in range(2))]:
            assert ledgers(old, steps) == ledgers(new, steps), steps
    finally:
        hb._count_runs = counts


def _check_append_runs(record: dict, old: Callable, new: Callable) -> None:
    """The same runs (starts, stops, dtype) for every split of every subset of 0..9 into buffered
    runs (or none) and later rounds, for random chains of appends near 0, 10¹² and 2⁶², and a run
    continuing across the seam merged by both."""

    def same(runs: du.UnitRuns | None, rounds: np.ndarray) -> du.UnitRuns:
        a, b = old(runs, rounds), new(runs, rounds)
        assert a == b and a.starts.dtype == b.starts.dtype == np.int64, (runs, rounds)
        return b

    for r in range(1, 11):
        for subset in itertools.combinations(range(10), r):
            units = np.array(subset, dtype=np.int64)
            for cut in range(r):
                runs = du.UnitRuns.from_units(units[:cut]) if cut else None
                assert same(runs, units[cut:]) == du.UnitRuns.from_units(units)
    rng = random.Random(11)
    for _ in range(800):  # a chain of appends, as a run's releases make them
        base = rng.choice([0, 10**12, 2**62])
        units = np.unique(base + np.array([rng.randint(0, 60) for _ in range(rng.randint(2, 30))]))
        cuts = sorted(rng.sample(range(1, units.size), min(units.size - 1, rng.randint(1, 4))))
        runs = None
        for part in np.split(units, cuts):
            runs = same(runs, part)
        assert runs == du.UnitRuns.from_units(units)
    assert same(du.UnitRuns.from_units(np.array([0, 1])), np.array([2, 3])).runs() == [(0, 4)]


CHECKS: dict[str, Callable[[dict, Callable, Callable], None]] = {
    "dpaudit.data_units:sweep_integer_units": _run_check,
    "mechanisms.continual.hybrid_batch:BatchHybridSums.flush": _check_hybrid_flush,
    "bandits.engine.simulator:_simulate": _check_guard_inserted,
    "bandits.lazy.policies:_append_runs": _check_append_runs,
}
FUNCTION_RECORDS = [r for r in RECORDS if r.get("function")]


def _key(record: dict) -> str:
    return f"{record['module']}:{record.get('function', '')}"


@pytest.mark.parametrize("record", FUNCTION_RECORDS, ids=_key)
def test_the_rewrite_computes_what_the_old_code_did(record):
    module = importlib.import_module(record["module"])
    new = module
    for part in record["function"].split("."):
        new = getattr(new, part)
    assert _key(record) in CHECKS, f"no check compares {_key(record)} with the code it replaced"
    CHECKS[_key(record)](record, _old_definition(record), new)


def test_added_names_are_read_only_by_recorded_code():
    """Every name a record adds (its helpers) appears in the packages only inside recorded code (a
    record's helpers or rewritten definitions): the code the floors ran cannot reach it, so the
    additions change nothing there."""
    recorded = {(r["module"], p) for r in RECORDS for p in [*r["helpers"], r.get("function")] if p}
    names = {p.rsplit(".", 1)[-1] for r in RECORDS for p in r["helpers"]}
    assert names
    for package in ct.PACKAGES:
        for path in sorted((ct.ROOT / package).rglob("*.py")):
            module = ".".join(path.relative_to(ct.ROOT).with_suffix("").parts).removesuffix(".__init__")
            tree = ast.parse(path.read_text(encoding="utf-8"))
            spans = [(n.lineno, n.end_lineno or n.lineno) for p, (n, _) in ct.statement_sites(tree).items()
                     if (module, p) in recorded]  # fmt: skip
            for node in ast.walk(tree):
                word = next((w for w in (getattr(node, "id", None), getattr(node, "attr", None),
                                         getattr(node, "name", None), getattr(node, "value", None))
                             if isinstance(w, str)), None)  # fmt: skip
                if isinstance(word, str) and word in names and hasattr(node, "lineno"):
                    assert any(a <= node.lineno <= b for a, b in spans), f"{module}:{node.lineno} uses {word}"


@pytest.mark.parametrize("record", RECORDS, ids=_key)
def test_every_record_applies_to_the_code_now_and_names_its_check(record):
    """A record whose rewrite was edited since no longer keeps any floor: update it or drop it."""
    source = ct.source_path(record["module"]).read_text(encoding="utf-8")
    sites = {path: node for path, (node, _) in ct.statement_sites(ast.parse(source)).items()}
    if record.get("function"):
        assert ct.definition_fingerprint(sites[record["function"]]) == record["new"], "edited since recorded"
        check = test_the_rewrite_computes_what_the_old_code_did.__name__
    else:
        check = test_added_names_are_read_only_by_recorded_code.__name__
    for path, fingerprint in record["helpers"].items():
        assert ct.definition_fingerprint(sites[path]) == fingerprint, f"helper {path} was edited since"
    assert record["check"] == f"tests/test_rewrites.py::{check}"
    assert record["why"]


def test_records_exist():
    assert {_key(r) for r in FUNCTION_RECORDS} == set(CHECKS)  # a check without a record is dead code too


OLD = '''
import math

def f(x):
    """Doc."""
    return 2 * x

def g(x):
    return f(x) + 1
'''

NEW = '''
import math

def f(x):
    """Another doc."""
    return _double(x)

def _double(x):
    return x + x

def g(x):
    return f(x) + 1
'''


def _record_of(new_source: str) -> ct.Rewrite:
    sites = {p: n for p, n, _ in ct.function_sites(ast.parse(new_source))}
    old = ast.get_source_segment(OLD, next(n for p, n, _ in ct.function_sites(ast.parse(OLD)) if p == "f"))
    assert old is not None
    helper = ("_double", ct.definition_fingerprint(sites["_double"]))
    return ct.Rewrite("f", old, ct.definition_fingerprint(sites["f"]), (helper,))


def test_a_fingerprint_reads_a_recorded_rewrite_as_the_old_code_while_it_is_as_recorded():
    record = _record_of(NEW)
    ran = frozenset({"f", "g"})
    measured = ct.tree_fingerprint_text(OLD, ran)
    assert ct.tree_fingerprint_text(NEW, ran) != measured  # without the record: another code
    assert ct.tree_fingerprint_text(NEW, ran | {"_double"}, (record,)) == measured
    edited = NEW.replace("x + x", "2 * x")  # the helper edited after it was recorded
    assert ct.tree_fingerprint_text(edited, ran, (record,)) != measured
    edited = NEW.replace("return _double(x)", "return _double(x) + 0")  # the rewrite edited
    assert ct.tree_fingerprint_text(edited, ran, (record,)) != measured
    elsewhere = NEW.replace("f(x) + 1", "f(x) + 2")  # another function that ran, edited
    assert ct.tree_fingerprint_text(elsewhere, ran, (record,)) != measured


def test_the_shipped_floors_hold_through_the_recorded_rewrites_only(monkeypatch):
    """The syntax fingerprints (what holds a floor through edits to docstrings, comments and code
    its measurement did not run) match the code now only through the records: without them, the
    code no longer describes the floors measured before the rewrites."""
    from bandits.auditing import kept_floors as kf

    entries = list(kf._shipped().values())
    assert all(kf._syntax_matches(e) for e in entries)
    monkeypatch.setattr(kf, "module_rewrites", lambda module: ())
    kf._fingerprints.cache_clear()
    try:
        assert len({e["run"] for e in entries if not kf._syntax_matches(e)}) >= 10
    finally:
        monkeypatch.undo()
        kf._fingerprints.cache_clear()


def test_recording_takes_the_old_definition_from_git_and_the_fingerprints_from_now():
    made = rw.record("dpaudit.data_units", "group_by_unit", "HEAD", [], "tests/x.py::t", "why")
    source = ct.source_path("dpaudit.data_units").read_text(encoding="utf-8")
    node = next(n for p, n, _ in ct.function_sites(ast.parse(source)) if p == "group_by_unit")
    old_node = ast.parse(textwrap.dedent(made["old"])).body[0]
    same = ct.definition_fingerprint(node) == ct.definition_fingerprint(old_node)  # unchanged since HEAD
    assert same and made["new"] == ct.definition_fingerprint(node)
    with pytest.raises(ValueError, match="'no_such' is not a plain"):
        rw.record("dpaudit.data_units", "no_such", "HEAD", [], "t", "w")


def test_the_command_refuses_a_bad_target_in_one_line():
    target = "dpaudit.data_units:nope"
    command = ["-m", "bandits.auditing.rewrites", target, "--old", "HEAD", "--check", "t", "--why", "w"]
    out = subprocess.run([sys.executable, *command], capture_output=True, text=True)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "nope" in out.stderr
    assert json.loads(rw.RECORDS.read_text(encoding="utf-8"))["rewrites"] == list(RECORDS)  # unchanged
