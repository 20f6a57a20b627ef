"""The detection floor of Thompson sampling's outputs view, measured on the algorithm itself.

The outputs view (:func:`bandits.thompson.audit.audit_thompson`) chooses its design, statistic
and threshold on a pilot (:mod:`bandits.thompson.audit_pilot`) and certifies that one test on a
main sample of the action sequences. Its floor on the algorithm (:mod:`dpaudit.audit.leak_floor`:
the leak factors L at which the view detects the algorithm with every posterior noise draw scaled
by 1/L, and refutes its certificate, half of the time) is measured the way the generic views
measure theirs (:mod:`bandits.auditing.leak_floor`): for each L,

* a pool of :data:`~bandits.auditing.leak_floor.POOL_PILOTS` pilots' worth of the scaled agent's
  trajectories per table of every design, from which ``replicates`` pilots are subsampled (the
  same rows at every L: common random numbers), each choosing its test with the view's own code
  (:func:`~bandits.thompson.audit_pilot.choose`, the draws alarm included);
* :data:`~bandits.auditing.leak_floor.SCORING_MAINS` main samples' worth of further trajectories
  of every design some replicate chose, which score the chosen tests; the unbiased estimate of
  each main sample's detection probability (:func:`bandits.auditing.leak_floor.detections`).

With one design (no pilot: the threshold is chosen on the model sample, which the leak does not
change) the replicates subsample a pool of model trajectories instead, once for all L.

Every run is the real agent (:func:`bandits.thompson.audit_trajectories.policy_actions`), keyed
apart from the audit's own and from the releases view's floor (stages :data:`STAGES`). One
evaluation costs the pool (about 0.8 of the trials per table) and twice the main sample per
chosen design; the search makes up to :data:`MAX_EVALUATIONS` of them (:data:`RUNS_PER_TRIAL`).

Example (tiny scale; ``dpaudit run ts --audit-floor algorithm`` measures the default audit's):
    >>> from bandits import GaussianTS
    >>> from bandits.thompson.audit_pilot import pilot_plan
    >>> from dpaudit.analyses.thompson_sampling import ThompsonConfig
    >>> pol = GaussianTS(b=1, c=1.0)
    >>> plan = pilot_plan(2, 600, 0.1, None)
    >>> f = outputs_leak_floor(pol, 40, 2, plan, seed=0, confidence=0.975,
    ...                        mu_certified=ThompsonConfig(40, 2, 1, 1.0).mu_tight, replicates=8)
    >>> f.has_power, 1.0 < f.violate_leak < 32.0
    (True, True)
"""

from __future__ import annotations

from concurrent.futures import Executor
from typing import Any

import numpy as np

from bandits.auditing.leak_floor import (
    DEFAULT_REPLICATES,
    POOL_PILOTS,
    SCORING_MAINS,
    detections,
    error_counts,
    scoring_size,
    take_rows,
)
from bandits.thompson.audit_designs import TSNeighbour
from bandits.thompson.audit_pilot import SAMPLE_COLUMNS, choose, pilot_sample
from bandits.thompson.audit_trajectories import _model_block, _policy_block, sample_stage
from bandits.thompson.policy import GaussianTS
from dpaudit.analyses.thompson_sampling import ThompsonConfig
from dpaudit.audit.leak_floor import LeakFloor, leak_floor
from dpaudit.audit.pilot import pilot_choice

__all__ = ["outputs_leak_floor", "STAGES", "RUNS_PER_TRIAL"]

STAGES = (6, 7, 8)
"""The seed keys of the floor's pools, scoring runs and model pool (the audit's pilot, main and
model use 0, 1 and 2; the releases view's floor 5)."""

FAMILY = "every posterior noise draw scaled by 1/L"

REFINED, MAX_EVALUATIONS = 1.1, 9
"""The search's final bracket ratio and its most evaluations: the view certifies one test on a
large main sample, so its detection curve is steep in L (at T = 40, 2000 trials, the violation
crossing was bracketed within a factor 3.3 after the generic views' 7 evaluations)."""

MAX_SCORED_DESIGNS = 6
"""The designs a floor of the default five arms can score (one per arm and the near tie)."""

RUNS_PER_TRIAL = MAX_EVALUATIONS * 2 * (POOL_PILOTS + SCORING_MAINS * MAX_SCORED_DESIGNS)
"""Runs per audit trial of the floor, at most, for up to :data:`MAX_SCORED_DESIGNS` designs:
:data:`MAX_EVALUATIONS` × 2 tables × (a pool of :data:`POOL_PILOTS` pilots of 10 % of the trials
over the designs, rounded up to the trials, + :data:`SCORING_MAINS` main samples per chosen
design)."""


def _rows(sample: list[dict[str, Any]], rows: np.ndarray) -> list[dict[str, np.ndarray]]:
    return [take_rows({k: s[k] for k in SAMPLE_COLUMNS if k in s}, rows) for s in sample]


def outputs_leak_floor(
    policy: GaussianTS,
    horizon: int,
    arms: int,
    plan: tuple[list[TSNeighbour], int, int],
    *,
    seed: int,
    confidence: float,
    mu_certified: float,
    delta: float = 1e-6,
    model_trials: int = 200,
    executor: Executor | None = None,
    progress: bool = False,
    replicates: int = DEFAULT_REPLICATES,
    pool_pilots: int = POOL_PILOTS,
) -> LeakFloor:
    """The outputs view's floor for the audit's ``plan`` (:func:`~bandits.thompson.audit_pilot.pilot_plan`:
    designs, pilot and main trajectories per table), its ``confidence`` and, with one design, its
    ``model_trials`` (module docstring)."""
    designs, n_pilot, n_main = plan
    m, n_rep = scoring_size(n_main), max(1, int(replicates))
    alpha = (1.0 - confidence) / 2.0  # per error rate of the certifying test
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0x7A5D17, STAGES[0], 1)))
    if len(designs) == 1:
        fixed = _model_choices(policy, horizon, arms, designs[0], n_main, model_trials, pool_pilots, n_rep,
                               rng, seed=seed, confidence=confidence, executor=executor)  # fmt: skip
    else:
        pool = pool_pilots * n_pilot
        picks = [[rng.choice(pool, size=n_pilot, replace=False) for _ in designs] for _ in range(n_rep)]

    def evaluate(leak: float) -> tuple[np.ndarray, np.ndarray]:
        if len(designs) == 1:
            choices = fixed
        else:
            pools = [pilot_sample(policy, nb, d, horizon, arms, pool, stage=STAGES[0], seed=seed,
                                  executor=executor, progress=progress, noise_factor=1.0 / leak,
                                  desc=f"ts-audit outputs floor pool {d + 1}/{len(designs)} (L = {leak:.3g})")
                     for d, nb in enumerate(designs)]  # fmt: skip
            choices = [choose([_rows(pools[d], pk[d]) for d in range(len(designs))], arms, n_main, confidence,
                              mu_certified) for pk in picks]  # fmt: skip
        scored = {}
        for d in sorted({c["design"] for c in choices}):
            tables = designs[d].tables(policy, horizon, arms)
            tail = (m if arms == 2 else 0, policy.c, False, 1.0 / leak)
            desc = f"ts-audit outputs floor (L = {leak:.3g})"
            scored[d] = sample_stage(_policy_block, (policy, tables, horizon), tail, STAGES[1], d, m, seed,
                                     executor, progress, desc)  # fmt: skip
        fp, fn = np.empty(n_rep, np.int64), np.empty(n_rep, np.int64)
        for r, c in enumerate(choices):
            x, y = (scored[c["design"]][s][c["statistic"]] for s in (0, 1))
            fp[r], fn[r] = error_counts(x, y, c["orientation"], c["threshold"])
        return detections(fp, fn, np.ones(n_rep, bool), m, n_main, alpha, "mu", delta, mu_certified)

    return leak_floor(evaluate, replicates=n_rep, family=FAMILY, quantity="mu", certified=mu_certified,
                      max_evaluations=MAX_EVALUATIONS, refined=REFINED)


def _model_choices(
    policy: GaussianTS, horizon: int, arms: int, design: TSNeighbour, n_main: int, n_model: int,
    pool_pilots: int, n_rep: int, rng: np.random.Generator, *, seed: int, confidence: float,
    executor: Executor | None,
) -> list[dict[str, Any]]:  # fmt: skip
    """One design: each replicate's score threshold chosen on ``n_model`` model trajectories per
    table, subsampled from a pool of ``pool_pilots`` times as many (the audit's fixed-design path)."""
    tables = design.tables(policy, horizon, arms)
    pool = pool_pilots * n_model
    head = (ThompsonConfig(horizon, arms, policy.b, policy.c), tables)
    model = sample_stage(_model_block, head, (), STAGES[2], 0, pool, seed, executor, False,
                         "ts-audit outputs floor model")  # fmt: skip
    out = []
    for _ in range(n_rep):
        rows = rng.choice(pool, size=n_model, replace=False)
        pc = pilot_choice([(model[0]["score"][rows], model[1]["score"][rows], None)], n_main,
                          confidence=confidence, kind="mu")  # fmt: skip
        out.append({"design": 0, "statistic": "score", "threshold": pc.threshold,
                    "orientation": pc.orientation})
    return out
