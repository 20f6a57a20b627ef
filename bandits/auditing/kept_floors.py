"""Floors measured on an algorithm, kept: shipped for every default ``dpaudit run ALG``, and on
disk after any ``--audit-floor algorithm`` run, so that a run at the same configuration shows the
measured floor at no cost.

A floor measured on the algorithm (:mod:`bandits.auditing.leak_floor`) costs many times the audit
(per run in ``docs/audit-bounds.md``), but it is a deterministic function
of what the audit was given — the view, the policy's configuration, the horizon, the environment,
the trials, the confidence, δ and the view's design — of the floor's own seed
(``AuditSettings.floor_seed``, 0 unless asked) and of the code that ran. The audit's seed does not
enter it: the floor describes the procedure at that configuration, not one run's draws, so its
simulations are seeded apart and one kept floor serves an audit at every seed. It is therefore
computed once and kept:

* **key** — a name-based UUID of the view, the floor seed and the ``repr`` of that configuration
  (a configuration whose ``repr`` shows an object's address has no key, and is never kept);
* **code** — each entry lists the modules of ``dpaudit``, ``mechanisms`` and ``bandits`` that
  were loaded when it was measured (the CLI's own aside), with two fingerprints of their code:
  name-based (SHA-1) UUIDs of their sources and of their syntax trees without docstrings. An
  entry is used only if one of them matches the code now: an edit to a comment or docstring keeps
  it, any other edit to any of those modules drops it (the run then shows the reference floor and
  says so; after docstring edits ``python -m bandits.auditing.kept_floors`` re-stamps the shipped
  floors so that a run finds them by the cheap check of the sources). A floor measured inside
  :func:`bandits.auditing.code_trace.tracing` (the shipped ones) also lists, per module loaded
  after the trace began, the functions that ran, and its syntax fingerprint leaves out the bodies
  of the others: an edit to a function that did not run keeps it too. It records whether numba's
  kernels could run; where that differs (the other engine's code, which did not run under the
  trace, runs there) it is used only while every module is as measured (a third fingerprint),
  unless the same floor was measured there too under the trace (``entry["other"]``,
  :func:`with_other_engine`, ``benchmarks/bench_other_engine_floors.py``): then as that
  measurement ran;
* **libraries** — the entry records the NumPy and SciPy it was measured with; another NumPy's
  random streams may differ, another SciPy's special functions may round differently in the last
  bit (a floor point moved by one bit between two installations with the same NumPy, whose SciPy
  was not recorded then), and there a kept floor is another draw of the same measured floor, not
  bit for bit the one ``--audit-floor algorithm`` would compute;
* **where** — ``kept_floors.json`` beside this module holds those of every default
  ``dpaudit run ALG`` (at every ``--seed``) that the measurement does not refuse
  (``python benchmarks/bench_default_floors.py --keep``); each ``--audit-floor algorithm`` run
  that measured in this process also writes its floor to ``$DPAUDIT_KEPT_FLOORS`` (default
  ``measured-floors`` under ``$DPAUDIT_CACHE_DIR``, itself ``~/.cache/dpaudit`` by default;
  ``off`` disables either).

:func:`algorithm_floor` is the one place the views ask: ``settings.floor == "algorithm"``
measures (and keeps), ``"auto"`` (the default) takes a kept floor when there is one, and
``"reference"`` never reads one.

Example:
    >>> from bandits.auditing.contract import AuditSettings
    >>> s = AuditSettings(trials=100)
    >>> floor_key("outputs", s, ["made-up", 1]) == floor_key("outputs", s, ["made-up", 1])
    True
    >>> floor_key("outputs", s, [object()]) is None   # an address in the repr: no key
    True
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bandits.auditing.code_trace import (
    PACKAGES,
    ROOT,
    Rewrite,
    as_measured,
    executed_functions,
    source_path,
    trace_started,
    tracing_since,
    tree_fingerprint_text,
    without_docstrings,
)
from bandits.auditing.contract import AuditSettings
from bandits.auditing.rewrites import module_rewrites
from bandits.engine.compiled import installed as compiled_installed
from dpaudit.audit.floor_store import cache_dir, write_json
from dpaudit.audit.leak_floor import LeakFloor

__all__ = ["algorithm_floor", "floor_key", "kept", "keep", "code_fingerprints", "loaded_modules", "restamp",
           "stale_runs", "edited_since_loaded", "holds_on_the_other_engine", "with_other_engine",
           "library_versions",
           "SHIPPED"]  # fmt: skip

SHIPPED = Path(__file__).resolve().with_name("kept_floors.json")

# how a run is asked for, this store and what reads the code:
_ASIDE = ("dpaudit.cli", __name__, "bandits.auditing.code_trace", "bandits.auditing.rewrites")
Executed = tuple[tuple[str, tuple[str, ...]], ...] | None  # (module, paths of the functions that ran)
_ROOT = ROOT
_source_path = source_path  # (a name of this module: tests replace it)
_LOADED_AT = time.time() + 1.0  # (coarse file times: a write within a second of the import is not seen)


def floor_key(view: str, settings: AuditSettings, config: Sequence[object]) -> str | None:
    """The name a floor of ``view`` at ``config`` (policy, horizon, environment, design: anything
    the floor depends on besides the settings) is kept under; ``None`` when a ``repr`` shows an
    address (not reproducible from one process to the next). The audit's ``seed`` is not part of
    it: the floor's simulations are seeded from ``floor_seed``."""
    s = settings
    text = json.dumps([view, s.trials, s.floor_seed, repr(s.confidence), repr(s.delta),
                       *(repr(c) for c in config)])  # fmt: skip
    if " at 0x" in text:
        return None
    return uuid.uuid5(uuid.NAMESPACE_URL, text).hex


def loaded_modules() -> list[str]:
    """The modules of :data:`PACKAGES` loaded in this process, the CLI and this module aside."""
    return sorted(m for m in list(sys.modules) if m.split(".")[0] in PACKAGES
                  and not any(m == a or m.startswith(a + ".") for a in _ASIDE))  # fmt: skip


@functools.lru_cache(maxsize=1024)
def _syntax_text(source: bytes, rewrites: tuple[Rewrite, ...] = ()) -> str:
    """The dump of a module's syntax tree without docstrings, read as measured (``rewrites``:
    :mod:`bandits.auditing.rewrites`), once per source (a check of every shipped floor parsed the
    same hundred modules once per floor: 30 s of the docs' check)."""
    import ast

    tree = as_measured(ast.parse(source), rewrites)
    return ast.dump(without_docstrings(tree), include_attributes=False)


@functools.lru_cache(maxsize=64)
def _fingerprints(modules: tuple[str, ...], syntax: bool, executed: Executed = None) -> str | None:
    """The fingerprint of ``modules``: of their sources, or of their syntax trees without
    docstrings; with ``executed`` (module, paths of the functions that ran), those modules' trees
    without the bodies of the functions that did not run (:mod:`bandits.auditing.code_trace`).
    The syntax trees read each recorded rewrite as the definition it replaced
    (:mod:`bandits.auditing.rewrites`)."""
    ran = dict(executed or ())
    parts = []
    for m in modules:
        try:
            text = _source_path(m).read_bytes()
        except OSError:
            return None  # a module that is gone: the entry cannot describe this code
        rewrites = module_rewrites(m)
        if m in ran:
            parts.append(m + "\0" + tree_fingerprint_text(text.decode("utf-8"), frozenset(ran[m]), rewrites))
        elif syntax:
            parts.append(m + "\0" + _syntax_text(text, rewrites))
        else:
            parts.append(m + "\0" + text.decode("utf-8", "surrogateescape"))
    return uuid.uuid5(uuid.NAMESPACE_URL, "\0".join(parts)).hex


def code_fingerprints(
    modules: Sequence[str], executed: dict[str, list[str]] | None = None
) -> dict[str, str | None]:
    """Name-based (SHA-1) UUIDs of ``modules``' sources and of their syntax trees without
    docstrings (with ``executed``, only of the code that ran: :func:`_fingerprints`)."""
    mods = tuple(modules)
    syntax = _fingerprints(mods, True, _executed_key(executed))
    return {"source": _fingerprints(mods, False), "syntax": syntax}


def _executed_key(executed: dict[str, list[str]] | None) -> Executed:
    return None if executed is None else tuple(sorted((m, tuple(p)) for m, p in executed.items()))


def _syntax_matches(entry: dict[str, Any]) -> bool:
    now = _fingerprints(tuple(entry["modules"]), True, _executed_key(entry.get("executed")))
    return bool(entry.get("syntax")) and now == entry["syntax"]


def _describes_this_code(entry: dict[str, Any]) -> bool:
    mods = tuple(entry.get("modules", ()))
    if not mods:
        return False
    if "executed" in entry and entry.get("numba") != compiled_installed():
        # the measurement ran the other engine's code (compiled kernels, or their NumPy paths): only
        # the whole modules as measured describe it here
        return holds_on_the_other_engine(entry)
    if entry.get("source") and _fingerprints(mods, False) == entry["source"]:
        return True
    return _syntax_matches(entry)


def holds_on_the_other_engine(entry: dict[str, Any]) -> bool:
    """Whether a traced ``entry`` holds in a process whose numba availability differs from its
    measurement's (a NumPy-only installation, for a floor measured with the kernels): where the
    same floor was also measured on that engine under the trace (``entry["other"]``,
    :func:`with_other_engine`), while the code that measurement ran is as it was, as on the
    measuring engine; otherwise only while its modules are whole, as measured (the other engine's
    code did not run under the trace)."""
    other = entry.get("other")
    if other and other.get("numba") is not entry.get("numba"):
        mods = tuple(other.get("modules", ()))
        if not mods:
            return False
        if other.get("source") and _fingerprints(mods, False) == other["source"]:
            return True
        return bool(other.get("syntax")) and _syntax_matches(other)
    mods = tuple(entry.get("modules", ()))
    return bool(mods and entry.get("whole")) and _fingerprints(mods, True) == entry["whole"]


OTHER_KEYS = ("numba", "modules", "executed", "source", "syntax", "cpu_seconds", "numpy", "scipy")
"""What an entry keeps of the same floor measured on the other engine (:func:`with_other_engine`)."""


def with_other_engine(entry: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """``entry`` (a traced shipped floor) with ``other``, the entry of the same floor measured under
    the trace on the other engine, attached: then an edit drops the floor there only if that
    measurement ran the edited code. The two engines are bit-identical, so the floors must be equal;
    a difference is a defect of one engine and raises.

    >>> a = {"numba": True, "floor": {"mu": 0.5}, "executed": {}}
    >>> b = {"numba": False, "floor": {"mu": 0.5}, "executed": {}, "modules": ["m"], "cpu_seconds": 2.0}
    >>> sorted(with_other_engine(a, b)["other"])
    ['cpu_seconds', 'executed', 'modules', 'numba']
    """
    if "executed" not in entry or "executed" not in other or other.get("numba") is entry.get("numba"):
        raise ValueError("other must be a traced measurement on the other engine of a traced entry")
    if other["floor"] != entry["floor"]:
        ours, theirs = library_versions(entry), library_versions(other)
        why = ("a defect of one engine" if ours == theirs and None not in ours.values() else
               f"measured under other libraries ({ours} and {theirs}; None: not recorded), which may "
               "round differently: measure it again here before comparing the engines")
        raise ValueError(f"the engines measured different floors ({why}): {entry['floor']} with numba="
                         f"{entry.get('numba')}, {other['floor']} with numba={other.get('numba')}")
    return {**entry, "other": {k: other[k] for k in OTHER_KEYS if k in other}}


def library_versions(entry: dict[str, Any]) -> dict[str, str | None]:
    """The NumPy and SciPy an entry was measured with (``None``: not recorded; SciPy is recorded
    since a floor moved by one bit between two installations with the same NumPy).

    >>> library_versions({"numpy": "2.4.6"})
    {'numpy': '2.4.6', 'scipy': None}
    """
    return {name: entry.get(name) for name in ("numpy", "scipy")}


def stale_runs() -> list[str]:
    """The runs (``dpaudit run ALG``) with a shipped floor that no longer describes the code: the
    ones to measure again (``python benchmarks/bench_default_floors.py --stale``)."""
    return sorted({e.get("run", "?") for e in _shipped().values() if not _describes_this_code(e)})


def shipped_cpu_seconds() -> dict[str, float]:
    """The CPU seconds the shipped floors of each run (``dpaudit run ALG``) took to measure."""
    out: dict[str, float] = {}
    for e in _shipped().values():
        out[e.get("run", "?")] = out.get(e.get("run", "?"), 0.0) + float(e.get("cpu_seconds", 0.0))
    return out


@functools.lru_cache(maxsize=1)
def _shipped() -> dict[str, Any]:
    try:
        return dict(json.loads(SHIPPED.read_text(encoding="utf-8")).get("floors", {}))
    except (OSError, ValueError, AttributeError):
        return {}


def _disk() -> Path | None:
    """``$DPAUDIT_KEPT_FLOORS`` (``off`` disables it), else ``measured-floors`` beside the floor
    store's directory."""
    chosen = os.environ.get("DPAUDIT_KEPT_FLOORS", "")
    if chosen:
        return None if chosen.lower() in ("off", "0", "none") else Path(chosen)
    root = cache_dir()
    return None if root is None else root.with_name("measured-floors")


def kept(key: str) -> dict[str, Any] | None:
    """The entry kept under ``key`` (shipped first, then on disk) if it describes this code, with
    ``"where"`` (``"shipped"`` or ``"disk"``) added; else ``None``."""
    entry = _shipped().get(key)
    if isinstance(entry, dict) and _describes_this_code(entry):
        return {**entry, "where": "shipped"}
    root = _disk()  # a floor measured here, also where a shipped one went stale
    if root is None:
        return None
    try:
        entry = json.loads((root / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return {**entry, "where": "disk"} if isinstance(entry, dict) and _describes_this_code(entry) else None


def edited_since_loaded(modules: Sequence[str]) -> list[str]:
    """The ``modules`` whose source file was modified after this module was imported (with the
    rest of the run's code), or within a second before the active trace began: the code on disk
    may no longer be the code that ran."""
    started = trace_started()
    since = _LOADED_AT if started is None else min(_LOADED_AT, started - 1.0)
    out = []
    for m in modules:
        try:
            if _source_path(m).stat().st_mtime > since:
                out.append(m)
        except OSError:
            out.append(m)
    return out


def keep(key: str, floor: LeakFloor, cpu_seconds: float, view: str) -> dict[str, Any] | None:
    """The entry of a floor just measured in this process, written to disk (atomically; a store
    that cannot be written is a miss next time); ``None``, nothing kept, when a module's source was
    edited while the process ran (its fingerprint would describe code that did not run)."""
    import numpy as np
    import scipy

    mods = loaded_modules()
    if edited_since_loaded(mods):
        return None
    stored = floor.to_dict()
    LeakFloor.from_dict(stored)  # (so that a traced entry counts the code that stores and reads it)
    executed = _executed(mods)
    entry = {"view": view, "floor": stored, "cpu_seconds": round(cpu_seconds, 1),
             "numpy": np.__version__, "scipy": scipy.__version__, "modules": mods,
             **code_fingerprints(mods, executed)}  # fmt: skip
    if executed is not None:
        whole = _fingerprints(tuple(mods), True)  # for a process whose engine differs (_describes_this_code)
        entry |= {"executed": executed, "numba": compiled_installed(), "whole": whole}
    root = _disk()
    if root is not None:
        write_json(root, key, entry)
    return entry


def _executed(modules: list[str]) -> dict[str, list[str]] | None:
    """The functions that ran of the ``modules`` loaded after the active trace began (the others
    are fingerprinted whole), or ``None`` when no trace is active (every module whole)."""
    before = tracing_since()
    if before is None:
        return None
    return executed_functions({m: _source_path(m) for m in modules if m not in before})


def algorithm_floor(
    view: str, settings: AuditSettings, config: Sequence[object], measure: Callable[[], LeakFloor]
) -> tuple[LeakFloor | None, dict[str, Any] | None]:
    """The algorithm floor ``settings.floor`` asks for, and where a kept one came from: measured by
    ``measure()`` (``"algorithm"``; kept when it ran in this process), kept (``"auto"``, when an
    entry describes this configuration and code: ``{"where", "cpu_seconds"}``), or none (the
    reference floor decides)."""
    if settings.floor == "reference":
        return None, None
    key = floor_key(view, settings, config)
    if settings.floor == "auto":
        entry = None if key is None else kept(key)
        if entry is None:
            return None, None
        return LeakFloor.from_dict(entry["floor"]), {k: entry[k] for k in ("where", "cpu_seconds")}
    t = time.process_time()
    floor = measure()
    if key is not None and settings.executor is None:  # the modules loaded here are those that ran
        keep(key, floor, time.process_time() - t, view)
    return floor, None


def restamp() -> tuple[int, list[str]]:
    """Re-stamp the shipped floors after edits to docstrings or comments only: each entry whose
    syntax fingerprint still matches gets the source fingerprint of the code now (so that a run
    finds it by the cheap check); returns how many were re-stamped and the runs of the entries
    that no longer describe the code (those need measuring again)."""
    data = json.loads(SHIPPED.read_text(encoding="utf-8"))
    done, stale = 0, set()
    for entry in data["floors"].values():
        mods = tuple(entry["modules"])
        if not _syntax_matches(entry):
            stale.add(entry.get("run", "?"))
        elif _fingerprints(mods, False) != entry["source"]:
            entry["source"] = _fingerprints(mods, False)
            done += 1
        other = entry.get("other")
        if other and _syntax_matches(other):
            other["source"] = _fingerprints(tuple(other["modules"]), False)
    SHIPPED.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    _shipped.cache_clear()
    return done, sorted(stale)


def touching(module: str, function: str | None = None, other_engine: bool = False) -> dict[str, float]:
    """The runs whose shipped floors an edit to ``module`` would drop, with the CPU seconds their
    measurement took (what measuring them again costs, traced): with ``function`` (a path such as
    ``Class.method``, :func:`bandits.auditing.code_trace.function_paths`), an edit to that
    function's body only — a traced entry keeps through it unless the function ran (a decorated
    or nested function counts as module code: always fingerprinted). For planning
    an edit: ``python -m bandits.auditing.kept_floors --touching MODULE[:FUNCTION]``. With
    ``other_engine``, where numba's availability differs from the measurement's: the floors
    measured there too (:func:`with_other_engine`) as that measurement ran, the others whole
    (any edit to a module they loaded); a function that ``module`` does not define raises
    ``ValueError`` (a misspelt path would otherwise cost as much as any edit to the module)."""
    if function is not None:
        function = _removable_path(module, function)
    out: dict[str, float] = {}
    for entry in _shipped().values():
        e, fn = entry, function
        if other_engine:
            e = entry.get("other") or {"modules": entry.get("modules", ())}  # no trace there: whole
            fn = function if "other" in entry else None
        ran = e.get("executed", {}).get(module)
        if module not in e.get("modules", ()) or (fn and ran is not None and fn not in ran):
            continue
        run = entry.get("run", "?")
        out[run] = out.get(run, 0.0) + float(e.get("cpu_seconds", entry.get("cpu_seconds", 0.0)))
    return out


def _removable_path(module: str, function: str) -> str | None:
    """``function`` when an edit to its body alone can keep a traced floor (a path of
    :func:`~bandits.auditing.code_trace.function_paths`), ``None`` when its body is module code
    (decorated, or nested in another function); ``ValueError`` when ``module`` has no such function."""
    import ast

    from bandits.auditing.code_trace import function_paths

    try:
        tree = ast.parse(_source_path(module).read_text(encoding="utf-8"))
    except OSError:
        raise ValueError(f"module {module!r} is not a module of dpaudit, mechanisms or bandits") from None
    if function in {p for p, _ in function_paths(tree)}:
        return function

    def paths(node: ast.AST, prefix: str) -> Iterator[str]:  # every def, by its dotted path
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield prefix + child.name
                yield from paths(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from paths(child, prefix + child.name + ".")
            else:
                yield from paths(child, prefix)

    if function in set(paths(tree, "")):
        return None  # decorated or nested: always in the fingerprint, as module code
    raise ValueError(f"function {function!r} is not defined in {module} (give a dotted path such as "
                     "Class.method)")


def _main(argv: list[str]) -> int:
    if argv[:1] == ["--touching"] and len(argv) == 2:
        module, _, function = argv[1].partition(":")
        try:
            runs = touching(module, function or None)
        except ValueError as err:
            print(f"dpaudit: error: --touching: {err}", file=sys.stderr)
            return 2
        for run, cpu in sorted(runs.items(), key=lambda r: -r[1]):
            print(f"{cpu:9.0f} s  {run}")
        print(f"{len(runs)} run(s), {sum(runs.values()):.0f} s of CPU to measure again")
        other = touching(module, function or None, other_engine=True)
        print(f"where numba's availability differs from the measurement's (an install without numba, for the "
              f"shipped floors; a floor not measured there too holds only while every module it loaded is "
              f"whole): {len(other)} run(s), {sum(other.values()):.0f} s of CPU")
        return 0
    if argv:
        print("usage: python -m bandits.auditing.kept_floors [--touching MODULE[:FUNCTION]]", file=sys.stderr)
        return 2
    n, gone = restamp()
    print(f"{n} shipped floor(s) re-stamped" + (f"; measure again: {', '.join(gone)}" if gone else ""))
    return 0


if __name__ == "__main__":  # python -m bandits.auditing.kept_floors
    raise SystemExit(_main(sys.argv[1:]))
