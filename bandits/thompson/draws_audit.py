"""The releases view of Gaussian Thompson sampling: its posterior draws against the certificate.

Thompson sampling releases an action, the argmax of the posterior draws θ_i ~ N(μ̂_i, c/(n_i + 1)).
The certificate of Ou, Avella Medina & Cummings (2024) charges each round as a Gaussian
mechanism of sensitivity 1/(n_j + 1) at that scale — the privacy of releasing the changed arm's
draw θ_j itself, of which the action is a post-processing. So the draws are a grey-box
transcript the certificate must cover, as an auditor of DP-SGD reads its intermediate updates
(Nasr, Song, Thakurta, Papernot & Carlini 2021): where the action reveals about half of it (the
outputs view recovers about 43 % of the certified μ), the draws reveal nearly all, and a noise
bug that barely crosses the certificate in the actions crosses it clearly here.

On the main trajectories of the outputs audit (the same runs of the real agent, which hands over
its own draws of the changed arm: :attr:`bandits.thompson.agent.GaussianTSAgent.watch`), the
statistic is the exact log-likelihood ratio of the draws' transcript under the declared mechanism
(:func:`bandits.thompson.audit_trajectories.draws_loss`) and the test is fixed in advance: say R′
when the loss is negative (its symmetric point: the two laws are mirror images). Clopper–Pearson
bounds its error rates, as for every single test of the toolkit; its detection floor is the
reference pair's at the same sample size, which for this near-Gaussian loss is the test itself.

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> main = [{"draws": rng.normal(0.02, 0.2, 4000)}, {"draws": rng.normal(-0.02, 0.2, 4000)}]
    >>> rep = draws_report(main, mu_certified=0.2, delta=1e-6, confidence=0.975)
    >>> rep.verdict.value, 0.0 < rep.empirical.mu_lower < 0.2
    ('consistent', True)
"""

from __future__ import annotations

from typing import Any

from dpaudit.audit.estimate import mu_interval_from_counts
from dpaudit.audit.power import floor_report
from dpaudit.audit.report import AuditReport, Certified, Empirical
from dpaudit.audit.thresholds import single_test_rates
from dpaudit.conversions import gdp_epsilon

__all__ = ["draws_report", "METHOD"]

METHOD = "clopper-pearson, one pre-registered test: say R' when the draws' privacy loss is negative"


def draws_report(main: list[dict[str, Any]], *, mu_certified: float, delta: float, confidence: float
                 ) -> AuditReport:  # fmt: skip
    """The releases view's report from the main sample's ``"draws"`` losses (side 0: R, side 1:
    R′), certified at ``confidence`` against ``mu_certified`` (module docstring)."""
    null, alt = main[0]["draws"], main[1]["draws"]
    rates = single_test_rates(null, alt, 0.0, -1, confidence=confidence, method=METHOD)
    mb, eb = rates.mu_lower_bound(), rates.epsilon_lower_bound(delta)
    eps_c = float(gdp_epsilon(mu_certified, delta))
    n0, n1 = int(null.size), int(alt.size)
    floor = floor_report(n0, n1, rates.alpha_per_bound, certified_mu=mu_certified, certified_epsilon=eps_c,
                         delta=delta)  # fmt: skip
    estimate = mu_interval_from_counts(rates.false_positives[0], n0, rates.false_negatives[0], n1,
                                       confidence=confidence)  # fmt: skip
    emp = Empirical(epsilon_lower=float(eb.epsilon), mu_lower=float(mb.mu), delta=delta,
                    confidence=confidence, trials=n0 + n1, method=METHOD,
                    statistic="exact privacy loss of the changed arm's posterior draws")  # fmt: skip
    details = {
        "view": "releases: the changed arm's posterior draws, read from the agent on the outputs "
                "audit's main trajectories",
        "certifying_test": {"false_positives": rates.false_positives[0],
                            "false_negatives": rates.false_negatives[0],
                            "trajectories_per_table": n0, "fpr_upper": rates.fpr_upper[0],
                            "fnr_upper": rates.fnr_upper[0]},
        "loss_mean": [float(null.mean()), float(alt.mean())],
        "loss_sd": [float(null.std()), float(alt.std())],
        "mu_gaussian_fit": float(max(0.0, null.mean() - alt.mean()) ** 0.5),
        "detection_floor": floor.describe(),
        "estimate": f"the test exhibits mu in [{estimate.lower:.4f}, {estimate.upper:.4f}] "
                    f"({100 * confidence:g}%) against the certified {mu_certified:.4f}",
    }  # fmt: skip
    cert = Certified(mu=mu_certified, epsilon=eps_c, delta=delta, source="dpaudit")
    return AuditReport.build(target="thompson-sampling draws", certified=cert, empirical=emp, details=details,
                             floor=floor, estimate=estimate)  # fmt: skip
