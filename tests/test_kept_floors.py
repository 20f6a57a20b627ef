"""bandits/auditing/kept_floors.py: a floor measured on an algorithm is kept for its exact
configuration, floor seed and code, and a default audit at any audit seed shows it at no cost —
never for another configuration, another floor seed or changed code; the shipped floors describe
the code as it is."""

from __future__ import annotations

import json

import pytest

from bandits.auditing import kept_floors as kf
from bandits.auditing.contract import AuditSettings
from dpaudit.audit.leak_floor import LeakFloor, LeakPoint

FLOOR = LeakFloor(0.4, 1.6, (LeakPoint(1.0, 0.8, 0.2), LeakPoint(2.0, 1.0, 0.7)), 64, "stub", "epsilon", 1.0)

# Every default run whose measured floor is not kept with the package, and why
# (docs/audit-bounds.md, "Every default run, both floors"): none since DP-SE's was measured
# (its floor was refused up front under the simulation limit, 10^10 rounds, before the measured
# floor got its own, 10^11).
NOT_SHIPPED: dict[str, str] = {}


def _measure(calls):
    def measure():
        calls.append(1)
        return FLOOR

    return measure


def test_the_modes_measure_keep_and_reuse_only_at_the_same_configuration_and_floor_seed():
    calls: list[int] = []
    config = ["lazy-ucb", 40, "bernoulli:0.5,0.5"]
    s = AuditSettings(trials=500)
    assert kf.algorithm_floor("outputs", s, config, _measure(calls)) == (None, None)  # nothing kept yet
    floor, kept = kf.algorithm_floor("outputs", AuditSettings(trials=500, floor="algorithm"), config,
                                     _measure(calls))  # fmt: skip
    assert floor == FLOOR and kept is None and calls == [1]
    floor, kept = kf.algorithm_floor("outputs", s, config, _measure(calls))
    assert floor == FLOOR and kept is not None and kept["where"] == "disk" and calls == [1]
    # the audit's own seed does not enter the floor (its simulations are seeded from floor_seed)
    other_seed = AuditSettings(trials=500, seed=7)
    assert kf.algorithm_floor("outputs", other_seed, config, _measure(calls))[0] == FLOOR
    for view, settings, conf in [
        ("releases", s, config),  # another view
        ("outputs", AuditSettings(trials=500, floor_seed=1), config),  # another floor seed
        ("outputs", AuditSettings(trials=501), config),  # other trials
        ("outputs", AuditSettings(trials=500, confidence=0.9), config),
        ("outputs", s, ["lazy-ucb", 41, "bernoulli:0.5,0.5"]),  # another horizon
        ("outputs", AuditSettings(trials=500, floor="reference"), config),  # never read
    ]:
        assert kf.algorithm_floor(view, settings, conf, _measure(calls)) == (None, None)
    assert calls == [1]


def test_a_measurement_that_cannot_be_reproduced_or_ran_elsewhere_is_not_kept():
    from concurrent.futures import ThreadPoolExecutor

    calls: list[int] = []
    anywhere = ["policy", object()]  # an address in its repr
    algo = AuditSettings(trials=300, floor="algorithm")
    assert kf.algorithm_floor("outputs", algo, anywhere, _measure(calls))[0] == FLOOR
    assert kf.algorithm_floor("outputs", AuditSettings(trials=300), anywhere, _measure(calls)) == (None, None)
    with ThreadPoolExecutor(1) as ex:  # the modules loaded here need not be those that ran
        kf.algorithm_floor("outputs", AuditSettings(trials=300, floor="algorithm", executor=ex), ["x"],
                           _measure(calls))  # fmt: skip
    assert kf.algorithm_floor("outputs", AuditSettings(trials=300), ["x"], _measure(calls)) == (None, None)
    assert calls == [1, 1]


def test_an_entry_keeps_through_a_docstring_edit_and_is_dropped_by_any_other(tmp_path, monkeypatch):
    src = tmp_path / "mod.py"
    monkeypatch.setattr(kf, "_source_path", lambda module: src)
    body = 'def f(x):\n    """Twice x."""\n    return 2 * x  # doubled\n'
    src.write_text('"""A module."""\n' + body)
    kf._fingerprints.cache_clear()
    entry = {"modules": ["pkg.mod"], **kf.code_fingerprints(["pkg.mod"])}

    def valid(text: str | None) -> bool:
        if text is None:
            src.unlink()
        else:
            src.write_text(text)
        kf._fingerprints.cache_clear()
        return kf._describes_this_code(entry)

    assert valid('"""A module."""\n' + body)
    assert valid('"""Another docstring."""\n' + body.replace("Twice x.", "2x.").replace("# doubled", ""))
    assert not valid('"""A module."""\n' + body.replace("2 * x", "x + x"))
    assert not valid(None)  # the module is gone
    assert not kf._describes_this_code({"modules": [], "source": "", "syntax": ""})


def test_the_fingerprints_cover_the_loaded_modules_but_the_cli_and_the_store():
    import bandits.auditing.views  # noqa: F401
    import dpaudit.cli.main  # noqa: F401

    mods = kf.loaded_modules()
    assert "bandits.auditing.views" in mods and "dpaudit.audit.leak_floor" in mods
    assert not [m for m in mods if m.startswith("dpaudit.cli") or m == kf.__name__]
    assert all(kf._source_path(m).is_file() for m in mods)


def _shipped() -> dict:
    return json.loads(kf.SHIPPED.read_text(encoding="utf-8"))["floors"]


def test_the_shipped_floors_describe_this_code():
    """Fails when code a shipped floor depends on changed (beyond docstrings and comments): measure
    those runs again (the message gives the command)."""
    stale = kf.stale_runs()
    algorithms = " ".join(r.removeprefix("dpaudit run ") for r in stale)
    assert not stale, ("kept floors measured on other code; measure them again: python "
                       f"benchmarks/bench_default_floors.py --stale --json docs/img/default_floors.json "
                       f"--workers 2 (here: {algorithms}); before an edit, python -m bandits.auditing."
                       "kept_floors --touching MODULE[:FUNCTION] names what it costs")  # fmt: skip
    moved = sorted({e["run"] for e in _shipped().values()
                    if kf._fingerprints(tuple(e["modules"]), False) != e["source"]})  # fmt: skip
    assert not moved, (f"docstrings, comments or (traced floors) code their measurement did not run edited "
                       f"under {moved}: python -m bandits.auditing.kept_floors")  # fmt: skip


def test_restamping_keeps_what_still_describes_the_code_and_names_the_rest(tmp_path, monkeypatch):
    shipped = tmp_path / "kept.json"
    src = tmp_path / "mod.py"
    src.write_text('"""Doc."""\nX = 1\n')
    monkeypatch.setattr(kf, "_source_path", lambda module: src)
    monkeypatch.setattr(kf, "SHIPPED", shipped)
    kf._fingerprints.cache_clear()
    entry = {"modules": ["pkg.mod"], **kf.code_fingerprints(["pkg.mod"])}
    shipped.write_text(json.dumps({"floors": {"a": {**entry, "run": "dpaudit run a"}}}))
    src.write_text('"""Another doc."""\nX = 1  # one\n')
    kf._fingerprints.cache_clear()
    kf._shipped.cache_clear()
    assert kf.restamp() == (1, []) and kf.stale_runs() == []
    now = kf.code_fingerprints(["pkg.mod"])["source"]
    assert json.loads(shipped.read_text())["floors"]["a"]["source"] == now
    src.write_text("X = 2\n")
    kf._fingerprints.cache_clear()
    assert kf.restamp() == (0, ["dpaudit run a"])
    assert kf.stale_runs() == ["dpaudit run a"]  # the runs `bench_default_floors.py --stale` measures
    kf._fingerprints.cache_clear()
    kf._shipped.cache_clear()


def test_every_default_run_with_a_measured_floor_ships_it():
    rows = json.loads((kf._ROOT / "docs/img/default_floors.json").read_text(encoding="utf-8"))["rows"]
    measured = {r["algorithm"] for r in rows if any(v["measured"] for v in r["views"]) or r.get("refused")}
    runs = {e["run"].removeprefix("dpaudit run ") for e in _shipped().values()}
    assert runs == measured - set(NOT_SHIPPED)
    for e in _shipped().values():
        floor = LeakFloor.from_dict(e["floor"])
        assert e["cpu_seconds"] > 0 and floor.replicates >= 1 and floor.points


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 3])
def test_a_default_run_shows_its_shipped_floor(tmp_path, monkeypatch, seed):
    """``dpaudit run lazy-ucb`` at its defaults, at the default seed and another: both views'
    floors are the shipped measurements, with no floor simulated (the audit costs what it did with
    the reference floor); the audit's own bounds are those of its seed."""
    import contextlib
    import io

    from dpaudit.cli.main import main

    monkeypatch.setenv("DPAUDIT_CACHE_DIR", str(tmp_path))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["run", "lazy-ucb", "--json", "--seed", str(seed)]) == 0
    audit = json.loads(out.getvalue())["audit"]
    shipped = [e["floor"] for e in _shipped().values() if e["run"] == "dpaudit run lazy-ucb"]
    parts = [audit, *audit["details"]["components"].values()]
    seen = sorted(json.dumps(p["details"]["algorithm_floor"]) for p in parts)
    assert seen == sorted(map(json.dumps, shipped))
    assert all(p["details"]["algorithm_floor_kept"]["where"] == "shipped" for p in parts)
    assert "kept with the package" in audit["details"]["floor_note"]
    assert "at any audit seed (floor seed 0)" in audit["details"]["floor_note"]


def test_the_readme_counts_the_shipped_floors():
    floors = _shipped().values()
    hours = sum(e["cpu_seconds"] for e in floors) / 3600.0
    text = " ".join((kf._ROOT / "README.md").read_text(encoding="utf-8").split())
    algorithms = len({e["run"] for e in floors})
    assert f"({len(floors)} views of {algorithms} algorithms, measured by" in text
    assert f"--keep` in {hours:.1f} hours of CPU in all" in text


def test_a_floor_is_not_kept_when_the_code_changed_while_it_was_measured(tmp_path, monkeypatch):
    import os
    import time

    src = tmp_path / "mod.py"
    src.write_text("X = 1\n")
    monkeypatch.setattr(kf, "_source_path", lambda module: src)
    monkeypatch.setattr(kf, "loaded_modules", lambda: ["pkg.mod"])
    monkeypatch.setattr(kf, "_LOADED_AT", time.time())  # the run's code loaded now
    os.utime(src, (time.time() - 100, time.time() - 100))
    assert kf.edited_since_loaded(["pkg.mod"]) == []
    assert kf.keep("k", FLOOR, 1.0, "outputs") is not None
    os.utime(src, (time.time() + 100, time.time() + 100))  # written after the run's code was loaded
    assert kf.edited_since_loaded(["pkg.mod"]) == ["pkg.mod"]
    assert kf.keep("k2", FLOOR, 1.0, "outputs") is None
    kf._fingerprints.cache_clear()


def test_a_floor_measured_here_replaces_a_stale_shipped_one(monkeypatch):
    s = AuditSettings(trials=500)
    key = kf.floor_key("outputs", s, ["cfg"])
    stale = {"floor": FLOOR.to_dict(), "cpu_seconds": 1.0, "modules": ["bandits.policy"], "source": "x",
             "syntax": "y"}
    monkeypatch.setattr(kf, "_shipped", lambda: {key: stale})
    assert kf.kept(key) is None
    kf.algorithm_floor("outputs", AuditSettings(trials=500, floor="algorithm"), ["cfg"], lambda: FLOOR)
    assert kf.kept(key)["where"] == "disk"
