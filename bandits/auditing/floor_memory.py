"""How much memory the releases view's measured floor holds, checked before each pool is simulated.

:func:`bandits.auditing.releases.releases_leak_floor` holds, for each leak factor, first one
pair's pool of coupled fit runs at a time (both sides, every column of their transcripts), then the
scoring runs of every pair some pilot fitted (both sides, only the columns their statistics read).
A transcript's size per run depends on the algorithm and the horizon (cascade-dp-sound at its audit
horizon: 1040 release columns), so every column's bytes per run are measured on a probe of
:data:`PROBE_RUNS` runs of every pair (:func:`column_bytes`), and each pool is scaled from it before
it is simulated — twice over, for its blocks and their merged copy, which exist together for a
moment. Work that would not fit the machine is refused before its pool is allocated.

>>> fit_pool_bytes([{"a": 8.0, "b": 16.0}, {"a": 8.0}], 100)
4800
>>> scoring_pool_bytes([{"a": 8.0, "b": 16.0}, {"a": 8.0}], {0: {"b"}, 1: {"a"}}, 10)
480
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bandits.auditing.black_box import PairDesign
from bandits.auditing.contract import AuditSettings
from bandits.auditing.release_pilot import fit_runs
from bandits.engine.memory import memory_limit
from bandits.environments import Environment
from bandits.policy import Policy

__all__ = ["PROBE_RUNS", "column_bytes", "fit_pool_bytes", "scoring_pool_bytes", "check_floor_memory"]

PROBE_RUNS = 2
"""Coupled runs per pair that measure its transcripts' bytes per run."""

_COPIES = 2  # a pool's blocks and their merged arrays, together while merging
_PROBE_KEY = (97,)  # the probe's own spawn-key prefix: its runs are not the floor's


def column_bytes(policy: Policy, env: Environment, T: int, cands: Sequence[PairDesign],
                 settings: AuditSettings) -> list[dict[str, float]]:  # fmt: skip
    """Per pair, the bytes per run of each transcript column, both sides together (a probe)."""
    out = []
    for x, y in fit_runs(policy, env, T, PROBE_RUNS, cands, settings, _PROBE_KEY):
        cols: dict[str, float] = {}
        for side in (x, y):
            for k, v in side.items():
                cols[k] = cols.get(k, 0.0) + v.nbytes / PROBE_RUNS
        out.append(cols)
    return out


def fit_pool_bytes(cols: Sequence[Mapping[str, float]], runs: int) -> int:
    """Peak bytes of the fit pools: ``runs`` coupled runs per side of one pair at a time."""
    return int(_COPIES * runs * max((sum(c.values()) for c in cols), default=0.0))


def scoring_pool_bytes(cols: Sequence[Mapping[str, float]], read: Mapping[int, set[str]], runs: int) -> int:
    """Bytes of the scoring pools: ``runs`` runs per side of every pair in ``read``, the columns
    it names kept."""
    return int(_COPIES * runs * sum(sum(cols[c].get(k, 0.0) for k in keys) for c, keys in read.items()))


def check_floor_memory(need: int, what: str, T: int, settings: AuditSettings) -> int:
    """``need`` (bytes of ``what``), or ``ValueError`` naming the trials when it exceeds what this
    machine allows (:func:`bandits.engine.memory.memory_limit`)."""
    limit = memory_limit()
    if need > limit:
        raise ValueError(
            f"trials: the measured detection floor's {what} would hold about {need / 2**30:.3g} GiB "
            f"(T = {T}, {settings.trials} trials), more than the {limit / 2**30:.3g} GiB this machine "
            "allows; use fewer --audit-trials, a shorter --audit-horizon, or the reference floor"
        )
    return need
