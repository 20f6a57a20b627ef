"""The audit of DP-TS-UCB: both views of the run pipeline, with a neighbouring pair and a statistic
pre-registered from the reconstruction (``docs/dp-ts-ucb.md``).

The worst unit of the certificate is an arm's first observation: its epoch mean (f observations)
is sampled up to φ times before the arm is pulled f·2 more times. :func:`lead_pair` changes arm
0's first reward (1 vs 0) while every other arm's rewards are 1, so the others lead and arm 0
keeps drawing samples of its first mean.

* **outputs** (the action sequences): the generic black-box audit
  (:func:`bandits.auditing.black_box.black_box_audit`) with the default pairs and
  :func:`lead_pair` (:func:`audit_dp_ts_ucb`);
* **releases** (the samples): the releases view of the pipeline
  (:func:`bandits.auditing.releases.audit_releases`) with :func:`release_design` added — the
  lead pair of every arm j (up to :data:`MAX_LEAD_ARMS`), and the Gaussian privacy loss of arm
  j's first-epoch samples at the declared scale (:func:`sample_statistic`, a sample missing from
  a run counts as no loss): the likelihood-ratio statistic of the mechanism the certificate
  describes, so a correct implementation exhibits about the certified μ and a noise scale below
  the declared one exhibits more.

Example:
    >>> from bandits.dp_ts_ucb.policy import DPTSUCB
    >>> pairs, stats = release_design(DPTSUCB(alpha=1.0, design_horizon=100_000), 22, 5)
    >>> pairs[0].name
    "arm 0's first reward 1 vs 0, other arms 1"
    >>> stats[pairs[0].name][0].describe()[:32], len(stats[pairs[0].name][0].keys)
    ('Gaussian loss over 12 releases (', 12)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from bandits.auditing.black_box import PairDesign, black_box_audit, candidate_pairs
from bandits.auditing.releases import ReleaseStatistic, audited_arms

if TYPE_CHECKING:  # pragma: no cover
    from bandits.auditing.contract import AuditSettings, PolicyAudit
    from bandits.environments import Environment
    from bandits.policy import Policy
    from dpaudit.analyses.dp_ts_ucb import DPTSUCBPrivacy

__all__ = ["MAX_AUDIT_ROUNDS", "MAX_LEAD_ARMS", "audit_dp_ts_ucb", "audit_horizon", "lead_pair",
           "release_design", "sample_statistic"]  # fmt: skip

MAX_AUDIT_ROUNDS = 400
"""The audit horizon's cap past the initial pulls (a budget φ above it is audited in part)."""
MAX_LEAD_ARMS = 8
"""Lead pairs of at most this many arms in the releases view (as the view's own per-arm pairs)."""


class _Configured(Protocol):
    """What the audit reads of a DP-TS-UCB configuration (:class:`bandits.dp_ts_ucb.policy.DPTSUCB`)."""

    @property
    def first_epoch(self) -> int: ...

    def privacy(self, horizon: int) -> DPTSUCBPrivacy: ...


def lead_pair(n_arms: int, arm: int = 0) -> PairDesign:
    """Arm ``arm``'s first reward (round ``arm`` of the round-robin initial pulls) 1 vs 0, its
    other rewards 0, every other arm's 1.

    >>> lead_pair(3).tables(4)[0][:2].tolist()
    [[1.0, 1.0, 1.0], [0.0, 1.0, 1.0]]
    >>> lead_pair(3, 2).name
    "arm 2's first reward 1 vs 0, other arms 1"
    """
    base = tuple(0.0 if j == arm else 1.0 for j in range(n_arms))
    return PairDesign(f"arm {arm}'s first reward 1 vs 0, other arms 1", base, arm, (arm,))


def audit_horizon(policy: _Configured, horizon: int, n_arms: int) -> int:
    """The initial pulls and φ + K more rounds (arm 0 can spend its whole first budget while the
    others are played), at most :data:`MAX_AUDIT_ROUNDS` past the initial pulls.

    >>> from bandits.dp_ts_ucb.policy import DPTSUCB
    >>> audit_horizon(DPTSUCB(alpha=1.0, design_horizon=100_000), 100_000, 5)
    22
    """
    phi = policy.privacy(horizon).samples
    return min(horizon, policy.first_epoch * n_arms + min(phi + n_arms, MAX_AUDIT_ROUNDS))


def sample_statistic(policy: _Configured, horizon: int, n_arms: int, arm: int = 0) -> ReleaseStatistic:
    """The Gaussian privacy loss of arm ``arm``'s first-epoch samples under :func:`lead_pair`:
    centres 1/f (its first mean under the null) and 0, the declared scale sqrt(ln^α(T)/f), every
    sample the horizon allows (at most φ).

    >>> from bandits.dp_ts_ucb.policy import DPTSUCB
    >>> s = sample_statistic(DPTSUCB(alpha=1.0, design_horizon=100_000), 9, 5)  # 4 sampling rounds
    >>> s.keys[-1], s.null[0], s.alt[0], round(s.scale[0] ** 2, 4)
    ('arm 0 epoch 0 sample 3', 1.0, 0.0, 11.5129)
    """
    p = policy.privacy(horizon)
    f = policy.first_epoch
    m = max(1, min(p.samples, horizon - f * n_arms))
    keys = tuple(f"arm {arm} epoch 0 sample {k}" for k in range(m))
    return ReleaseStatistic("gaussian", keys, (1.0 / f,) * m, (0.0,) * m, (p.sigma(f),) * m)


def release_design(
    policy: _Configured, horizon: int, n_arms: int
) -> tuple[Sequence[PairDesign], Mapping[str, Sequence[ReleaseStatistic]]]:
    """The releases view's additions (:meth:`bandits.policy.Policy.release_audit`): the lead pair
    of every arm (up to :data:`MAX_LEAD_ARMS`, the last one included) with its pre-registered
    statistic."""
    arms = audited_arms(n_arms, MAX_LEAD_ARMS)
    pairs = [lead_pair(n_arms, j) for j in arms]
    return pairs, {p.name: (sample_statistic(policy, horizon, n_arms, j),) for p, j in zip(pairs, arms)}


def audit_dp_ts_ucb(policy: Policy, horizon: int, env: Environment, settings: AuditSettings) -> PolicyAudit:
    """The outputs view: the black-box audit with the default pairs and :func:`lead_pair`."""
    pairs = candidate_pairs(horizon, env.n_arms) + [lead_pair(env.n_arms)]
    return black_box_audit(policy, horizon, env, settings, pairs=pairs)

