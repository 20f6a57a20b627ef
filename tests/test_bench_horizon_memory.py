"""The horizon-memory benchmark measures a whole ``dpaudit run`` at two horizons and tells a run
whose memory is bounded from one that grows (its README sentence: the module's doctest)."""

from __future__ import annotations

import numpy as np

from benchmarks.bench_horizon_memory import BOUNDED, measure, sentence


def test_the_main_job_holds_no_memory_per_round_of_its_horizon() -> None:
    """Both horizons load numba (a run loads its kernels from ``KERNEL_MIN_ROUNDS`` = 2·10⁵ rounds
    on): from 10⁵ to 4·10⁵, as before, only the second did, and with an empty numba cache its peak
    also held the kernels' compilation (5–10 MiB here, 17–35 bytes a round; presumably the test's one
    failure, whose message was not kept).
    Now a cold cache can only raise the first peak. 7·10⁵ rounds apart, 1 byte a round is 0.67 MiB."""
    horizons = [300_000, 1_000_000]
    data = measure(["ts"], horizons)
    (row,) = data["rows"]
    assert data["horizons"] == horizons and len(row["peak_mib"]) == 2
    assert all(p > 0 for p in row["peak_mib"])
    assert row["bytes_per_round"] < BOUNDED, row  # a table per count held 8-16 bytes a round
    assert sentence(data).startswith("1 of 1 runs hold memory independent of the horizon")


def test_update_replaces_only_the_rows_it_measured(tmp_path, monkeypatch) -> None:
    import json
    import sys

    import pytest

    from benchmarks import bench_horizon_memory as bench

    path = tmp_path / "memory.json"
    old = [{"algorithm": a, "peak_mib": [1.0, 1.0], "bytes_per_round": 0.0} for a in ("ts", "lazy-ucb")]
    path.write_text(json.dumps({"horizons": [500_000, 1_500_000], "rows": old}))
    fresh = {"algorithm": "lazy-ucb", "peak_mib": [5.0, 13.0], "bytes_per_round": 8.0}
    monkeypatch.setattr(bench, "measure", lambda algs, h: {"horizons": h, "rows": [fresh]})
    monkeypatch.setattr(sys, "argv", ["bench", "--algorithms", "lazy-ucb", "--json", str(path), "--update"])
    bench.main()
    assert json.loads(path.read_text())["rows"] == [old[0], fresh]
    refused = (
        ["--algorithms", "lazy-ucb", "--json", str(path)],  # a subset without --update
        ["--algorithms", "no-such-alg", "--json", str(path), "--update"],
        ["--algorithms", "ts", "--json", str(path), "--update", "--horizons", "6e5", "2e6"],
    )
    for argv in refused:
        monkeypatch.setattr(sys, "argv", ["bench", *argv])
        with pytest.raises(SystemExit) as err:
            bench.main()
        assert err.value.code == 2
    assert json.loads(path.read_text())["rows"] == [old[0], fresh]  # nothing written by a refused call


def test_the_ledger_rates_the_simulator_refuses_by_cover_the_measured_growth() -> None:
    """Every run whose policy says what its ledgers hold a round (the cascading ones) was measured
    to grow by at most that much (the stored measurement, ``docs/img/horizon_memory.json``), and
    not by less than a fifth of it (a rate far above the truth refuses runs that would fit)."""
    import json
    from pathlib import Path

    from bandits.registry import get
    from bandits.run import parse_env, run_algorithm

    rows = json.loads((Path(__file__).parents[1] / "docs/img/horizon_memory.json").read_text())["rows"]
    rated = {}
    for row in rows:
        spec = get(row["algorithm"])
        env = (spec.env_parser or parse_env)(spec.default_env)
        policy = spec.configure({}, env, spec.default_horizon).policy
        rate = getattr(policy, "ledger_bytes_per_round", None)
        if rate is not None:
            rated[row["algorithm"]] = (rate, row["bytes_per_round"])
    assert len(rated) >= 6, rated  # every private cascading run
    for algorithm, (rate, measured) in rated.items():
        assert measured <= rate <= 5 * max(measured, 2.0), (algorithm, rate, measured)
    tables = {r["algorithm"]: r["bytes_per_round"] for r in rows if r["algorithm"].startswith("lazy-")}
    assert len(tables) == 2, tables
    for algorithm, measured in tables.items():  # one repetition: the table is all that grows
        spec = get(algorithm)
        policy = spec.configure({}, parse_env(spec.default_env), spec.default_horizon).policy
        rate = policy.table_bytes_per_round
        assert rate == 8 and measured <= rate + 0.1, (algorithm, measured)  # tracemalloc's noise: < 0.1 MiB
    import pytest

    with pytest.raises(ValueError, match=r"^horizon: the ledgers of 3 repetition\(s\) would hold about"):
        run_algorithm("cascade-dp-sound", horizon=10**11, reps=3, audit_trials=0, progress=False)


def _refused_then_fits(monkeypatch, policy, env, horizon: int, reps: int, record: bool, extra, match: str):
    """Under a memory limit of the run's arrays (the simulator's estimate at ``horizon``) plus
    ``extra(arrays)`` bytes: the run is refused before it starts (``match``), and so is one round
    more than the most the error names. Returns that most and the result of a run that long."""
    import re

    import pytest

    from bandits.engine import simulator

    ck = np.asarray([horizon])
    rep_chunk, plan = simulator._plan([policy], env, horizon, reps, ck, record, None, None, None,
                                      simulator.DEFAULT_MEMORY)  # fmt: skip
    arrays = simulator.estimated_bytes(reps, rep_chunk, env.n_arms, horizon, 1, plan.rounds, 1,
                                       max(1, int(np.prod(env.structure.shape))), record)  # fmt: skip
    monkeypatch.setattr(simulator, "memory_limit", lambda: arrays + extra(arrays))

    def run(t: int):
        return simulator.simulate(policy, env, t, reps, checkpoints=[t], record_actions=record,
                                  progress=False)  # fmt: skip

    with pytest.raises(ValueError, match=match) as err:
        run(horizon)
    most = int(re.search(r"use at most (\d+) rounds", str(err.value)).group(1))
    with pytest.raises(ValueError, match=match):
        run(most + 1)
    return most, run(most)


def test_ledgers_and_arrays_that_fit_apart_but_not_together_are_refused(monkeypatch) -> None:
    """The guard adds the simulation's own arrays (their estimate, which the plan checks alone;
    here with the actions recorded) to the ledgers: under a limit that each fits alone but not
    their sum, the run is refused before it starts, and the most rounds the error names is exact
    (one more is refused, that many run)."""
    from bandits.registry import get
    from bandits.run import parse_env

    spec = get("cascade-dp-sound")
    env = (spec.env_parser or parse_env)(spec.default_env)
    policy = spec.configure({}, env, 4000).policy
    ledgers = 2 * 4000 * policy.ledger_bytes_per_round
    extra = lambda arrays: max(ledgers - arrays, 0) + min(arrays, ledgers) // 2  # noqa: E731
    most, res = _refused_then_fits(monkeypatch, policy, env, 4000, 2, True, extra,
                                   r"^horizon: .* with the simulation's arrays, more than")  # fmt: skip
    assert 0 < most < 4000 and res.actions.shape[:2] == (2, most)


def test_a_lazy_run_whose_table_by_round_would_not_fit_is_refused(monkeypatch) -> None:
    """The Lazy policies' table of log(t + 1), 8 bytes a round whatever the repetitions, counts in
    the guard: refused before anything is allocated, with the most rounds that fit, which run."""
    from bandits.environments import BernoulliEnv
    from bandits.lazy.policies import LazyUCB

    pattern = r"^horizon: the tables indexed by round would hold about .* \(8 bytes a round\), .* use at most"
    most, res = _refused_then_fits(monkeypatch, LazyUCB(), BernoulliEnv((0.75, 0.5)), 3000, 3, False,
                                   lambda arrays: 8 * 2000, pattern)  # fmt: skip
    assert 1900 < most <= 2000 and res.pulls.sum() == 3 * most
