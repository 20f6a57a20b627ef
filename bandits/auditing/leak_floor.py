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
* for each L, a pool of the variant's runs :data:`POOL_PILOTS` pilots large per table, split in
  two halves: :data:`DEFAULT_REPLICATES` pilots are subsampled from the first, each chooses its
  test with the view's own code, and its main-sample certification is scored exactly
  (:func:`detections`: binomial sums, :func:`dpaudit.audit.power.conditional_detections`) at
  the error rates of the chosen test on the second half (:func:`error_rates`) — never on runs
  that took part in any choice, which would favour the tests the pool happens to flatter.

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
from dpaudit.audit.power import conditional_detections
from dpaudit.audit.thresholds import threshold_errors
from mechanisms.randomness import ScaledRandom

__all__ = ["NoiseScaled", "error_rates", "certified_quantity", "detections", "take_rows", "POOL_PILOTS",
           "DEFAULT_REPLICATES"]  # fmt: skip

POOL_PILOTS = 16
"""Pilot samples' worth of variant runs per table and leak factor: the replicated pilots are
subsamples of its first half, and each chosen test's error rates are those of its second half."""

DEFAULT_REPLICATES = 64
"""Replicated pilots per leak factor."""


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
            return self.policy.agent(replace(run, random=ScaledRandom(run.random.seeds, self.factor)))
        return self.policy.agent(replace(run, noise=ScaledRandom(run.noise.seeds, self.factor)))

    def declare(self, horizon: int, n_arms: int, structure: Any = None) -> Any:
        return self.policy.declare(horizon, n_arms, structure)

    def check_structure(self, structure: Any) -> None:
        self.policy.check_structure(structure)


def error_rates(x: np.ndarray, y: np.ndarray, orientation: int, threshold: float) -> tuple[float, float]:
    """The false-positive and false-negative rates of a test on samples
    (:func:`dpaudit.audit.thresholds.threshold_errors`)."""
    fp, fn = threshold_errors(x, y, threshold, orientation)
    return fp / x.size, fn / y.size


def certified_quantity(policy: Policy, cert: Certified) -> tuple[str, float]:
    """(the certified quantity, its value): μ when one is certified, else ε at the audit's δ."""
    if cert.mu is not None:
        return "mu", float(cert.mu)
    if cert.epsilon is None:
        raise ValueError(f"{policy.name} declares no privacy: no certificate to measure the floor against")
    return "epsilon", float(cert.epsilon)


def detections(fp: np.ndarray, fn: np.ndarray, live: np.ndarray, n: int, alpha: float, quantity: str,
                delta: float, certified: float) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Per pilot, the probabilities that the main sample's bound (n runs per side, two
    Clopper–Pearson bounds at ``alpha``) is positive and above the certificate, for the chosen
    tests' error rates; 0 for a pilot that chose no test (``live`` False)."""
    det, vio = np.zeros(fp.size), np.zeros(fp.size)
    if live.any():
        f, g = fp[live], fn[live]
        det[live] = conditional_detections(f, g, n, n, alpha, kind=quantity, delta=delta, target=0.0)
        vio[live] = conditional_detections(f, g, n, n, alpha, kind=quantity, delta=delta, target=certified)
    return det, vio


def take_rows(columns: Mapping[str, np.ndarray], rows: np.ndarray) -> dict[str, np.ndarray]:
    """The rows ``rows`` of every column."""
    return {k: v[rows] for k, v in columns.items()}
