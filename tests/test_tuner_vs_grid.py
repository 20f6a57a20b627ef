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

from bandits.dp_ts_ucb.tuner import c0_for_samples, frontier_c0
from bandits.experiments import tuner_vs_grid as tvg
from dpaudit.analyses.dp_ts_ucb import DPTSUCBPrivacy, sample_budget

ROOT = Path(__file__).resolve().parents[1]
STORED = ROOT / "docs" / "img" / "tuner_vs_grid.json"


@given(st.integers(2, 10**9), st.floats(0.0, 1.0), st.integers(1, 10**6))
@settings(max_examples=200, deadline=None)
def test_c0_for_samples_gives_exactly_that_budget(horizon, alpha, samples):
    assert sample_budget(horizon, alpha, c0_for_samples(horizon, alpha, samples))[0] == samples


@given(st.integers(1, 5000), st.floats(1.01, 4.0))
def test_sample_ladder_climbs_from_one_to_the_top(top, ratio):
    ladder = tvg.sample_ladder(top, ratio)
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
    cfg = tvg.GridCheckConfig(horizon=1500, reps=3, tuner_candidates=3, alphas=5, first_epochs=(1, 2, 4, 16),
                              sample_ratio=2.0, screen=6, contenders=4, holdout_reps=12)  # fmt: skip
    return tvg.run_check(cfg)


def test_grid_and_tuner_see_the_same_runs(small_check):
    c = small_check
    assert c.same_runs
    assert len(c.grid) > len(c.tuning.candidates)
    assert all(g.mu <= c.config.target_mu for g in c.grid)
    by_key = {g.key(): g for g in c.grid}
    for cand in c.tuning.candidates:  # the tuner's candidates are grid points, with the same regret
        assert by_key[(cand.alpha, cand.first_epoch, cand.samples)].regret_mean == cand.regret_mean
    assert c.tuner_pick.key() == (c.tuning.best.alpha, c.tuning.best.first_epoch, c.tuning.best.samples)
    assert len(c.holdout_tuner) == 12 and [len(r) for r in c.holdout] == [12] * 4
    assert c.grid_best_on_seed.regret_mean == min(g.regret_mean for g in c.grid)
    tuner_i = c.grid.index(c.tuner_pick)
    others = sorted(g.regret_mean for i, g in enumerate(c.grid) if i != tuner_i)
    assert [c.grid[i].regret_mean for i, _, _ in c.screened] == others[:6]
    assert tuner_i not in c.contenders and len(set(c.contenders)) == 4
    second = sorted(m for _, m, _ in c.screened)[:4]  # the leaders on the second seed's runs
    assert sorted(m for i, m, _ in c.screened if i in c.contenders) == second


def test_a_tampered_tuner_regret_breaks_the_same_runs_check(small_check):
    c = small_check
    first = c.tuning.candidates[0]
    moved = dataclasses.replace(first, regret_mean=first.regret_mean + 1)
    bad = dataclasses.replace(c.tuning, candidates=(moved, *c.tuning.candidates[1:]))
    assert not tvg._same_runs(bad, list(c.grid))


def test_verdict_arithmetic(small_check):
    c = small_check
    n, k = len(c.holdout_tuner), len(c.contenders)
    assert c.z == pytest.approx(NormalDist().inv_cdf(1 - 0.05 / k))
    tuner = tuple(float(x) for x in np.linspace(100.0, 200.0, n))

    def with_runs(*shifts):  # contender j = tuner + shifts[j](i)
        runs = tuple(tuple(x + f(i) for i, x in enumerate(tuner)) for f in shifts)
        return dataclasses.replace(c, holdout_tuner=tuner, holdout=runs)

    worse = with_runs(*[lambda i: 5.0] * k)
    assert worse.differences()[0] == pytest.approx((5.0, 0.0), abs=1e-12) and not worse.beaten
    better = with_runs(*[lambda i: 5.0] * (k - 1), lambda i: -5.0 + i % 2)
    m, se = better.differences()[-1]
    assert m < -c.z * se and better.beaten and better.best_contender == k - 1
    assert better.verdict().startswith("BEATEN")
    noisy = with_runs(*[lambda i: 40.0 if i % 2 else -50.0] * k)
    assert not noisy.beaten  # a 5-point lead inside ~13 points of noise is not a defeat
    assert noisy.verdict().startswith("not beaten")
    data = json.loads(json.dumps(c.to_dict()))
    assert data["beaten"] == c.beaten and data["same_runs"] is True
    assert len(data["grid"]["rows"]) == len(c.grid) and tvg.markdown_table([data]).count("\n") == 2


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
        assert h["z"] == pytest.approx(z, rel=1e-12)
        beaten = False
        for k in h["contenders"]:
            d = np.asarray(k["runs"]) - np.asarray(h["tuner"])
            m, se = d.mean(), d.std(ddof=1) / math.sqrt(d.size)
            assert m == pytest.approx(k["difference_mean"], rel=1e-12, abs=1e-9)
            beaten |= bool(m < -z * se)
        assert c["beaten"] == beaten
        assert c["tuning"]["best"]["samples"] == c["tuner_pick"]["samples"]


def test_prose_numbers_match_the_stored_check():
    """The hand-written numbers about the stored check in docs/dp-ts-ucb.md and the README."""
    checks = {c["config"]["target_mu"]: c for c in json.loads(STORED.read_text())["checks"]}
    doc = (ROOT / "docs" / "dp-ts-ucb.md").read_text()
    readme = (ROOT / "README.md").read_text()

    def best(mu):
        h = checks[mu]["holdout"]
        return h, h["contenders"][h["best"]]

    def signed(x):
        return f"{x:+.1f}".replace("-", "−")

    sizes = sorted(len(c["grid"]["rows"]) for c in checks.values())
    assert f"{sizes[0]}–{sizes[-1]}" in doc and f"{sizes[0]}–{sizes[-1]} configurations" in readme
    h, k = best(1.0)
    assert f"({h['tuner_mean']:.1f} against {k['mean']:.1f}, {signed(k['difference_mean'])} ± " \
           f"{k['difference_stderr']:.1f})" in doc  # fmt: skip
    h, k = best(2.0)
    t = checks[2.0]["tuner_pick"]
    assert (k["alpha"], k["first_epoch"], k["samples"]) == (0.0, 32, 7)
    assert f"sqrt(7/32) = {math.sqrt(7 / 32):.2f}-GDP" in doc
    pick = f"({t['alpha']:.2g}, {t['first_epoch']}, {t['samples']})"
    assert f"{k['mean']:.1f} against {h['tuner_mean']:.1f} for the tuner's {pick}" in doc
    z = k["difference_mean"] / k["difference_stderr"]
    assert f"({signed(k['difference_mean'])} ± {k['difference_stderr']:.1f}, {signed(z)} s.e.)" in doc
    h, k = best(0.5)
    limit = tvg.stuck_limit(checks[0.5]["config"]["env"], 100_000)
    stuck = sum(r > limit for r in h["tuner"])
    assert (
        f"left {stuck} of {len(h['tuner'])} hold-out runs on a suboptimal arm (mean {h['tuner_mean']:.1f})"
        in doc
    )
    assert sum(r > limit for r in k["runs"]) == 0 and f"left none ({k['mean']:.1f})" in doc
    z = k["difference_mean"] / k["difference_stderr"]
    assert f"{signed(k['difference_mean'])} ± {k['difference_stderr']:.1f}, {signed(z)} s.e." in doc
    assert f"z = {checks[1.0]['holdout']['z']:.2f}" in doc and "T·Δ_min/2 = 6250" in doc


def test_the_eight_best_contenders_are_as_the_docs_say():
    checks = {c["config"]["target_mu"]: c for c in json.loads(STORED.read_text())["checks"]}
    eights = {}
    for mu, c in checks.items():
        best = sorted(c["holdout"]["contenders"], key=lambda k: k["mean"])[:8]
        assert max(k["alpha"] for k in best) <= 0.1 + 1e-12
        assert {k["first_epoch"] for k in best} <= {16, 32, 64} and {k["samples"] for k in best} <= set(
            range(5, 10)
        )
        assert 0.245 <= min(k["mu"] for k in best) and max(k["mu"] for k in best) <= 0.75
        eights[mu] = {(k["alpha"], k["first_epoch"], k["samples"]) for k in best}
    assert eights[1.0] == eights[2.0]
