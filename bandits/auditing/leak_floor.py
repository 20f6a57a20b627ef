"""Measuring a policy audit's detection floor on the policy's own noise-scaled runs: the pieces
every view shares.

:mod:`dpaudit.audit.leak_floor` defines the algorithm floor: the leak factor L at which the
audit, as it runs, would see the algorithm with every privacy noise draw scaled by 1/L —
detect it (a positive bound) or refute its certificate — half of the time. The views measure
theirs with their own pilot code (:func:`bandits.auditing.black_box.black_box_leak_floor`,
:func:`bandits.auditing.releases.releases_leak_floor`) from these pieces:

* :class:`NoiseScaled` — a policy whose runs draw their privacy noise at 1/L of its scale (the
  stream the policy names in :attr:`~bandits.policy.Policy.privacy_stream`: ``noise`` for the
  mechanisms, ``random`` for a posterior sampler); L = 1 gives exactly the policy's own runs;
* for each L, a pool of the variant's runs :data:`POOL_PILOTS` pilots large per table from
  which :data:`DEFAULT_REPLICATES` pilots are subsampled, each choosing its test with the view's
  own code, and :data:`SCORING_MAINS` main samples' worth of further runs that score the chosen
  test (:func:`error_counts`) — never runs that took part in any choice, which would favour the
  tests the pool happens to flatter;
* the main-sample certification is scored without bias (:func:`detections`,
  :func:`dpaudit.audit.power.subsample_detections`): its counts are those of a random
  main-sample-sized subset of the scoring runs. Plugging the scoring runs' error *rates* into the
  binomial law of the main sample, as a first version did, spread the detection curve (rates
  estimated on fewer runs than the main sample) and put the detection factor where the audit
  detects in 19–57 % of seeds rather than 50 %.

The cost is many pilots of the variant per evaluated L: many times the audit's own. It is
computed on request (``AuditSettings(floor="algorithm")``, ``dpaudit run --audit-floor
algorithm``).

Example:
    >>> import numpy as np
    >>> from bandits.engine.simulator import simulate
    >>> from bandits.environments import parse_env
    >>> from bandits.lazy.policies import LazyUCB
    >>> env, pol = parse_env("bernoulli:0.6,0.4"), LazyUCB(epsilon=1.0)
    >>> a = simulate(NoiseScaled(pol, 1.0), env, 50, 3, seed=1, record_actions=True, progress=False)
    >>> b = simulate(pol, env, 50, 3, seed=1, record_actions=True, progress=False)
    >>> bool((a.actions == b.actions).all())
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from bandits.policy import Agent, Policy, RunContext
from dpaudit.audit import Certified
from dpaudit.audit.power import subsample_detections
from dpaudit.audit.thresholds import threshold_errors
from mechanisms.randomness import ScaledRandom

__all__ = ["NoiseScaled", "error_counts", "certified_quantity", "detections", "take_rows", "POOL_PILOTS",
           "SCORING_MAINS", "DEFAULT_REPLICATES", "FLOOR_RUNS_PER_TRIAL", "scoring_size"]  # fmt: skip

POOL_PILOTS = 8
"""Pilot samples' worth of variant runs per table and leak factor that the replicated pilots are
subsampled from."""

SCORING_MAINS = 2
"""Main samples' worth of further variant runs per table and leak factor that score each chosen
test (at least 1 for an unbiased score; more for a smoother one)."""

DEFAULT_REPLICATES = 64
"""Replicated pilots per leak factor."""

FLOOR_RUNS_PER_TRIAL = 880
"""Runs per audit trial of a measured floor of the generic views, at most: 7 leak factors × 2
views × (a pool of :data:`POOL_PILOTS` pilots of 10 % of the trials + :data:`SCORING_MAINS` main
samples of 90 %) × 2 tables × up to 12 neighbouring pairs."""


@dataclass(frozen=True)
class NoiseScaled(Policy):
    """``policy`` with every draw of its privacy stream at ``factor`` times its scale."""

    policy: Policy
    factor: float

    def __post_init__(self) -> None:
        if not isinstance(self.policy, Policy):
            raise ValueError(f"policy must be a bandits.policy.Policy, got {type(self.policy).__name__}")
        if not (0.0 < float(self.factor) < math.inf):
            raise ValueError(f"factor must be a positive finite number, got {self.factor!r}")

    @property
    def name(self) -> str:
        return f"{self.policy.name} (noise x{self.factor:.4g})"

    @property
    def feedback(self) -> Any:  # type: ignore[override]
        return self.policy.feedback

    def agent(self, run: RunContext) -> Agent:
        if self.policy.privacy_stream == "random":
            return self.policy.agent(replace(run, random=ScaledRandom.scaling(run.random, self.factor)))
        return self.policy.agent(replace(run, noise=ScaledRandom.scaling(run.noise, self.factor)))

    def declare(self, horizon: int, n_arms: int, structure: Any = None) -> Any:
        return self.policy.declare(horizon, n_arms, structure)

    def check_structure(self, structure: Any) -> None:
        self.policy.check_structure(structure)


def scoring_size(main: int) -> int:
    """The scoring runs per side for a main sample of ``main`` runs per side."""
    return SCORING_MAINS * int(main)


def error_counts(x: np.ndarray, y: np.ndarray, orientation: int, threshold: float) -> tuple[int, int]:
    """The false-positive and false-negative counts of a test on samples
    (:func:`dpaudit.audit.thresholds.threshold_errors`)."""
    fp, fn = threshold_errors(x, y, threshold, orientation)
    return int(fp), int(fn)


def certified_quantity(policy: Policy, cert: Certified) -> tuple[str, float]:
    """(the certified quantity, its value): μ when one is certified, else ε at the audit's δ."""
    if cert.mu is not None:
        return "mu", float(cert.mu)
    if cert.epsilon is None:
        raise ValueError(f"{policy.name} declares no privacy: no certificate to measure the floor against")
    return "epsilon", float(cert.epsilon)


def detections(fp: np.ndarray, fn: np.ndarray, live: np.ndarray, scored: int, n: int, alpha: float,
               quantity: str, delta: float, certified: float) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Per pilot, unbiased estimates of the probabilities that the main sample's bound (n runs
    per side, two Clopper–Pearson bounds at ``alpha``) is positive and above the certificate,
    from the chosen tests' error counts on ``scored`` ≥ n scoring runs per side
    (:func:`dpaudit.audit.power.subsample_detections`); 0 for a pilot that chose no test
    (``live`` False)."""
    det, vio = np.zeros(fp.size), np.zeros(fp.size)
    if live.any():
        f, g = fp[live], fn[live]
        det[live] = subsample_detections(f, g, scored, n, alpha, kind=quantity, delta=delta, target=0.0)
        vio[live] = subsample_detections(f, g, scored, n, alpha, kind=quantity, delta=delta, target=certified)
    return det, vio


def take_rows(columns: Mapping[str, np.ndarray], rows: np.ndarray) -> dict[str, np.ndarray]:
    """The rows ``rows`` of every column."""
    return {k: v[rows] for k, v in columns.items()}
