"""The numbers the README quotes in tables (and a few it repeats in prose), from the scripts that
make them: every table between ``<!-- table:NAME -->`` and ``<!-- /table:NAME -->`` and every
value between ``<!-- value:NAME -->`` and ``<!-- /value -->`` in README.md and docs/*.md is
rendered here from stored results, so a number that no longer reproduces cannot stay in the docs.

Tables and where their numbers come from:

==================  =========================================================================================
name                source
==================  =========================================================================================
``tuning``          ``dpaudit tune ts --target-mu M --env SPEC`` (T = 10⁵, 10 repetitions, seed 0) for six
                    (instance, μ), stored in ``docs/img/readme_tables.json`` by ``--run tuning``
``audits``          ``dpaudit run ALG --epsilon 1 -T 100000 -R 2 --audit-trials 20000`` for eight
                    configurations of Hu et al. (2024), stored by ``--run audits``
``hu-regret``       ``docs/img/private_stochastic_results.json`` (``python -m
``full-info``       bandits.experiments.private_stochastic_bandits --full``)
``figure5``
``cascading-1g``    ``docs/img/cascading_results.json`` (the cascading-bandits notebook at full scale)
``planted-bugs``    ``docs/img/planted_bugs.json`` (``python benchmarks/bench_planted_bugs.py --seeds 20
                    --json docs/img/planted_bugs.json``: every private algorithm at its default audit;
                    ``--only KEY ... --update`` re-runs some rows in place)
``audit-validity``  the ``none`` rows of the same file: the unbugged audits
``miss-oracle``     ``docs/img/miss_oracle.json`` (``python benchmarks/bench_miss_oracle.py --json
                    docs/img/miss_oracle.json``: the best single test on the missed bugs' worst pairs)
``dpsgd-*``         ``docs/img/dpsgd.json`` (``python benchmarks/bench_dpsgd.py --repeat 2 --json
                    docs/img/dpsgd.json``: the 36 DP-SGD cells and fixed-size batches against
                    dp-accounting, Opacus and prv-accountant)
``calibration``,    ``docs/img/calibration.json`` (``python benchmarks/bench_calibration.py --json
``incremental``     docs/img/calibration.json``)
``leaderboard``,    ``docs/img/leaderboard_reduced.json`` (``python -m bandits.experiments.leaderboard
``leaderboard-*``   --json docs/img/leaderboard_reduced.json --out docs/img``: every private stochastic
                    bandit at the same certified budget, reduced scale)
``leaderboard-t*``  ``docs/img/leaderboard_full-T100000.json`` (``leaderboard-t1e5-*``: ``--full --horizons
                    100000``) and ``leaderboard_full-T1000000.json`` (``leaderboard-t1e6-*``: 1000000)
``dp-ts-ucb-grid*`` ``docs/img/tuner_vs_grid.json`` (``python -m bandits.experiments.tuner_vs_grid --full
                    --mu 0.5 1 2 --workers 2 --json docs/img/tuner_vs_grid.json``: ``dpaudit tune
                    dp-ts-ucb`` against a dense grid on the same seed)
==================  =========================================================================================

The tables and sentences themselves are rendered by ``benchmarks/result_tables.py`` (these) and
``benchmarks/perf_tables.py`` (the performance benchmarks'); this module runs, stores and writes.

Run from the repository root::

    python benchmarks/readme_tables.py                  # check: the docs show what the stored results say
    python benchmarks/readme_tables.py --write          # rewrite the docs from the stored results
    python benchmarks/readme_tables.py --run audits     # recompute (minutes), store, rewrite
    python benchmarks/readme_tables.py --run audits --check   # recompute and compare, store nothing

The suite runs the check (``tests/test_docs_tables.py``) and, marked ``slow``, the recomputation at
full scale of the audit table's RNM-FTNL row (deterministic: the same numbers to the digit); the
other rows and the tuning table take 5 minutes and are recomputed by ``--run audits tuning
--check``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the repository's packages (benchmarks included)
    sys.path.insert(0, str(ROOT))
STORED = ROOT / "docs" / "img" / "readme_tables.json"
PRIVATE_STOCHASTIC = ROOT / "docs" / "img" / "private_stochastic_results.json"
CASCADING = ROOT / "docs" / "img" / "cascading_results.json"
PLANTED_BUGS = ROOT / "docs" / "img" / "planted_bugs.json"
MISS_ORACLE = ROOT / "docs" / "img" / "miss_oracle.json"
DPSGD = ROOT / "docs" / "img" / "dpsgd.json"
CALIBRATION = ROOT / "docs" / "img" / "calibration.json"
LEADERBOARD = ROOT / "docs" / "img" / "leaderboard_reduced.json"
LEADERBOARD_FULL = {  # tag of the values -> (stored run, how it ran)
    "t1e5": (ROOT / "docs" / "img" / "leaderboard_full-T100000.json",
             "at the lowest priority on the shared 2-core machine"),
    "t1e6": (ROOT / "docs" / "img" / "leaderboard_full-T1000000.json",
             "at nice 5 on a 2-core machine whose other core was mostly idle"),
}  # fmt: skip
TUNER_GRID = ROOT / "docs" / "img" / "tuner_vs_grid.json"
DOCUMENTS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))

__all__ = ["TUNING", "AUDITS", "run_tuning", "run_audits", "render_all", "differences", "write", "main"]

# ---------------------------------------------------------------------------------------
# the command-backed tables

TUNING = (
    ("Bernoulli §5.1", "bernoulli:0.75,0.625,0.5,0.375,0.25", 1.0),
    ("Bernoulli §5.1", "bernoulli:0.75,0.625,0.5,0.375,0.25", 2.0),
    ("Bernoulli §5.1", "bernoulli:0.75,0.625,0.5,0.375,0.25", 5.0),
    ("truncated exp. §5.2", "truncexp:0.1,1,2,5,10", 1.0),
    ("truncated exp. §5.2", "truncexp:0.1,1,2,5,10", 2.0),
    ("truncated exp. §5.2", "truncexp:0.1,1,2,5,10", 5.0),
)
"""(label, --env, --target-mu) of each row of the tuning table."""

AUDITS = (
    ("`lazy-ucb`", "lazy-ucb"),
    ("`lazy-dp-ts`", "lazy-dp-ts"),
    ("`adap-ucb`", "adap-ucb"),
    ("`adap-klucb`", "adap-klucb"),
    ("`dp-se` (β = 10⁻⁵)", "dp-se"),
    ("`rnm-ftnl --env bernoulli:0.6,0.5`", "rnm-ftnl --env bernoulli:0.6,0.5"),
    ("`rnm-ftnl --env bernoulli:0.6,0.5 --noise corrected`",
     "rnm-ftnl --env bernoulli:0.6,0.5 --noise corrected"),
    ("`naive-ftnl --env bernoulli:0.6,0.5`", "naive-ftnl --env bernoulli:0.6,0.5"),
)  # fmt: skip
"""(label, ``dpaudit run`` arguments) of each row of the audit table (ε = 1, -T 100000 -R 2)."""
AUDIT_OPTIONS = ("--epsilon", "1", "-T", "100000", "-R", "2", "--audit-trials", "20000")
FULL = {"horizon": 100_000, "reps": 10, "audit_trials": 20_000, "audit_T": 100_000}
REDUCED = {"horizon": 3_000, "reps": 2, "audit_trials": 1_000, "audit_T": 3_000}


def run_tuning(scale: dict[str, int] = FULL) -> list[dict[str, Any]]:
    """One ``dpaudit tune ts --target-mu M --env SPEC --json`` per row of :data:`TUNING`."""
    rows = []
    for label, env, mu in TUNING:
        argv = ["tune", "ts", "--target-mu", f"{mu:g}", "--env", env, "-T", str(scale["horizon"]),
                "-R", str(scale["reps"])]  # fmt: skip
        data = _dpaudit_json(argv)
        zero = next(c for c in data["candidates"] if c["b"] == 0)
        best = data["best"]
        rows.append({"label": label, "env": env, "mu": mu, "b": best["b"], "c": best["c"],
                     "regret": best["regret_mean"], "stderr": best["regret_stderr"],
                     "b0_regret": zero["regret_mean"], "command": "dpaudit " + " ".join(argv)})  # fmt: skip
    return rows


def run_audits(scale: dict[str, int] = FULL, labels: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """One ``dpaudit run ALG --epsilon 1 -T 100000 -R 2 --audit-trials 20000 --json`` per row of
    :data:`AUDITS` (only the rows named in ``labels`` when given)."""
    options = list(AUDIT_OPTIONS)
    options[options.index("-T") + 1] = str(scale["audit_T"])
    options[options.index("--audit-trials") + 1] = str(scale["audit_trials"])
    rows = []
    for label, args in AUDITS:
        if labels is not None and label not in labels:
            continue
        argv = ["run", *args.split(), *options]
        data = _dpaudit_json(argv)
        a, p = data["audit"], data["privacy"]
        claim, said = a.get("published") or {}, a.get("published_verdict")
        rows.append({
            "label": label,
            "command": "dpaudit " + " ".join(argv),
            "audit_horizon": a["horizon"],
            "epsilon_lower": a["empirical"]["epsilon_lower"],
            "confidence": a["empirical"]["confidence"],
            "releases_lower": (a["details"].get("components", {}).get("releases") or {}).get("empirical", {})
            .get("epsilon_lower"),
            "certified": p["epsilon_pure"] if p["epsilon_pure"] is not None else p["epsilon"],
            "verdict": a["verdict"],
            "published_verdict": None if said is None else said.split(":")[0].lower(),
            "published_epsilon": claim.get("epsilon"),
            "published_source": claim.get("source"),
        })  # fmt: skip
    return rows


def _dpaudit_json(argv: list[str]) -> Any:
    import contextlib
    import io

    from dpaudit.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*argv, "--json"])
    if code not in (0, 1):
        raise RuntimeError(f"dpaudit {' '.join(argv)} failed ({code}): {err.getvalue().strip()}")
    return json.loads(out.getvalue())


def _stored() -> dict[str, Any]:
    return json.loads(STORED.read_text()) if STORED.exists() else {}


def renderers() -> dict[str, Callable[[], str]]:
    """Every table and value by name, rendered from its stored results."""
    from benchmarks import perf_tables
    from benchmarks import result_tables as rt

    stored = _stored()
    ps = json.loads(PRIVATE_STOCHASTIC.read_text())
    cascading = json.loads(CASCADING.read_text())
    audits = stored.get("audits", [])
    bugs = json.loads(PLANTED_BUGS.read_text()) if PLANTED_BUGS.exists() else None
    oracle = json.loads(MISS_ORACLE.read_text()) if MISS_ORACLE.exists() else None
    dpsgd = json.loads(DPSGD.read_text()) if DPSGD.exists() else None
    cal = json.loads(CALIBRATION.read_text()) if CALIBRATION.exists() else None
    board = json.loads(LEADERBOARD.read_text()) if LEADERBOARD.exists() else None
    full_boards = {tag: (json.loads(path.read_text()), how)
                   for tag, (path, how) in LEADERBOARD_FULL.items() if path.exists()}  # fmt: skip
    grid = json.loads(TUNER_GRID.read_text())["checks"] if TUNER_GRID.exists() else None

    def audit_value(label: str) -> Callable[[], str]:
        from dpaudit.formatting import fmt_down

        return lambda: fmt_down(next(r for r in audits if r["label"] == label)["epsilon_lower"], 3)

    return {
        "tuning": lambda: rt.render_tuning(stored["tuning"]),
        "audits": lambda: rt.render_audits(audits),
        "hu-regret": lambda: rt.render_hu_regret(ps),
        "full-info": lambda: rt.render_full_info(ps),
        "figure5": lambda: rt.render_figure5(ps),
        "cascading-1g": lambda: rt.render_cascading_1g(cascading),
        "rnm-ftnl-audit": audit_value(AUDITS[5][0]),
        **({} if bugs is None else {
            "planted-bugs": lambda: rt.render_planted_bugs(bugs),
            "planted-bugs-summary": lambda: rt.planted_bugs_summary(bugs),
            "audit-validity": lambda: rt.validity_summary(bugs),
        }),
        **({} if oracle is None else {"miss-oracle": lambda: rt.render_miss_oracle(oracle)}),
        **({} if dpsgd is None else rt.dpsgd_renderers(dpsgd)),
        **({} if cal is None else rt.calibration_renderers(cal)),
        **({} if board is None else rt.leaderboard_renderers(board)),
        **{k: v for tag, (data, how) in full_boards.items()
           for k, v in rt.leaderboard_full_renderers(data, tag, how).items()},
        **({} if grid is None else rt.tuner_grid_renderers(grid)),
        **perf_tables.renderers(ROOT / "docs" / "img"),
    }  # fmt: skip


# ---------------------------------------------------------------------------------------
# the documents

TABLE = re.compile(r"(<!-- table:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(\n<!-- /table:(?P=name) -->)", re.S)
VALUE = re.compile(r"(<!-- value:(?P<name>[\w-]+) -->)(?P<body>.*?)(<!-- /value -->)", re.S)


def render_all(text: str, rendered: dict[str, str]) -> str:
    """``text`` with every marked table and value replaced by its rendering."""

    def table(m: re.Match[str]) -> str:
        return m.group(1) + rendered[m.group("name")] + m.group(4)

    def value(m: re.Match[str]) -> str:
        return m.group(1) + rendered[m.group("name")] + m.group(4)

    return VALUE.sub(value, TABLE.sub(table, text))


def _rendered() -> dict[str, str]:
    return {name: fn() for name, fn in renderers().items()}


def differences(documents: tuple[Path, ...] = DOCUMENTS) -> list[str]:
    """Every marked table or value of ``documents`` that differs from its rendering (unknown
    names included), as ``path: name`` lines; empty when the docs show what the results say."""
    rendered = _rendered()
    out = []
    for path in documents:
        text = path.read_text()
        for pattern in (TABLE, VALUE):
            for m in pattern.finditer(text):
                name = m.group("name")
                if name not in rendered:
                    out.append(f"{path.relative_to(ROOT)}: unknown {name!r}")
                elif m.group("body") != rendered[name]:
                    out.append(f"{path.relative_to(ROOT)}: {name}")
    return out


def write(documents: tuple[Path, ...] = DOCUMENTS) -> list[Path]:
    """Rewrite every marked table and value of ``documents``; the paths that changed."""
    rendered = _rendered()
    changed = []
    for path in documents:
        text = path.read_text()
        new = render_all(text, rendered)
        if new != text:
            path.write_text(new)
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite the docs from the stored results")
    ap.add_argument("--run", nargs="+", choices=("tuning", "audits"), default=(),
                    help="recompute these tables (minutes) and store their results")  # fmt: skip
    ap.add_argument("--check", action="store_true", help="with --run: compare with the stored results only")
    ap.add_argument("--reduced", action="store_true",
                    help="with --run: a reduced scale (smoke test; never stored)")  # fmt: skip
    args = ap.parse_args(argv)
    runs = {"tuning": run_tuning, "audits": run_audits}
    stored = _stored()
    for name in args.run:
        fresh = runs[name](REDUCED if args.reduced else FULL)
        if args.reduced:
            print(f"{name}: {len(fresh)} rows at reduced scale")
            continue
        if args.check:
            same = fresh == stored.get(name)
            print(f"{name}: {'reproduced to the digit' if same else 'DIFFERS from the stored results'}")
            if not same:
                return 1
            continue
        stored[name] = fresh
        STORED.write_text(json.dumps(stored, indent=1) + "\n")
        print(f"{name}: stored in {STORED.relative_to(ROOT)}")
    if args.check or args.reduced:
        return 0
    if args.write or args.run:
        for path in write():
            print(f"rewrote {path.relative_to(ROOT)}")
        return 0
    diff = differences()
    for line in diff:
        print(f"differs from its results: {line}")
    if not diff:
        print("every marked table and value shows its stored results")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
