"""Planted bugs: trials the auditor needs for 50 % detection, against an oracle's single test.

Run ``python benchmarks/bench_audit_bugs.py [--seeds 40] [--json]``, or with ``--at 1.5`` the
detection rate at exactly 1.5 × the oracle's trials with its 95 % Clopper–Pearson interval (the
issue-10 criterion — ≥ 50 % detection within 1.5× of the oracle — read off directly, without the
grid's 15 % steps; ``--seeds 2000`` gives ± 2.2 points). For every planted bug (none of them
appears in the test suite's other planted-bug tests):

* **oracle** — one Clopper–Pearson test (α/2 per rate) fixed in advance with knowledge of the
  bug: the pair and the threshold of the target's own family whose *true* error rates need the
  fewest trials for P(bound > claim) ≥ ½; that probability is computed exactly by binomial
  sums (:mod:`dpaudit.audit.power`), the true rates in closed form (Gaussian, Laplace, randomized
  response) or from 4·10⁶ samples (report-noisy-max);
* **auditor** — :func:`dpaudit.audit.run_audit` as a user runs it (default: 10 % pilot over the
  target's pre-registered designs, one test certified on the rest; ``trials`` counts both),
  detection rate over ``--seeds`` seeds on a geometric grid of trials (steps of 1.15×); the
  reported value is the smallest grid point with a rate ≥ ½.

Bugs (claim = the toolkit's certificate of the *intended* mechanism):

1. ``gaussian-sigma-0.93`` — Gaussian mechanism sampling with σ = 0.93 instead of 1 (true μ 1.075 vs 1);
2. ``laplace-scale-0.9`` — Laplace mechanism with scale 0.9 instead of 1 (true ε 1.111 vs 1);
3. ``rr-epsilon-1.25`` — binary randomised response keeping the answer with probability
   e^1.25/(1 + e^1.25) while claiming ε = 1;
4. ``rnm-noiseless-arm-2`` — Laplace report-noisy-max (3 arms, scale 1, epoch 16) that forgets
   the noise on arm 2 (claim: the toolkit's 2Δ/b = 2 under replace);
5. ``rnm-arm-2-scale-0.5`` — the same with arm 2's noise at half the scale.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from dpaudit.audit import run_audit  # noqa: E402
from dpaudit.audit.power import _eps_allowed, _mu_allowed, _prob_above  # noqa: E402
from mechanisms import GaussianMechanism, LaplaceMechanism  # noqa: E402
from mechanisms.auditing.targets import (  # noqa: E402
    gaussian_target,
    laplace_target,
    randomized_response_target,
    rnm_laplace_target,
)
from mechanisms.randomized_response import RandomizedResponse  # noqa: E402
from mechanisms.report_noisy_max import LaplaceReportNoisyMax  # noqa: E402


@dataclass(frozen=True)
class SigmaBug(GaussianMechanism):
    actual_sigma: float = 1.0

    def sample(self, x, rng, size=None):
        return GaussianMechanism(self.actual_sigma, self.sensitivity).sample(x, rng, size)


@dataclass(frozen=True)
class ScaleBug(LaplaceMechanism):
    actual_scale: float = 1.0

    def sample(self, x, rng, size=None):
        return LaplaceMechanism(self.actual_scale, self.sensitivity).sample(x, rng, size)


@dataclass(frozen=True)
class RREpsilonBug(RandomizedResponse):
    actual_epsilon: float = 1.0

    def sample(self, x, rng, size=None):
        return RandomizedResponse(self.actual_epsilon, self.num_categories).sample(x, rng, size)


@dataclass(frozen=True)
class ArmNoiseBug(LaplaceReportNoisyMax):
    """Report-noisy-max whose noise on ``arm`` has scale ``arm_scale`` (0: no noise)."""

    arm: int = 2
    arm_scale: float = 0.0

    def sample(self, x, rng, size=None):
        s = np.asarray(x, dtype=float)
        shape = (() if size is None else ((size,) if np.ndim(size) == 0 else tuple(size))) + (s.size,)
        noisy = rng.laplace(0.0, self.scale, size=shape)
        noisy[..., self.arm] *= self.arm_scale / self.scale
        noisy += s
        return np.argmax(noisy, axis=-1)


def bugs() -> dict[str, Any]:
    return {
        "gaussian-sigma-0.93": gaussian_target(1.0, mechanism=SigmaBug(1.0, actual_sigma=0.93)),
        "laplace-scale-0.9": laplace_target(1.0, mechanism=ScaleBug(1.0, actual_scale=0.9)),
        "rr-epsilon-1.25": randomized_response_target(1.0, mechanism=RREpsilonBug(1.0, actual_epsilon=1.25)),
        "rnm-noiseless-arm-2": lambda n: rnm_laplace_target(1.0, 3, trials=n, epoch_length=16,
                                                            mechanism=ArmNoiseBug(1.0, 3, arm_scale=0.0)),
        "rnm-arm-2-scale-0.5": lambda n: rnm_laplace_target(1.0, 3, trials=n, epoch_length=16,
                                                            mechanism=ArmNoiseBug(1.0, 3, arm_scale=0.5)),
    }  # fmt: skip


def _target(bug: Any, n: int) -> Any:
    return bug(n) if callable(bug) else bug


def true_tests(target: Any, rng: np.random.Generator) -> list[tuple[float, float]]:
    """(FPR, FNR) of every test of every design of the target's family, for the buggy mechanism."""
    out = []
    m = target.mechanism
    for c in target.family:
        if isinstance(m, SigmaBug):  # statistic monotone in the output: thresholds on o
            t = np.linspace(-3, 4, 351)
            p, q = stats.norm.sf(t, 0, m.actual_sigma), stats.norm.cdf(t, 1, m.actual_sigma)
        elif isinstance(m, ScaleBug):
            t = np.linspace(-3, 4, 351)
            p, q = stats.laplace.sf(t, 0, m.actual_scale), stats.laplace.cdf(t, 1, m.actual_scale)
        else:  # discrete outputs: rates of the support cuts from 4e6 samples per side
            x = np.asarray(c.pair.x, float) if isinstance(c.pair.x, tuple) else c.pair.x
            xp = np.asarray(c.pair.x_prime, float) if isinstance(c.pair.x_prime, tuple) else c.pair.x_prime
            s0 = c.statistic(m.sample(x, rng, size=4_000_000))
            s1 = c.statistic(m.sample(xp, rng, size=4_000_000))
            sup = np.asarray(c.support)
            p = np.array([np.mean(s0 > v) for v in sup] + [np.mean(s0 < v) for v in sup])
            q = np.array([np.mean(s1 <= v) for v in sup] + [np.mean(s1 >= v) for v in sup])
        out += [(float(a), float(b)) for a, b in zip(p, q) if 0 < a < 1 and 0 < b < 1]
    return out


def oracle_trials(
    tests: list[tuple[float, float]], claim: Any, delta: float, confidence: float = 0.95
) -> int:
    """Total trials (2n) of the best single pre-chosen test for P(bound > claim) ≥ ½ (exact sums)."""
    alpha = (1 - confidence) / 2
    if claim.mu is not None:
        allowed, target = _mu_allowed, claim.mu
    else:
        allowed, target = _eps_allowed(delta), claim.epsilon
    from dpaudit.audit.clopper_pearson import cp_upper

    def bisect_n(ok: Any, hi: int = 10**9) -> int:
        lo = 5
        if not ok(hi):
            return 10**12
        while hi - lo > max(1, lo // 500):
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if ok(mid) else (mid, hi)
        return hi

    def plug_in(p: float, q: float, n: int) -> bool:  # the bound at the expected counts
        u0, u1 = cp_upper(round(p * n), n, alpha), cp_upper(round(q * n), n, alpha)
        return bool(u1 < allowed(np.asarray(u0), target))

    # screen every test by the plug-in bound, then exact binomial sums for the 5 best
    approx = sorted((bisect_n(lambda n, p=p, q=q: plug_in(p, q, n)), p, q) for p, q in tests)[:5]
    best = math.inf
    for n0, p, q in approx:
        if n0 >= 10**12:
            continue
        best = min(best, bisect_n(lambda n, p=p, q=q: _prob_above(p, q, n, n, alpha, allowed, target) >= 0.5,
                                  hi=4 * n0))  # fmt: skip
    return int(2 * best) if math.isfinite(best) else -1


def detection_rate(bug: Any, trials: int, seeds: int, **kw: Any) -> float:
    hit = 0
    for s in range(seeds):
        r = run_audit(_target(bug, trials), trials=trials, seed=10_000 + s, **kw)
        hit += r.verdict == "violated"
    return hit / seeds


def auditor_trials(bug: Any, start: int, seeds: int, **kw: Any) -> tuple[int, list[tuple[int, float]]]:
    """Smallest trials on a 1.15× grid (from ``start``) with detection rate ≥ ½."""
    n, path = max(200, int(start)), []
    for _ in range(40):
        r = detection_rate(bug, n, seeds, **kw)
        path.append((n, r))
        if r >= 0.5:
            # step back down while still >= 1/2 (the start may be above the answer)
            while len(path) == 1 and n > 200:
                m = int(n / 1.15)
                rm = detection_rate(bug, m, seeds, **kw)
                path.append((m, rm))
                if rm < 0.5:
                    break
                n = m
            return n, path
        n = int(n * 1.15) + 1
    return -1, path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--at", type=float, default=None, metavar="RATIO",
                    help="only the detection rate at RATIO x the oracle's trials, with its 95 %% interval")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    for name, bug in bugs().items():
        if a.only and name not in a.only:
            continue
        t0, c0 = time.perf_counter(), time.process_time()
        tgt = _target(bug, 10_000)
        orc = oracle_trials(true_tests(tgt, rng), tgt.certified, tgt.delta)
        if a.at is not None:
            from dpaudit.audit.clopper_pearson import cp_lower, cp_upper

            n = int(round(a.at * orc))
            hits = round(detection_rate(bug, n, a.seeds) * a.seeds)
            lo, hi = float(cp_lower(hits, a.seeds, 0.025)), float(cp_upper(hits, a.seeds, 0.025))
            row = {"bug": name, "oracle_trials": orc, "ratio": a.at, "auditor_trials": n, "seeds": a.seeds,
                   "detected": hits, "rate": hits / a.seeds, "rate_interval_95": [lo, hi],
                   "cpu_seconds": time.process_time() - c0}  # fmt: skip
            rows.append(row)
            if not a.json:
                print(f"{name:22s} oracle {orc:>9,} trials; at {a.at:g}x ({n:,} trials) the auditor detects "
                      f"{hits}/{a.seeds} = {hits / a.seeds:.1%} [{lo:.1%}, {hi:.1%}]; "
                      f"cpu {row['cpu_seconds']:.0f} s",
                      flush=True)  # fmt: skip
            continue
        n, path = auditor_trials(bug, 0.9 * orc if orc > 0 else 1000, a.seeds)
        row = {"bug": name, "oracle_trials": orc, "auditor_trials": n,
               "ratio": n / orc if orc > 0 and n > 0 else None, "path": path, "seeds": a.seeds,
               "wall_seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}  # fmt: skip
        rows.append(row)
        if not a.json:
            print(f"{name:22s} oracle {orc:>9,} trials, auditor {n:>9,} trials (>= 50 % of {a.seeds} seeds): "
                  f"ratio {row['ratio']:.2f}; path {[(k, round(v, 2)) for k, v in path]}; "
                  f"cpu {row['cpu_seconds']:.0f} s", flush=True)  # fmt: skip
    if a.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()

