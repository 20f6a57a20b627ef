"""Layering: imports run one way, bandits → mechanisms → dpaudit core; only the CLI imports all.

Every module of the three packages is read with ``ast``: module-level imports, imports inside
functions, ``importlib.import_module("...")`` with a constant name, and the imports of its
doctest examples (doctests are collected by pytest, so they are code too). An arrow that runs
the wrong way fails the test with the file, line and imported module.

Inside the packages there is no import cycle at all (imports inside functions and under
``TYPE_CHECKING`` included), and the framework part of :mod:`bandits` imports no algorithm
family: only the registry imports the families' ``spec`` modules.

A second test checks start-up cost deterministically: in a fresh interpreter, importing
:mod:`dpaudit.cli.main` and building the parser for ``--help`` (or for a bad argument) must not
import numpy, scipy, mechanisms or bandits.
"""

from __future__ import annotations

import ast
import doctest
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("dpaudit", "mechanisms", "bandits")
RANK = {"core": 0, "mechanisms": 1, "bandits": 2}
"""A module of rank r may import the layers of rank ≤ r; the CLI may import anything."""


def layer(module: str) -> str | None:
    """``"cli"``, ``"core"``, ``"mechanisms"``, ``"bandits"``, or None outside the toolkit.

    >>> [layer(m) for m in ("dpaudit.audit", "dpaudit.cli.run", "dpaudit.__main__", "numpy")]
    ['core', 'cli', 'cli', None]
    """
    top = module.split(".")[0]
    if top == "dpaudit":
        rest = module.split(".")[1:2]
        return "cli" if rest in (["cli"], ["__main__"]) else "core"
    return top if top in ("mechanisms", "bandits") else None


def allowed(importer: str, imported: str) -> bool:
    """Whether module ``importer`` may import module ``imported``.

    >>> allowed("mechanisms.gaussian", "dpaudit.events"), allowed("dpaudit.audit.x", "mechanisms")
    (True, False)
    >>> allowed("dpaudit.cli.audit", "bandits.thompson.audit"), allowed("bandits.x", "dpaudit.cli.main")
    (True, False)
    """
    src, dst = layer(importer), layer(imported)
    if dst is None or src == "cli":
        return True
    if dst == "cli":  # nothing outside the CLI depends on the composition root
        return False
    return RANK[dst] <= RANK[src]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    if node.level == 0:
        base = node.module or ""
    else:
        pkg = module.split(".") if is_package else module.split(".")[:-1]
        pkg = pkg[: len(pkg) - (node.level - 1)]
        base = ".".join(pkg + ([node.module] if node.module else []))
    # "from pkg import sub" may import the submodule pkg.sub: check both names
    return [base] + [f"{base}.{a.name}" for a in node.names if a.name != "*"]


def imports_in(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, imported module) for every import anywhere in ``tree`` (including in functions).

    >>> src = "def f():\\n    import mechanisms.gaussian\\n    from . import runner\\n"
    >>> imports_in(ast.parse(src), "dpaudit.audit.x", False)
    [(2, 'mechanisms.gaussian'), (3, 'dpaudit.audit'), (3, 'dpaudit.audit.runner')]
    """
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            out += [(node.lineno, name) for name in _resolve(module, is_package, node)]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            out.append((node.lineno, node.args[0].value))
    return sorted(out)


def doctest_imports(tree: ast.Module, module: str, is_package: bool) -> list[tuple[int, str]]:
    """Imports in the doctest examples of every docstring of ``tree``."""
    parser = doctest.DocTestParser()
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        doc = ast.get_docstring(node, clean=False)
        if not doc or ">>>" not in doc:
            continue
        line = 1 if isinstance(node, ast.Module) else node.lineno
        for ex in parser.get_examples(doc):
            try:
                sub = ast.parse(ex.source)
            except SyntaxError:  # a continuation fragment; the full statement is elsewhere
                continue
            out += [(line + ex.lineno, name) for _, name in imports_in(sub, module, is_package)]
    return out


def violations(path: Path) -> list[str]:
    module = _module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found = imports_in(tree, module, is_package) + doctest_imports(tree, module, is_package)
    rel = path.relative_to(ROOT)
    return [f"{rel}:{line}: {module} ({layer(module)}) imports {name} ({layer(name)})"
            for line, name in found if not allowed(module, name)]


def sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


@pytest.mark.slow
def test_imports_run_one_way() -> None:
    bad = [v for path in sources() for v in violations(path)]
    assert not bad, "imports against the layering (bandits → mechanisms → dpaudit core):\n" + "\n".join(bad)


def test_the_checker_sees_every_kind_of_import(tmp_path: Path) -> None:
    """The checker itself: each kind of wrong-way import is reported, right-way ones are not."""
    src = '''"""Doc.

    >>> from bandits import GaussianTS
"""
import numpy
from dpaudit.validation import check_integer


def f():
    import mechanisms.gaussian
    from dpaudit.cli import main
    importlib.import_module("bandits.thompson.audit")
'''
    tree = ast.parse(src)
    found = imports_in(tree, "dpaudit.audit.fake", False) + doctest_imports(tree, "dpaudit.audit.fake", False)
    bad = sorted(name for _, name in found if not allowed("dpaudit.audit.fake", name))
    assert bad == ["bandits", "bandits.GaussianTS", "bandits.thompson.audit", "dpaudit.cli",
                   "dpaudit.cli.main", "mechanisms.gaussian"]


@pytest.mark.slow
def test_the_layers_are_really_used() -> None:
    """The right-way arrows exist (so the scan is not reading nothing)."""
    arrows = set()
    for path in sources():
        module = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for _, name in imports_in(tree, module, path.name == "__init__.py"):
            if layer(name) is not None:
                arrows.add((layer(module), layer(name)))
    assert {("mechanisms", "core"), ("bandits", "core"), ("cli", "core"), ("cli", "mechanisms"),
            ("cli", "bandits")} <= arrows


FAMILIES = ("thompson", "dp_ts_ucb", "lazy", "full_info", "matroid", "semibandits", "cascading", "references")
"""The algorithm families: one subpackage of :mod:`bandits` each."""


def family(module: str) -> str | None:
    """The algorithm family of a module, or None for the framework (and outside :mod:`bandits`).

    >>> family("bandits.thompson.audit"), family("bandits.engine.simulator"), family("dpaudit.events")
    ('thompson', None, None)
    """
    parts = module.split(".")
    return parts[1] if parts[0] == "bandits" and len(parts) > 1 and parts[1] in FAMILIES else None


def framework_may_import(importer: str, imported: str) -> bool:
    """Whether a module may import another as far as families go: a family module or an
    experiment may import any family; a framework module none, except the registry, which
    imports each family's ``spec``, and the package's public face (``bandits/__init__.py``,
    which loads the names it lists on first use). Outside :mod:`bandits` the layer rules apply
    (the CLI, the composition root, imports anything).

    >>> framework_may_import("bandits.engine.simulator", "bandits.thompson.policy")
    False
    >>> framework_may_import("bandits.registry", "bandits.lazy.spec")
    True
    >>> framework_may_import("bandits.cascading.audit", "bandits.semibandits.policies")
    True
    """
    if family(imported) is None or family(importer) is not None or not importer.startswith("bandits"):
        return True
    if importer == "bandits" or importer.startswith("bandits.experiments"):
        return True
    return importer == "bandits.registry" and imported.split(".")[2:] in ([], ["spec"])


def module_graph(paths: list[Path]) -> dict[str, set[str]]:
    """module → the toolkit modules it imports (code only: module level, in functions and under
    ``TYPE_CHECKING``; a name imported from a package counts as its submodule when it is one)."""
    names = {_module_name(p): p for p in paths}
    graph: dict[str, set[str]] = {m: set() for m in names}
    for module, path in names.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for _, target in imports_in(tree, module, path.name == "__init__.py"):
            while target and target not in names:
                target = target.rpartition(".")[0]
            if target and target != module and not module.startswith(target + "."):
                graph[module].add(target)
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (each holds a cycle), by
    Tarjan's algorithm, iteratively.

    >>> find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    [['a', 'b', 'c']]
    >>> find_cycles({"a": {"b"}, "b": set()})
    []
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def shortest_cycle(graph: dict[str, set[str]], members: list[str]) -> list[str]:
    """A shortest cycle through the first module of a strongly connected component.

    >>> shortest_cycle({"a": {"b"}, "b": {"c", "a"}, "c": {"a"}}, ["a", "b", "c"])
    ['a', 'b', 'a']
    """
    start, inside = members[0], set(members)
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & inside):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [start] + path[::-1][1:] + [start]
                if w not in parent:
                    parent[w] = v
                    nxt.append(w)
        frontier = nxt
    return members


@pytest.mark.slow
def test_no_import_cycle() -> None:
    graph = module_graph(sources())
    cycles = find_cycles(graph)
    lines = [" -> ".join(shortest_cycle(graph, c)) + f"  ({len(c)} modules in the group)" for c in cycles]
    assert not cycles, "import cycles (one shortest cycle per group of modules importing each other):\n" + (
        "\n".join(lines)
    )


def test_the_cycle_check_sees_hidden_cycles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A planted cycle through an import inside a function and one under TYPE_CHECKING is found."""
    pkg = tmp_path / "bandits"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from bandits.b import g\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import bandits.c\n")
    (pkg / "c.py").write_text("from bandits import a\n")
    (pkg / "d.py").write_text("import bandits.a\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    graph = module_graph(sorted(pkg.rglob("*.py")))
    assert find_cycles(graph) == [["bandits.a", "bandits.b", "bandits.c"]]


@pytest.mark.slow
def test_the_framework_imports_no_family() -> None:
    bad = []
    for path in sources():
        module = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, name in imports_in(tree, module, path.name == "__init__.py"):
            if not framework_may_import(module, name):
                bad.append(f"{path.relative_to(ROOT)}:{line}: {module} imports {name}")
    assert not bad, "framework modules importing an algorithm family:\n" + "\n".join(bad)


def test_every_family_is_registered() -> None:
    """Each family subpackage has a ``spec`` module, and the list above is the registry's."""
    from bandits.registry import _spec_modules

    assert [m.__name__ for m in _spec_modules()] == [f"bandits.{f}.spec" for f in FAMILIES]
    assert sorted(p.parent.name for p in (ROOT / "bandits").glob("*/spec.py")) == sorted(FAMILIES)


def test_the_registry_index_names_each_spec_s_family() -> None:
    """``get`` imports only the family its index names, so the index must be exactly the specs."""
    from bandits import registry

    found = {spec.key: module.__name__.split(".")[1] for module in registry._spec_modules()
             for spec in module.SPECS}  # fmt: skip
    assert found == registry.FAMILY_OF
    assert registry.FAMILIES == FAMILIES


_ONE_FAMILY = """
import sys
from bandits.registry import get
get(sys.argv[1])
print(sorted(m for m in sys.modules if m.startswith("bandits.") and m.endswith(".spec")))
"""


@pytest.mark.parametrize("key, family", [("ts", "thompson"), ("cascade-dp", "cascading")])
def test_getting_one_algorithm_imports_only_its_family(key: str, family: str) -> None:
    out = subprocess.run([sys.executable, "-c", _ONE_FAMILY, key], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    assert out.strip() == repr([f"bandits.{family}.spec"])


def test_a_spec_indexed_under_another_family_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from bandits import registry

    monkeypatch.setitem(registry.FAMILY_OF, "ucb1", "lazy")
    monkeypatch.setattr(registry, "_REGISTRY", {})
    with pytest.raises(RuntimeError, match="'ucb1' of bandits.references.spec is indexed under 'lazy'"):
        registry.algorithms()


_STARTUP = """
import json, sys
from dpaudit.cli.main import build_parser
out = {}
for argv in (["--help"], ["epsilon", "gaussian", "--mu", "-1", "--delta", "1e-5"],
             ["audit", "gaussian", "--sigma", "0"], ["nosuch"]):
    try:
        build_parser(argv).parse_args(argv)
    except BaseException as exc:  # --help exits, a bad argument raises UsageError
        out[" ".join(argv)] = type(exc).__name__
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"numpy", "scipy", "mechanisms", "bandits"})
print(json.dumps({"heavy": heavy, "outcomes": out}))
"""


def test_cli_startup_imports_no_heavy_package() -> None:
    """Deterministic proxy for start-up time: ``--help`` and input errors import nothing heavy."""
    proc = subprocess.run([sys.executable, "-c", _STARTUP], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["outcomes"] == {"--help": "SystemExit", "epsilon gaussian --mu -1 --delta 1e-5": "UsageError",
                               "audit gaussian --sigma 0": "UsageError", "nosuch": "UsageError"}
    assert res["heavy"] == []


@pytest.mark.parametrize("argv", [["--version"], ["--help"]])
def test_python_dash_m_dpaudit(argv: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "dpaudit", *argv], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert ("dpaudit 0." in proc.stdout) if argv == ["--version"] else ("usage: dpaudit" in proc.stdout)


def test_command_table_matches_the_registered_parsers() -> None:
    """The one-line help that ``dpaudit --help`` shows without importing a subcommand module is
    the help that module registers."""
    from dpaudit.cli.main import COMMANDS, build_parser

    full = build_parser()  # every module registered
    action = full._subparsers._group_actions[0]
    registered = {a.dest: a.help for a in action._choices_actions}
    assert registered == {name: help_text for name, (_, help_text) in COMMANDS.items()}
