"""The pilot of Thompson sampling's outputs audit: which design, statistic, threshold and
orientation the main sample certifies (:func:`bandits.thompson.audit.audit_thompson`, step 3).

One implementation serves the audit and the measurement of its floor on the algorithm
(:mod:`bandits.thompson.outputs_floor`, which replicates this pilot on subsamples of a pool of
noise-scaled runs):

* :func:`pilot_plan` — the designs and the split of the trials: ``pilot_fraction`` of them over
  the pre-registered designs (:func:`~bandits.thompson.audit_designs.candidate_designs`), the rest
  for the main sample; one design (the tie with arm 1 changed, its threshold then chosen on the
  model sample) when a pilot would leave fewer than half of them;
* :func:`pilot_sample` — one design's pilot trajectories of the real agent, with the changed arm's
  posterior draws (for the draws alarm) and, for N = 2, the exact loss;
* :func:`choose` — the test with the best predicted μ bound (:func:`dpaudit.audit.pilot.pilot_choice`)
  over designs and statistics; if the pilot's own draws already refute the certificate on some
  design at 99.9 % (:func:`bandits.thompson.draws_audit.draws_alarm`: a bug on one arm's draws),
  that design and its best test instead.

Example:
    >>> designs, n_pilot, n_main = pilot_plan(5, 20000, 0.1, None)
    >>> len(designs), n_pilot, n_main
    (6, 333, 18002)
    >>> pilot_plan(5, 600, 0.1, None)[1:]   # too few trials: one design, no pilot
    (0, 600)
"""

from __future__ import annotations

from concurrent.futures import Executor
from typing import Any

from bandits.thompson.audit_designs import TSNeighbour, candidate_designs
from bandits.thompson.audit_trajectories import _policy_block, sample_stage
from bandits.thompson.draws_audit import draws_alarm
from bandits.thompson.policy import GaussianTS
from dpaudit.audit.pilot import pilot_choice

__all__ = ["pilot_plan", "pilot_statistics", "pilot_sample", "choose", "SAMPLE_COLUMNS"]

SAMPLE_COLUMNS = ("score", "pulls", "L", "draws", "draws_first")
"""The per-trajectory columns of a pilot sample (those it has): what a subsample keeps."""


def pilot_plan(arms: int, trials: int, pilot_fraction: float,
               neighbour: TSNeighbour | None) -> tuple[list[TSNeighbour], int, int]:  # fmt: skip
    """(designs, pilot trajectories per table per design, main trajectories per table); with one
    design (``neighbour`` given, or too few trials for a pilot) the pilot size is 0."""
    designs = [neighbour] if neighbour is not None else candidate_designs(arms)
    n_pilot = max(64, int(round(pilot_fraction * trials)) // len(designs))
    if len(designs) > 1 and trials - n_pilot * len(designs) < max(100, trials // 2):
        designs = [TSNeighbour()]  # too few trials for a pilot: the tie, pre-registered
    if len(designs) == 1:
        return designs, 0, trials
    return designs, n_pilot, trials - n_pilot * len(designs)


def pilot_statistics(arms: int) -> tuple[str, ...]:
    """The outputs' statistics the pilot ranks (the exact loss only for N = 2, where it is cheap)."""
    return ("score", "pulls", "L") if arms == 2 else ("score", "pulls")


def pilot_sample(
    policy: GaussianTS, design: TSNeighbour, index: int, horizon: int, arms: int, n: int, *, stage: int,
    seed: int, executor: Executor | None, progress: bool, desc: str, noise_factor: float = 1.0,
) -> list[dict[str, Any]]:  # fmt: skip
    """``n`` trajectories per table of design ``index`` (blocks keyed by ``stage``), the agent's
    posterior noise scaled by ``noise_factor``: the statistics, the changed arm's draws' losses
    and, for N = 2, the exact loss."""
    tables = design.tables(policy, horizon, arms)
    tail = (0 if arms > 2 else n, policy.c, True, noise_factor)
    return sample_stage(_policy_block, (policy, tables, horizon), tail, stage, index, n, seed, executor,
                        progress, desc)  # fmt: skip


def choose(samples: list[list[dict[str, Any]]], arms: int, n_main: int, confidence: float,
           mu_certified: float) -> dict[str, Any]:  # fmt: skip
    """The pilot's choice on ``samples`` (one (R, R′) pair of :func:`pilot_sample` per design):
    ``design`` (index), ``statistic``, ``threshold``, ``orientation``, ``predicted`` (μ bound)
    and ``draws_alarm`` (per design)."""
    pilots, keys = [], []
    for d, x in enumerate(samples):
        for st in pilot_statistics(arms):
            pilots.append((x[0][st], x[1][st], None))
            keys.append((d, st))
    alarms = [draws_alarm(x) for x in samples]
    pc = pilot_choice(pilots, n_main, confidence=confidence, kind="mu")
    d_star, stat = keys[pc.candidate]
    loudest = max(range(len(samples)), key=lambda d: alarms[d])
    if alarms[loudest] > mu_certified:
        d_star = loudest  # the outputs' test: its best on that design
        own = [i for i, k in enumerate(keys) if k[0] == d_star]
        pc = pilot_choice([pilots[i] for i in own], n_main, confidence=confidence, kind="mu")
        stat = keys[own[pc.candidate]][1]
    return {"design": d_star, "statistic": stat, "threshold": pc.threshold, "orientation": pc.orientation,
            "predicted": pc.predicted, "draws_alarm": alarms}  # fmt: skip
