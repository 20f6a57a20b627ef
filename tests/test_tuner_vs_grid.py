"""``dpaudit tune dp-ts-ucb`` against a dense grid on the same seed
(:mod:`bandits.experiments.tuner_vs_grid`): the grid, its budget, the shared runs, the verdict's
arithmetic, the command's bad input, and the stored full-scale result the docs quote."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bandits.dp_ts_ucb.tuner import c0_for_samples, frontier_c0, sample_ladder
from bandits.experiments import tuner_vs_grid as tvg
from bandits.experiments.leaderboard_tails import stuck_limit
from dpaudit.analyses.dp_ts_ucb import DPTSUCBPrivacy, sample_budget

ROOT = Path(__file__).resolve().parents[1]
STORED = ROOT / "docs" / "img" / "tuner_vs_grid.json"


@given(st.integers(2, 10**9), st.floats(0.0, 1.0), st.integers(1, 10**6))
@settings(max_examples=200, deadline=None)
def test_c0_for_samples_gives_exactly_that_budget(horizon, alpha, samples):
    assert sample_budget(horizon, alpha, c0_for_samples(horizon, alpha, samples))[0] == samples


@given(st.integers(1, 5000), st.floats(1.01, 4.0))
def test_sample_ladder_climbs_from_one_to_the_top(top, ratio):
    ladder = sample_ladder(top, ratio)
    assert ladder[0] == 1 and ladder[-1] == top
    assert all(b > a for a, b in zip(ladder, ladder[1:]))
    assert all(b <= max(a + 1, math.ceil(a * ratio)) for a, b in zip(ladder, ladder[1:]))


def test_dense_grid_meets_the_budget_and_holds_every_frontier_point():
    T, mu, alphas, epochs = 100_000, 0.7, [0.0, 0.35, 1.0], (1, 3, 64)
    grid = tvg.dense_grid(mu, T, alphas, epochs, 1.5)
    privacy = [p.privacy(T) for p in grid]
    assert all(p.mu <= mu for p in privacy)
    keys = {(p.alpha, p.first_epoch, q.samples) for p, q in zip(grid, privacy)}
    assert len(keys) == len(grid)  # no configuration twice
    for a in alphas:
        for f in epochs:
            c0 = frontier_c0(mu, T, a, f)
            if c0 is None:
                assert not any(p.alpha == a and p.first_epoch == f for p in grid)
            else:
                top = DPTSUCBPrivacy(T, a, c0, f).samples
                assert (a, f, top) in keys and max(k[2] for k in keys if k[:2] == (a, f)) == top
                assert any(p.c0 == c0 and p.alpha == a and p.first_epoch == f for p in grid)


@pytest.fixture(scope="module")
def small_check():
    cfg = tvg.GridCheckConfig(horizon=500, reps=3, tuner_candidates=3, alphas=3, first_epochs=(1, 4, 16),
                              sample_ratio=2.0, screen=6, contenders=4, holdout_reps=12)  # fmt: skip
    return tvg.run_check(cfg)


@pytest.mark.slow
def test_grid_and_tuners_see_the_same_runs(small_check):
    c = small_check
    assert c.same_runs and len(c.tunings) == len(tvg.TUNERS) == 2
    assert all(g.mu <= c.config.target_mu for g in c.grid)
    by_key = {g.key(): g for g in c.grid}
    for tuning in c.tunings:  # every tuner candidate is a grid point, with the same regret
        for cand in tuning.candidates:
            assert by_key[(cand.alpha, cand.first_epoch, cand.samples)].regret_mean == cand.regret_mean
    below = c.tunings[1]  # the command's default: below the frontier too
    assert tvg.TUNERS[1] == "dpaudit tune dp-ts-ucb" and "--frontier-only" in tvg.TUNERS[0]
    assert len(below.candidates) > len(c.tunings[0].candidates) and [n for n, _ in below.later] == [48, 192]
    assert any(cand.samples < max(x.samples for x in below.candidates if x.first_epoch == cand.first_epoch
                                  and x.alpha == cand.alpha) for cand in below.candidates)  # fmt: skip
    picks = [c.grid.index(c.pick(m)) for m in range(2)]
    for m, tuning in enumerate(c.tunings):
        assert c.pick(m).key() == (tuning.best.alpha, tuning.best.first_epoch, tuning.best.samples)
    leaders, rest = c.contenders[:4], c.contenders[4:]  # the screen's 4 leaders, then the picks
    assert list(rest) == list(dict.fromkeys(picks)) and not set(picks) & set(leaders)
    assert [len(r) for r in c.holdout_picks] == [12, 12] and [len(r) for r in c.holdout] == [12] * len(
        c.contenders
    )
    for m, i in enumerate(picks):  # a pick's hold-out runs are its contender runs: the same simulation
        assert c.holdout_picks[m] == c.holdout[c.contenders.index(i)]
        assert c.differences(m)[c.contenders.index(i)] == (0.0, 0.0)
    assert c.grid_best_on_seed.regret_mean == min(g.regret_mean for g in c.grid)
    others = sorted(g.regret_mean for i, g in enumerate(c.grid) if i not in picks)
    assert [c.grid[i].regret_mean for i, _, _ in c.screened] == others[:6]
    second = sorted(m for _, m, _ in c.screened)[:4]  # the leaders on the second seed's runs
    assert sorted(m for i, m, _ in c.screened if i in leaders) == second


@pytest.mark.slow
def test_a_tampered_tuner_regret_breaks_the_same_runs_check(small_check):
    c = small_check
    first = c.tunings[0].candidates[0]
    moved = dataclasses.replace(first, regret_mean=first.regret_mean + 1)
    bad = dataclasses.replace(c.tunings[0], candidates=(moved, *c.tunings[0].candidates[1:]))
    assert not tvg._same_runs(bad, list(c.grid))


@pytest.mark.slow
def test_verdict_arithmetic(small_check):
    c = small_check
    n, k = len(c.holdout_picks[0]), len(c.contenders)
    assert c.z == pytest.approx(NormalDist().inv_cdf(1 - 0.05 / k))
    tuner = tuple(float(x) for x in np.linspace(100.0, 200.0, n))

    def with_runs(*shifts):  # contender j = tuner + shifts[j](i); the second tuner 1000 worse
        runs = tuple(tuple(x + f(i) for i, x in enumerate(tuner)) for f in shifts)
        return dataclasses.replace(c, holdout_picks=(tuner, tuple(x + 1000 for x in tuner)), holdout=runs)

    worse = with_runs(*[lambda i: 5.0] * k)
    assert worse.differences()[0] == pytest.approx((5.0, 0.0), abs=1e-12) and not worse.beaten(0)
    assert worse.beaten(1) and worse.differences(1)[0] == pytest.approx((-995.0, 0.0), abs=1e-9)
    better = with_runs(*[lambda i: 5.0] * (k - 1), lambda i: -5.0 + i % 2)
    m, se = better.differences()[-1]
    assert m < -c.z * se and better.beaten(0) and better.best_contender == k - 1
    assert "BEATEN" in better.verdict(0) and better.verdict(1).startswith(tvg.TUNERS[1])
    noisy = with_runs(*[lambda i: 40.0 if i % 2 else -50.0] * k)
    assert not noisy.beaten(0)  # a 5-point lead inside ~13 points of noise is not a defeat
    assert "not beaten" in noisy.verdict(0)
    data = json.loads(json.dumps(c.to_dict()))
    assert [t["beaten"] for t in data["tuners"]] == [c.beaten(0), c.beaten(1)] and data["same_runs"] is True
    assert len(data["grid"]["rows"]) == len(c.grid) and tvg.markdown_table([data]).count("\n") == 3


def test_full_scale_runs_the_commands_defaults():
    from bandits.dp_ts_ucb.spec import DEFAULT_ENV
    from bandits.dp_ts_ucb.tuner import FIRST_EPOCHS
    from dpaudit.cli.main import build_parser

    argv = ["tune", "dp-ts-ucb", "--target-mu", "1"]
    args = build_parser(argv).parse_args(argv)
    full = tvg.FULL
    assert (full.horizon, full.reps, full.seed, full.tuner_candidates) == (args.horizon, args.reps, args.seed,
                                                                          args.candidates)  # fmt: skip
    assert args.env is None and full.env == DEFAULT_ENV
    assert set(FIRST_EPOCHS) <= set(full.first_epochs) and full.alphas >= 2 * full.tuner_candidates - 1


@pytest.mark.parametrize("argv, needle", [
    (["--json", "/nonexistent-folder/x.json"], "--json"),
    (["--mu", "-1"], "target_mu"),
    (["--mu", "1e-9"], "--mu 1e-09: target mu must be at least"),
    (["--workers", "0"], "--workers"),
])  # fmt: skip
def test_command_refuses_bad_input(argv, needle, capsys):
    assert tvg.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err


def test_config_refuses_bad_values():
    with pytest.raises(ValueError, match="sample_ratio"):
        tvg.GridCheckConfig(sample_ratio=1.0)
    with pytest.raises(ValueError, match="contenders must be at most screen"):
        tvg.GridCheckConfig(screen=5, contenders=6)
    with pytest.raises(ValueError, match="first_epochs"):
        tvg.GridCheckConfig(first_epochs=())


def test_stored_full_scale_check_is_consistent():
    """The stored run behind the docs' table: the tuner and the grid saw the same runs, every grid
    point meets its budget, and the verdict follows from the stored hold-out runs."""
    checks = json.loads(STORED.read_text())["checks"]
    assert {c["config"]["target_mu"] for c in checks} >= {1.0}
    for c in checks:
        assert c["config"]["horizon"] == 100_000 and c["same_runs"] is True
        T, mu = c["config"]["horizon"], c["config"]["target_mu"]
        assert c["grid"]["columns"] == list(tvg.GRID_COLUMNS)
        for alpha, f, phi, _, _ in c["grid"]["rows"]:  # the certificate of every stored point, again
            assert DPTSUCBPrivacy(T, alpha, c0_for_samples(T, alpha, phi), f).mu <= mu
        h = c["holdout"]
        z = NormalDist().inv_cdf(1 - c["config"]["level"] / len(h["contenders"]))
        assert h["z"] == pytest.approx(z, rel=1e-12) and h["seed"] == c["config"]["seed"] + 100
        for tuner in c["tuners"]:
            beaten = False
            for k, stored in zip(h["contenders"], tuner["differences"]):
                d = np.asarray(k["runs"]) - np.asarray(tuner["holdout"])
                m, se = d.mean(), d.std(ddof=1) / math.sqrt(d.size)
                assert m == pytest.approx(stored["mean"], rel=1e-12, abs=1e-9)
                beaten |= bool(m < -z * se)
            assert tuner["beaten"] == beaten
            assert tuner["tuning"]["best"]["samples"] == tuner["pick"]["samples"]


def test_prose_numbers_match_the_stored_check():
    """The hand-written numbers about the stored check in docs/dp-ts-ucb.md and the README."""
    checks = {c["config"]["target_mu"]: c for c in json.loads(STORED.read_text())["checks"]}
    doc = " ".join((ROOT / "docs" / "dp-ts-ucb.md").read_text().split())  # lines joined
    readme = " ".join((ROOT / "README.md").read_text().split())
    limit = stuck_limit(checks[1.0]["config"]["env"], 100_000)

    def runs(mu, key):  # the hold-out runs of a contender (α, f, φ)
        k = next(
            k
            for k in checks[mu]["holdout"]["contenders"]
            if (k["alpha"], k["first_epoch"], k["samples"]) == key
        )
        return np.asarray(k["runs"])

    def head(mu, key, other):  # "d ± s.e." of runs(key) − runs(other), as the docs write it
        d = runs(mu, key) - runs(mu, other)
        return f"{d.mean():.1f} ± {d.std(ddof=1) / math.sqrt(d.size):.1f}".replace("-", "−")

    sizes = sorted(len(c["grid"]["rows"]) for c in checks.values())
    assert (
        f"{sizes[0]}–{sizes[-1]} configurations" in doc and f"{sizes[0]}–{sizes[-1]} configurations" in readme
    )
    assert f"z = {checks[1.0]['holdout']['z']:.2f}" in doc and "T·Δ_min/2 = 6250" in doc
    assert f"({checks[1.0]['grid_best_on_seed']['regret_mean']:.1f} at μ = 1" in doc
    front, best = (0.0, 16, 16), (0.0, 16, 12)
    assert [t["pick"]["samples"] for t in checks[1.0]["tuners"]] == [16, 12]
    r, q = runs(1.0, front), runs(1.0, best)
    assert f"({r.mean():.1f}, {(r > limit).sum()} of 2000 runs stuck)" in doc
    assert (
        f"is {head(1.0, best, front).lstrip('+')} behind it ({q.mean():.1f}, {(q > limit).sum()} stuck)"
        in doc
    )
    bad, good = (0.2, 16, 6), (0.0, 32, 8)
    r, q = runs(0.5, bad), runs(0.5, good)
    assert f"left {(r > limit).sum()} of 2000 runs stuck (mean {r.mean():.1f})" in doc
    assert f"has {q.mean():.1f} ({(q > limit).sum()} stuck): {head(0.5, good, bad)}" in doc
    pick = runs(0.5, (0.0, 64, 5))
    within = head(0.5, good, (0.0, 64, 5))
    assert f"(0, 64, 5), {pick.mean():.1f}, is within the noise of the best ({within})" in doc
    r, q = runs(2.0, (0.1, 4, 20)), runs(2.0, best)
    assert f"(0.1, 4, 20) has {r.mean():.1f} (median {np.median(r):.0f})" in doc
    assert f"has {q.mean():.1f}: {head(2.0, best, (0.1, 4, 20))}" in doc
    assert f"certified sqrt(12/16) = {math.sqrt(12 / 16):.2f}-GDP" in doc
    seconds = {t["command"]: [] for t in checks[1.0]["tuners"]}
    for c in checks.values():
        for t in c["tuners"]:
            seconds[t["command"]].append(t["tuning"]["config"]["elapsed_seconds"])
    slow, fast = seconds[tvg.TUNERS[1]], seconds[tvg.TUNERS[0]]
    assert f"({min(slow):.0f}–{max(slow):.0f} s against {min(fast):.1f}–{max(fast):.1f} s" in doc
    ratios = [s / f for s, f in zip(slow, fast)]
    assert f"{round(min(ratios))}–{round(max(ratios))} times slower" in doc
