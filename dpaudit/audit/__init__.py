"""Empirical auditing: lower-bound the privacy a mechanism actually spends.

One job per module:

* :mod:`dpaudit.audit.statistics` — scalar statistics of outputs (identity, projection,
  indicator, white-box privacy loss);
* :mod:`dpaudit.audit.clopper_pearson` — exact binomial bounds and the conversions of
  error-rate bounds into ε, μ and δ bounds;
* :mod:`dpaudit.audit.multiplicity` — explicit multiplicity control: a pre-registered grid
  (:class:`Bonferroni`) or a sample split (:class:`SampleSplit`);
* :mod:`dpaudit.audit.thresholds` — threshold families with simultaneous Clopper–Pearson
  boxes;
* :mod:`dpaudit.audit.pilot` — the choice of one test (and of the main sample's split) on a
  pilot;
* :mod:`dpaudit.audit.lower_bounds` — the headline ε at δ and GDP μ lower bounds, with their
  result types in :mod:`dpaudit.audit.results`;
* :mod:`dpaudit.audit.curves` — curve audits against a claimed trade-off curve or privacy
  profile;
* :mod:`dpaudit.audit.profile` — the Monte-Carlo privacy profile from white-box
  privacy-loss samples;
* :mod:`dpaudit.audit.power` — exact detection probabilities and the detection floor of a
  certifying test (what the audit could have seen);
* :mod:`dpaudit.audit.estimate` — the two-sided interval for the μ a test exhibits;
* :mod:`dpaudit.audit.neighbours`, :mod:`dpaudit.audit.claims`, :mod:`dpaudit.audit.target`,
  :mod:`dpaudit.audit.runner`, :mod:`dpaudit.audit.report` — what is audited (pair, claim,
  the :class:`AuditTarget` protocol), how it is run, and the report.

Mechanism-specific targets live with the mechanisms (``mechanisms.auditing.targets``): this
package imports neither ``mechanisms`` nor ``bandits``.

Example:
    >>> import numpy as np
    >>> from dpaudit.audit import Bonferroni, mu_lower_bound
    >>> rng = np.random.default_rng(0)
    >>> b = mu_lower_bound(rng.normal(0, 1, 10_000), rng.normal(0, 1, 10_000),
    ...                    confidence=0.95, selection=Bonferroni())
    >>> b.mu   # identical distributions: nothing to detect
    0.0
"""

from typing import TYPE_CHECKING

from dpaudit.lazy import exports

if TYPE_CHECKING:
    from dpaudit.audit.claims import DEFAULT_GDP_DELTA, claim_epsilon, claim_mu
    from dpaudit.audit.clopper_pearson import (
        clopper_pearson_lower,
        clopper_pearson_upper,
        delta_from_rates,
        epsilon_from_rates,
        mu_from_rates,
    )
    from dpaudit.audit.curves import (
        CurveAudit,
        ProfileAudit,
        audit_privacy_profile,
        audit_tradeoff_curve,
        epsilon_dp_tradeoff_curve,
        gdp_tradeoff_curve,
    )
    from dpaudit.audit.estimate import MuInterval, mu_interval_from_counts
    from dpaudit.audit.lower_bounds import (
        epsilon_lower_bound,
        epsilon_lower_bound_from_counts,
        mu_lower_bound,
        mu_lower_bound_from_counts,
    )
    from dpaudit.audit.multiplicity import Bonferroni, SampleSplit, threshold_grid
    from dpaudit.audit.neighbours import NeighbourPair, identical, predicted_bound, scalar_pair
    from dpaudit.audit.pilot import PilotChoice, pilot_choice
    from dpaudit.audit.power import DetectionFloor, detection_floor, detection_probability, floor_report
    from dpaudit.audit.profile import (
        PrivacyProfileEstimate,
        epsilon_lower_bound_from_losses,
        monte_carlo_profile,
    )
    from dpaudit.audit.report import AuditReport, Certified, Empirical, Verdict
    from dpaudit.audit.results import BoundEvidence, EpsilonLowerBound, MuLowerBound
    from dpaudit.audit.runner import run_audit, run_audit_with_rates
    from dpaudit.audit.statistics import (
        HasPrivacyLoss,
        Identity,
        Indicator,
        PrivacyLoss,
        Projection,
        Statistic,
        default_statistic,
    )
    from dpaudit.audit.target import AuditTarget, Candidate, Sampler, TargetFactory, choose_statistic
    from dpaudit.audit.thresholds import ThresholdRates, single_test_rates, support_rates, threshold_rates

# every public name, loaded with its module on first use (dpaudit.lazy)
_EXPORTS = {
    "DEFAULT_GDP_DELTA": "claims",
    "claim_epsilon": "claims",
    "claim_mu": "claims",
    "clopper_pearson_lower": "clopper_pearson",
    "clopper_pearson_upper": "clopper_pearson",
    "delta_from_rates": "clopper_pearson",
    "epsilon_from_rates": "clopper_pearson",
    "mu_from_rates": "clopper_pearson",
    "CurveAudit": "curves",
    "ProfileAudit": "curves",
    "audit_privacy_profile": "curves",
    "audit_tradeoff_curve": "curves",
    "epsilon_dp_tradeoff_curve": "curves",
    "gdp_tradeoff_curve": "curves",
    "MuInterval": "estimate",
    "mu_interval_from_counts": "estimate",
    "epsilon_lower_bound": "lower_bounds",
    "epsilon_lower_bound_from_counts": "lower_bounds",
    "mu_lower_bound": "lower_bounds",
    "mu_lower_bound_from_counts": "lower_bounds",
    "Bonferroni": "multiplicity",
    "SampleSplit": "multiplicity",
    "threshold_grid": "multiplicity",
    "NeighbourPair": "neighbours",
    "identical": "neighbours",
    "predicted_bound": "neighbours",
    "scalar_pair": "neighbours",
    "PilotChoice": "pilot",
    "pilot_choice": "pilot",
    "DetectionFloor": "power",
    "detection_floor": "power",
    "detection_probability": "power",
    "floor_report": "power",
    "PrivacyProfileEstimate": "profile",
    "epsilon_lower_bound_from_losses": "profile",
    "monte_carlo_profile": "profile",
    "AuditReport": "report",
    "Certified": "report",
    "Empirical": "report",
    "Verdict": "report",
    "BoundEvidence": "results",
    "EpsilonLowerBound": "results",
    "MuLowerBound": "results",
    "run_audit": "runner",
    "run_audit_with_rates": "runner",
    "HasPrivacyLoss": "statistics",
    "Identity": "statistics",
    "Indicator": "statistics",
    "PrivacyLoss": "statistics",
    "Projection": "statistics",
    "Statistic": "statistics",
    "default_statistic": "statistics",
    "AuditTarget": "target",
    "Candidate": "target",
    "Sampler": "target",
    "TargetFactory": "target",
    "choose_statistic": "target",
    "ThresholdRates": "thresholds",
    "single_test_rates": "thresholds",
    "support_rates": "thresholds",
    "threshold_rates": "thresholds",
}
__getattr__, __dir__ = exports(__name__, _EXPORTS)

__all__ = [
    "Candidate",
    "DetectionFloor",
    "MuInterval",
    "PilotChoice",
    "Verdict",
    "detection_floor",
    "detection_probability",
    "floor_report",
    "mu_interval_from_counts",
    "pilot_choice",
    "single_test_rates",
    "AuditReport",
    "AuditTarget",
    "Bonferroni",
    "BoundEvidence",
    "Certified",
    "CurveAudit",
    "DEFAULT_GDP_DELTA",
    "Empirical",
    "EpsilonLowerBound",
    "HasPrivacyLoss",
    "Identity",
    "Indicator",
    "MuLowerBound",
    "NeighbourPair",
    "PrivacyLoss",
    "PrivacyProfileEstimate",
    "ProfileAudit",
    "Projection",
    "SampleSplit",
    "Sampler",
    "Statistic",
    "TargetFactory",
    "ThresholdRates",
    "audit_privacy_profile",
    "audit_tradeoff_curve",
    "choose_statistic",
    "claim_epsilon",
    "claim_mu",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "default_statistic",
    "delta_from_rates",
    "epsilon_dp_tradeoff_curve",
    "epsilon_from_rates",
    "epsilon_lower_bound",
    "epsilon_lower_bound_from_counts",
    "epsilon_lower_bound_from_losses",
    "gdp_tradeoff_curve",
    "identical",
    "monte_carlo_profile",
    "mu_from_rates",
    "mu_lower_bound",
    "mu_lower_bound_from_counts",
    "predicted_bound",
    "run_audit",
    "run_audit_with_rates",
    "scalar_pair",
    "support_rates",
    "threshold_grid",
    "threshold_rates",
]
