"""How much memory the releases view's measured floor holds, estimated before it simulates.

:func:`bandits.auditing.releases.releases_leak_floor` holds, at its peak, one pair's pool of
coupled fit runs (both sides: every column of their transcripts) and the scoring runs of every
pair some pilot fitted (the columns their statistics read). A transcript's size per run depends on
the algorithm and the horizon (cascade-dp-sound at its audit horizon: 1040 release columns), so
it is measured on a probe of :data:`PROBE_RUNS` runs of every pair, and the pools are scaled from
it — an upper bound: every pair counted as fitted, every column as read, and each pool twice
(its blocks and their merged copy exist together for a moment). Work that would not fit the
machine is refused before the pools are simulated.

>>> PROBE_RUNS
2
"""

from __future__ import annotations

from collections.abc import Sequence

from bandits.auditing.black_box import PairDesign
from bandits.auditing.contract import AuditSettings
from bandits.auditing.release_pilot import fit_runs
from bandits.engine.memory import memory_limit
from bandits.environments import Environment
from bandits.policy import Policy

__all__ = ["PROBE_RUNS", "floor_bytes", "check_floor_memory"]

PROBE_RUNS = 2
"""Coupled runs per pair that measure its transcripts' bytes per run."""

_COPIES = 2  # a pool's blocks and their merged arrays, together while merging
_PROBE_KEY = (97,)  # the probe's own spawn-key prefix: its runs are not the floor's


def floor_bytes(policy: Policy, env: Environment, T: int, cands: Sequence[PairDesign],
                settings: AuditSettings, fit_pool: int, scoring_pool: int) -> int:  # fmt: skip
    """Bytes the measured floor holds at its peak (module docstring) for pools of ``fit_pool``
    coupled fit runs and ``scoring_pool`` scoring runs per side and pair."""
    per_run = []
    for x, y in fit_runs(policy, env, T, PROBE_RUNS, cands, settings, _PROBE_KEY):
        per_run.append(sum(v.nbytes for side in (x, y) for v in side.values()) / PROBE_RUNS)
    if not per_run:
        return 0
    return int(_COPIES * (fit_pool * max(per_run) + scoring_pool * sum(per_run)))


def check_floor_memory(policy: Policy, env: Environment, T: int, cands: Sequence[PairDesign],
                       settings: AuditSettings, fit_pool: int, scoring_pool: int) -> int:  # fmt: skip
    """:func:`floor_bytes`, or ``ValueError`` naming the trials when it exceeds what this machine
    allows (:func:`bandits.engine.memory.memory_limit`)."""
    need, limit = floor_bytes(policy, env, T, cands, settings, fit_pool, scoring_pool), memory_limit()
    if need > limit:
        raise ValueError(
            f"trials: the measured detection floor would hold about {need / 2**30:.3g} GiB "
            f"({len(cands)} pairs at T = {T}, {settings.trials} trials), more than the "
            f"{limit / 2**30:.3g} GiB this machine allows; use fewer --audit-trials, a shorter "
            "--audit-horizon, or the reference floor"
        )
    return need
