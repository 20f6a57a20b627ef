"""The planted bugs of ``benchmarks/planted_bugs.py`` are live: each one changes what runs.

The detection table (``benchmarks/bench_planted_bugs.py``, ``docs/planted-bugs.md``) is only as
good as its bugs; a bug that silently fails to plant would be "missed" for the wrong reason.
Here every bug of every registered private algorithm must change the released values or the
actions of eight runs on a fixed 0/1 table, and leave them unchanged once its context exits.
"""

from __future__ import annotations

import numpy as np
import pytest

from bandits.engine.simulator import simulate
from bandits.environments import RewardTableEnv
from benchmarks.bench_planted_bugs import _k, _private_keys, _setting
from benchmarks.planted_bugs import BUG_TYPES, bugs_for


def _run(policy: object, env: object, horizon: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    t, j = np.indices((horizon, env.n_arms))  # type: ignore[attr-defined]
    table = ((t + j) % 3 == 0).astype(float)  # varied rewards; cascades examine every position sometimes
    res = simulate(policy, RewardTableEnv(table, action_structure=env.structure), horizon, 8, 11,  # type: ignore[attr-defined]
                   record_actions=True, progress=False, checkpoints=[horizon], transcripts=True)  # fmt: skip
    return res.actions, res.transcripts or {}


def _same(a: tuple[np.ndarray, dict[str, np.ndarray]], b: tuple[np.ndarray, dict[str, np.ndarray]]) -> bool:
    if not np.array_equal(a[0], b[0]) or a[1].keys() != b[1].keys():
        return False
    return all(np.array_equal(a[1][k], b[1][k], equal_nan=True) for k in a[1])


@pytest.mark.slow
@pytest.mark.parametrize("key", _private_keys())
def test_every_planted_bug_changes_the_run(key: str) -> None:
    policy, env, Ta, _ = _setting(key)
    horizon = Ta  # where the default audit looks
    bugs = bugs_for(key, policy, env.n_arms, _k(env))
    assert [b.kind for b in bugs] == list(BUG_TYPES)
    clean = _run(policy, env, horizon)
    for bug in bugs:
        with bug.plant():
            planted = _run(policy, env, horizon)
        assert not _same(clean, planted), f"{key}: bug {bug.kind!r} ({bug.what}) changed nothing"
    assert _same(clean, _run(policy, env, horizon)), f"{key}: a bug outlived its context"
