"""The full-information algorithms of Hu et al. (2024): RNM-FTNL (Alg. 4) and the naive FTNL of
§5's text.

Full information: after playing, the learner sees the whole reward vector X(t) ∈ [0, 1]^K
(``feedback = Feedback.FULL``); the unit of privacy is one round's reward vector, replaced
(Definition 1; neighbouring streams are :class:`~bandits.engine.replacement.RoundReplacement`).

**Global doubling epochs** (Alg. 4): epoch 0 is paper round 1 — play "the first action" (arm 0);
epoch s ≥ 1 is paper rounds 2^s .. 2^{s+1} − 1 (0-based rounds 2^s − 1 .. 2^{s+1} − 2). During
epoch s the leader chosen at the end of epoch s − 1 is played, and the K per-action sums Φ_j of
epoch s alone are accumulated (forgetful, lazy). At its end the next leader is released:

* ``RNMFTNL`` — report-noisy-max, J ← argmax_j Φ_j + Lap_j(b), K independent draws. With the
  published scale b = 1/ε (``noise="published"``) this is **2ε-DP** under replace-one, not the
  claimed ε (one replaced vector can lower Φ_1 and raise Φ_2; exact
  worst case :func:`mechanisms.report_noisy_max.laplace_rnm_worst_case_loss`); the declaration
  certifies 2ε and carries Theorem 8's ε as the published claim, which the run report marks NOT
  CERTIFIED. ``noise="corrected"`` uses b = 2/ε and is ε-DP.
* ``NaiveFTNL`` — follow the noisy leader of the K noisy sums Φ_j + Lap(K/ε) (each action's sum
  (ε/K)-DP; the vector of K sums has ℓ1-sensitivity K, so one release is ε-DP by the Laplace
  mechanism). The text describes it only in words ("each action's mean (ε/K)-DP"); we run it on
  the same global epochs.

Each round lies in exactly one epoch, and each epoch is released once (disjoint in time), so per
round the charge is one release: the ledger gets one entry per epoch with the epoch's rounds as
a ``range``; the unfinished last epoch is never released.

Example:
    >>> from bandits.environments import BernoulliEnv
    >>> from bandits.engine.simulator import simulate
    >>> pol = RNMFTNL(epsilon=1.0)
    >>> pol.declare(100, 4).event.epsilon, pol.declare(100, 4).published.epsilon
    (2.0, 1.0)
    >>> RNMFTNL(epsilon=1.0, noise="corrected").declare(100, 4).event.epsilon
    1.0
    >>> res = simulate(pol, BernoulliEnv((0.6, 0.5)), 14, 1, record_actions=True, progress=False)
    >>> res.actions[0, :3].tolist()   # epoch 0 = round 0 plays arm 0; epoch 1 = rounds 1, 2
    [0, 0, 0]
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from bandits.actions import ActionStructure, Feedback
from bandits.engine.segments import SegmentAgent
from bandits.full_info.epochs import epoch_bounds
from bandits.lazy.policies import UNIT
from bandits.policy import Policy, RunContext
from dpaudit.declaration import Declaration, PublishedClaim
from dpaudit.events import Neighbouring
from dpaudit.papers import HU_2024
from dpaudit.validation import check_positive
from mechanisms.laplace import LaplaceMechanism
from mechanisms.report_noisy_max import LaplaceReportNoisyMax

__all__ = ["RNMFTNL", "NaiveFTNL", "epoch_bounds"]


@dataclass(frozen=True)
class _FTNL(Policy):
    epsilon: float = 1.0
    engine: str = "fast"

    feedback: ClassVar[Feedback] = Feedback.FULL

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        if self.engine not in ("fast", "step"):
            raise ValueError(f"engine must be 'fast' or 'step', got {self.engine!r}")

    @abc.abstractmethod
    def mechanism(self, n_arms: int) -> LaplaceReportNoisyMax | LaplaceMechanism:
        """The release at the end of each global epoch, for ``n_arms`` actions."""

    def agent(self, run: RunContext) -> FTNLAgent:
        return FTNLAgent(self, run)


@dataclass(frozen=True)
class RNMFTNL(_FTNL):
    """RNM-FTNL (Hu et al. 2024, Alg. 4); ``noise="published"`` (Lap(1/ε)) or ``"corrected"`` (Lap(2/ε))."""

    noise: str = "published"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.noise not in ("published", "corrected"):
            raise ValueError(f"noise must be 'published' or 'corrected', got {self.noise!r}")

    @property
    def name(self) -> str:
        return f"rnm-ftnl(eps={self.epsilon:g},{self.noise})"

    @property
    def scale(self) -> float:
        return (1.0 if self.noise == "published" else 2.0) / self.epsilon

    def release_audit(self, horizon: int, n_arms: int) -> tuple[Sequence[Any], Mapping[str, Sequence[Any]]]:
        """One arm against the rest from a tie, per arm and epoch, with the indicator of that
        arm in the epoch's release (:func:`bandits.full_info.audit.release_design`)."""
        from bandits.full_info.audit import release_design

        return release_design(horizon, n_arms)

    def mechanism(self, n_arms: int) -> LaplaceReportNoisyMax:
        """The epoch release: RNM over the K epoch sums, replace-one, non-monotone."""
        return LaplaceReportNoisyMax(
            scale=self.scale, num_candidates=n_arms, neighbouring=Neighbouring.REPLACE
        )

    def declare(self, horizon: int, n_arms: int, structure: ActionStructure | None = None) -> Declaration:
        mech = self.mechanism(n_arms)
        published = None
        if self.noise == "published":
            published = PublishedClaim(
                HU_2024,
                "Theorem 8",
                epsilon=self.epsilon,
                delta=0.0,
                note="Dwork-Roth Claim 3.9 is for monotone add/remove; under replace-one Lap(1/eps) RNM "
                "is 2eps-DP",
            )
        return Declaration(
            mech.event,
            unit=UNIT,
            neighbouring=Neighbouring.REPLACE,
            published=published,
            note=f"each round lies in one global epoch; its K sums are released once through "
            f"report-noisy-max with Lap({self.scale:g}), {mech.event.epsilon:g}-DP under replace-one "
            "(2/scale: the sums can move in opposite directions)",
        )


@dataclass(frozen=True)
class NaiveFTNL(_FTNL):
    """Naive FTNL (Hu et al. 2024, §5 text): K noisy epoch sums with Lap(K/ε), follow the noisy leader."""

    @property
    def name(self) -> str:
        return f"naive-ftnl(eps={self.epsilon:g})"

    def mechanism(self, n_arms: int) -> LaplaceMechanism:
        """The epoch release: the vector of K sums, ℓ∞-sensitivity 1 (ℓ1 ≤ K), Lap(K/ε) each."""
        return LaplaceMechanism.from_epsilon(self.epsilon, 1.0, norm="linf", dim=n_arms)

    def declare(self, horizon: int, n_arms: int, structure: ActionStructure | None = None) -> Declaration:
        mech = self.mechanism(n_arms)
        return Declaration(
            mech.event,
            unit=UNIT,
            neighbouring=Neighbouring.REPLACE,
            published=PublishedClaim(
                HU_2024, "Section 5 (naive FTNL, text)", epsilon=self.epsilon, delta=0.0
            ),
            note="each round lies in one global epoch; its K sums are released once with Lap(K/eps) "
            "per coordinate (l1-sensitivity K)",
        )


class FTNLAgent(SegmentAgent):
    """Global doubling epochs for R repetitions (module docstring)."""

    def __init__(self, policy: _FTNL, run: RunContext) -> None:
        super().__init__(run, Feedback.FULL, policy.engine)
        K = self.n_arms
        mech = policy.mechanism(K)
        self.event = mech.event
        self.scale = float(mech.scale)
        self.argmax_only = isinstance(policy, RNMFTNL)
        S = max(1, int(self.horizon).bit_length()) + 1
        self.Z = run.noise.laplace((S, K))  # Z[r, s, j]: action j's noise at the end of epoch s
        self.epoch = np.zeros(self.reps, dtype=np.int64)
        self.arm[:] = 0  # epoch 0 plays the first action
        self.left[:] = 1

    def end_segment(self, rows: np.ndarray, t: int) -> None:
        s = int(self.epoch[rows[0]])  # global epochs: every listed repetition is in epoch s
        start, stop = epoch_bounds(s)
        noisy = self.Phi[rows] + self.scale * self.Z[rows, s]
        self.arm[rows] = noisy.argmax(axis=1)
        kind = "report-noisy-max" if self.argmax_only else "noisy sums"
        # what is released: the argmax alone (report-noisy-max), or every noisy sum
        self.run.ledgers.released(rows, f"epoch {s} {kind}", self.arm[rows] if self.argmax_only else noisy)
        self.run.ledgers.record(
            rows,
            self.event,
            units=range(start, stop),
            round=t,
            label=f"epoch {s} ({stop - start} rounds, {kind})",
        )
        self.Phi[rows] = 0.0
        self.epoch[rows] = s + 1
        self.left[rows] = 1 << (s + 1)
