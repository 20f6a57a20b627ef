"""Thompson sampling with Gaussian priors and the (b, c) modification (Ou, Avella Medina & Cummings
2024, Algorithms 1–2).

:class:`GaussianTS` is the configuration. Its agent (:class:`bandits.thompson.agent.GaussianTSAgent`)
plays R repetitions at once, by default with an exact *speculative* engine (bit-identical to the
plain per-round loop, several times faster); :class:`bandits.thompson.joint.GaussianTSJoint` plays
many configurations together (the tuner's :func:`bandits.engine.simulator.simulate_many`). The
privacy analysis lives in :mod:`dpaudit.analyses.thompson_sampling` (one source of truth):
:meth:`GaussianTS.declare` returns it as the run's declaration, and every agent records in each
repetition's ledger the report-noisy-max releases it really made, with the noise it really used.

Example:
    >>> import numpy as np
    >>> from bandits.environments import BernoulliEnv
    >>> from bandits.policy import Outcomes, RunContext
    >>> pol = GaussianTS(b=2, c=4.0)
    >>> run = RunContext.create(BernoulliEnv((0.5, 0.5, 0.5)), 10, np.random.SeedSequence(0).spawn(2))
    >>> agent = pol.agent(run)
    >>> agent.run_chunk(0, 6, Outcomes(np.zeros((2, 6, 3)), pol.feedback))[0].tolist()  # pre-pulls
    [0, 0, 1, 1, 2, 2]
    >>> pol.config(10, 3).private_rounds, round(pol.config(10, 3).per_round_mu, 4)  # 1/sqrt(c(b+1))
    (4, 0.2887)
"""


from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from bandits.actions import ActionStructure
from bandits.policy import JointPlayer, Policy, RunContext
from bandits.thompson.agent import GaussianTSAgent
from bandits.thompson.joint import GaussianTSJoint
from dpaudit.analyses.thompson_sampling import ThompsonConfig
from dpaudit.declaration import Declaration, PublishedClaim
from dpaudit.events import Neighbouring
from dpaudit.papers import OU_2024
from dpaudit.validation import check_positive

__all__ = ["GaussianTS"]


@dataclass(frozen=True)
class GaussianTS(Policy):
    """Thompson sampling with Gaussian priors and the (b, c) modification (Ou, Avella Medina & Cummings
    2024, Alg. 2).

    Pre-pull every arm ``b`` times (arm 0 b times, then arm 1, ...); afterwards sample
    θ_i ~ N(μ̂_i, c/(n_i+1)), μ̂_i = S_i/(n_i+1), and play argmax θ. ``b=0, c=1`` is
    Algorithm 1. The engines give identical actions (tested): ``"auto"`` (default) is
    ``"kernel"`` when numba is installed and ``"speculative"`` otherwise; ``"speculative"``
    guesses runs of the leader and plays the rounds where that fails with the per-repetition
    round loop; ``"kernel"`` plays every sampling round with that loop (fastest when the arms
    are close and every guess would fail: the audit's tied designs); ``"step"`` is the plain
    NumPy step loop over all repetitions at once (the reference). The per-repetition loop is
    compiled with numba when it is installed (:func:`bandits.engine.compiled.gaussian_ts_rounds`, the
    ``fast`` extra; ``DPAUDIT_NUMBA=0`` disables it), else it is the NumPy step loop.

    >>> GaussianTS().name, GaussianTS(b=3, c=2.0).name
    ('gaussian-ts', 'gaussian-ts(b=3,c=2)')
    >>> GaussianTS(c=0.5)
    Traceback (most recent call last):
    ...
    ValueError: c must be in [1, inf), got 0.5
    """

    b: int = 0
    c: float = 1.0
    engine: str = "auto"

    joint_player: ClassVar[type[JointPlayer] | None] = GaussianTSJoint
    privacy_stream: ClassVar[str] = "random"

    def __post_init__(self) -> None:
        if isinstance(self.b, bool) or not isinstance(self.b, (int, np.integer)) or self.b < 0:
            raise ValueError(f"b must be an integer >= 0, got {self.b!r}")
        object.__setattr__(self, "b", int(self.b))
        c = check_positive("c", self.c)
        if c < 1.0 or math.isinf(c):
            raise ValueError(f"c must be in [1, inf), got {self.c!r}")
        object.__setattr__(self, "c", c)
        if self.engine not in ("auto", "speculative", "kernel", "step"):
            raise ValueError(f"engine must be 'auto', 'speculative', 'kernel' or 'step', got {self.engine!r}")

    @property
    def name(self) -> str:
        if self.b == 0 and self.c == 1.0:
            return "gaussian-ts"
        return f"gaussian-ts(b={self.b},c={self.c:g})"

    def agent(self, run: RunContext) -> GaussianTSAgent:
        return GaussianTSAgent(self, run)

    def config(self, horizon: int, n_arms: int) -> ThompsonConfig:
        """The privacy analysis of this (b, c) at (T, N)
        (:class:`dpaudit.analyses.thompson_sampling.ThompsonConfig`)."""
        return ThompsonConfig(horizon, n_arms, self.b, self.c)

    def declare(self, horizon: int, n_arms: int, structure: ActionStructure | None = None) -> Declaration:
        """Each sampling round that can see the changed reward is a Gaussian report-noisy-max
        release (worst case: the changed arm keeps its smallest count, n = max(b, 1)); pre-pull
        rounds are data-independent. One source of truth:
        :class:`dpaudit.analyses.thompson_sampling.ThompsonConfig`.

        >>> d = GaussianTS().declare(100, 5)
        >>> d.event.num_releases, d.unit, d.published.source
        (99, 'one reward', 'Ou, Avella Medina & Cummings (2024), Theorem 3')
        """
        cfg = self.config(horizon, n_arms)
        mu, place = cfg.published_mu
        return Declaration(
            event=cfg.event(),
            unit="one reward",
            neighbouring=Neighbouring.REPLACE,
            published=PublishedClaim(OU_2024, place, mu=mu, note="GDP of the whole action sequence"),
            note=f"mu = sqrt({cfg.private_rounds}/(c(max(b,1)+1))): {cfg.private_rounds} rounds can see the "
            "changed reward, each post-processing one Gaussian coordinate "
            "(dpaudit.analyses.thompson_sampling)",
        )
