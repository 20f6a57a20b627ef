"""The releases view of Gaussian Thompson sampling: its posterior draws against the certificate.

Thompson sampling releases an action, the argmax of the posterior draws θ_i ~ N(μ̂_i, c/(n_i + 1)).
The certificate of Ou, Avella Medina & Cummings (2024) charges each round as a Gaussian
mechanism of sensitivity 1/(n_j + 1) at that scale — the privacy of releasing the changed arm's
draw θ_j itself, of which the action is a post-processing. So the draws are a grey-box
transcript the certificate must cover, as an auditor of DP-SGD reads its intermediate updates
(Nasr, Song, Thakurta, Papernot & Carlini 2021, "Adversary instantiation: lower bounds for
differentially private machine learning"): where the action reveals about half of it (the
outputs view recovers about 43 % of the certified μ), the draws reveal nearly all, and a noise
bug that barely crosses the certificate in the actions crosses it clearly here.

On the main trajectories of the outputs audit (the same runs of the real agent, which hands over
its own draws of the changed arm: :attr:`bandits.thompson.agent.GaussianTSAgent.watch`), two
tests fixed in advance, each at half the view's α (Bonferroni), say R′ when a loss is negative
(the symmetric point of two mirror-image laws): the exact log-likelihood ratio under the declared
mechanism of the whole transcript of draws, and of the first draw alone — a draw released
without its noise is deterministic, so that one term separates R from R′ perfectly where the
whole sum would drown it (:func:`bandits.thompson.audit_trajectories.draws_loss`). The report
shows the larger of the two bounds (both hold at once). Clopper–Pearson bounds the error rates,
as for every single test of the toolkit; the detection floor is the reference pair's at the same
sample size, which for the near-Gaussian loss of the whole transcript is the test itself, or with
``--audit-floor algorithm`` the floor measured on the algorithm's own noise-scaled draws
(:mod:`bandits.thompson.draws_floor`).

A bug on one arm's draws is seen only by a pair that changes that arm's reward: the pilot of the
outputs audit runs every design with the draws too, and :func:`draws_alarm` (the pilot's own
bound at 99.9 %) steers the main sample to a design whose draws already refute the certificate.

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> main = [{"draws": rng.normal(0.02, 0.2, 4000)}, {"draws": rng.normal(-0.02, 0.2, 4000)}]
    >>> main = [m | {"draws_first": m["draws"] / 40} for m in main]
    >>> rep = draws_report(main, mu_certified=0.2, delta=1e-6, confidence=0.975)
    >>> rep.verdict.value, 0.0 < rep.empirical.mu_lower < 0.2
    ('consistent', True)
"""

from __future__ import annotations

from typing import Any

from dpaudit.audit.estimate import mu_interval_from_counts
from dpaudit.audit.leak_floor import LeakFloor
from dpaudit.audit.power import floor_report
from dpaudit.audit.report import AuditReport, Certified, Empirical
from dpaudit.audit.thresholds import single_test_rates
from dpaudit.conversions import gdp_epsilon

__all__ = ["draws_report", "draws_alarm", "DRAWS_STATISTICS", "METHOD"]

DRAWS_STATISTICS = ("draws", "draws_first")
"""The draws' statistics: the exact loss of the whole transcript, and of the first draw alone."""

METHOD = ("clopper-pearson, two pre-registered tests on the changed arm's posterior draws (say R' when "
          "the loss is negative; Bonferroni)")

_NAMES = {"draws": "exact privacy loss of the changed arm's posterior draws",
          "draws_first": "exact privacy loss of the changed arm's first posterior draw"}
ALARM_CONFIDENCE = 0.999


def _rates(sample: list[dict[str, Any]], stat: str, confidence: float) -> Any:
    return single_test_rates(sample[0][stat], sample[1][stat], 0.0, -1, confidence=confidence, method=METHOD)


def draws_alarm(pilot: list[dict[str, Any]]) -> float:
    """The largest μ lower bound of the two tests on a pilot's own draws at 99.9 % (each): above the
    certificate only where the draws already refute it (a correct sampler: with probability
    below 0.2 % per design)."""
    return max(_rates(pilot, st, ALARM_CONFIDENCE).mu_lower_bound().mu for st in DRAWS_STATISTICS)


def draws_report(main: list[dict[str, Any]], *, mu_certified: float, delta: float, confidence: float,
                 measured: LeakFloor | None = None) -> AuditReport:  # fmt: skip
    """The releases view's report from the main sample's losses (side 0: R, side 1: R′): both
    tests at 1 − (1 − ``confidence``)/2, the stronger one shown, against ``mu_certified``
    (module docstring); with ``measured`` (:func:`bandits.thompson.draws_floor.draws_leak_floor`)
    the floor measured on the algorithm decides, and a view without power is inconclusive."""
    each = 1.0 - (1.0 - confidence) / len(DRAWS_STATISTICS)
    tests = {st: _rates(main, st, each) for st in DRAWS_STATISTICS}
    stat = max(DRAWS_STATISTICS, key=lambda st: tests[st].mu_lower_bound().mu)
    rates = tests[stat]
    null, alt = main[0][stat], main[1][stat]
    mb, eb = rates.mu_lower_bound(), rates.epsilon_lower_bound(delta)
    eps_c = float(gdp_epsilon(mu_certified, delta))
    n0, n1 = int(null.size), int(alt.size)
    floor = floor_report(n0, n1, rates.alpha_per_bound, certified_mu=mu_certified, certified_epsilon=eps_c,
                         delta=delta)  # fmt: skip
    estimate = mu_interval_from_counts(rates.false_positives[0], n0, rates.false_negatives[0], n1,
                                       confidence=confidence)  # fmt: skip
    emp = Empirical(epsilon_lower=float(eb.epsilon), mu_lower=float(mb.mu), delta=delta,
                    confidence=confidence, trials=n0 + n1, method=METHOD, statistic=_NAMES[stat])  # fmt: skip
    details = {
        "view": "releases",
        "what": "the changed arm's posterior draws, read from the agent on the outputs audit's main "
                "trajectories",
        "certifying_test": {"false_positives": rates.false_positives[0],
                            "false_negatives": rates.false_negatives[0],
                            "trajectories_per_table": n0, "fpr_upper": rates.fpr_upper[0],
                            "fnr_upper": rates.fnr_upper[0]},
        "tests": {st: {"mu_lower": r.mu_lower_bound().mu, "false_positives": r.false_positives[0],
                       "false_negatives": r.false_negatives[0], "confidence": each}
                  for st, r in tests.items()},
        "shown": stat,
        "loss_mean": [float(main[0]["draws"].mean()), float(main[1]["draws"].mean())],
        "loss_sd": [float(main[0]["draws"].std()), float(main[1]["draws"].std())],
        "mu_gaussian_fit": float(max(0.0, main[0]["draws"].mean() - main[1]["draws"].mean()) ** 0.5),
        "detection_floor": floor.describe() if measured is None else measured.describe(),
        "estimate": f"the test exhibits mu in [{estimate.lower:.4f}, {estimate.upper:.4f}] "
                    f"({100 * confidence:g}%) against the certified {mu_certified:.4f}",
    }  # fmt: skip
    if measured is not None:
        details["algorithm_floor"] = measured.to_dict()
    cert = Certified(mu=mu_certified, epsilon=eps_c, delta=delta, source="dpaudit")
    return AuditReport.build(target="thompson-sampling draws", certified=cert, empirical=emp, details=details,
                             floor=floor if measured is None else None, estimate=estimate,
                             inconclusive=measured is not None and not measured.has_power)  # fmt: skip
