"""Benchmark: start-up of a tiny ``dpaudit run`` against ``python -c "import numpy"``.

Run ``python benchmarks/bench_startup.py [--runs 21] [--json FILE]``. Each command runs ``--runs``
times in a fresh interpreter, interleaved so that both see the same machine load; the table gives
the median wall time of each and their ratio, and, for the run, the milliseconds spent in each
phase of one extra in-process timing (imports of NumPy, of the accountant and of the run
pipeline; the run itself: parsing, simulation, certificate and report). Python's byte-code cache
is switched on for both (a user's installation has one).
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
_TOOL = [sys.executable, "-c", f"import sys; from dpaudit.cli.main import main; sys.exit(main({RUN!r}))"]
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


def sentence(row: dict[str, Any]) -> str:
    """The README's summary of one measurement."""
    phases = ", ".join(f"{k} {v:.0f} ms" for k, v in row["phases_ms"].items())
    return (f"`{row['command']}` {1000 * row['run_s']:.0f} ms against {1000 * row['numpy_s']:.0f} ms for "
            f"`python -c \"import numpy\"` ({row['ratio']:.2f}×; medians of {row['runs']} runs; "
            f"in process: {phases})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--json", default=None, help="write the measurement to this file")
    args = ap.parse_args()
    row = measure(args.runs)
    print(sentence(row))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(row, fh, indent=1)


if __name__ == "__main__":
    main()
