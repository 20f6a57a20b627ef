"""The certified budget frontier of (b, c): every pair that spends exactly a GDP budget μ.

Thompson sampling with (b, c) (Ou, Avella Medina & Cummings 2024, §5) trades its two knobs along
the curve η = sqrt(T/(c(b+1))): more pre-pulls b buy a smaller variance inflation c. The toolkit's
certified accounting (:attr:`dpaudit.analyses.thompson_sampling.ThompsonConfig.mu_tight`) is
slightly tighter than the paper's, so the frontier here is the *exact certified* one:

* b ≥ 1:  c = (T − bN)/(μ²(b + 1))      (only the T − bN sampling rounds are private),
* b = 0:  c = (T − 1)/(2μ²)             (the changed reward is seen by at most T − 1 rounds).

Every pair is re-checked with ``ThompsonConfig(...).mu_tight <= target`` and c is nudged up by a
few ulps where floating-point rounding would otherwise overshoot, so no pair ever spends more
than the target. c ≥ 1 bounds b from above: b ≤ (T − μ²)/(N + μ²).
"""

from __future__ import annotations

import math

import numpy as np

from dpaudit.analyses.thompson_sampling import ThompsonConfig
from dpaudit.conversions import gdp_mu
from dpaudit.validation import check_integer, check_positive

__all__ = [
    "resolve_target_mu",
    "frontier_c",
    "max_prepulls",
    "candidate_prepulls",
    "RULE_SPREAD",
    "rule_of_thumb_prepulls",
    "budget_pair",
    "MAX_VARIANCE_SCALE",
    "min_target_mu",
]

MAX_VARIANCE_SCALE = 1e300
"""The largest variance scale c the frontier produces: a smaller budget would need a c beyond
the floating-point range (and μ² would underflow)."""


def min_target_mu(horizon: int) -> float:
    """The smallest budget μ whose frontier has a c ≤ :data:`MAX_VARIANCE_SCALE`: b = 0 needs
    c = (T − 1)/(2μ²), so μ ≥ sqrt((T − 1)/(2·10³⁰⁰)) (rounded up).

    >>> f"{min_target_mu(100_000):.4g}"
    '2.236e-148'
    """
    T = check_integer("horizon", horizon, 2)
    return math.sqrt((T - 1) / (2 * MAX_VARIANCE_SCALE)) * (1 + 1e-12)


def _check_mu(mu: object) -> float:
    return check_positive("target mu", mu)


def _check_budget(mu: float, horizon: int) -> None:
    if mu < min_target_mu(horizon):
        raise ValueError(
            f"target mu must be at least {min_target_mu(horizon):.3g} at horizon {horizon} (a smaller "
            f"budget needs a variance scale c above {MAX_VARIANCE_SCALE:g}), got {mu:g}"
        )


def resolve_target_mu(
    target_mu: float | None = None, target_epsilon: float | None = None, delta: float | None = None
) -> float:
    """The GDP μ to tune for: ``target_mu`` as given, or the largest μ meeting (ε, δ) exactly
    (:func:`dpaudit.conversions.gdp_mu`, rounded down so the (ε, δ) budget holds).

    >>> resolve_target_mu(2.0)
    2.0
    >>> round(resolve_target_mu(target_epsilon=4.8866, delta=1e-6), 4)
    1.0
    """
    if (target_mu is None) == (target_epsilon is None):
        raise ValueError("give exactly one of target_mu or target_epsilon (with delta)")
    if target_mu is not None:
        if delta is not None:
            raise ValueError("delta is only used with target_epsilon")
        return _check_mu(target_mu)
    if delta is None or target_epsilon is None:
        raise ValueError("target_epsilon needs delta in (0, 1)")
    return _check_mu(gdp_mu(target_epsilon, delta))


def frontier_c(b: int, horizon: int, arms: int, mu: float) -> float:
    """The variance scale c that puts (b, c) exactly on the certified μ frontier, nudged up so
    that ``ThompsonConfig(T, N, b, c).mu_tight <= mu``. Raises ``ValueError`` if that c < 1
    (b too large for the budget) or b·N ≥ T.

    >>> c0 = frontier_c(0, 100_000, 5, 1.0)
    >>> round(c0, 6), c0 >= 99_999 / 2
    (49999.5, True)
    >>> round(frontier_c(100, 100_000, 5, 1.0), 6)
    985.148515
    >>> ThompsonConfig(100_000, 5, 100, frontier_c(100, 100_000, 5, 1.0)).mu_tight <= 1.0
    True
    """
    b = check_integer("prepulls", b, 0)
    T = check_integer("horizon", horizon, 2)
    N = check_integer("arms", arms, 2)
    mu = _check_mu(mu)
    if b * N >= T:
        raise ValueError(f"prepulls*arms must be < horizon: {b}*{N} >= {T}")
    _check_budget(mu, T)
    rounds = T - 1 if b == 0 else T - b * N
    c = rounds / (mu * mu * (max(b, 1) + 1))
    if c < 1.0:
        raise ValueError(
            f"prepulls={b} cannot meet mu={mu:g} with variance_scale >= 1 (needs c = {c:.6g}); "
            f"prepulls must be <= {max_prepulls(T, N, mu)}"
        )
    for _ in range(200):  # mu_tight carries a (1 + 1e-15) safety factor: a few ulps of c absorb it
        if ThompsonConfig(T, N, b, c).mu_tight <= mu:
            return c
        c = float(np.nextafter(c, math.inf))
    raise AssertionError("could not meet the budget by nudging c")  # pragma: no cover


def max_prepulls(horizon: int, arms: int, mu: float) -> int:
    """The largest b whose frontier c is ≥ 1: b ≤ (T − μ²)/(N + μ²) (0 if only b = 0 fits).

    >>> max_prepulls(100_000, 5, 1.0), max_prepulls(100_000, 5, 5.0)
    (16666, 3332)
    """
    T = check_integer("horizon", horizon, 2)
    N = check_integer("arms", arms, 2)
    mu = _check_mu(mu)
    _check_budget(mu, T)
    b = max(0, int(math.floor((T - mu * mu) / (N + mu * mu))))
    b = min(b, (T - 1) // N)

    def ok(k: int) -> bool:  # c = (T − kN)/(μ²(k + 1)) >= 1, without dividing by a tiny μ²
        return k * N < T and (T - k * N) >= mu * mu * (k + 1)

    while b > 0 and not ok(b):
        b -= 1
    while ok(b + 1):
        b += 1
    return b


def candidate_prepulls(horizon: int, arms: int, mu: float, num: int = 10) -> list[int]:
    """``num`` candidates: 0 plus ``num − 1`` log-spaced integers in [1, max_prepulls]
    (fewer if they collide).

    >>> candidate_prepulls(100_000, 5, 1.0)
    [0, 1, 3, 11, 38, 129, 435, 1467, 4944, 16666]
    """
    num = check_integer("num", num, 1)
    bmax = max_prepulls(horizon, arms, mu)
    if bmax == 0 or num == 1:
        return [0]
    pts = np.unique(np.round(np.geomspace(1, bmax, num - 1)).astype(np.int64))
    return [0] + [int(x) for x in pts]


RULE_SPREAD = 1.0 / 6.0


def rule_of_thumb_prepulls(horizon: int, arms: int, mu: float) -> int:
    """A quick default b for budget μ (no simulation): b = round(sqrt(T)/(μ·s)) with s = 1/6,
    capped at :func:`max_prepulls`.

    Rationale: on the frontier, after the pre-pulls each arm's sampling standard deviation is
    sqrt(c/(b+1)) ≈ sqrt(T)/(μ(b+1)); the rule makes it about s = 1/6 of the reward range. The
    constant is calibrated on the full-scale tuner runs of the Bernoulli and
    truncated-exponential instances of Ou, Avella Medina & Cummings (2024), §5.1–5.2 (T = 10^5,
    N = 5, μ ∈ {1, 2, 5}; ``docs/bandits-results.md``), whose best b gave s ≈ 0.14–0.22. Run
    :func:`tune_thompson` for an environment-specific choice.

    >>> rule_of_thumb_prepulls(100_000, 5, 1.0), rule_of_thumb_prepulls(100_000, 5, 5.0)
    (1897, 379)
    >>> rule_of_thumb_prepulls(100, 5, 10.0)  # the budget admits (0, 1): no pre-pulls needed
    0
    """
    T = check_integer("horizon", horizon, 2)
    N = check_integer("arms", arms, 2)
    mu = _check_mu(mu)
    _check_budget(mu, T)
    if T - 1 <= 2 * mu * mu:
        return 0
    return min(max_prepulls(T, N, mu), int(round(math.sqrt(T) / (mu * RULE_SPREAD))))


def budget_pair(horizon: int, arms: int, mu: float, prepulls: int | None = None) -> tuple[int, float]:
    """(b, c) for budget μ: b = ``prepulls`` (default :func:`rule_of_thumb_prepulls`) and c on
    the certified frontier — or c = 1 when b = 0 and Algorithm 1 is already within budget.

    >>> b, c = budget_pair(100_000, 5, 1.0)
    >>> b, round(c, 3), ThompsonConfig(100_000, 5, b, c).mu_tight <= 1.0
    (1897, 47.69, True)
    """
    T = check_integer("horizon", horizon, 2)
    mu = _check_mu(mu)
    b = rule_of_thumb_prepulls(T, arms, mu) if prepulls is None else check_integer("prepulls", prepulls, 0)
    if b == 0 and (T - 1) / (2 * mu * mu) < 1.0:
        return 0, 1.0
    return b, frontier_c(b, T, arms, mu)
