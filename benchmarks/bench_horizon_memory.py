"""Benchmark: does a run's memory grow with its horizon? Bytes per round of every registered
algorithm's ``dpaudit run``.

Run ``python benchmarks/bench_horizon_memory.py [--horizons 5e5 1.5e6] [--algorithms ALG ...]
[--json FILE [--update]]`` (``--update`` re-measures only the ``--algorithms`` a change touched and
replaces their rows in the file). Each algorithm runs ``dpaudit run ALG -T T -R 1 --audit-trials 0
--json`` (the simulation, the certificate, the ledger check and the report, no audit) at each
horizon, in a fresh process under :mod:`tracemalloc`, after a warm-up run at T = 2,000 in the same
process (imports and caches are then in place). numba's kernels are not: a run loads them from
``bandits.engine.compiled.KERNEL_MIN_ROUNDS`` = 2·10⁵ rounds on, so both default horizons load
them and their import cancels in the bytes per round; with numba's on-disk cache empty, the first
measurement also holds their compilation (Gaussian TS at T = 3·10⁵: 5.0 and 10.4 MiB in two cold
runs, 1.49 MiB in eight warm ones), so measure with a warm cache. The peak of traced memory above
what the warm-up left does not depend on the machine's load; the garbage collector's timing, or a
cold cache, moved it by a few MiB between runs (DP-TS-UCB at T = 10⁶: 46.6 and 53.4 MiB); it
counts every NumPy array and Python object, not the interpreter's or numba's own heap. The table
shows a peak lower at the larger horizon as 0 bytes a round. The table gives each horizon's peak
and the bytes per round between the last two horizons: a run whose
memory is bounded by its chunk budget holds about 0 bytes a round, while one that keeps per-round
state (a table indexed by counts, a buffer of every round's observations, a ledger entry per
round) holds a few to hundreds, i.e. gigabytes at T = 10⁹, which the run allows. The default
horizons lie past the plateaus: below about 3·10⁵ rounds a run's chunk buffers still grow toward
the chunk budget (CUCB's traced peak: 3.5 MiB at T = 10⁵, 41.6 MiB from 3·10⁵ to 3·10⁶), which
the bytes per round between smaller horizons would mistake for a per-round cost.

Example (the sentence the README shows, from made-up rows):
    >>> rows = [{"algorithm": "a", "peak_mib": [1.0, 1.0], "bytes_per_round": 0.0},
    ...         {"algorithm": "b", "peak_mib": [2.0, 40.0], "bytes_per_round": 44.3}]
    >>> for part in sentence({"horizons": [100000, 1000000], "rows": rows}).split("; "):
    ...     print(part)
    1 of 2 runs hold memory independent of the horizon (under 1 byte a round from T = 100,000 to 1,000,000)
    growing: b 44 bytes a round (40 MiB at T = 1,000,000)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)

BOUNDED = 1.0
"""Bytes per round under which a run's memory counts as independent of the horizon."""
WARM_UP = 2000

_CHILD = """
import contextlib, io, json, sys, tracemalloc
from dpaudit.cli.main import main
alg, T, warm = sys.argv[1], sys.argv[2], sys.argv[3]
tracemalloc.start()
def run(horizon):
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["run", alg, "-T", horizon, "-R", "1", "--audit-trials", "0", "--json"])
    if code not in (0, 1):
        raise SystemExit(f"dpaudit run {alg} -T {horizon} exited with {code}")
run(warm)
base = tracemalloc.get_traced_memory()[0]
tracemalloc.reset_peak()
run(T)
print(json.dumps({"peak_bytes": tracemalloc.get_traced_memory()[1] - base}))
"""


def peak_bytes(alg: str, horizon: int) -> int:
    """The traced peak of one tiny-repetition run at ``horizon`` above what its warm-up left."""
    out = subprocess.run([sys.executable, "-c", _CHILD, alg, str(horizon), str(WARM_UP)], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    return int(json.loads(out.strip().splitlines()[-1])["peak_bytes"])


def measure(algorithms: list[str], horizons: list[int]) -> dict[str, Any]:
    """Each algorithm's peak (MiB) at each horizon and its bytes per round between the last two."""
    rows = []
    for alg in algorithms:
        peaks = [peak_bytes(alg, h) for h in horizons]
        per_round = (peaks[-1] - peaks[-2]) / (horizons[-1] - horizons[-2]) if len(peaks) > 1 else 0.0
        rows.append({"algorithm": alg, "peak_mib": [p / 2**20 for p in peaks], "bytes_per_round": per_round})
        print(f"{alg:28s} " + " ".join(f"{p / 2**20:9.1f}" for p in peaks) + f" {per_round:9.1f}", flush=True)
    return {"horizons": horizons, "rows": rows}


def sentence(data: dict[str, Any]) -> str:
    """The README's summary: how many runs are bounded, and each growing one's bytes per round."""
    h, rows = data["horizons"], data["rows"]
    growing = sorted((r for r in rows if r["bytes_per_round"] >= BOUNDED),
                     key=lambda r: -r["bytes_per_round"])  # fmt: skip
    text = (f"{len(rows) - len(growing)} of {len(rows)} runs hold memory independent of the horizon "
            f"(under {BOUNDED:g} byte a round from T = {h[-2]:,} to {h[-1]:,})")  # fmt: skip
    if growing:
        text += "; growing: " + ", ".join(f"{r['algorithm']} {r['bytes_per_round']:.0f} bytes a round "
                                          f"({r['peak_mib'][-1]:.0f} MiB at T = {h[-1]:,})" for r in growing)
    return text


def table(data: dict[str, Any]) -> str:
    """One row per algorithm: its traced peak at each horizon and its bytes per round."""
    h = data["horizons"]
    out = ["| algorithm | " + " | ".join(f"MiB at T = {x:,}" for x in h) + " | bytes a round |",
           "|---|" + "---:|" * (len(h) + 1)]
    for r in data["rows"]:
        cells = " | ".join(f"{p:.1f}" for p in r["peak_mib"])
        out.append(f"| {r['algorithm']} | {cells} | {max(r['bytes_per_round'], 0.0):.1f} |")
    return "\n".join(out)


def main() -> None:
    from bandits.registry import FAMILY_OF
    from bandits.registry import algorithms as registered

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizons", nargs="+", type=float, default=[5e5, 1.5e6])
    ap.add_argument("--algorithms", nargs="+", default=None, help="only these (printed, never written)")
    ap.add_argument("--json", default=None, help="write the measurement to this file")
    ap.add_argument("--update", action="store_true",
                    help="with --algorithms and --json: measure only these and replace their rows in the "
                         "--json file (the algorithms a change touched), keeping the others")  # fmt: skip
    args = ap.parse_args()
    horizons = sorted(int(x) for x in args.horizons)
    if len(horizons) < 2 or horizons[0] <= WARM_UP:
        ap.error(f"--horizons needs two or more horizons above the warm-up's {WARM_UP}")
    if args.algorithms and args.json and not args.update:
        ap.error("--algorithms measures a subset: it writes the --json file the README reads only "
                 "with --update")
    if args.update and not (args.algorithms and args.json and Path(args.json).is_file()):
        ap.error("--update needs --algorithms and an existing --json file")
    order = {key: i for i, key in enumerate(FAMILY_OF)}  # the registry's order, whatever loaded first
    keys = sorted(registered(), key=lambda k: order.get(k, len(order)))
    unknown = sorted(set(args.algorithms or ()) - set(keys))
    if unknown:
        ap.error(f"--algorithms must be registered algorithms ({', '.join(keys)}), got {', '.join(unknown)}")
    before = json.loads(Path(args.json).read_text(encoding="utf-8")) if args.update else None
    if before is not None and before["horizons"] != horizons:
        ap.error(f"--update keeps rows measured at the horizons {before['horizons']}: "
                 "give the same --horizons")
    print(f"{'algorithm':28s} " + " ".join(f"{f'MiB@{h:.2g}':>9s}" for h in horizons) + f" {'B/round':>9s}")
    data = measure(args.algorithms or keys, horizons)
    if before is not None:
        rows = {r["algorithm"]: r for r in before["rows"]} | {r["algorithm"]: r for r in data["rows"]}
        data = {"horizons": horizons, "rows": [rows[k] for k in keys if k in rows]}
    print(sentence(data))
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
