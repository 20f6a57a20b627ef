"""The releases view's measured floor estimates its memory from a probe of each pair's transcripts
and refuses, before simulating its pools, work that would not fit the machine."""

from __future__ import annotations

import numpy as np
import pytest

from bandits.auditing import floor_memory
from bandits.auditing.contract import AuditSettings
from bandits.auditing.release_pilot import fit_runs
from bandits.auditing.releases import default_pairs, releases_leak_floor
from bandits.environments import parse_env
from bandits.lazy.policies import LazyUCB
from dpaudit.cli.main import main

POL, ENV, T = LazyUCB(epsilon=1.0), parse_env("bernoulli:0.5,0.5,0.5"), 6
SETTINGS = AuditSettings(trials=400, seed=3, floor="algorithm")


def _pairs():
    return default_pairs(POL, ENV, T, SETTINGS)


def test_the_pools_are_the_probe_scaled():
    cands = _pairs()
    cols = floor_memory.column_bytes(POL, ENV, T, cands, SETTINGS)
    probe = fit_runs(POL, ENV, T, floor_memory.PROBE_RUNS, cands, SETTINGS, (97,))
    per_run = [sum(v.nbytes for side in xy for v in side.values()) / floor_memory.PROBE_RUNS for xy in probe]
    assert len(cols) == len(cands) and [sum(c.values()) for c in cols] == pytest.approx(per_run)
    assert floor_memory.fit_pool_bytes(cols, 1000) == int(2 * 1000 * max(per_run))
    key = next(iter(cols[1]))
    assert floor_memory.scoring_pool_bytes(cols, {1: {key}}, 300) == int(2 * 300 * cols[1][key])
    assert floor_memory.scoring_pool_bytes(cols, {}, 300) == 0 == floor_memory.fit_pool_bytes([], 10)


def test_a_floor_that_would_not_fit_is_refused_before_its_pools(monkeypatch):
    import bandits.auditing.releases as rel

    pools = []
    monkeypatch.setattr(rel, "_fitted_per_pilot", lambda *a, **k: pools.append(1) or [])
    monkeypatch.setattr(floor_memory, "memory_limit", lambda: 4096)
    with pytest.raises(ValueError, match=r"^trials: the measured detection floor's fit pools would hold"):
        releases_leak_floor(POL, T, ENV, SETTINGS, replicates=4, pool_pilots=2)
    assert not pools


@pytest.mark.slow
def test_the_cli_refuses_it_in_one_line(monkeypatch, capsys):
    """The outputs view's floor, measured first, is stubbed (its search is tested in
    ``tests/test_leak_floor.py``; measured here it took 18 s of this test's 20)."""
    import bandits.auditing.black_box as bb
    from dpaudit.audit.leak_floor import LeakFloor, LeakPoint

    fixed = LeakFloor(0.3, 1.3, (LeakPoint(1.0, 0.9, 0.1),), 4, "stub", "epsilon", 1.0)
    monkeypatch.setattr(bb, "black_box_leak_floor", lambda *a, **k: fixed)
    monkeypatch.setattr(floor_memory, "memory_limit", lambda: 4096)
    args = ["run", "lazy-ucb", "-T", "200", "-R", "1", "--audit-trials", "300", "--audit-floor", "algorithm"]
    code = main(args)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "measured detection floor's fit pools would hold about" in err[0]
    assert "Traceback" not in err[0] and np.isfinite(float(err[0].split("about ")[1].split(" GiB")[0]))


def test_the_scoring_pools_are_checked_with_the_columns_their_statistics_read(monkeypatch):
    """Past the fit pools, the scoring pools are checked with the pairs and columns the pilots chose."""
    import bandits.auditing.releases as rel

    seen = []
    real = floor_memory.scoring_pool_bytes

    def spy(cols, read, runs):
        seen.append((sum(len(k) for k in read.values()), sum(len(c) for c in cols), real(cols, read, runs)))
        raise ValueError("stop")

    monkeypatch.setattr(rel, "scoring_pool_bytes", spy)
    with pytest.raises(ValueError, match="stop"):
        releases_leak_floor(POL, T, ENV, SETTINGS, replicates=4, pool_pilots=2)
    read, every, need = seen[0]
    assert 0 < read < every and need > 0  # fewer columns than a whole pool's
