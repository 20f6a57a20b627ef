"""Benchmark: start-up of a tiny ``dpaudit run`` against ``python -c "import numpy"``.

Run ``python benchmarks/bench_startup.py [--runs 21] [--every-runs 9] [--json FILE]`` (or, to
follow a few algorithms while working on their start-up, ``--algorithms ALG ...``, printed only). Each command
runs ``--runs`` times in a fresh interpreter, interleaved so that both see the same machine load;
the table gives the median wall time of each and their ratio, and, for the run, the milliseconds
spent in each phase of one extra in-process timing (imports of NumPy, of the accountant and of
the run pipeline; the run itself: parsing, simulation, certificate and report; not the
interpreter's exit, which the console command skips when only memory would be freed). Then every
registered algorithm's tiny run (T = 30, one repetition, no audit), ``--every-runs`` times each,
interleaved with NumPy's start-up the same way (``--every-runs 0`` skips it); for each algorithm
above 2×, the same tiny run with ``--json`` as many times more, for the median time its own report
gives to the certificate (``timing.accounting``: composing the declaration under every method,
with the accountant's lazily loaded modules), and the ratio the run would have without it. Python's
byte-code cache is switched on for all (a user's installation has one).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
RUN = ["run", "ts", "-T", "10", "-R", "1", "--audit-trials", "0"]
_NUMPY = [sys.executable, "-c", "import numpy"]


def _dpaudit(args: list[str]) -> list[str]:
    """``dpaudit ARGS`` in a fresh interpreter, as the console command runs it (its entry point,
    :func:`dpaudit.cli.main.console`, with its exit)."""
    return [sys.executable, "-c", f"from dpaudit.cli.main import console; console({args!r})"]


_TOOL = _dpaudit(RUN)
_PHASES = """
import contextlib, io, json, time
marks = [time.perf_counter()]
import numpy, numpy.random
marks.append(time.perf_counter())
import dpaudit.accounting, dpaudit.cli.main
marks.append(time.perf_counter())
import bandits.registry, bandits.run
marks.append(time.perf_counter())
with contextlib.redirect_stdout(io.StringIO()):
    dpaudit.cli.main.main(RUN)
marks.append(time.perf_counter())
names = ["numpy", "accountant and CLI", "run pipeline", "the run"]
print(json.dumps({n: 1000 * (b - a) for n, a, b in zip(names, marks, marks[1:])}))
""".replace("RUN", repr(RUN))


def _env(cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return env | {"PYTHONPYCACHEPREFIX": cache}


def _wall(cmd: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def _tiny(alg: str) -> list[str]:
    return _dpaudit(["run", alg, "-T", "30", "-R", "1", "--audit-trials", "0"])


def _certificate_s(alg: str, env: dict[str, str]) -> float:
    """The seconds a tiny run's own report gives to its certificate (``timing.accounting``)."""
    cmd = _dpaudit(["run", alg, "-T", "30", "-R", "1", "--audit-trials", "0", "--json"])
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout
    return float(json.loads(out)["timing"]["accounting"])


def measure_every(runs: int, algorithms: list[str] | None = None) -> dict[str, dict[str, float]]:
    """Median wall seconds of every registered algorithm's tiny run and of NumPy's start-up,
    interleaved (one warm-up each), and their ratio; above 2×, also the median seconds of the
    run's certificate and the ratio without them."""
    if algorithms is None:
        from bandits.registry import algorithms as registered

        algorithms = list(registered())
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as cache:
        env = _env(cache)
        _wall(_NUMPY, env)
        for alg in algorithms:
            _wall(_tiny(alg), env)
            numpy_s, run_s = [], []
            for _ in range(runs):
                numpy_s.append(_wall(_NUMPY, env))
                run_s.append(_wall(_tiny(alg), env))
            a, b = statistics.median(numpy_s), statistics.median(run_s)
            out[alg] = with_certificate(alg, {"numpy_s": a, "run_s": b, "ratio": b / a}, env, runs)
    return out


def with_certificate(alg: str, row: dict[str, float], env: dict[str, str], runs: int) -> dict[str, float]:
    """``row`` (one algorithm's timing) with, above 2×, the median seconds of the run's certificate
    over ``runs`` runs and the ratio without them; ``row`` itself at or below 2×."""
    if row["ratio"] <= 2.0:
        return row
    cert = statistics.median(_certificate_s(alg, env) for _ in range(runs))
    return row | {"certificate_s": cert, "ratio_without_certificate": (row["run_s"] - cert) / row["numpy_s"]}


def measure(runs: int) -> dict[str, Any]:
    """Median wall seconds of both commands (after one warm-up each), and the run's phases."""
    with tempfile.TemporaryDirectory() as cache:
        env = _env(cache)
        _wall(_NUMPY, env), _wall(_TOOL, env)  # fill the byte-code cache
        numpy_s, tool_s = [], []
        for _ in range(runs):
            numpy_s.append(_wall(_NUMPY, env))
            tool_s.append(_wall(_TOOL, env))
        out = subprocess.run([sys.executable, "-c", _PHASES], cwd=ROOT, env=env, capture_output=True,
                             text=True, check=True).stdout  # fmt: skip
    a, b = statistics.median(numpy_s), statistics.median(tool_s)
    return {"command": "dpaudit " + " ".join(RUN), "runs": runs, "numpy_s": a, "run_s": b, "ratio": b / a,
            "phases_ms": json.loads(out.strip().splitlines()[-1])}  # fmt: skip


def _certificate_note(r: dict[str, float]) -> str:
    if "certificate_s" not in r:
        return ""
    return (f" (its certificate {1000 * r['certificate_s']:.0f} ms; "
            f"{r['ratio_without_certificate']:.2f}× without it)")


def sentence(row: dict[str, Any]) -> str:
    """The README's summary of one measurement."""
    phases = ", ".join(f"{k} {v:.0f} ms" for k, v in row["phases_ms"].items())
    text = (f"`{row['command']}` {1000 * row['run_s']:.0f} ms against {1000 * row['numpy_s']:.0f} ms for "
            f"`python -c \"import numpy\"` ({row['ratio']:.2f}×; medians of {row['runs']} runs; "
            f"in process: {phases})")  # fmt: skip
    every = row.get("every")
    if every:
        ratios = {alg: r["ratio"] for alg, r in every["algorithms"].items()}
        worst = max(ratios, key=ratios.__getitem__)
        within = sum(v <= 2.0 for v in ratios.values())
        ranked = sorted(ratios.items(), key=lambda kv: -kv[1])
        above = ", ".join(f"{alg} {v:.2f}×{_certificate_note(every['algorithms'][alg])}"
                          for alg, v in ranked if v > 2.0)
        who = "the named algorithms'" if every.get("named") else "every registered algorithm's"
        text += (f"; {who} `run ALG -T 30 -R 1 --audit-trials 0` "
                 f"(medians of {every['runs']} runs each): median {statistics.median(ratios.values()):.2f}×, "
                 f"{within} of {len(ratios)} within 2×, at most {ratios[worst]:.2f}× ({worst})"
                 + (f"; above 2×: {above}" if above else ""))  # fmt: skip
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--every-runs", type=int, default=9, help="runs of each algorithm's tiny run (0: skip)")
    ap.add_argument("--json", default=None, help="write the measurement to this file")
    ap.add_argument("--algorithms", nargs="+", default=None,
                    help="only these algorithms' tiny runs (printed, never written: the README's table "
                         "reads every algorithm)")  # fmt: skip
    args = ap.parse_args()
    if args.algorithms and args.json:
        ap.error("--algorithms measures a subset: it cannot write the --json file the README reads")
    row = measure(args.runs)
    if args.every_runs > 0:
        every = measure_every(args.every_runs, args.algorithms)
        row["every"] = {"runs": args.every_runs, "algorithms": every, "named": bool(args.algorithms)}
    print(sentence(row))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(row, fh, indent=1)


if __name__ == "__main__":
    main()
