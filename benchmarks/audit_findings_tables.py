"""Regenerate the sampling columns of docs/audit-findings.md table (a): Theorem 6/7 of Ou,
Avella Medina & Cummings (2024) (heterogeneous-Gaussian report-noisy-max) audited at 2·10⁵ and
2·10⁶ trials, seed 0, with the runner's default selection (a pilot among the target's pre-registered pairs).

Run ``python benchmarks/audit_findings_tables.py [--big 2000000]`` (about a minute); prints the
markdown rows and the GDP μ lower bounds of the toolkit's certificate.
"""

from __future__ import annotations

import argparse

from dpaudit.audit.runner import run_audit
from mechanisms.auditing.targets import published_claim, rnm_gaussian_target

S2 = 2**-0.5
SCENARIOS = {
    "A, N = 2": (0.5, [S2, S2]),
    "B, N = 2": ([0.5, 1 / 10001], [S2, 10001**-0.5]),
    "A, N = 5": (0.5, [S2] * 5),
    "A, N = 10": (0.5, [S2] * 10),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=200_000)
    ap.add_argument("--big", type=int, default=2_000_000)
    a = ap.parse_args()
    print(f"| scenario | δ | published ε | ε lower bound, {a.small:.0e} | ε lower bound, {a.big:.0e} | "
          f"exact ε of pair ({a.big:.0e}) | verdict at {a.big:.0e} |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for name, (sens, sigmas) in SCENARIOS.items():
        for delta in (0.1, 0.01, 1e-6):
            claim = published_claim("rnm-gaussian", sensitivities=sens, sigmas=sigmas, delta=delta)
            cells = []
            for n in (a.small, a.big):
                t = rnm_gaussian_target(sens, sigmas, trials=n, claim=claim)
                r = run_audit(t, trials=n, seed=0)
                cells.append(
                    (r.empirical.epsilon_lower, r.verdict, t.details["exact"]["pair_epsilon_at_delta"])
                )
            (e1, _, _), (e2, v2, x2) = cells
            print(f"| {name} | {delta:g} | {claim.epsilon:.4f} | {e1:.3f} | {e2:.3f} | {x2:.3f} | {v2} |")
    for name, (sens, sigmas) in SCENARIOS.items():
        r = run_audit(rnm_gaussian_target(sens, sigmas, trials=a.big), trials=a.big, seed=0)
        mu, cert = r.empirical.mu_lower, r.certified.mu
        print(f"GDP certificate, {name}: mu >= {mu:.3f} (certified {cert:.4f}), {r.verdict}")


if __name__ == "__main__":
    main()
