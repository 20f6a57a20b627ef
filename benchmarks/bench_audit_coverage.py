"""Coverage study: audits of mechanisms whose true privacy is known exactly.

Run ``python benchmarks/bench_audit_coverage.py [--audits 250] [--json]`` (full size: 4 families
× 250 audits = 1000 audits, 95 % confidence). ``tests/test_audit_coverage.py`` runs it at
reduced size.

Families (the truth is exact, not estimated):

* ``gaussian`` — N(0, 1) vs N(1, 1) (true μ = 1 exactly, true ε(1e-5) = gdp_epsilon(1, 1e-5));
  :func:`dpaudit.audit.run_audit` with the default pilot selection, 2·10⁴ trials;
* ``laplace`` — Lap(1) shifted by 1 (true ε = 1 at δ = 0; every threshold ≥ 1 attains it), 2·10⁴ trials;
* ``randomized-response`` — binary RR at ε = 1 (true ε = 1 at δ = 0), 2·10⁴ trials;
* ``thompson`` — Gaussian TS, b = 1, c = 1, N = 2, T = 6, the tied pair of
  :class:`bandits.thompson.audit.TSNeighbour`: the output law of both tables is enumerated exactly over the
  2⁴ action sequences of the 4 sampling rounds, giving the pair's true μ (sup over its exact
  piecewise-linear trade-off curve of Φ⁻¹(1 − α) − Φ⁻¹(f(α)), both orders) and true ε(δ);
  :func:`bandits.thompson.audit.audit_thompson` with 3000 trajectories per table.

An audit "exceeds" when its lower bound is above the truth (μ bound > true μ, or ε bound > true
ε at the audited δ). At 95 % confidence each audit exceeds with probability ≤ 5 %; the study
prints the count, the rate and a one-sided 95 % Clopper–Pearson upper bound on the rate.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import resource
import sys
import time

import numpy as np
from scipy import stats

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from dpaudit.audit import clopper_pearson_upper, run_audit  # noqa: E402
from dpaudit.conversions import gdp_epsilon  # noqa: E402
from mechanisms.auditing.targets import gaussian_target, laplace_target, randomized_response_target  # noqa: E402

TS = {"b": 1, "c": 1.0, "arms": 2, "horizon": 6, "delta": 1e-6}


def _tradeoff_mu(p: np.ndarray, q: np.ndarray) -> float:
    """True GDP μ of a pair of discrete laws p (null) and q (alternative): the largest
    Φ⁻¹(1 − α) − Φ⁻¹(f(α)) over the exact trade-off curve f (likelihood-ratio ordered vertices,
    linear between them), both orders of the pair."""
    best = 0.0
    for a, b in ((p, q), (q, p)):
        with np.errstate(divide="ignore"):
            order = np.argsort(-(np.log(b) - np.log(a)))  # reject the outputs most likely under b first
        fpr = np.concatenate([[0.0], np.cumsum(a[order])])
        fnr = 1.0 - np.concatenate([[0.0], np.cumsum(b[order])])
        s = np.linspace(0.0, 1.0, 401)[None, :]
        al = (fpr[:-1, None] * (1 - s) + fpr[1:, None] * s).ravel()
        be = (fnr[:-1, None] * (1 - s) + fnr[1:, None] * s).ravel()
        ok = (al > 0) & (al < 1) & (be > 0) & (be < 1)
        if ok.any():
            best = max(best, float(np.max(stats.norm.isf(al[ok]) - stats.norm.ppf(be[ok]))))
    return best


def _true_epsilon(p: np.ndarray, q: np.ndarray, delta: float) -> float:
    """Smallest ε with max(Σ(p − e^ε q)₊, Σ(q − e^ε p)₊) ≤ δ (bisection)."""
    def d(e: float) -> float:
        ee = math.exp(e)
        return max(float(np.sum(np.maximum(p - ee * q, 0))), float(np.sum(np.maximum(q - ee * p, 0))))

    lo, hi = 0.0, 50.0
    if d(0.0) <= delta:
        return 0.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if d(mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def thompson_truth() -> dict[str, float]:
    """Exact μ and ε(δ) of the tied Thompson-sampling pair at :data:`TS` by enumeration."""
    from bandits import GaussianTS
    from bandits.thompson.audit import TSNeighbour

    b, c, N, T = TS["b"], TS["c"], TS["arms"], TS["horizon"]
    tab = TSNeighbour().tables(GaussianTS(b=b, c=c), T, N)
    pre = [t // b for t in range(b * N)]
    seqs = [pre + list(s) for s in itertools.product(range(N), repeat=T - b * N)]
    logp = []
    for table in (tab.null, tab.alt):
        row = []
        for seq in seqs:
            S, n, lp = np.zeros(N), np.zeros(N), 0.0
            for t, a in enumerate(seq):
                if t >= b * N:
                    mu, sg = S / (n + 1), np.sqrt(c / (n + 1))
                    o = 1 - a
                    lp += stats.norm.logcdf((mu[a] - mu[o]) / math.hypot(sg[a], sg[o]))
                S[a] += table[t, a]
                n[a] += 1
            row.append(lp)
        logp.append(np.array(row))
    p, q = np.exp(logp[0]), np.exp(logp[1])
    return {"mu": _tradeoff_mu(p, q), "epsilon": _true_epsilon(p, q, TS["delta"]), "total_p": float(p.sum())}


def run_family(name: str, audits: int, trials: int | None = None, seed0: int = 0) -> dict[str, object]:
    """``audits`` audits of one family with seeds seed0, seed0 + 1, ...; exceedance counts."""
    over_mu = over_eps = 0
    mu_lbs, eps_lbs = [], []
    t0 = time.perf_counter()
    if name == "thompson":
        from bandits import GaussianTS, parse_env
        from bandits.auditing.contract import AuditSettings
        from bandits.thompson.audit import ThompsonAuditOptions, audit_thompson
        from bandits.thompson.audit_designs import TSNeighbour

        truth = thompson_truth()
        n = trials or 3000
        for s in range(seed0, seed0 + audits):
            env = parse_env("bernoulli:" + ",".join(["0.5"] * TS["arms"]))
            r = audit_thompson(GaussianTS(b=TS["b"], c=TS["c"]), TS["horizon"], env,
                               AuditSettings(trials=n, seed=s, delta=TS["delta"]),
                               ThompsonAuditOptions(neighbour=TSNeighbour())).primary  # fmt: skip
            mu_lbs.append(r.empirical.mu_lower)
            eps_lbs.append(r.empirical.epsilon_lower)
        true_mu, true_eps = truth["mu"], truth["epsilon"]
    else:
        n = trials or 20_000
        if name == "gaussian":
            target, true_mu, true_eps = gaussian_target(1.0), 1.0, float(gdp_epsilon(1.0, 1e-5))
        elif name == "laplace":
            target, true_mu, true_eps = laplace_target(1.0), None, 1.0
        elif name == "randomized-response":
            target, true_mu, true_eps = randomized_response_target(1.0), None, 1.0
        else:
            raise ValueError(name)
        for s in range(seed0, seed0 + audits):
            r = run_audit(target, trials=n, seed=s)
            mu_lbs.append(r.empirical.mu_lower)
            eps_lbs.append(r.empirical.epsilon_lower)
    for m, e in zip(mu_lbs, eps_lbs):
        over_mu += true_mu is not None and m > true_mu
        over_eps += e > true_eps
    over = sum((true_mu is not None and m > true_mu) or e > true_eps for m, e in zip(mu_lbs, eps_lbs))
    return {
        "family": name, "audits": audits, "trials": n, "true_mu": true_mu, "true_epsilon": true_eps,
        "exceed_mu": over_mu, "exceed_epsilon": over_eps, "exceed_any": over,
        "rate_any": over / audits,
        "rate_any_upper95": float(clopper_pearson_upper(over, audits, confidence=0.95)),
        "median_mu_lower": float(np.median(mu_lbs)), "median_epsilon_lower": float(np.median(eps_lbs)),
        "seconds": time.perf_counter() - t0,
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--audits", type=int, default=250, help="audits per family (default 250: 1000 in all)")
    fams = ["gaussian", "laplace", "randomized-response", "thompson"]
    ap.add_argument("--families", nargs="+", default=fams)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rows = []
    cpu0 = time.process_time()
    for f in a.families:
        row = run_family(f, a.audits)
        rows.append(row)
        if not a.json:
            tm = "n/a" if row["true_mu"] is None else f"{row['true_mu']:.4f}"
            print(f"{f:20s} {row['audits']} audits x {row['trials']} trials: true mu {tm}, true eps "
                  f"{row['true_epsilon']:.4f}; bound above the truth in {row['exceed_any']} "
                  f"(mu {row['exceed_mu']}, eps {row['exceed_epsilon']}) = {100 * row['rate_any']:.1f} % "
                  f"(95 % upper {100 * row['rate_any_upper95']:.1f} %); median mu_lb "
                  f"{row['median_mu_lower']:.4f}, eps_lb {row['median_epsilon_lower']:.4f}; "
                  f"{row['seconds']:.1f} s", flush=True)  # fmt: skip
    tot = sum(r["exceed_any"] for r in rows)
    n = sum(r["audits"] for r in rows)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    summary = {"audits": n, "exceed_any": tot, "rate": tot / n,
               "rate_upper95": float(clopper_pearson_upper(tot, n, confidence=0.95)),
               "cpu_seconds": time.process_time() - cpu0, "peak_rss_mb": ru.ru_maxrss / 1024}  # fmt: skip
    if a.json:
        print(json.dumps({"families": rows, "total": summary}, indent=2))
    else:
        print(f"total: {tot} of {n} audits above the truth ({100 * tot / n:.2f} %, 95 % upper "
              f"{100 * summary['rate_upper95']:.2f} %); CPU {summary['cpu_seconds']:.0f} s")  # fmt: skip


if __name__ == "__main__":
    main()
