"""bandits/auditing/code_trace.py and its use by kept_floors: a traced measurement lists the
functions that ran, and its fingerprint keeps through edits to functions that did not run — and
through nothing that could change a measurement (a function that ran, module-level code, a
signature or default value, a decorated function, a module loaded before the trace)."""

from __future__ import annotations

import ast
import importlib
import sys
import textwrap
import threading

import pytest

from bandits.auditing import code_trace as ct
from bandits.auditing import kept_floors as kf
from dpaudit.audit.leak_floor import LeakFloor, LeakPoint

SOURCE = textwrap.dedent(
    '''
    """A module."""
    import functools

    SCALE = 2


    def used(x, k=1):
        """Runs."""

        def inner(y):
            return y + k

        return inner(SCALE * x)


    def unused(x, k=1):
        return 3 * x + k


    @functools.lru_cache(maxsize=None)
    def decorated_unused(x):
        return 4 * x


    class Box:
        def run(self):
            return used(1)

        def idle(self):
            return 5


    if SCALE > 1:
        def conditional():
            return 6


    def on_thread():
        return 7
    '''
)


@pytest.fixture(autouse=True)
def _threads_of_other_tests_aside(monkeypatch):
    """Threads earlier tests of this worker left running (dask, torch) are not the traced code's:
    each test here counts only the threads it starts itself."""
    own = set(threading.enumerate())
    monkeypatch.setattr(ct.threading, "active_count", lambda: 1 + len(set(threading.enumerate()) - own))


@pytest.fixture
def module(tmp_path, monkeypatch):
    """A fresh module ``tracedmod`` from SOURCE, importable from ``tmp_path``."""
    path = tmp_path / "tracedmod.py"
    path.write_text(SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("tracedmod", None)
    yield path
    sys.modules.pop("tracedmod", None)


def _trace_a_run(path):
    with ct.tracing([]):
        mod = importlib.import_module("tracedmod")
        mod.Box().run()
        mod.conditional()
        worker = threading.Thread(target=mod.on_thread)
        worker.start()
        worker.join()
        return ct.executed_functions({"tracedmod": path})


def test_the_trace_names_exactly_the_functions_that_ran_on_any_thread(module):
    ran = _trace_a_run(module)
    assert ran == {"tracedmod": ["Box.run", "conditional", "on_thread", "used"]}
    assert ct.tracing_since() is None  # the trace ended with the block
    with pytest.raises(RuntimeError, match="no trace"):
        ct.executed_functions({"tracedmod": module})


def test_a_trace_whose_profiler_was_replaced_refuses_to_answer(module):
    with ct.tracing([]):
        ct._ACTIVE[0].profile.disable()  # as another tool taking over would, silently ending the record
        with pytest.raises(RuntimeError, match="no longer installed"):
            ct.executed_functions({"tracedmod": module})
    assert ct.tracing_since() is None


def test_traces_do_not_nest_nor_begin_blind_to_a_running_thread():
    with ct.tracing([]):
        with pytest.raises(RuntimeError, match="already active"):
            with ct.tracing([]):
                pass
    assert ct.tracing_since() is None
    stop = threading.Event()
    running = threading.Thread(target=stop.wait)
    running.start()
    try:
        with pytest.raises(RuntimeError, match="other thread"):
            with ct.tracing([]):
                pass
    finally:
        stop.set()
        running.join()
    assert ct.tracing_since() is None


@pytest.mark.parametrize(
    ("edit", "keeps"),
    [
        (("return 3 * x + k", "return x + x + x + k"), True),  # a function that did not run
        (("return 5", "return 50"), True),  # a method that did not run
        (('"""Runs."""', '"""Runs, edited."""'), True),  # a docstring
        (("return y + k", "return y - k"), False),  # a function nested in one that ran
        (("inner(SCALE * x)", "inner(x * SCALE)"), False),  # a function that ran
        (("SCALE = 2", "SCALE = 3"), False),  # module-level code
        (("def unused(x, k=1)", "def unused(x, k=2)"), False),  # a default value of one that did not run
        (("return 4 * x", "return 40 * x"), False),  # a decorated function (a compiled kernel runs unseen)
        (("return 6", "return 60"), False),  # a function that ran, defined under an if
        (("return 7", "return 70"), False),  # a function that ran on another thread
    ],
)
def test_the_fingerprint_of_what_ran_keeps_only_through_edits_that_cannot_change_it(module, edit, keeps):
    ran = frozenset(_trace_a_run(module)["tracedmod"])
    old, new = edit
    edited = SOURCE.replace(old, new)
    assert edited != SOURCE
    same = ct.tree_fingerprint_text(SOURCE, ran) == ct.tree_fingerprint_text(edited, ran)
    assert same is keeps
    assert ct.tree_fingerprint_text(SOURCE, frozenset()) != ct.tree_fingerprint_text(SOURCE, ran)


FLOOR = LeakFloor(0.4, 1.6, (LeakPoint(1.0, 0.8, 0.2),), 64, "stub", "epsilon", 1.0)


def test_a_traced_floor_keeps_through_an_edit_to_code_that_did_not_run(module, tmp_path, monkeypatch):
    monkeypatch.setenv("DPAUDIT_KEPT_FLOORS", str(tmp_path / "kept"))
    monkeypatch.setattr(kf, "_source_path", lambda m: module)
    monkeypatch.setattr(kf, "edited_since_loaded", lambda mods: [])

    def measured(loaded: list[str], before: list[str] | None) -> dict:
        module.write_text(SOURCE)
        sys.modules.pop("tracedmod", None)
        kf._fingerprints.cache_clear()
        monkeypatch.setattr(kf, "loaded_modules", lambda: loaded)
        if before is None:  # no trace: every module whole
            importlib.import_module("tracedmod").Box().run()
            entry = kf.keep("k", FLOOR, 1.0, "outputs")
        else:
            with ct.tracing(before):
                importlib.import_module("tracedmod").Box().run()
                entry = kf.keep("k", FLOOR, 1.0, "outputs")
        assert entry is not None and kf._describes_this_code(entry)
        return entry

    def still(entry: dict, old: str, new: str) -> bool:
        assert old in SOURCE
        module.write_text(SOURCE.replace(old, new))
        kf._fingerprints.cache_clear()
        return kf._describes_this_code(entry)

    entry = measured(["bandits.tracedmod"], [])
    assert entry["executed"] == {"bandits.tracedmod": ["Box.run", "used"]}
    assert still(entry, "return 3 * x + k", "return x + x + x + k")  # did not run: kept
    assert still(entry, "return 5", "return 50")
    assert not still(entry, "inner(SCALE * x)", "inner(x * SCALE)")  # ran: dropped
    assert not still(entry, "SCALE = 2", "SCALE = 3")  # module-level code: dropped
    # a module loaded before the trace began ("bandits.before", the same file here) is whole
    entry = measured(["bandits.before", "bandits.tracedmod"], ["bandits.before"])
    assert entry["executed"] == {"bandits.tracedmod": ["Box.run", "used"]}
    assert not still(entry, "return 3 * x + k", "return x + x + x + k")
    # without a trace every module is whole, as before the trace existed
    entry = measured(["bandits.tracedmod"], None)
    assert "executed" not in entry
    assert not still(entry, "return 3 * x + k", "return x + x + x + k")
    assert still(entry, '"""Runs."""', '"""Runs, edited."""')  # docstrings never count


def test_touching_names_the_runs_an_edit_would_cost(tmp_path, monkeypatch, capsys):
    src = tmp_path / "m.py"
    src.write_text("def f():\n    pass\n\n\ndef g():\n    pass\n\n\ndef h():\n    pass\n\n\n"
                   "@decorated\ndef kernel():\n    pass\n")
    monkeypatch.setattr(kf, "_source_path", lambda m: src)
    entries = {
        "a": {"run": "dpaudit run a", "cpu_seconds": 10.0, "modules": ["m", "n"], "executed": {"m": ["f"]}},
        "b": {"run": "dpaudit run b", "cpu_seconds": 5.0, "modules": ["m"]},  # untraced: every edit counts
        "c": {"run": "dpaudit run a", "cpu_seconds": 1.5, "modules": ["m"], "executed": {"m": ["g"]}},
    }
    monkeypatch.setattr(kf, "_shipped", lambda: entries)
    assert kf.touching("m") == {"dpaudit run a": 11.5, "dpaudit run b": 5.0}
    assert kf.touching("m", "f") == {"dpaudit run a": 10.0, "dpaudit run b": 5.0}
    assert kf.touching("m", "h") == {"dpaudit run b": 5.0}  # ran in no traced measurement
    assert kf.touching("n", "f") == {"dpaudit run a": 10.0}  # loaded before that trace: whole
    assert kf.touching("elsewhere") == {}
    assert kf.touching("m", "kernel") == kf.touching("m")  # decorated: always fingerprinted, as module code
    with pytest.raises(ValueError, match="'Box.f' is not defined in m"):  # misspelt: not the whole module
        kf.touching("m", "Box.f")
    assert kf._main(["--touching", "m:nowhere"]) == 2
    assert "--touching: function 'nowhere' is not defined in m" in capsys.readouterr().err
    assert kf._main(["--touching", "m:f"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == "2 run(s), 15 s of CPU to measure again"
    assert out[-1].startswith("where numba's availability differs")
    assert out[-1].endswith(": 2 run(s), 16 s of CPU")
    assert kf._main(["--bogus"]) == 2
    # measured on the other engine too: there as that measurement ran (its own CPU)
    entries["c"]["other"] = {"numba": False, "modules": ["m"], "executed": {"m": ["h"]}, "cpu_seconds": 2.0}
    assert kf.touching("m", "f", other_engine=True) == {"dpaudit run a": 10.0, "dpaudit run b": 5.0}
    assert kf.touching("m", "h", other_engine=True) == {"dpaudit run a": 12.0, "dpaudit run b": 5.0}


def test_a_floor_measured_on_the_other_engine_needs_its_modules_whole(module, tmp_path, monkeypatch):
    """Measured with the compiled kernels, a floor is served where only the NumPy paths run (and
    back) only while every module is as measured: the other engine's code did not run under it."""
    monkeypatch.setenv("DPAUDIT_KEPT_FLOORS", str(tmp_path / "kept"))
    monkeypatch.setattr(kf, "_source_path", lambda m: module)
    monkeypatch.setattr(kf, "edited_since_loaded", lambda mods: [])
    monkeypatch.setattr(kf, "loaded_modules", lambda: ["bandits.tracedmod"])
    monkeypatch.setattr(kf, "compiled_installed", lambda: True)
    kf._fingerprints.cache_clear()
    with ct.tracing():
        importlib.import_module("tracedmod").Box().run()
        entry = kf.keep("k", FLOOR, 1.0, "outputs")
    assert entry is not None and entry["numba"] is True and kf._describes_this_code(entry)
    module.write_text(SOURCE.replace("return 3 * x + k", "return x + x + x + k"))  # did not run
    kf._fingerprints.cache_clear()
    assert kf._describes_this_code(entry)
    monkeypatch.setattr(kf, "compiled_installed", lambda: False)
    assert not kf._describes_this_code(entry) and not kf.holds_on_the_other_engine(entry)
    module.write_text(SOURCE.replace('"""Runs."""', '"""Runs, edited."""'))  # whole but for a docstring
    kf._fingerprints.cache_clear()
    assert kf._describes_this_code(entry) and kf.holds_on_the_other_engine(entry)


def _traced_entry(monkeypatch, numba: bool, call: str) -> dict:
    """The entry kept by a traced measurement that ran ``Box().<call>()`` with numba on or off."""
    monkeypatch.setattr(kf, "compiled_installed", lambda: numba)
    sys.modules.pop("tracedmod", None)
    kf._fingerprints.cache_clear()
    with ct.tracing():
        getattr(importlib.import_module("tracedmod").Box(), call)()
        entry = kf.keep("k", FLOOR, 1.0, "outputs")
    assert entry is not None and entry["numba"] is numba
    return entry


def test_a_floor_measured_on_both_engines_holds_on_each_while_the_code_it_ran_there_is_unchanged(
    module, tmp_path, monkeypatch
):
    """With the same floor measured under the trace on the NumPy paths too (``with_other_engine``),
    an install without numba keeps it through an edit to code neither measurement ran, and drops it
    on an edit to code that the NumPy measurement ran, although the kernels' measurement did not."""
    monkeypatch.setenv("DPAUDIT_KEPT_FLOORS", str(tmp_path / "kept"))
    monkeypatch.setattr(kf, "_source_path", lambda m: module)
    monkeypatch.setattr(kf, "edited_since_loaded", lambda mods: [])
    monkeypatch.setattr(kf, "loaded_modules", lambda: ["bandits.tracedmod"])
    kernels = _traced_entry(monkeypatch, True, "idle")  # "used" did not run with the kernels
    numpy_paths = _traced_entry(monkeypatch, False, "run")  # the NumPy paths ran it
    both = kf.with_other_engine(kernels, numpy_paths)
    assert both["other"]["numba"] is False and "floor" not in both["other"]
    assert kf.holds_on_the_other_engine(both) and kf._describes_this_code(both)  # here: no numba
    module.write_text(SOURCE.replace("return 3 * x + k", "return x + x + x + k"))  # ran in neither
    kf._fingerprints.cache_clear()
    assert kf._describes_this_code(both)
    assert not kf.holds_on_the_other_engine(kernels)  # without the second measurement: modules whole
    module.write_text(SOURCE.replace("return inner(SCALE * x)", "return inner(x * SCALE)"))  # NumPy ran it
    kf._fingerprints.cache_clear()
    assert not kf._describes_this_code(both) and not kf.holds_on_the_other_engine(both)
    monkeypatch.setattr(kf, "compiled_installed", lambda: True)
    assert kf._describes_this_code(both)  # the kernels' measurement did not run it
    import scipy

    assert kernels["scipy"] == numpy_paths["scipy"] == scipy.__version__
    differs = {**numpy_paths, "floor": {**numpy_paths["floor"], "mu": 9.0}}
    with pytest.raises(ValueError, match="different floors .a defect of one engine"):
        kf.with_other_engine(kernels, differs)
    for elsewhere in ({**kernels, "scipy": "0.0"}, {k: v for k, v in kernels.items() if k != "scipy"}):
        # measured under another SciPy (or one not recorded): the difference may be the libraries'
        with pytest.raises(ValueError, match="different floors .measured under other libraries"):
            kf.with_other_engine(elsewhere, differs)
    with pytest.raises(ValueError, match="other engine"):
        kf.with_other_engine(kernels, kernels)


def test_the_floors_table_says_which_runs_floors_hold_without_numba(monkeypatch):
    from benchmarks.bench_default_floors import other_engine_sentence

    floors = {"a": {"run": "dpaudit run x", "numba": True}, "b": {"run": "dpaudit run x", "numba": True},
              "c": {"run": "dpaudit run y", "numba": True}}  # fmt: skip
    monkeypatch.setattr(kf, "holds_on_the_other_engine", lambda e: e is not floors["b"])
    text = other_engine_sentence(floors)
    assert text.startswith("All 3 shipped floors were measured with numba;")
    # one floor of x that does not hold is enough
    assert text.endswith("now the floors of 1 of the 2 runs (not x: code they loaded was edited after they "
                         "were measured)")  # fmt: skip
    monkeypatch.setattr(kf, "holds_on_the_other_engine", lambda e: True)
    assert other_engine_sentence(floors).endswith("now the floors of 2 of the 2 runs")
    floors["c"]["other"] = {"numba": False}
    assert other_engine_sentence(floors).startswith(
        "All 3 shipped floors were measured with numba, 1 of them also on the other engine (identical "
        "floors);")


def test_a_module_whose_import_the_trace_did_not_see_is_refused(module):
    importlib.import_module("tracedmod")  # before the trace: its import-time calls unseen
    with ct.tracing(), pytest.raises(RuntimeError, match="did not see tracedmod imported"):
        ct.executed_functions({"tracedmod": module})


def test_a_source_edited_just_before_the_trace_began_is_not_kept(module, monkeypatch):
    import time

    monkeypatch.setattr(kf, "_source_path", lambda m: module)
    monkeypatch.setattr(kf, "_LOADED_AT", time.time() + 60)  # kept_floors itself loaded later
    assert kf.edited_since_loaded(["bandits.tracedmod"]) == []  # untraced: that is all a run knows
    with ct.tracing():  # the file was written just now, within a second of the trace's start
        assert kf.edited_since_loaded(["bandits.tracedmod"]) == ["bandits.tracedmod"]


def test_the_methods_of_a_class_decorated_otherwise_than_as_a_dataclass_stay_whole():
    src = textwrap.dedent(
        """
        @dataclass(frozen=True)
        class Plain:
            def m(self):
                return 1

        @jitclass(spec)
        class Compiled:
            def m(self):
                return 2
        """
    )
    assert [p for p, _ in ct.function_paths(ast.parse(src))] == ["Plain.m"]


def test_keep_stores_before_it_asks_what_ran(tmp_path, monkeypatch):
    order: list[str] = []

    class Spy(LeakFloor):
        def to_dict(self) -> dict:
            order.append("stored")
            return super().to_dict()

    monkeypatch.setenv("DPAUDIT_KEPT_FLOORS", str(tmp_path))
    monkeypatch.setattr(kf, "_executed", lambda mods: order.append("asked") or None)
    spy = Spy(0.4, 1.6, (LeakPoint(1.0, 0.8, 0.2),), 64, "stub", "epsilon", 1.0)
    assert kf.keep("k", spy, 1.0, "outputs") is not None
    assert order == ["stored", "asked"]
