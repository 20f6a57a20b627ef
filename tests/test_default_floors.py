"""benchmarks/bench_default_floors.py: the comparison of every default run's reference floor with
the floor measured on the algorithm — its reading of the two reports and its sentence (the runs
themselves take minutes: the stored table is checked by tests/test_docs_tables.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from benchmarks import bench_default_floors as bdf


def _view(verdict, floor=None, alg=None, eps=1.0):
    details = {} if alg is None else {"algorithm_floor": alg}
    return {"certified": {"mu": None, "epsilon": eps}, "verdict": verdict, "detection_floor": floor,
            "details": details}


def _report(outputs, releases):
    details = {**outputs["details"], "view": "outputs", "components": {"releases": releases}}
    audit = {**outputs, "details": details}
    return {"audit": audit}


def test_a_row_reads_both_reports_view_by_view(monkeypatch):
    ref_floor = {"mu": None, "epsilon": 0.2, "mu_violation": None, "epsilon_violation": 2.2}
    reference = _report(_view("consistent", ref_floor, eps=2.0), _view("consistent", ref_floor, eps=2.0))
    measured = _report(_view("inconclusive", alg={"detect_leak": 1.5, "violate_leak": math.inf}, eps=2.0),
                       _view("consistent", alg={"detect_leak": 0.3, "violate_leak": 1.4}, eps=2.0))
    calls = []

    def fake(argv):
        calls.append(argv)
        floor = "algorithm" in argv
        return (measured if floor else reference), 2.0 if floor else 1.0

    monkeypatch.setattr(bdf, "_run", fake)
    row = bdf.algorithm_row("lazy-ucb")
    # measured first: a traced floor lists none of the reference run's own code
    assert calls == [["run", "lazy-ucb", "--audit-floor", "algorithm", "--json"],
                     ["run", "lazy-ucb", "--audit-floor", "reference", "--json"]]
    out, rel = row["views"]
    assert (out["view"], out["reference_detect"], out["reference_violate"]) == ("outputs", 0.1, 1.1)
    assert (out["measured_detect"], out["verdict_reference"], out["verdict_measured"]) == (
        1.5, "consistent", "inconclusive")
    assert rel["measured_violate"] == 1.4 and row["cpu_measured_s"] == 2.0
    text = bdf.summary([row])
    assert "the verdict changes in 1 view(s) (lazy-ucb outputs)" in text
    assert "would not see the certificate's leak half of the time: lazy-ucb outputs" in text
    assert "calls 0 of them inconclusive" in text
    assert "costs 2-2 times" in text
    table = bdf.table([row])
    assert "| lazy-ucb | outputs | epsilon 2 | 0.1 / 1.1 | 1.5 / none up to the search's end |" in table


def test_a_view_without_a_measured_floor_says_so():
    row = {"algorithm": "ts", "cpu_reference_s": 20.0, "cpu_measured_s": 140.0, "views": [
        {"view": "outputs", "quantity": "mu", "certified": 0.15, "reference_detect": 0.28,
         "reference_violate": 1.28, "measured_detect": None, "measured_violate": None, "measured": False,
         "verdict_reference": "consistent", "verdict_measured": "consistent"}]}
    assert "- (reference floor kept)" in bdf.table([row])
    assert "0 views with a measured floor" in bdf.summary([row])


@pytest.mark.parametrize("floor,cert,expect", [(None, 1.0, (None, None)),
                                               ({"epsilon": 0.5}, None, (None, None))])
def test_no_floor_or_certificate_gives_no_factor(floor, cert, expect):
    assert bdf._as_leak(floor, cert, "epsilon") == expect


def test_a_refused_measured_floor_is_reported_as_such(monkeypatch):
    ref_floor = {"mu": None, "epsilon": 0.2, "mu_violation": None, "epsilon_violation": 2.2}
    reference = _report(_view("consistent", ref_floor), _view("consistent", ref_floor))
    monkeypatch.setattr(bdf, "_run", lambda argv: ({"refused": "too many rounds"}, 0.5)
                        if "algorithm" in argv else (reference, 1.0))  # fmt: skip
    row = bdf.algorithm_row("dp-se")
    assert row["refused"] == "too many rounds" and row["verdict_measured"] is None
    assert "refused up front: too many rounds" in bdf.table([row])
    assert "refused up front as too large: dp-se" in bdf.summary([row])


def test_reference_only_reruns_the_default_run_and_keeps_the_measured_columns(monkeypatch, tmp_path):
    """``--reference-only``: the default runs again (their floors, verdicts, CPU), the measured
    columns of the stored rows unchanged, the rows not named kept as they were."""
    ref_floor = {"mu": None, "epsilon": 0.4, "mu_violation": None, "epsilon_violation": 2.4}
    reference = _report(_view("inconclusive", ref_floor, eps=2.0), _view("consistent", ref_floor, eps=2.0))
    calls = []
    monkeypatch.setattr(bdf, "_run", lambda argv: (calls.append(argv), (reference, 3.0))[1])
    monkeypatch.setattr(bdf, "fresh_rows",
                        lambda jobs, workers, on_row=None: [bdf.algorithm_row(*j) for j in jobs])
    old = {"algorithm": "lazy-ucb", "verdict_reference": "consistent", "verdict_measured": "consistent",
           "cpu_reference_s": 1.0, "cpu_measured_s": 9.0, "refused": None, "views": [
               {"view": name, "quantity": "epsilon", "certified": 2.0, "reference_detect": 0.1,
                "reference_violate": 1.1, "measured_detect": 1.5, "measured_violate": None, "measured": True,
                "verdict_reference": "consistent", "verdict_measured": "inconclusive"}
               for name in ("outputs", "releases")]}
    other = {**old, "algorithm": "ts"}
    path = tmp_path / "floors.json"
    path.write_text(json.dumps({"command": bdf.COMMAND, "rows": [old, other]}))
    assert bdf.main(["--algorithms", "lazy-ucb", "--reference-only", "--json", str(path)]) == 0
    assert calls == [["run", "lazy-ucb", "--audit-floor", "reference", "--json"]]
    rows = json.loads(path.read_text())["rows"]
    assert rows[1] == other
    new = rows[0]
    assert new["cpu_reference_s"] == 3.0 and new["cpu_measured_s"] == 9.0
    out = new["views"][0]
    assert (out["reference_detect"], out["verdict_reference"]) == (0.2, "inconclusive")
    assert out["measured_detect"] == 1.5
    assert "calls 1 of them inconclusive" in bdf.summary(rows)
    rows[0]["views"][1]["no_power_reference"] = True  # a view without power whose run passed on another
    assert "calls 2 of them inconclusive" in bdf.summary(rows)
    rows[0]["views"][1]["measured_detect"] = 0.5  # ... though its measured floor says it sees the leak
    assert "reads no power in 1 view(s) whose measured floor sees the declared leak" in bdf.summary(rows)
    with pytest.raises(SystemExit):
        bdf.main(["--algorithms", "dp-se", "--reference-only", "--json", str(path)])


def _row(key: str) -> dict:
    return {"algorithm": key, "verdict_reference": "consistent", "verdict_measured": "consistent",
            "cpu_reference_s": 1.0, "cpu_measured_s": 9.0, "refused": None, "views": [],
            "kept": {f"{key}-floor": {"run": f"dpaudit run {key}"}}}


def test_an_interrupted_measurement_keeps_the_algorithms_it_finished(monkeypatch, tmp_path):
    """The --json file and the shipped floors are written after every finished algorithm: a run
    stopped while the second algorithm is measured keeps the first (and the rows not re-run)."""
    shipped = []
    monkeypatch.setattr(bdf, "ship", lambda rows: shipped.append([r["algorithm"] for r in rows]) or 0)

    def fresh_rows(jobs, workers, on_row=None):
        done = [_row(jobs[0][0])]
        on_row(done)
        raise KeyboardInterrupt  # the second algorithm never finishes

    monkeypatch.setattr(bdf, "fresh_rows", fresh_rows)
    path = tmp_path / "floors.json"
    path.write_text(json.dumps({"command": bdf.COMMAND, "rows": [{**_row("ts"), "kept": None}]}))
    with pytest.raises(KeyboardInterrupt):
        bdf.main(["--algorithms", "lazy-ucb", "dp-se", "--keep", "--json", str(path)])
    rows = json.loads(path.read_text())["rows"]
    assert [r["algorithm"] for r in rows] == ["lazy-ucb", "ts"] and "kept" not in rows[0]
    assert shipped == [["lazy-ucb"]]


def test_stale_measures_and_keeps_exactly_the_runs_whose_floors_the_code_no_longer_matches(monkeypatch):
    from bandits.auditing import kept_floors

    seen = []
    monkeypatch.setattr(bdf, "ship", lambda rows: 0)
    monkeypatch.setattr(bdf, "fresh_rows", lambda jobs, workers, on_row=None: seen.extend(jobs) or [])
    monkeypatch.setattr(kept_floors, "stale_runs", lambda: ["dpaudit run cucb-dp", "dpaudit run ts"])
    assert bdf.main(["--stale"]) == 0
    assert seen == [("cucb-dp", None), ("ts", None)]
    monkeypatch.setattr(kept_floors, "stale_runs", lambda: [])
    seen.clear()
    assert bdf.main(["--stale"]) == 0 and seen == []
    with pytest.raises(SystemExit):
        bdf.main(["--stale", "--algorithms", "ts"])


def test_a_run_whose_floors_were_not_all_kept_keeps_its_shipped_ones(monkeypatch, tmp_path, capsys):
    """ship() replaces a run's shipped floors only when every floor its measured run measured was
    kept: one that kept_floors.keep refused (a module's source modified while it ran, or just
    before its trace began) leaves the run's shipped floors as they were, and is named."""
    from bandits.auditing import kept_floors

    store = tmp_path / "kept.json"
    old = {"a-old": {"run": "dpaudit run a"}, "b-old": {"run": "dpaudit run b"}}
    store.write_text(json.dumps({"command": "x", "floors": old}))
    monkeypatch.setattr(kept_floors, "SHIPPED", store)
    rows = [{**_row("a"), "unkept": 0}, {**_row("b"), "kept": {}, "unkept": 2}]
    assert bdf.ship(rows) == 2
    assert set(json.loads(store.read_text())["floors"]) == {"a-floor", "b-old"}
    assert "b: 2 floor(s) measured but not kept" in capsys.readouterr().err


def test_the_rows_name_each_primary_as_the_run_does():
    """The outputs view by its name, a mechanism model as such, a white-box release by its target
    (not as "outputs")."""
    view = _view("consistent")
    assert list(bdf._views({**view, "details": {"view": "outputs"}})) == ["outputs"]
    assert list(bdf._views({**view, "details": {"model": "re-built"}})) == ["mechanism model"]
    white = {**view, "target": "m: initialisation release (white box)",
             "details": {"components": {"r": view}}}
    assert list(bdf._views(white)) == ["m: initialisation release (white box)", "r"]


def test_the_mechanism_floor_table_names_each_primary_as_the_floors_table_does():
    """bench_mechanism_floor's rows select a primary as "outputs" or "mechanism"; its table and
    summary name it by the floors table's name for that algorithm's primary (never "outputs")."""
    from benchmarks.bench_mechanism_floor import sentence, table

    white = "a(eps=1): user's report (white box)"
    floors = [{"algorithm": "a", "views": [{"view": white}, {"view": "releases"}]},
              {"algorithm": "b", "views": [{"view": "mechanism model"}]}, {"algorithm": "c", "views": []}]
    names = bdf.primary_names(floors)
    assert names == {"a": white, "b": "mechanism model"}
    cell = {"leak": 1.0, "hits": 1, "seeds": 2}
    parts = (("a", "outputs"), ("b", "mechanism"), ("b", "releases"))
    rows = [{"algorithm": a, "component": p, "quantity": "epsilon", "certified": 1.0,
             "floor": {"family": "audited mechanism's noise"}, "detected": cell, "violated": cell,
             "violated_above": cell, "audit_seconds": 0.1} for a, p in parts]  # fmt: skip
    lines = table(rows, names).splitlines()[2:]
    assert [line.split(" | ")[1] for line in lines] == [white, "mechanism model", "releases"]
    assert f"a ({white}), b (mechanism model), b (releases)" in sentence(rows, names)


def test_the_measurement_waits_for_sources_written_just_now(monkeypatch, tmp_path, capsys):
    """A floor measured on code written within a second before its trace began is thrown away
    after the measurement (kept_floors.edited_since_loaded): a worktree checked out just before
    the benchmark lost a 10-minute measurement that way. The benchmark waits first instead."""
    root = Path(bdf.__file__).resolve().parents[1]
    sources = [f for pkg in ("dpaudit", "mechanisms", "bandits") for f in (root / pkg).rglob("*.py")]
    newest = max(f.stat().st_mtime for f in sources)
    slept = []
    assert bdf.settle_sources(clock=lambda: newest + 0.5, sleep=slept.append) == pytest.approx(1.5)
    assert slept == [pytest.approx(1.5)] and "waiting 1.5 s" in capsys.readouterr().err
    slept.clear()
    assert bdf.settle_sources(clock=lambda: newest + 10.0, sleep=slept.append) == 0.0 and slept == []


def _shipped_store(tmp_path, monkeypatch, floors):
    from bandits.auditing import kept_floors as kf

    path = tmp_path / "kept.json"
    path.write_text(json.dumps({"command": "x", "floors": floors}))
    monkeypatch.setattr(kf, "SHIPPED", path)
    kf._shipped.cache_clear()
    return path


def test_the_other_engine_floors_attach_only_when_equal_and_complete(tmp_path, monkeypatch):
    """bench_other_engine_floors: each floor measured on the NumPy paths joins its shipped floor;
    a run with a different floor (an engine's defect), a missing one or a refusal gets none, and is
    named with why."""
    from bandits.auditing import kept_floors as kf
    from benchmarks import bench_other_engine_floors as boe

    floor = {"mu": 0.5}
    shipped = {k: {"run": "dpaudit run a", "numba": True, "floor": floor, "executed": {}, "modules": ["m"]}
               for k in ("k1", "k2")}  # fmt: skip
    path = _shipped_store(tmp_path, monkeypatch, shipped)
    other = {"numba": False, "floor": floor, "executed": {"m": ["f"]}, "modules": ["m"], "cpu_seconds": 3.0}
    row = {"algorithm": "a", "entries": {"k1": other, "k2": other}, "refused": None}
    bad = [{**row, "entries": {"k1": other, "k2": {**other, "floor": {"mu": 0.6}}}},
           {**row, "entries": {"k1": other}}, {**row, "refused": "too big"}]  # fmt: skip
    for r, why in zip(bad, ("different floors", "measure the run again first", "refused")):
        failed = boe.attach([r])
        assert list(failed) == ["a"] and why in failed["a"]
        assert not any("other" in e for e in json.loads(path.read_text())["floors"].values())
    assert boe.attach([row]) == {}
    stored = json.loads(path.read_text())["floors"]
    assert stored["k1"]["other"] == {k: other[k] for k in kf.OTHER_KEYS if k in other}
    kf._shipped.cache_clear()


def test_the_other_engine_measurement_switches_the_engine_and_refuses_stale_runs(tmp_path, monkeypatch):
    from bandits.auditing import kept_floors as kf
    from benchmarks import bench_other_engine_floors as boe

    _shipped_store(tmp_path, monkeypatch, {
        "k1": {"run": "dpaudit run a", "numba": True, "cpu_seconds": 1.0},
        "k2": {"run": "dpaudit run b", "numba": True, "cpu_seconds": 2.0}})  # fmt: skip
    seen = []
    monkeypatch.setattr(boe, "fresh_rows", lambda jobs, workers, on_row, measure: seen.extend(jobs) or [])
    monkeypatch.setattr(boe, "attach", lambda rows: {})
    monkeypatch.setattr(kf, "stale_runs", lambda: [])
    monkeypatch.setattr(kf, "holds_on_the_other_engine", lambda e: False)
    assert boe.main([]) == 0 and seen == [("b", False), ("a", False)]  # longest first, numba off
    monkeypatch.setattr(boe, "attach", lambda rows: {"a": "the engines measured different floors"})
    assert boe.main(["--algorithms", "a"]) == 1  # a run with a different floor fails the command
    monkeypatch.setattr(kf, "stale_runs", lambda: ["dpaudit run a"])
    with pytest.raises(SystemExit):
        boe.main(["--algorithms", "a"])
    with pytest.raises(SystemExit):
        boe.main(["--algorithms", "nowhere"])
    kf._shipped.cache_clear()
