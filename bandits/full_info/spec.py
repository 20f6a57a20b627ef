"""The full-information algorithms of Hu et al. (2024) as ``dpaudit run`` algorithms.

``rnm-ftnl`` (Alg. 4, ``--noise published`` = Lap(1/ε) as printed, certified 2ε; ``corrected`` =
Lap(2/ε), certified ε) and ``naive-ftnl`` (§5 text). With no ``--env`` they run the "all gaps
equal" instance (one action 0.6, three at 0.5), T = 10⁶.

Audits go through the generic black-box path (:func:`bandits.auditing.black_box.audit_policy`)
with :func:`rnm_pairs`: inside global epoch s (the one ending a quarter of the way into the
horizon), action 0 leads by g rounds and one round's vector (1, 0, …) is replaced by (0, 1, …),
g = 1..2^s; the released leader decides the next epoch's 2^{s+1} plays. With K = 2 and long
epochs the published Lap(1/ε) is refuted (``published_verdict``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bandits.actions import Feedback
from bandits.algorithm import AlgorithmSpec, Configured, Option
from bandits.lazy.spec import EPS, T_PAPER, UNIT
from dpaudit.papers import HU_2024

if TYPE_CHECKING:  # policies and audits load in the functions that use them, not to declare the specs
    from bandits.auditing.black_box import PairDesign
    from bandits.auditing.contract import AuditSettings, PolicyAudit
    from bandits.environments import Environment
    from bandits.policy import Policy

__all__ = ["FULL_INFO_ENV", "rnm_pairs", "SPECS"]

FULL_INFO_ENV = "bernoulli:0.6,0.5,0.5,0.5"


def rnm_pairs(horizon: int, n_arms: int) -> tuple[list[PairDesign], int]:
    """Pairs for global-epoch algorithms at ``horizon``: epoch s with 2^{s+1} ≤ (horizon + 1)/2,
    so that epoch s + 1 (whose plays reveal the released leader) fits; action 0 leads by g rounds
    of epoch s (vectors (1, 0, …)), and the first of them is (1, 0, …) vs (0, 1, …). Returns the
    pairs and epoch s.

    >>> pairs, s = rnm_pairs(63, 2)
    >>> s, len(pairs), pairs[0].tables(63)[1][15].tolist()
    (4, 9, [0.0, 1.0])
    """
    from bandits.auditing.black_box import PairDesign
    from bandits.full_info.policies import epoch_bounds

    s = max(1, (horizon + 1).bit_length() - 3)
    start, stop = epoch_bounds(s)
    zeros = (0.0,) * n_arms
    lead = (1.0,) + (0.0,) * (n_arms - 1)
    swap = (0.0, 1.0) + (0.0,) * (n_arms - 2)
    pairs = [
        PairDesign(
            f"epoch {s}: action 0 leads by {g}, one round (1,0) vs (0,1)",
            zeros,
            start,
            None,
            values=(lead, swap),  # whole row: a vector per side
            overrides=((start, start + g, lead),),
        )
        for g in sorted({1, 2, 3, 4, 5, 6, 8, 11, 16, stop - start} & set(range(1, stop - start + 1)))
    ]
    return pairs, s


def _rnm_audit(policy: Policy, horizon: int, env: Environment, settings: AuditSettings) -> PolicyAudit:
    from bandits.auditing.black_box import black_box_audit

    pairs, _ = rnm_pairs(horizon, env.n_arms)
    return black_box_audit(policy, horizon, env, settings, pairs=pairs)


def _rnm_audit_horizon(policy: Any, horizon: int, n_arms: int) -> int:
    return min(horizon, 63)  # epoch 4 (16 rounds) and the 32 rounds of epoch 5


def _rnm(options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
    from bandits.full_info.policies import RNMFTNL
    from dpaudit.events import LaplaceReportNoisyMaxEvent

    pol = RNMFTNL(epsilon=options["epsilon"], noise=options["noise"])
    event = pol.declare(horizon, env.n_arms).event
    if not isinstance(event, LaplaceReportNoisyMaxEvent):  # pragma: no cover - the policy's contract
        raise TypeError(f"RNM-FTNL declares a Laplace report-noisy-max, not {type(event).__name__}")
    cert = event.epsilon
    lines = (
        f"noise Lap({pol.scale:g}) ({options['noise']}): certified {cert:g}-DP under replace-one"
        + (" (Theorem 8 claims epsilon)" if pol.noise == "published" else ""),
    )
    return Configured(
        pol,
        f"RNM-FTNL (epsilon = {pol.epsilon:g}, {pol.noise} noise)",
        lines=lines,
        config={"epsilon": pol.epsilon, "noise": pol.noise},
    )


def _naive(options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
    from bandits.full_info.policies import NaiveFTNL

    pol = NaiveFTNL(epsilon=options["epsilon"])
    return Configured(
        pol, f"naive FTNL (epsilon = {pol.epsilon:g}, Lap(K/epsilon) sums)", config={"epsilon": pol.epsilon}
    )



SPECS = (
    AlgorithmSpec(
        key="rnm-ftnl",
        title=f"RNM-FTNL ({HU_2024.short}, Alg. 4, full information): global doubling epochs, "
        "report-noisy-max",
        feedback=Feedback.FULL,
        unit=UNIT,
        default_env=FULL_INFO_ENV,
        options=(
            EPS,
            Option(
                "noise",
                str,
                "published",
                "Lap(1/eps) as published (certified 2 eps) or corrected Lap(2/eps)",
                choices=("published", "corrected"),
            ),
        ),
        build=_rnm,
        auditor=_rnm_audit,
        default_audit_horizon=_rnm_audit_horizon,
        paper=HU_2024,
        privacy="central pure DP",
        default_horizon=T_PAPER,
    ),
    AlgorithmSpec(
        key="naive-ftnl",
        title=f"naive FTNL ({HU_2024.short}, section 5 text): global epochs, K noisy sums with Lap(K/eps)",
        feedback=Feedback.FULL,
        unit=UNIT,
        default_env=FULL_INFO_ENV,
        options=(EPS,),
        build=_naive,
        auditor=_rnm_audit,
        default_audit_horizon=_rnm_audit_horizon,
        paper=HU_2024,
        privacy="central pure DP",
        default_horizon=T_PAPER,
    ),
)
