"""Claims under audit: a μ-GDP claim or an (ε, δ)-DP claim, as :class:`~dpaudit.audit.report.Certified`.

``claim=None`` in a target factory audits the toolkit's own certified value (source
``"dpaudit"``); pass :func:`claim_mu` or :func:`claim_epsilon` to audit a user's or a paper's
claim instead.

Example:
    >>> claim_epsilon(0.5).source
    'claim'
"""

from __future__ import annotations

from dpaudit.audit.report import Certified
from dpaudit.conversions import gdp_epsilon
from dpaudit.validation import check_nonnegative, check_positive, check_probability

__all__ = ["DEFAULT_GDP_DELTA", "claim_mu", "claim_epsilon"]

DEFAULT_GDP_DELTA = 1e-5
"""δ at which ε is audited for GDP (Gaussian) claims when no ε claim fixes it."""


def claim_mu(mu: float, delta: float = DEFAULT_GDP_DELTA, source: str = "claim") -> Certified:
    """A μ-GDP claim; its implied ε at ``delta`` is audited too: the exact conversion
    :func:`dpaudit.conversions.gdp_epsilon`, i.e. the ε solving
    δ = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong, Roth & Su 2022, Corollary 2.13).

    >>> round(claim_mu(1.0).epsilon, 4)
    4.3772
    """
    m = check_positive("claim mu", mu)
    d = check_probability("delta", delta)
    return Certified(mu=m, epsilon=float(gdp_epsilon(m, d)), delta=d, source=source)


def claim_epsilon(epsilon: float, delta: float = 0.0, source: str = "claim") -> Certified:
    """An (ε, δ)-DP claim.

    >>> claim_epsilon(1.0, 1e-6)
    Certified(mu=None, epsilon=1.0, delta=1e-06, source='claim')
    """
    e = check_nonnegative("claim epsilon", epsilon)
    d = check_probability("claim delta", delta, low_open=False)
    return Certified(mu=None, epsilon=e, delta=d, source=source)
