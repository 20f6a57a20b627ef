"""The detection floor of Thompson sampling's releases view, measured on the algorithm itself.

The releases view (:mod:`bandits.thompson.draws_audit`) certifies two tests fixed in advance on
the changed arm's posterior draws of the design the pilot chose. Its floor measured on the
algorithm (:mod:`dpaudit.audit.leak_floor`: the leak factors L at which the view detects the
algorithm with every posterior noise draw scaled by 1/L, and refutes its certificate, half of
the time) therefore needs no replicated pilots: for each L, twice the main sample's trajectories
per table of the scaled agent on that design (the real agent, as the audit plays it:
:func:`bandits.thompson.audit_trajectories.policy_actions`), each test's error counts there, and
the unbiased estimate of its main sample's detection probability
(:func:`dpaudit.audit.power.subsample_detections`). The view shows the larger of its two bounds,
so it detects whenever either test does: the larger of the two tests' own probabilities is a
lower bound on the view's, and the factors it gives are at least the view's own (a floor that
errs towards "could not see").

The runs are keyed apart from the audit's own (stage :data:`STAGE`) and are the same at every L;
one evaluation costs about twice the audit's main sample, and the search makes up to
:data:`MAX_EVALUATIONS` of them.

Example (tiny scale; ``dpaudit run ts --audit-floor algorithm`` measures the default audit's):
    >>> from bandits import GaussianTS
    >>> from bandits.thompson.audit_designs import TSNeighbour
    >>> from dpaudit.analyses.thompson_sampling import ThompsonConfig
    >>> pol = GaussianTS(b=1, c=1.0)
    >>> mu = ThompsonConfig(40, 2, 1, 1.0).mu_tight
    >>> f = draws_leak_floor(pol, TSNeighbour().tables(pol, 40, 2), 40, 1500, seed=0, confidence=0.975,
    ...                      mu_certified=mu)
    >>> f.has_power, 1.0 < f.violate_leak < 4.0
    (True, True)
"""

from __future__ import annotations

from concurrent.futures import Executor

import numpy as np

from bandits.auditing.leak_floor import SCORING_MAINS, scoring_size
from bandits.thompson.audit_designs import NeighbourTables
from bandits.thompson.audit_trajectories import _policy_block, sample_stage
from bandits.thompson.draws_audit import DRAWS_STATISTICS
from bandits.thompson.policy import GaussianTS
from dpaudit.audit.leak_floor import LeakFloor, leak_floor
from dpaudit.audit.power import subsample_detections
from dpaudit.audit.thresholds import threshold_errors

__all__ = ["draws_leak_floor", "STAGE", "RUNS_PER_TRIAL"]

STAGE = 5
"""The seed key of the floor's trajectories (the audit's pilot, main and model use 0, 1 and 2)."""

FAMILY = "every posterior noise draw scaled by 1/L"

REFINED, MAX_EVALUATIONS = 1.05, 10
"""The search's final bracket ratio and its most evaluations: with one pre-registered test on a
large sample the detection curve is steep (a factor 1.25 bracket left the crossing 9 % off at
T = 40: refuted in 59 of 60 main samples at the interpolated factor)."""

RUNS_PER_TRIAL = MAX_EVALUATIONS * 2 * SCORING_MAINS
"""Runs per audit trial of the floor, at most: every evaluation plays both tables of the design,
:data:`~bandits.auditing.leak_floor.SCORING_MAINS` main samples each."""


def draws_leak_floor(
    policy: GaussianTS,
    tables: NeighbourTables,
    horizon: int,
    n_main: int,
    *,
    seed: int,
    confidence: float,
    mu_certified: float,
    executor: Executor | None = None,
    progress: bool = False,
) -> LeakFloor:
    """The releases view's floor on ``tables`` (the chosen design) for a main sample of
    ``n_main`` trajectories per table and the view's ``confidence`` (module docstring)."""
    m = scoring_size(n_main)
    each = 1.0 - (1.0 - confidence) / len(DRAWS_STATISTICS)  # each test's confidence (Bonferroni)
    alpha = (1.0 - each) / 2.0  # per error rate

    def evaluate(leak: float) -> tuple[np.ndarray, np.ndarray]:
        tail = (0, policy.c, True, 1.0 / leak)  # no exact loss; the draws, scored under the declared c
        side = sample_stage(_policy_block, (policy, tables, horizon), tail, STAGE, 0, m, seed, executor,
                            progress, f"ts-audit floor (L = {leak:.3g})")  # fmt: skip
        det, vio = 0.0, 0.0
        for st in DRAWS_STATISTICS:  # the view's tests: say R′ when the loss is negative
            fp, fn = threshold_errors(side[0][st], side[1][st], 0.0, -1)
            k0, k1 = np.array([fp]), np.array([fn])
            det = max(det, float(subsample_detections(k0, k1, m, n_main, alpha, kind="mu")[0]))
            vio = max(vio, float(subsample_detections(k0, k1, m, n_main, alpha, kind="mu",
                                                      target=mu_certified)[0]))  # fmt: skip
        return np.array([det]), np.array([vio])

    return leak_floor(evaluate, replicates=1, family=FAMILY, quantity="mu", certified=mu_certified,
                      max_evaluations=MAX_EVALUATIONS, refined=REFINED)
