"""Which functions a floor measurement ran, and a fingerprint of only that code.

A kept floor (:mod:`bandits.auditing.kept_floors`) is valid for the code that measured it. A
fingerprint of every module the run loaded is sound but coarse: an edit to any function of a core
module (the accountant, the audit's procedure) drops every kept floor, although most of those
functions never run while a floor is measured. This module records, while a measurement runs,
which functions of the project's modules executed, and fingerprints each module's syntax tree
(docstrings removed) with the bodies of the other functions left out. What stays in the
fingerprint, so that no edit that could change a measurement keeps it:

* all module-level code: imports, constants, class bodies, every function's signature, default
  values and decorators;
* every decorated function, whole (a compiled kernel runs without a Python frame, so the profiler
  cannot see it run), and every method of a class decorated otherwise than as a dataclass;
* every function that ran, whole, with the functions nested in it;
* every module already loaded when the trace began, whole (its import-time calls were not seen).

The record comes from :mod:`cProfile` (Python calls only, on the tracing thread) and from a
profile hook on any thread started while tracing. Over the 43 shipped measurements it cost 15 %
more CPU (0.9–1.7 times per floor), which is why only the shipped floors' measurement traces
(``benchmarks/bench_default_floors.py``); a floor measured in an ordinary run fingerprints its
modules whole.

Example:
    >>> import textwrap
    >>> src = textwrap.dedent('''
    ...     def used(x):
    ...         return 2 * x
    ...     def unused(x):
    ...         return 3 * x
    ... ''')
    >>> a = tree_fingerprint_text(src, frozenset({"used"}))
    >>> a == tree_fingerprint_text(src.replace("3 * x", "x + x + x"), frozenset({"used"}))
    True
    >>> a == tree_fingerprint_text(src.replace("2 * x", "x + x"), frozenset({"used"}))
    False
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import os
import re
import sys
import textwrap
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import CodeType, FrameType
from typing import Any, cast

__all__ = ["PACKAGES", "ROOT", "source_path", "tracing", "tracing_since", "trace_started",
           "executed_functions", "tree_fingerprint_text", "function_paths", "function_sites",
           "statement_sites", "without_docstrings", "Rewrite", "definition_fingerprint",
           "as_measured"]  # fmt: skip

PACKAGES = ("dpaudit", "mechanisms", "bandits")
"""The packages whose modules a kept floor's code fingerprints cover."""
ROOT = Path(__file__).resolve().parents[2]
"""The directory holding :data:`PACKAGES`."""


def source_path(module: str) -> Path:
    """The source file of ``module`` (a dotted name under :data:`ROOT`; a package's ``__init__``)."""
    base = ROOT.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")

_TOKEN = "__dpaudit_body_{}__"
_TOKEN_RE = re.compile(r"__dpaudit_body_(\d+)__")


def _profiler_active() -> str | None:
    """The profiler tool installed on this thread (3.12+: process-wide, ``sys.monitoring``), if any."""
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is not None and monitoring.get_tool(monitoring.PROFILER_ID) is not None:
        return str(monitoring.get_tool(monitoring.PROFILER_ID))
    return None if sys.getprofile() is None else type(sys.getprofile()).__name__


class _Trace:
    """The profiler of the tracing thread, the code objects seen on other threads, the modules
    already loaded when tracing began and when it began (``time.time()``)."""

    def __init__(self, before: frozenset[str]) -> None:
        import cProfile

        self.before = before
        self.started = time.time()
        self.profile = cProfile.Profile(builtins=False)
        self.elsewhere: set[CodeType] = set()

    def on_thread(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            self.elsewhere.add(frame.f_code)

    def installed(self) -> bool:
        """Whether this trace's profiler still records (3.12+ runs cProfile on ``sys.monitoring``,
        where ``sys.getprofile()`` is None)."""
        if getattr(sys, "monitoring", None) is not None:
            return _profiler_active() == "cProfile"
        return sys.getprofile() is cast(object, self.profile)

    def codes(self) -> set[CodeType]:
        if not self.installed():  # replaced or switched off: calls went unseen
            raise RuntimeError("the trace's profiler is no longer installed on this thread")
        self.profile.disable()
        try:
            seen = {e.code for e in self.profile.getstats() if isinstance(e.code, CodeType)}
        finally:
            self.profile.enable()
        return seen | self.elsewhere


_ACTIVE: list[_Trace] = []


@contextlib.contextmanager
def tracing(whole: Sequence[str] = ()) -> Iterator[None]:
    """Record the functions that run inside the block. The modules of :data:`PACKAGES` already
    loaded (their import-time calls were not seen), and ``whole``, are fingerprinted whole. Not
    nested: an inner block, one under another profiler or one begun while other threads run
    (their calls would not be seen) raises ``RuntimeError``, as does a profiler that does not
    record once started."""
    if _ACTIVE or _profiler_active() is not None:
        raise RuntimeError("a trace or another profiler is already active")
    if threading.active_count() > 1:  # their calls could not be seen
        raise RuntimeError(f"{threading.active_count() - 1} other thread(s) running: trace before they start")
    loaded = {m for m in list(sys.modules) if m.split(".")[0] in PACKAGES}
    trace = _Trace(frozenset(loaded | set(whole)))
    _ACTIVE.append(trace)
    threading.setprofile(trace.on_thread)
    trace.profile.enable()
    try:
        if not trace.installed():
            raise RuntimeError("the profiler did not install: nothing would be recorded")
        yield
    finally:
        trace.profile.disable()
        threading.setprofile(None)
        _ACTIVE.clear()


def tracing_since() -> frozenset[str] | None:
    """The modules that were loaded when the active trace began, or ``None`` when none is active."""
    return _ACTIVE[0].before if _ACTIVE else None


def trace_started() -> float | None:
    """When the active trace began (``time.time()``), or ``None`` when none is active."""
    return _ACTIVE[0].started if _ACTIVE else None


def without_docstrings(tree: Any) -> Any:
    """``tree`` with the docstrings of its module, classes and functions removed (in place)."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):  # fmt: skip
            node.body = body[1:] or [ast.Pass()]
    return tree


FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


def function_paths(tree: ast.Module) -> list[tuple[str, FunctionNode]]:
    """The functions whose bodies a fingerprint may leave out, with their dotted paths
    (``Class.method``): those defined at module or class level (inside ``if``/``try`` blocks too),
    not decorated. Nested functions belong to their enclosing function's body."""
    return [(path, node) for path, node, _ in function_sites(tree)]


def statement_sites(tree: ast.Module) -> dict[str, tuple[ast.stmt, list[ast.stmt]]]:
    """Every statement a rewrite's record may name by its dotted path, with the list that holds it:
    the definitions of :func:`function_sites` and the assignments to one name at module level and
    in the classes whose methods those include (``Class.NAME = ...``, ``NAME: T = ...``)."""
    out: dict[str, tuple[ast.stmt, list[ast.stmt]]] = {p: (n, h) for p, n, h in function_sites(tree)}

    def visit(stmts: list[ast.stmt], prefix: str) -> None:
        for node in stmts:
            target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
                node.target if isinstance(node, ast.AnnAssign) else None)  # fmt: skip
            if isinstance(target, ast.Name):
                out.setdefault(prefix + target.id, (node, stmts))
            elif isinstance(node, ast.ClassDef) and all(map(_plain_class_decorator, node.decorator_list)):
                visit(node.body, prefix + node.name + ".")

    visit(tree.body, "")
    return out


def function_sites(tree: ast.Module) -> list[tuple[str, FunctionNode, list[ast.stmt]]]:
    """:func:`function_paths` with the statement list that holds each definition."""
    out: list[tuple[str, FunctionNode, list[ast.stmt]]] = []

    def visit(stmts: list[ast.stmt], prefix: str) -> None:
        for node in stmts:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if not node.decorator_list:
                    out.append((prefix + node.name, node, stmts))
            elif isinstance(node, ast.ClassDef):
                if all(_plain_class_decorator(d) for d in node.decorator_list):
                    visit(node.body, prefix + node.name + ".")
            else:
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(node, field, None) or [], prefix)
                for inner in [*getattr(node, "handlers", ()), *getattr(node, "cases", ())]:
                    visit(inner.body, prefix)

    visit(tree.body, "")
    return out


_PLAIN_CLASS_DECORATORS = {"dataclass", "dataclasses.dataclass", "runtime_checkable",
                           "typing.runtime_checkable", "final", "typing.final", "functools.total_ordering",
                           "total_ordering"}  # fmt: skip


def _plain_class_decorator(node: ast.expr) -> bool:
    """Whether a class decorator leaves its methods Python functions that run in frames (a
    ``jitclass``-like one would not: its methods are then fingerprinted whole)."""
    return ast.unparse(node.func if isinstance(node, ast.Call) else node) in _PLAIN_CLASS_DECORATORS


@dataclasses.dataclass(frozen=True)
class Rewrite:
    """A definition proven to compute what the one a measurement ran computed
    (:mod:`bandits.auditing.rewrites`): ``function`` (its dotted path), the ``old`` definition's
    source, and the fingerprints (:func:`definition_fingerprint`) of the ``new`` one and of the
    ``helpers`` (path, fingerprint: definitions or assignments, :func:`statement_sites`) it added.
    With no ``function``, a record of additions only (used by a rewrite recorded in another
    module)."""

    function: str
    old: str
    new: str
    helpers: tuple[tuple[str, str], ...] = ()


def definition_fingerprint(node: ast.stmt) -> str:
    """A name-based (SHA-1) UUID of a statement's syntax tree without docstrings (a definition's
    signature, decorators and body), as the kept floors' fingerprints are."""
    import copy
    import uuid

    dump = ast.dump(without_docstrings(copy.deepcopy(node)), include_attributes=False)
    return uuid.uuid5(uuid.NAMESPACE_URL, dump).hex


def as_measured(tree: ast.Module, rewrites: Sequence[Rewrite]) -> ast.Module:
    """``tree`` (in place) with each rewritten definition that is exactly as recorded read as its old
    one and the helpers it added, each exactly as recorded, left out: the code the measurement ran.
    A rewrite whose new definition or helpers differ from their record changes nothing."""
    for rw in rewrites:
        sites = statement_sites(tree)
        parts = [(rw.function, rw.new)] * bool(rw.function) + list(rw.helpers)
        if not all(p in sites and definition_fingerprint(sites[p][0]) == d for p, d in parts):
            continue
        if rw.function:
            node, holder = sites[rw.function]
            holder[holder.index(node)] = ast.parse(textwrap.dedent(rw.old)).body[0]
        for path, _ in rw.helpers:
            node, holder = sites[path]
            holder.remove(node)
    return tree


@functools.lru_cache(maxsize=512)
def _parts(text: str, rewrites: tuple[Rewrite, ...] = ()) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The dump of ``text``'s syntax tree (docstrings removed; read as measured, :func:`as_measured`)
    with each removable body replaced by a token, and each token's (path, body dump)."""
    tree = without_docstrings(as_measured(ast.parse(text), rewrites))
    bodies = []
    for i, (path, node) in enumerate(function_paths(tree)):
        bodies.append((path, ast.dump(ast.Module(body=node.body, type_ignores=[]), include_attributes=False)))
        node.body = [ast.Expr(ast.Name(id=_TOKEN.format(i), ctx=ast.Load()))]
    return ast.dump(tree, include_attributes=False), tuple(bodies)


def tree_fingerprint_text(text: str, ran: frozenset[str], rewrites: tuple[Rewrite, ...] = ()) -> str:
    """The text a module's fingerprint hashes: its syntax tree without docstrings, read as measured
    (``rewrites``, :func:`as_measured`), with the bodies of the removable functions
    (:func:`function_paths`) whose path is not in ``ran`` left out."""
    skeleton, bodies = _parts(text, rewrites)

    def body(m: re.Match[str]) -> str:
        path, dump = bodies[int(m.group(1))]
        return dump if path in ran else "<not run>"

    return _TOKEN_RE.sub(body, skeleton)


def executed_functions(modules: dict[str, Path]) -> dict[str, list[str]]:
    """The paths (:func:`function_paths`) of the functions of ``modules`` (name → source file) that
    ran while the active trace recorded; raises ``RuntimeError`` when no trace is active. Call it
    before the sources can change (a path is found by its line in the file as it is now)."""
    if not _ACTIVE:
        raise RuntimeError("no trace is active")
    by_file: dict[str, set[tuple[int, str]]] = {}
    for code in _ACTIVE[0].codes():
        by_file.setdefault(os.path.realpath(code.co_filename), set()).add((code.co_firstlineno, code.co_name))
    out: dict[str, list[str]] = {}
    for module, path in modules.items():
        seen = by_file.get(os.path.realpath(path), set())
        if not any(name == "<module>" for _, name in seen):  # another file ran under this name
            raise RuntimeError(f"the trace did not see {module} imported from {path}")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        out[module] = sorted({p for p, node in function_paths(tree) if (node.lineno, node.name) in seen})
    return out
