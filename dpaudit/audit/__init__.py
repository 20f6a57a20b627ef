"""Empirical auditing: lower-bound the privacy a mechanism actually spends.

* :mod:`dpaudit.audit.statistics` — scalar statistics of outputs (identity, projection,
  indicator, white-box privacy loss).
* :mod:`dpaudit.audit.bounds` — valid confidence bounds on counts and samples:
  Clopper–Pearson, ε at δ and GDP μ lower bounds with explicit multiplicity control
  (:class:`~dpaudit.audit.bounds.Bonferroni` or :class:`~dpaudit.audit.bounds.SampleSplit`),
  curve audits against a claimed trade-off curve / privacy profile, and a Monte-Carlo
  privacy profile from privacy-loss samples.

Example:
    >>> import numpy as np
    >>> from dpaudit.audit import Bonferroni, mu_lower_bound
    >>> rng = np.random.default_rng(0)
    >>> b = mu_lower_bound(rng.normal(0, 1, 10_000), rng.normal(0, 1, 10_000),
    ...                    confidence=0.95, selection=Bonferroni())
    >>> b.mu   # identical distributions: nothing to detect
    0.0
"""

from dpaudit.audit.bounds import (
    Bonferroni,
    CurveAudit,
    EpsilonLowerBound,
    MuLowerBound,
    PrivacyProfileEstimate,
    ProfileAudit,
    SampleSplit,
    ThresholdRates,
    audit_privacy_profile,
    audit_tradeoff_curve,
    clopper_pearson_lower,
    clopper_pearson_upper,
    delta_from_rates,
    epsilon_from_rates,
    epsilon_lower_bound,
    epsilon_lower_bound_from_counts,
    epsilon_lower_bound_from_losses,
    gdp_tradeoff_curve,
    monte_carlo_profile,
    mu_from_rates,
    mu_lower_bound,
    mu_lower_bound_from_counts,
    threshold_grid,
    threshold_rates,
)
from dpaudit.audit.statistics import (
    HasPrivacyLoss,
    Identity,
    Indicator,
    PrivacyLoss,
    Projection,
    Statistic,
    default_statistic,
)

__all__ = [
    "Bonferroni",
    "CurveAudit",
    "EpsilonLowerBound",
    "HasPrivacyLoss",
    "Identity",
    "Indicator",
    "MuLowerBound",
    "PrivacyLoss",
    "PrivacyProfileEstimate",
    "ProfileAudit",
    "Projection",
    "SampleSplit",
    "Statistic",
    "ThresholdRates",
    "audit_privacy_profile",
    "audit_tradeoff_curve",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "default_statistic",
    "delta_from_rates",
    "epsilon_from_rates",
    "epsilon_lower_bound",
    "epsilon_lower_bound_from_counts",
    "epsilon_lower_bound_from_losses",
    "gdp_tradeoff_curve",
    "monte_carlo_profile",
    "mu_from_rates",
    "mu_lower_bound",
    "mu_lower_bound_from_counts",
    "threshold_grid",
    "threshold_rates",
]

# audit runner, neighbours, per-mechanism targets (appended; see dpaudit.audit.runner)
from dpaudit.audit.neighbours import NeighbourPair  # noqa: E402
from dpaudit.audit.report import AuditReport, Certified, Empirical  # noqa: E402
from dpaudit.audit.runner import AuditTarget, run_audit, run_audit_with_rates  # noqa: E402

__all__ += ["AuditReport", "AuditTarget", "Certified", "Empirical", "NeighbourPair", "run_audit",
            "run_audit_with_rates"]
