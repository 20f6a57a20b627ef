"""The cascading bandits as policies: what each algorithm is, releases and declares.

This module gathers the family's public names; the code is in :mod:`bandits.cascading.base`,
:mod:`bandits.cascading.ucb`, :mod:`bandits.cascading.ldp` and :mod:`bandits.cascading.dp`.

Wang, Dong, Wang, Li & Shao, *Cascading Bandit under Differential Privacy* (arXiv:2105.11126,
2021). Each round t a user browses an ordered list ``A_t`` of K of the
L items and clicks the first attractive one; the unit of privacy is **one user — one round's
attraction vector, replaced** (Definition 1, event level). Rounds are 0-based here; the paper's
round index (its ``log t``) is the simulation round plus 1, or the simulation round itself with
the paper's initialisation (round 0 is then the round that observes ``w_0``).

=====================  ==========================================================  ==================
policy                 the algorithm                                                as written?
=====================  ==========================================================  ==================
:class:`CascadeUCB1`   CascadeUCB1 (Kveton et al. 2015), the non-private reference   skeleton inferred
:class:`CascadeDP`     Alg. 1: one hybrid counter per item (ε/L each), index
                       ŵ + sqrt(1.5 log t/T) + 3c₁L log^{1.5}n log t/(εT)           yes (c₁ fitted)
:class:`CascadeLDP`    Alg. 2 (Lap(K/ε) per examined position), Alg. 3 (N(0, σ²),
                       σ = sqrt(2K ln(1.25/δ))/ε), Theorem 7 (Lap(sqrt(4K ln(e+ε/δ))/ε))   yes
:class:`CascadeLDPFixed`  sound LDP variant: every user sends K values 1{C = k} +
                       noise (Δ₁ = 2, Δ₂ = √2); noisy clicks / noisy examinations      not in the paper
:class:`CascadeDPCounts`  sound central variant: one time-indexed hybrid counter of
                       every item's click and examination (Δ₁ = K + 1)                not in the paper
=====================  ==========================================================  ==================

**What holds** (the declarations):

* Algorithms 2, 3 and the Theorem 7 variant send one value per *examined* position, so the
  **number of values is the click position**: for K ≥ 2 not (ε, δ)-LDP for any δ < 1. The
  declaration composes a ``NonPrivateEvent`` with the paper's own accounting of the noise
  (K Laplace values of sensitivity 1; the K-vector Gaussian with Δ₂ = √K); the published claim
  rides along and the run reports "NOT PRIVATE as certified".
* Algorithm 1's index divides by the un-noised counts ``T_{t−1}(e)`` and adds a bonus in them:
  which items were examined (the click) reaches the list sequence outside the hybrid counters,
  which Lemma 2's post-processing does not cover — a ``NonPrivateEvent``; each insertion
  into an item's counter is recorded as the counter's per-element guarantee ε/L.
* The paper's initialisation observes the whole vector ``w_0`` un-noised: user 0 is not
  protected (``init="paper"``; ``init="none"`` starts from empty statistics with an infinite
  index instead, a legal initialisation).
* The sound variants certify what they claim: :class:`CascadeLDPFixed` ε (Laplace, Δ₁ = 2) or
  GDP μ = Δ₂/σ; :class:`CascadeDPCounts` ε by the hybrid counter (one element per round).

``noise_factor`` multiplies every noise scale (§7: "all noises are multiplied by 0.01") and
``factor_on`` says whether the privacy part of the bonus is multiplied too
(``"noise-and-bonus"``, the reading under which the published curves can look logarithmic: with
the bonus unscaled a suboptimal item needs 2.5·10⁵–10⁸ observations before it stops being chosen)
or not (``"noise"``). The privacy spent is the declaration's at the scaled noise: for
Algorithm 2's noise ε/factor (100ε at × 0.01).

Example:
    >>> from bandits.environments.cascade import cascade_instance
    >>> from dpaudit.accounting import account
    >>> env = cascade_instance()
    >>> d = CascadeLDP(1.0, "laplace").declare(10**5, env.n_arms, env.structure)
    >>> account(d.event, delta=1e-6).best.value is None                 # the length leak
    True
    >>> f = CascadeLDPFixed(1.0, "laplace").declare(10**5, env.n_arms, env.structure)
    >>> account(f.event, delta=1e-6).bounds["basic"].value               # Lap(2/ε) on a one-hot
    1.0
"""

from __future__ import annotations

from bandits.cascading.base import (
    C1,
    CALIBRATIONS,
    COUNT_LEAK,
    FACTOR_TARGETS,
    INIT_MODES,
    LENGTH_LEAK,
    UNIT,
    W0_LEAK,
    CascadeAgent,
    CascadePolicy,
    counts_sensitivity,
    fixed_sensitivity,
    top_k,
)
from bandits.cascading.dp import CascadeDP, CascadeDPCounts, HybridCountsAgent, HybridStreamsAgent
from bandits.cascading.ldp import CascadeLDP, CascadeLDPFixed, FixedReportsAgent, ObservedReportsAgent
from bandits.cascading.ucb import CascadeUCB1, UCBAgent

__all__ = [
    "UNIT",
    "INIT_MODES",
    "FACTOR_TARGETS",
    "CALIBRATIONS",
    "C1",
    "LENGTH_LEAK",
    "COUNT_LEAK",
    "W0_LEAK",
    "CascadePolicy",
    "CascadeUCB1",
    "CascadeLDP",
    "CascadeLDPFixed",
    "CascadeDP",
    "CascadeDPCounts",
    "CascadeAgent",
    "UCBAgent",
    "ObservedReportsAgent",
    "FixedReportsAgent",
    "HybridStreamsAgent",
    "HybridCountsAgent",
    "fixed_sensitivity",
    "counts_sensitivity",
    "top_k",
]
