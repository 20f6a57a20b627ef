"""Audit targets of the toolkit's mechanisms: mechanism + adversarial neighbours + statistic + claim.

Every factory returns a :class:`dpaudit.audit.AuditTarget` for :func:`dpaudit.audit.run_audit`
and honours the contract of :mod:`dpaudit.audit.target` (tested for every entry of
:data:`TARGETS` in ``tests/test_audit_target_contract.py``). ``claim=None`` audits the
toolkit's own certified value (source ``"dpaudit"``); pass :func:`~dpaudit.audit.claims.claim_mu`
or :func:`~dpaudit.audit.claims.claim_epsilon` to audit a user's or a paper's claim instead.
``mechanism=`` replaces the sampler (not the claim): that is how a planted bug is audited —
e.g. a Gaussian mechanism whose σ is 10 % below the σ its certificate was computed for.

Targets:

* :func:`gaussian_target` — ``x + N(0, σ²)``, certified μ = Δ/σ (Dong, Roth & Su 2022,
  arXiv:1905.02383, Theorem 2.7) and its ε(δ) (ibid. Corollary 2.13; Balle & Wang 2018,
  arXiv:1805.06530, Theorem 8);
* :func:`laplace_target` — ``x + Lap(b)``, certified ε = Δ/b at δ = 0 (Dwork & Roth 2014,
  Theorem 3.6);
* :func:`randomized_response_target` — k-ary RR, certified ε at δ = 0 (P(report = v) ∝ e^ε for
  the true value, 1 otherwise: the likelihood ratio is at most e^ε);
* :func:`rnm_laplace_target` — Laplace report-noisy-max over counts; the toolkit certifies
  2Δ/b under replace (Δ/b under monotone add/remove, Dwork & Roth 2014, Claim 3.9);
  Hu et al. (2024), Theorem 8, claim Δ/b (:func:`published_claim`);
* :func:`rnm_gaussian_target` — heterogeneous Gaussian RNM, certified μ = max s_i/σ_i;
  the published claim is Ou, Avella Medina & Cummings (2024), Theorem 6 (:func:`published_claim`);
* :func:`cascade_target` — the local randomizer of Wang et al. (2021), Algorithms 2–3 (the number
  of reports is the click position).

White-box privacy loss is the statistic wherever the mechanism exposes it; discrete outputs
declare the finite support of that statistic (exact output distributions), so the runner uses
the cut family of that support instead of a 600-test grid.

Example:
    >>> from dpaudit.audit.claims import claim_epsilon
    >>> t = laplace_target(scale=1.0)
    >>> t.certified.epsilon, t.delta, t.certified.source
    (1.0, 0.0, 'dpaudit')
    >>> laplace_target(scale=1.0, claim=claim_epsilon(0.5, 0.0)).certified.source
    'claim'
    >>> sorted(TARGETS)[:3]
    ['cascade', 'gaussian', 'laplace']
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from dpaudit.analyses.rnm_gaussian import (
    exact_epsilon,
    exact_privacy_profile,
    gdp_bound,
    published_bound_theorem6,
)
from dpaudit.audit.claims import DEFAULT_GDP_DELTA, claim_epsilon, claim_mu
from dpaudit.audit.neighbours import NeighbourPair, identical, scalar_pair
from dpaudit.audit.report import Certified
from dpaudit.audit.target import AuditTarget, Candidate, TargetFactory, choose_statistic
from dpaudit.conversions import gdp_epsilon
from dpaudit.papers import HU_2024, OU_2024, WANG_2021
from dpaudit.validation import check_positive, check_probability
from mechanisms.auditing.pairs import (
    cascade_pair,
    gaussian_rnm_adversarial,
    laplace_rnm_adversarial,
    laplace_rnm_pair,
    randomized_response_pair,
)
from mechanisms.base import check_neighbouring
from mechanisms.gaussian import GaussianMechanism
from mechanisms.laplace import LaplaceMechanism
from mechanisms.local import CascadeClickRandomizer
from mechanisms.randomized_response import RandomizedResponse
from mechanisms.report_noisy_max import (
    GaussianReportNoisyMax,
    LaplaceReportNoisyMax,
    laplace_rnm_worst_case_loss,
)

__all__ = [
    "TARGETS",
    "published_claim",
    "gaussian_target",
    "laplace_target",
    "randomized_response_target",
    "rnm_laplace_target",
    "rnm_gaussian_target",
    "cascade_target",
]


def _pair_or(pair: NeighbourPair | None, default: NeighbourPair) -> NeighbourPair:
    return default if pair is None else pair


def gaussian_target(
    sigma: float = 1.0,
    sensitivity: float = 1.0,
    *,
    claim: Certified | None = None,
    delta: float | None = None,
    mechanism: Any = None,
    pair: NeighbourPair | None = None,
    statistic: str = "auto",
) -> AuditTarget:
    """Gaussian mechanism ``x + N(0, σ²)``; neighbours 0 vs Δ; certified μ = Δ/σ.

    >>> gaussian_target(sigma=2.0).certified.mu
    0.5
    """
    claimed = GaussianMechanism(sigma=sigma, sensitivity=sensitivity)
    mech = claimed if mechanism is None else mechanism
    p = _pair_or(pair, scalar_pair(sensitivity))
    if claim is None:
        claim = claim_mu(claimed.mu, DEFAULT_GDP_DELTA if delta is None else delta, source="dpaudit")
    d = claim.delta if claim.delta is not None else (DEFAULT_GDP_DELTA if delta is None else delta)
    true_mu = abs(float(np.asarray(p.x_prime, float) - np.asarray(p.x, float))) / getattr(
        mech, "sigma", sigma
    )
    return AuditTarget(
        "gaussian",
        mech,
        p,
        choose_statistic(mech, p, statistic),
        claim,
        d,
        details={
            "parameters": {"sigma": sigma, "sensitivity": sensitivity},
            "exact": {
                "mu": true_mu,
                "epsilon": float(gdp_epsilon(true_mu, d)) if d > 0 and true_mu > 0 else None,
            },
        },
    )


def laplace_target(
    scale: float = 1.0,
    sensitivity: float = 1.0,
    *,
    claim: Certified | None = None,
    mechanism: Any = None,
    pair: NeighbourPair | None = None,
    statistic: str = "auto",
) -> AuditTarget:
    """Laplace mechanism ``x + Lap(b)``; neighbours 0 vs Δ; certified ε = Δ/b at δ = 0."""
    claimed = LaplaceMechanism(scale=scale, sensitivity=sensitivity)
    mech = claimed if mechanism is None else mechanism
    p = _pair_or(pair, scalar_pair(sensitivity))
    if claim is None:
        claim = claim_epsilon(claimed.epsilon, 0.0, source="dpaudit")
    true_eps = abs(float(np.asarray(p.x_prime, float) - np.asarray(p.x, float))) / getattr(
        mech, "scale", scale
    )
    return AuditTarget(
        "laplace",
        mech,
        p,
        choose_statistic(mech, p, statistic),
        claim,
        claim.delta if claim.delta is not None else 0.0,
        details={"parameters": {"scale": scale, "sensitivity": sensitivity}, "exact": {"epsilon": true_eps}},
        reference="laplace",
    )


def _discrete_support(statistic: Any, num_outputs: int) -> tuple[float, ...]:
    """The statistic's value at every possible output 0..num_outputs−1 (fixed before sampling)."""
    return tuple(np.unique(statistic(np.arange(num_outputs))).tolist())


def randomized_response_target(
    epsilon: float,
    num_categories: int = 2,
    *,
    claim: Certified | None = None,
    mechanism: Any = None,
    pair: NeighbourPair | None = None,
) -> AuditTarget:
    """k-ary randomised response; neighbours value 0 vs 1; certified ε at δ = 0."""
    claimed = RandomizedResponse(epsilon=epsilon, num_categories=num_categories)
    mech = claimed if mechanism is None else mechanism
    p = _pair_or(pair, randomized_response_pair(getattr(mech, "epsilon", epsilon)))
    if claim is None:
        claim = claim_epsilon(claimed.epsilon, 0.0, source="dpaudit")
    stat = choose_statistic(claimed, p)  # white-box loss of the claimed mechanism (fixed support)
    cands: list[Candidate] = []
    if pair is None and num_categories > 2:  # one design per category: value v vs v + 1
        for v in range(1, num_categories):
            q = NeighbourPair(v, (v + 1) % num_categories, p.relation,
                              f"value {v} vs value {(v + 1) % num_categories}", p.exact_loss)  # fmt: skip
            st = choose_statistic(claimed, q)
            cands.append(Candidate(q, st, _discrete_support(st, claimed.num_categories)))
    return AuditTarget(
        "randomized-response",
        mech,
        p,
        stat,
        claim,
        claim.delta or 0.0,
        support=_discrete_support(stat, claimed.num_categories),
        details={"parameters": {"epsilon": epsilon, "num_categories": num_categories}},
        candidates=tuple(cands),
    )


def rnm_laplace_target(
    scale: float = 1.0,
    arms: int = 2,
    neighbouring: Literal["replace", "add-remove"] = "replace",
    *,
    trials: int = 200_000,
    epoch_length: int | None = None,
    gap: int | None = None,
    claim: Certified | None = None,
    confidence: float = 0.95,
    mechanism: Any = None,
) -> AuditTarget:
    """Laplace report-noisy-max over K counts (the selection step of RNM-FTNL, Hu et al. 2024).

    Neighbours ``(g, 0, …)`` vs ``(g − 1, 1, …)`` under replace (``(g, 0, …)`` vs ``(g, 1, …)``
    under add/remove); ``gap`` fixes g, otherwise g ∈ [1, epoch_length or 64] is chosen for the
    best predicted bound with ``trials`` (exact distributions only, no audit samples). The
    toolkit certifies ε = 2Δ/b under replace and Δ/b under (monotone) add/remove.
    """
    neighbouring = check_neighbouring(neighbouring).value
    claimed = LaplaceReportNoisyMax(
        scale, arms, neighbouring=check_neighbouring(neighbouring), monotone=neighbouring == "add-remove"
    )
    mech = claimed if mechanism is None else mechanism
    if claim is None:
        claim = claim_epsilon(claimed.epsilon, 0.0, source="dpaudit")
    d = claim.delta or 0.0
    if gap is not None:
        if epoch_length is not None and gap > epoch_length:
            raise ValueError(f"gap must be in [1, epoch_length={epoch_length}], got {gap}")
        p = laplace_rnm_pair(arms, gap, neighbouring)
        lp, lq = claimed.log_output_distribution(p.x), claimed.log_output_distribution(p.x_prime)
        p = NeighbourPair(p.x, p.x_prime, p.relation, p.description, float(np.max(np.abs(lp - lq))))
    else:
        p = laplace_rnm_adversarial(
            scale,
            arms,
            neighbouring,
            trials_per_side=max(1, trials // 2),
            epoch_length=epoch_length,
            confidence=confidence,
            delta=d,
            kind="mu" if claim.mu is not None else "epsilon",
        )
    details: dict[str, Any] = {
        "parameters": {
            "scale": scale,
            "arms": arms,
            "neighbouring": neighbouring,
            "epoch_length": epoch_length,
        },
        "exact": {"pair_loss": p.exact_loss},
    }
    if arms == 2 and epoch_length is not None:
        details["exact"]["worst_case_loss_at_epoch_length"] = laplace_rnm_worst_case_loss(
            1.0 / scale, epoch_length, neighbouring
        )
    stat = choose_statistic(claimed, p)
    # one design per arm: the same gap with every other arm as the one that gains (arm 0 gains
    # from a leading arm 1), so a bug on one arm's noise cannot hide behind the others
    g = int(round(max(p.x)))
    cands = []
    for j in [a for a in range(arms) if a != 1]:
        q = laplace_rnm_pair(arms, g, neighbouring, arm=j, leader=0 if j else 1)
        st = choose_statistic(claimed, q)
        cands.append(Candidate(q, st, _discrete_support(st, arms)))
    return AuditTarget(
        "rnm-laplace", mech, p, stat, claim, d, support=_discrete_support(stat, arms), details=details,
        candidates=tuple(cands),
    )


def rnm_gaussian_target(
    sensitivities: Sequence[float] | float,
    sigmas: Sequence[float],
    *,
    values: Sequence[float] | None = None,
    trials: int = 200_000,
    claim: Certified | None = None,
    delta: float | None = None,
    confidence: float = 0.95,
    mechanism: Any = None,
) -> AuditTarget:
    """Heterogeneous Gaussian report-noisy-max (Ou, Avella Medina & Cummings 2024, Algorithm 4).

    One round of their Thompson sampling is such a release.

    Without ``values`` the neighbour pair is searched (:func:`gaussian_rnm_adversarial`: the
    exact worst case of :mod:`dpaudit.analyses.rnm_gaussian` at the audited δ and a scan of common gaps,
    best predicted bound wins). The toolkit certifies μ = max s_i/σ_i.
    """
    sig = [float(v) for v in np.atleast_1d(np.asarray(sigmas, dtype=float))]
    s = np.atleast_1d(np.asarray(sensitivities, dtype=float))
    if s.size not in (1, len(sig)):
        raise ValueError(f"sensitivities must have 1 or {len(sig)} entries (one per sigma), got {s.size}")
    claimed = GaussianReportNoisyMax(tuple(sig), tuple(np.broadcast_to(s, (len(sig),)).tolist()))
    mech = claimed if mechanism is None else mechanism
    if claim is None:
        claim = claim_mu(
            gdp_bound(claimed.sensitivities, sig),
            DEFAULT_GDP_DELTA if delta is None else delta,
            source="dpaudit",
        )
    d = claim.delta if claim.delta is not None else (DEFAULT_GDP_DELTA if delta is None else delta)
    p = gaussian_rnm_adversarial(
        claimed.sensitivities,
        sig,
        trials_per_side=max(1, trials // 2),
        values=values,
        confidence=confidence,
        delta=d,
        kind="mu" if claim.mu is not None else "epsilon",
    )
    exact: dict[str, Any] = {"pair_pure_epsilon": p.exact_loss}
    if d > 0:
        exact["pair_epsilon_at_delta"] = exact_epsilon(p.x, p.x_prime, sig, d)
        if claim.epsilon is not None:
            exact["pair_delta_at_claimed_epsilon"] = float(
                exact_privacy_profile(p.x, p.x_prime, sig, [claim.epsilon]).deltas[0]
            )
    stat = choose_statistic(claimed, p)
    cands = []
    for k in range(len(sig)):  # one design per query: the best pair that changes query k
        q = gaussian_rnm_adversarial(claimed.sensitivities, sig, trials_per_side=max(1, trials // 2),
                                     values=values, confidence=confidence, delta=d,
                                     kind="mu" if claim.mu is not None else "epsilon", changed=k)  # fmt: skip
        if (q.x, q.x_prime) != (p.x, p.x_prime):
            st = choose_statistic(claimed, q)
            cands.append(Candidate(q, st, _discrete_support(st, len(sig))))
    return AuditTarget(
        "rnm-gaussian",
        mech,
        p,
        stat,
        claim,
        d,
        candidates=tuple(cands),
        support=_discrete_support(stat, len(sig)),
        details={
            "parameters": {
                "sensitivities": list(claimed.per_candidate_sensitivities),
                "sigmas": sig,
                "values": None if values is None else list(values),
            },
            "exact": exact,
        },
    )


def cascade_target(
    num_positions: int,
    epsilon: float,
    delta: float | None = None,
    *,
    report: Literal["observed", "all-positions"] = "observed",
    click: int | None = 1,
    click_prime: int | None = None,
    claim: Certified | None = None,
) -> AuditTarget:
    """Local randomizer of Wang et al. (2021): Algorithm 2 (Laplace, ``delta=None``) or Algorithm 3
    (Gaussian, ``delta`` given), one user's click at ``click`` vs ``click_prime``.

    The default claim is the paper's: ε-LDP (Alg. 2) or (ε, δ)-LDP (Alg. 3) — which is also what
    the recorded event certifies, since it accounts only for the noisy values, not for how many
    there are. The statistic is the white-box privacy loss (``±inf`` when the lengths differ).
    """
    if delta is None:
        mech = CascadeClickRandomizer.alg2(num_positions, epsilon)
        alg = "Algorithm 2 (Laplace)"
    else:
        mech = CascadeClickRandomizer.alg3(num_positions, epsilon, delta)
        alg = "Algorithm 3 (Gaussian)"
    if report != "observed":
        mech = CascadeClickRandomizer(mech.num_positions, mech.noise, mech.scale, report=report)
    if claim is None:
        claim = claim_epsilon(epsilon, 0.0 if delta is None else delta, source=WANG_2021.at(alg))
    p = (
        cascade_pair(click, click_prime, mech.num_positions, report)
        if click != click_prime
        else identical(click)
    )
    stat = choose_statistic(mech, p)
    support = None
    if mech.num_values(click) != mech.num_values(click_prime):
        support = (-math.inf, math.inf)  # the loss is ±inf: the length alone tells the inputs apart
    return AuditTarget(
        "cascade",
        mech,
        p,
        stat,
        claim,
        claim.delta or 0.0,
        support=support,
        details={
            "parameters": {
                "num_positions": num_positions,
                "epsilon": epsilon,
                "delta": delta,
                "report": report,
                "algorithm": alg,
            },
            "lengths": [mech.num_values(click), mech.num_values(click_prime)],
            "exact": {"pair_loss": p.exact_loss},
        },
    )


def published_claim(target: str, **kw: Any) -> Certified:
    """The papers' own claims, as published.

    * ``"rnm-laplace"`` (Hu et al. (2024), Theorem 8): Lap(1/ε) RNM is ε-DP → ε = 1/``scale``, δ = 0.
    * ``"rnm-gaussian"`` (Ou, Avella Medina & Cummings (2024), Theorem 6):
      ε = ½·√(log((n−1)/(2δ)))·max s_i/σ_i at ``delta``.

    >>> published_claim("rnm-laplace", scale=1.0)
    Certified(mu=None, epsilon=1.0, delta=0.0, source='Hu et al. (2024), Theorem 8')
    >>> c = published_claim("rnm-gaussian", sensitivities=0.5, sigmas=[2 ** -0.5] * 2, delta=0.01)
    >>> round(c.epsilon, 4)
    0.6993
    """
    if target == "rnm-laplace":
        return claim_epsilon(1.0 / check_positive("scale", kw["scale"]), 0.0, source=HU_2024.at("Theorem 8"))
    if target == "rnm-gaussian":
        d = check_probability("delta", kw["delta"])
        return claim_epsilon(
            published_bound_theorem6(kw["sensitivities"], kw["sigmas"], d),
            d,
            source=OU_2024.at("Theorem 6/7"),
        )
    raise ValueError(f"no published claim for target {target!r}; known: 'rnm-laplace', 'rnm-gaussian'")


TARGETS: Mapping[str, TargetFactory] = {
    "gaussian": gaussian_target,
    "laplace": laplace_target,
    "randomized-response": randomized_response_target,
    "rnm-laplace": rnm_laplace_target,
    "rnm-gaussian": rnm_gaussian_target,
    "cascade": cascade_target,
}
"""Every target factory, by the name ``dpaudit audit TARGET`` uses."""
