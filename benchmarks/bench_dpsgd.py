"""DP-SGD accounting (issue 23): dpaudit against dp-accounting's PLD and RDP, Opacus' RDP and PRV, and
prv-accountant, on the same events, each call in its own process (time, peak memory, ε).

Run: ``python benchmarks/bench_dpsgd.py`` (the 36-cell grid: Poisson sampling q ∈ {1e-3, 1e-2, 1e-1},
noise multiplier σ ∈ {0.8, 1, 2}, k ∈ {10³, 10⁴, 10⁵, 10⁶} steps, δ = 1e-5; then fixed-size
batches against dp-accounting's RDP). ``--quick`` runs the cells up to 10⁴ steps; ``--cells``
picks cells by index; ``--peers`` chooses the libraries; ``--json FILE`` writes the raw results;
``--timeout`` (s, default 900) and ``--memory-gib`` (address-space cap, default 14) bound each call.

Every call runs in a fresh, single-threaded (``OMP/OPENBLAS/MKL_NUM_THREADS=1``) ``python`` child
that imports its library first, records its resident memory, runs the call once and reports the
wall time, CPU time, ε and the *growth* of its peak resident memory over the post-import baseline
(``ru_maxrss``): the memory the call itself needed. Peers:

* ``ours`` — ``account(event, delta, methods=["rdp", "pld"]).best`` (certified);
* ``ours_pld`` — ``account(event, delta, methods=["pld"])`` (certified; the like-for-like peer of
  dp-accounting's PLD);
* ``dpa_pld`` — dp-accounting ``PLDAccountant`` (pessimistic, Δ = 1e-4), ``compose(event, k)``;
* ``dpa_pld_low`` — dp-accounting's *optimistic* PLD (privacy buckets rounded down, Δ = 1e-4 or
  ``--low-interval``): a lower reference no valid upper bound may go below;
* ``dpa_rdp`` — dp-accounting ``RdpAccountant`` (its order grid);
* ``opacus_rdp`` — Opacus ``RDPAccountant`` (history ``[(σ, q, k)]``);
* ``opacus_prv`` — Opacus ``PRVAccountant`` (``eps_error`` 0.01; its upper estimate);
* ``prv`` — prv-accountant 0.2.0 ``DPSGDAccountant`` (``eps_error`` 0.01; (lower, estimate, upper)).

The tables print ours/peer ratios of ε and of time per cell; "lower" is prv-accountant's lower
bound where it answered (a reference that no valid upper bound may go below).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: the repository's packages (benchmarks included)
    sys.path.insert(0, str(ROOT))
from benchmarks.dpsgd_tables import summary  # noqa: E402

DELTA = 1e-5
CELLS = [(q, s, k) for q in (1e-3, 1e-2, 1e-1) for s in (0.8, 1.0, 2.0)
         for k in (10**3, 10**4, 10**5, 10**6)]
FIXED = [(60000, 256, 1.1, 2000), (60000, 256, 1.1, 20000), (50000, 512, 0.8, 10000),
         (10**6, 1000, 1.0, 10**5)]
ONE_CORE = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
"""Every call on one core (dp-accounting's PLD is single-threaded; our window bounds would use two)."""
TIMED = ("ours", "ours_pld", "dpa_pld")  # the time comparison: --repeat calls each, the fastest kept
PRV_PEERS = ("opacus_prv", "prv")
PRV_MAX_STEPS = 10**4  # beyond, the PRV peers need minutes and gigabytes per cell (--all-prv runs them)
PEERS = ["ours", "ours_pld", "dpa_pld", "dpa_pld_low", "dpa_rdp", "opacus_rdp", "opacus_prv", "prv"]

_CHILD = r'''
import json, math, resource, sys, time, warnings
warnings.simplefilter("ignore")
peer, q, s, k = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
delta, cap = float(sys.argv[5]), int(sys.argv[6])
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
import logging; logging.disable(logging.WARNING)
out = {}
if peer in ("ours", "ours_pld"):
    from dpaudit.accounting import account
    from dpaudit.accounting.calibration import dpsgd_event
    import dp_accounting.pld.privacy_loss_distribution, scipy.fft, scipy.signal  # what pld imports lazily
    methods = ["rdp", "pld"] if peer == "ours" else ["pld"]
    def run():
        r = account(dpsgd_event(q, s, k), delta=delta, methods=methods)
        out.update({m: r.bounds[m].value for m in methods}, method=r.best.method)
        return r.best.value
elif peer == "ours_wor":
    from dpaudit.accounting import account
    from dpaudit.events import GaussianEvent
    from dpaudit.events_ml import SampledWithoutReplacementEvent
    n, b = int(q), int(sys.argv[7])
    def run():
        return account(SampledWithoutReplacementEvent(n, b, GaussianEvent(s)).repeat(k), delta=delta,
                       methods=["rdp"]).best.value
elif peer.startswith("dpa"):
    import dp_accounting as dpa
    if peer == "dpa_wor":
        n, b = int(q), int(sys.argv[7])
        ev = dpa.SelfComposedDpEvent(dpa.SampledWithoutReplacementDpEvent(n, b, dpa.GaussianDpEvent(s)), k)
    else:
        ev = dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s))
    def run():
        if peer == "dpa_pld_low":
            from dp_accounting.pld import privacy_loss_distribution as dpl
            low = dpl.from_gaussian_mechanism(s, sampling_prob=q, pessimistic_estimate=False,
                                              value_discretization_interval=float(sys.argv[7]),
                                              use_connect_dots=False)
            return low.self_compose(k).get_epsilon_for_delta(delta)
        if peer == "dpa_pld":
            acc = dpa.pld.PLDAccountant(); acc.compose(ev, k)
        elif peer == "dpa_wor":
            acc = dpa.rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
            acc.compose(ev)
        else:
            acc = dpa.rdp.RdpAccountant(); acc.compose(ev, k)
        return acc.get_epsilon(delta)
elif peer.startswith("opacus"):
    from opacus.accountants import PRVAccountant, RDPAccountant
    def run():
        acc = RDPAccountant() if peer == "opacus_rdp" else PRVAccountant()
        acc.history = [(s, q, k)]
        return acc.get_epsilon(delta) if peer == "opacus_rdp" else acc.get_epsilon(delta, eps_error=0.01)
elif peer == "prv":
    from prv_accountant.dpsgd import DPSGDAccountant
    def run():
        lo, est, up = DPSGDAccountant(s, q, k, eps_error=0.01).compute_epsilon(delta, k)
        out.update(lower=lo, estimate=est)
        return up
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
w0, c0 = time.perf_counter(), time.process_time()
try:
    eps = float(run())
    err = None
except MemoryError:
    eps, err = None, "MemoryError"
except Exception as exc:
    eps, err = None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}"
out.update(eps=eps, error=err, wall=time.perf_counter() - w0, cpu=time.process_time() - c0,
           mem_mib=(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024)
print(json.dumps(out))
'''


def run_best(peer: str, q: float, s: float, k: int, *, repeat: int, **kw: Any) -> dict:
    """The fastest of ``repeat`` fresh-process calls (the others differ only by machine noise)."""
    runs = [run_one(peer, q, s, k, **kw) for _ in range(repeat)]
    timed = [r for r in runs if r.get("eps") is not None]
    return min(timed, key=lambda r: r["wall"]) if timed else runs[0]


def run_one(peer: str, q: float, s: float, k: int, *, timeout: float, cap_gib: float,
            extra: str = "") -> dict:
    """One call in a fresh child process: its result dict, or an error (timeout, crash)."""
    cmd = [sys.executable, "-c", _CHILD, peer, repr(q), repr(s), str(k), repr(DELTA),
           str(int(cap_gib * 2**30))]
    if extra:
        cmd.append(extra)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT), **ONE_CORE})
    except subprocess.TimeoutExpired:
        return {"eps": None, "error": f"timeout > {timeout:g} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"eps": None, "error": f"crashed: {tail[:120]}"}
    return json.loads(lines[-1])


def _cell_text(res: dict[str, dict], peers: list[str]) -> str:
    ours = res["ours"].get("eps")
    parts = []
    for p in peers:
        r = res.get(p, {})
        if r.get("eps") is None:
            parts.append(f"{p}: {r.get('error', 'n/a')}")
        else:
            ratio = f" ({ours / r['eps']:.4f}x eps, {r['wall'] / res['ours']['wall']:.2f}x time)" if (
                p != "ours" and ours and r["eps"] > 0 and res["ours"]["wall"] > 0) else ""
            parts.append(f"{p} {r['eps']:.6f} [{r['wall']:.2f} s, {r['mem_mib']:.0f} MiB]{ratio}")
    return "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the cells up to 1e4 steps")
    ap.add_argument("--cells", type=int, nargs="*", help="indices into the 36-cell grid")
    ap.add_argument("--peers", nargs="*", default=PEERS, choices=PEERS)
    ap.add_argument("--no-fixed", action="store_true", help="skip the fixed-size batch cells")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--memory-gib", type=float, default=14.0)
    ap.add_argument("--json", metavar="FILE", help="write every result here")
    ap.add_argument("--low-interval", type=float, default=1e-4,
                    help="grid interval of dp-accounting's optimistic PLD (dpa_pld_low; default 1e-4)")
    ap.add_argument("--all-prv", action="store_true",
                    help=f"run the PRV peers beyond {PRV_MAX_STEPS} steps too")
    ap.add_argument("--repeat", type=int, default=1,
                    help="fresh-process calls per cell of ours, ours_pld and dpa_pld; the fastest is kept")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error(f"--repeat must be >= 1, got {args.repeat}")
    if args.json:  # a bad output path fails now, not after the run
        try:
            Path(args.json).write_text("[]")
        except OSError as exc:
            ap.error(f"--json: cannot write {args.json}: {exc.strerror}")
    cells = list(enumerate(CELLS))
    if args.cells is not None:
        cells = [c for c in cells if c[0] in args.cells]
    if args.quick:
        cells = [c for c in cells if c[1][2] <= 10**4]
    peers = ["ours"] + [p for p in args.peers if p != "ours"]
    results: list[dict[str, Any]] = []
    print(f"DP-SGD, Poisson sampling, delta = {DELTA:g}: epsilon [wall time, peak memory growth]; "
          "ratios ours/peer")
    for i, (q, s, k) in cells:
        res = {p: run_best(p, q, s, k, repeat=args.repeat if p in TIMED else 1, timeout=args.timeout,
                           cap_gib=args.memory_gib,
                           extra=repr(args.low_interval) if p == "dpa_pld_low" else "")
               for p in peers if p not in PRV_PEERS or k <= PRV_MAX_STEPS or args.all_prv}
        results.append({"cell": i, "q": q, "sigma": s, "steps": k, "results": res})
        print(f"[{i:2d}] q={q:g} sigma={s:g} k={k:.0e}: {_cell_text(res, peers)}", flush=True)
        if args.json:  # after every cell: an interrupted run keeps what it measured
            Path(args.json).write_text(json.dumps(results, indent=1))
    print(summary(results, peers))
    if not args.no_fixed:
        print("fixed-size batches (sampling without replacement, replace-one), ours vs dp-accounting RDP")
        for n, b, s, k in FIXED if not args.quick else FIXED[:2]:
            res = {p: run_one(p, float(n), s, k, timeout=args.timeout, cap_gib=args.memory_gib, extra=str(b))
                   for p in ("ours_wor", "dpa_wor")}
            results.append({"fixed": [n, b, s, k], "results": res})
            o, d = res["ours_wor"], res["dpa_wor"]
            ratio = f"{o['eps'] / d['eps']:.4f}" if o.get("eps") and d.get("eps") else "n/a"
            print(f"  N={n} B={b} sigma={s:g} k={k}: ours {o.get('eps')} [{o.get('wall', math.nan):.2f} s] "
                  f"dp-accounting {d.get('eps')} [{d.get('wall', math.nan):.2f} s] ratio {ratio}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
