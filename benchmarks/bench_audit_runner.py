"""Benchmark: end-to-end runner audit of a μ = 1 Gaussian mechanism (sampling + statistic + bounds).

Run: ``python benchmarks/bench_audit_runner.py [--trials N] [--repeats R]``.

``run_audit(gaussian_target(sigma=1), trials=N)``: N mechanism runs in total (N/2 per neighbour),
seeded batches, white-box privacy-loss statistic, Bonferroni family of 600 tests, GDP μ and
ε(δ = 1e-5) lower bounds, curve audit, frozen report. ``bench_audit.py`` measures the bounds
layer alone on 10^6 samples per neighbour; this one measures what a user of ``dpaudit audit``
waits for. Reported also with a 2-thread executor.
"""

from __future__ import annotations

import argparse
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

from dpaudit.audit.runner import run_audit
from mechanisms.auditing.targets import gaussian_target


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=10**6, help="total mechanism runs (default 1e6)")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    target = gaussian_target(sigma=1.0)
    run_audit(target, trials=10_000, seed=0)  # warm-up
    for label, make in (("serial", lambda: None), ("2 threads", lambda: ThreadPoolExecutor(2))):
        times = []
        for r in range(args.repeats):
            ex = make()
            t0 = time.perf_counter()
            rep = run_audit(target, trials=args.trials, seed=r, executor=ex, batch_size=1 << 17)
            times.append(time.perf_counter() - t0)
            if ex is not None:
                ex.shutdown()
        t = statistics.median(times)
        print(
            f"runner audit, Gaussian mu=1, {args.trials:,} trials ({label}): {t * 1e3:7.1f} ms "
            f"-> {args.trials / t:,.0f} trials/s; mu_lower={rep.empirical.mu_lower:.4f}, "
            f"eps_lower(1e-5)={rep.empirical.epsilon_lower:.3f}, verdict={rep.verdict}; "
            f"target < 1 s: {'OK' if t < 1.0 else 'MISSED'}"
        )


if __name__ == "__main__":
    main()
