"""Calibration and the incremental accountant (issue 23) against dp-accounting and Opacus.

Run: ``python benchmarks/bench_calibration.py`` (``--quick``: the first target and 10⁴ steps;
``--json FILE`` for the raw numbers).

First table — the noise multiplier for a target (ε, δ) of DP-SGD (Poisson sampling q, k steps):
dpaudit's ``calibrate_dpsgd`` (certified by the best of rdp and pld, relative tolerance 1e-3),
dp-accounting's ``calibrate_dp_mechanism`` with its ``PLDAccountant`` (and its ``RdpAccountant``),
and Opacus' ``get_noise_multiplier`` (its ``prv`` and ``rdp`` accountants, ``epsilon_tolerance``
0.01, its default). For every answer σ: its own library's ε, and dpaudit's *certified* ε at that
σ (above the target = the answer is not certified to meet it); the wall time of the call.

Second table — one DP-SGD step at a time (q = 0.01, σ = 1, 10⁵ steps), then ε at δ = 1e-5:
dpaudit's :class:`~dpaudit.accounting.Accountant` (``compose`` per step), Opacus' ``RDPAccountant``
and ``PRVAccountant`` (``step`` per step), dp-accounting's ``RdpAccountant`` (``compose`` per
step: 26 ms a call, the same at every call, so it runs on a 2000-step prefix and the time is
extrapolated linearly) and its ``PLDAccountant`` (``compose`` per step: it convolves at every call,
0.6 s a call by the 100th and growing, so it runs on a 100-step prefix and the time is extrapolated
linearly, a lower bound).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpaudit.accounting import Accountant, account  # noqa: E402
from dpaudit.accounting.calibration import calibrate_dpsgd, dpsgd_event  # noqa: E402

TARGETS = [  # (q, steps, target ε, δ)
    (0.01, 1000, 2.0, 1e-5),
    (256 / 60000, 14062, 3.0, 1e-5),
    (0.001, 10**5, 1.0, 1e-5),
    (0.1, 1000, 8.0, 1e-6),
]


def _certified(q: float, sigma: float, k: int, delta: float) -> float:
    return float(account(dpsgd_event(q, sigma, k), delta=delta, methods=["rdp", "pld"]).best.value)


def _dpa(q: float, k: int, eps: float, delta: float, kind: str) -> tuple[float, float]:
    import dp_accounting as dpa

    make = dpa.pld.PLDAccountant if kind == "pld" else dpa.rdp.RdpAccountant
    sigma = dpa.calibrate_dp_mechanism(
        make, lambda s: dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s)), k),
        eps, delta, dpa.LowerEndpointAndGuess(0.0, 1.0))
    acc = make()
    acc.compose(dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), k))
    return float(sigma), float(acc.get_epsilon(delta))


def _opacus(q: float, k: int, eps: float, delta: float, kind: str) -> tuple[float, float]:
    from opacus.accountants import create_accountant
    from opacus.accountants.utils import get_noise_multiplier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sigma = get_noise_multiplier(target_epsilon=eps, target_delta=delta, sample_rate=q, steps=k,
                                     accountant=kind)
        acc = create_accountant(kind)
        acc.history = [(sigma, q, k)]
        return float(sigma), float(acc.get_epsilon(delta))


def calibration_table(targets: list[tuple[float, int, float, float]]) -> list[dict[str, Any]]:
    rows = []
    for q, k, eps, delta in targets:
        print(f"q={q:.6g} k={k} target epsilon={eps:g} delta={delta:g}")
        t0 = time.perf_counter()
        ours = calibrate_dpsgd(target_epsilon=eps, delta=delta, sampling_rate=q, steps=k)
        t_ours = time.perf_counter() - t0
        row: dict[str, Any] = {"q": q, "steps": k, "target": eps, "delta": delta,
                               "ours": {"sigma": ours.value, "own_eps": ours.epsilon,
                                        "certified": ours.epsilon, "seconds": t_ours,
                                        "evaluations": ours.evaluations}}
        print(f"  dpaudit          sigma={ours.value:.6f} certified eps={ours.epsilon:.6f} "
              f"[{t_ours:.2f} s, {ours.evaluations} evaluations]")
        for name, fn, kind in (("dp-accounting pld", _dpa, "pld"), ("dp-accounting rdp", _dpa, "rdp"),
                               ("opacus prv", _opacus, "prv"), ("opacus rdp", _opacus, "rdp")):
            t0 = time.perf_counter()
            try:
                sigma, own = fn(q, k, eps, delta, kind)
            except Exception as exc:  # noqa: BLE001 - a peer's failure is a result
                print(f"  {name:<16} failed: {type(exc).__name__}: {exc}")
                row[name] = {"error": str(exc)}
                continue
            secs = time.perf_counter() - t0
            cert = _certified(q, sigma, k, delta)
            row[name] = {"sigma": sigma, "own_eps": own, "certified": cert, "seconds": secs}
            flag = "" if cert <= eps else "  (certified ABOVE the target)"
            print(f"  {name:<16} sigma={sigma:.6f} own eps={own:.6f} certified eps={cert:.6f} "
                  f"[{secs:.2f} s; {secs / t_ours:.2f}x ours]{flag}")
        rows.append(row)
    return rows


def incremental_table(steps: int, q: float = 0.01, sigma: float = 1.0, delta: float = 1e-5) -> dict[str, Any]:
    import dp_accounting as dpa
    from opacus.accountants import PRVAccountant, RDPAccountant

    out: dict[str, Any] = {"steps": steps}
    print(f"one DP-SGD step at a time: q={q:g} sigma={sigma:g}, {steps} steps, epsilon at delta={delta:g}")

    def timed(name: str, fn: Any, scale: float = 1.0) -> None:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eps = float(fn())
        secs = (time.perf_counter() - t0) * scale
        out[name] = {"seconds": secs, "epsilon": eps, "extrapolated": scale != 1.0}
        base = out.get("dpaudit Accountant", {}).get("seconds", secs)
        note = ""
        if scale != 1:
            note = f" (extrapolated x{scale:g} from {int(steps / scale)} steps; epsilon of the prefix)"
        print(f"  {name:<28} {secs:9.2f} s  {secs / base:7.2f}x ours  epsilon={eps:.6f}{note}")

    def ours() -> float:
        acc = Accountant(methods=["rdp", "pld"])
        step = dpsgd_event(q, sigma, 1)
        for _ in range(steps):
            acc.compose(step)
        return acc.get_epsilon(delta)

    def opacus(cls: Any) -> Any:
        def run() -> float:
            acc = cls()
            for _ in range(steps):
                acc.step(noise_multiplier=sigma, sample_rate=q)
            return acc.get_epsilon(delta)
        return run

    prefix = min(steps, 100)
    rdp_prefix = min(steps, 2000)

    def dpa_loop(make: Any, n: int) -> Any:
        def run() -> float:
            acc = make()
            ev = dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma))
            for _ in range(n):
                acc.compose(ev)
            return acc.get_epsilon(delta)
        return run

    timed("dpaudit Accountant", ours)
    timed("Opacus RDPAccountant.step", opacus(RDPAccountant))
    timed("Opacus PRVAccountant.step", opacus(PRVAccountant))
    timed("dp-accounting RDP compose", dpa_loop(dpa.rdp.RdpAccountant, rdp_prefix), scale=steps / rdp_prefix)
    timed("dp-accounting PLD compose", dpa_loop(dpa.pld.PLDAccountant, prefix), scale=steps / prefix)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    if args.json:  # a bad output path fails now, not after the run
        try:
            Path(args.json).write_text("{}")
        except OSError as exc:
            ap.error(f"--json: cannot write {args.json}: {exc.strerror}")
    result = {"calibration": calibration_table(TARGETS[:1] if args.quick else TARGETS),
              "incremental": incremental_table(10**4 if args.quick else 10**5)}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
