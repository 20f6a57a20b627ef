"""DP-TS-UCB (bandits.dp_ts_ucb, dpaudit.analyses.dp_ts_ucb): the agent against an independent plain
loop on the same random numbers, the certified μ against a hand computation, the ledger check, the
audit with a planted noise bug, and bad input."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from bandits.auditing.contract import AuditSettings
from bandits.auditing.views import audit_views
from bandits.dp_ts_ucb.audit import audit_dp_ts_ucb, audit_horizon
from bandits.dp_ts_ucb.policy import DPTSUCB, DPTSUCBAgent
from bandits.dp_ts_ucb.spec import alpha_for_target
from bandits.engine.simulator import simulate
from bandits.environments import BernoulliEnv, RewardTableEnv, parse_env
from bandits.policy import Outcomes, RunContext
from benchmarks.planted_bugs import bugs_for
from dpaudit.accounting import account
from dpaudit.analyses.dp_ts_ucb import DPTSUCBPrivacy, sample_budget
from dpaudit.cli.main import main
from dpaudit.declaration import check_ledgers
from tests.dp_ts_ucb_reference import dp_ts_ucb_run

ENV = "bernoulli:0.75,0.625,0.5,0.375,0.25"


def _play(policy: DPTSUCB, table: np.ndarray, chunk: int) -> tuple[DPTSUCBAgent, RunContext, np.ndarray]:
    """Run the agent on fixed tables (R, T, K) in chunks of ``chunk`` rounds."""
    R, T, K = table.shape
    seeds = [np.random.SeedSequence(7, spawn_key=(r,)) for r in range(R)]
    run = RunContext.create(RewardTableEnv(table[0]), T, seeds)
    agent = policy.agent(run)
    acts = [agent.run_chunk(t0, min(T, t0 + chunk), Outcomes(table[:, t0 : t0 + chunk], policy.feedback))
            for t0 in range(0, T, chunk)]  # fmt: skip
    agent.finish()
    return agent, run, np.concatenate(acts, axis=1)


CONFIGS = [
    DPTSUCB(alpha=1.0),
    DPTSUCB(alpha=0.5, c0=0.05),
    DPTSUCB(alpha=1.0, first_epoch=2, rounding="floor", index="max"),
    DPTSUCB(alpha=0.0, c0=0.01, ties="random", design_horizon=10_000),
]


@pytest.mark.parametrize("policy", CONFIGS, ids=lambda p: p.name)
def test_agent_plays_the_plain_loop_reference_on_the_same_random_numbers(policy: DPTSUCB) -> None:
    R, T, K = 3, 900, 4
    rng = np.random.default_rng(5)
    table = (rng.random((R, T, K)) < np.array([0.7, 0.5, 0.5, 0.3])).astype(float)
    agent, run, actions = _play(policy, table, chunk=37)
    init = policy.first_epoch * K
    for r in range(R):
        g = np.random.Generator(np.random.PCG64(run.noise.seeds[r]))
        z = g.standard_normal((T - init, K))
        prio = agent.perm[r].tolist() if agent.perm is not None else None
        played, log = dp_ts_ucb_run(
            table[r].tolist(), z.tolist(), alpha=policy.alpha, c0=policy.c0, first_epoch=policy.first_epoch,
            rounding=policy.rounding, index=policy.index, design_horizon=policy.design_horizon, priority=prio,
        )  # fmt: skip
        assert actions[r].tolist() == played
        # the ledger holds one entry per epoch mean with the samples the reference drew from it
        entries = sorted((e.arm, int(e.label.split("epoch ")[1].split()[0]), e.event.num_releases)
                         for e in run.ledgers[r].entries)  # fmt: skip
        assert entries == sorted((j, ep, d) for j, ep, _, d in log if d > 0)


def test_chunking_and_transcripts_do_not_change_the_run() -> None:
    env = parse_env(ENV)
    pol = DPTSUCB(alpha=0.8)
    a = simulate(pol, env, 3000, 4, 2, record_actions=True, progress=False)
    b = simulate(pol, env, 3000, 4, 2, record_actions=True, progress=False, transcripts=True, chunk_size=101)
    np.testing.assert_array_equal(a.actions, b.actions)
    assert b.transcripts is not None and "arm 0 epoch 0 sample 0" in b.transcripts


def test_certified_mu_by_hand() -> None:
    lnT = math.log(100_000)  # 11.512925464970229
    p = DPTSUCBPrivacy(100_000, 1.0, 1.0)
    assert p.samples == 12 and p.samples_real == pytest.approx(lnT)  # phi = c0 ln T at alpha = 1
    assert p.mu == pytest.approx(math.sqrt(12 / 11.512925464970229), rel=1e-15)  # 1.0209342...
    assert p.mu_paper == pytest.approx(math.sqrt(2.0)) and p.paper_holds
    # alpha = 1/2: phi = ceil(T^{1/4} ln^{5/4} T) = ceil(17.7828 * 21.2078) = 378, L = sqrt(ln T)
    half = DPTSUCBPrivacy(100_000, 0.5, 1.0)
    assert half.samples == 378
    assert half.mu == pytest.approx(math.sqrt(378 / math.sqrt(lnT)), rel=1e-15)  # 10.5548
    assert half.mu_paper == pytest.approx(math.sqrt(2 * 100_000**0.25 * lnT**0.75))
    # a first epoch of 2 observations halves mu^2; floor rounding takes 11
    assert DPTSUCBPrivacy(100_000, 1.0, 1.0, first_epoch=2).mu == pytest.approx(math.sqrt(12 / (2 * lnT)))
    assert sample_budget(100_000, 1.0, 1.0, "floor")[0] == 11
    # the accountant composes the declared event to the same mu
    for pol in (DPTSUCB(alpha=1.0), DPTSUCB(alpha=0.3, c0=0.2, first_epoch=4)):
        acc = account(pol.declare(100_000, 5).event, delta=1e-6)
        assert acc.mu == pytest.approx(pol.privacy(100_000).mu, rel=1e-12)


def test_theorem_4_4_is_not_certified_where_rounding_more_than_doubles_phi() -> None:
    p = DPTSUCBPrivacy(100_000, 1.0, 0.01)  # phi_real = 0.115 -> 1 sample
    assert p.samples == 1 and p.mu == pytest.approx(1 / math.sqrt(math.log(100_000)))
    assert p.mu_paper == pytest.approx(math.sqrt(0.02)) and not p.paper_holds
    assert p.verdict().startswith("NOT CERTIFIED")


def test_target_mu_picks_the_smallest_alpha_within_budget() -> None:
    a = alpha_for_target(3.0, 100_000, 1.0, 1, "ceil")
    assert DPTSUCBPrivacy(100_000, a).mu <= 3.0 < DPTSUCBPrivacy(100_000, a - 1e-6).mu
    assert alpha_for_target(1e6, 100_000, 1.0, 1, "ceil") == 0.0
    with pytest.raises(ValueError, match=r"--target-mu must be at least 1\.02093"):
        alpha_for_target(1.0, 100_000, 1.0, 1, "ceil")


def test_ledgers_are_covered_and_the_worst_unit_spends_the_whole_declaration() -> None:
    pol = DPTSUCB(alpha=1.0)
    T = 4000
    res = simulate(pol, BernoulliEnv((0.9, 0.2, 0.1)), T, 3, 0, progress=False)
    chk = check_ledgers(res.ledgers, pol.declare(T, 3))
    # a poor arm's first observation: all phi samples of its one-observation mean are drawn
    assert chk.ok and chk.worst["ratio"] == pytest.approx(1.0)


@dataclass(frozen=True)
class _OneMoreSample(DPTSUCB):
    """A planted plumbing bug: each mean is sampled phi + 1 times, phi declared."""

    def agent(self, run: RunContext) -> DPTSUCBAgent:
        agent = super().agent(run)
        agent.phi += 1
        return agent


def test_a_sample_beyond_the_budget_fails_the_ledger_check() -> None:
    pol = _OneMoreSample(alpha=1.0)
    res = simulate(pol, BernoulliEnv((0.9, 0.2, 0.1)), 4000, 2, 0, progress=False)
    chk = check_ledgers(res.ledgers, pol.declare(4000, 3))
    assert not chk.ok and chk.worst["ratio"] > 1.0


@pytest.mark.slow
def test_audit_passes_clean_and_catches_noise_at_half_its_scale() -> None:
    env = parse_env(ENV)
    pol = DPTSUCB(alpha=1.0, design_horizon=100_000)
    Ta = audit_horizon(pol, 100_000, env.n_arms)
    settings = AuditSettings(trials=2000, seed=0)
    clean = audit_views(audit_dp_ts_ucb, pol, Ta, env, settings)
    rel = clean.components["releases"]
    assert clean.verdict == "consistent" and 0.7 < rel.empirical.mu_lower <= rel.certified.mu
    bug = bugs_for("dp-ts-ucb", pol, env.n_arms)[0]
    assert bug.kind == "noise x1/2"
    with bug.plant():
        bad = audit_views(audit_dp_ts_ucb, pol, Ta, env, settings)
    assert bad.verdict == "violated"
    assert bad.components["releases"].empirical.mu_lower > 1.5 * bad.components["releases"].certified.mu


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"alpha": -0.1}, r"alpha must be in \[0, 1\], got -0.1"),
        ({"alpha": True}, r"alpha must be in \[0, 1\]"),
        ({"c0": 0.0}, "c0 must be"),
        ({"c0": 1e300}, r"c0 must be in \(0, 1.29946e\+16\] at T = 2, alpha = 1 \(at most 2\^53 samples\)"),
        ({"first_epoch": 0}, "first_epoch must be"),
        ({"rounding": "round"}, r"rounding must be one of \['ceil', 'floor'\]"),
        ({"index": "mean"}, r"index must be one of \['sample', 'max'\]"),
        ({"ties": "first"}, r"ties must be one of \['lowest', 'random'\]"),
        ({"design_horizon": 1}, "design_horizon must be"),
    ],
)
def test_bad_input_names_the_parameter_and_its_range(kwargs: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        DPTSUCB(**kwargs)


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--alpha", "1.5"], "--alpha"),
        (["--alpha", "0.5", "--target-mu", "3"], "give --alpha or --target-mu, not both"),
        (["--target-mu", "0.5"], "--target-mu must be at least"),
        (["--c0", "0"], "--c0"),
    ],
)
def test_bad_command_line_is_one_line_with_status_2(
    args: list[str], needle: str, capsys: pytest.CaptureFixture
) -> None:
    assert main(["run", "dp-ts-ucb", "--horizon", "1000", "--audit-trials", "0", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err


# ---------------------------------------------------------------------------------------
# tuning alpha on the certified frontier (dpaudit tune dp-ts-ucb)


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.5, 1.0])
@pytest.mark.parametrize("mu", [0.7, 1.0, 3.0])
def test_frontier_c0_spends_the_most_samples_within_the_target(alpha: float, mu: float) -> None:
    from bandits.dp_ts_ucb.tuner import frontier_c0

    T = 100_000
    c0 = frontier_c0(mu, T, alpha)
    L = math.log(T) ** alpha
    if mu * mu * L < 1:  # not even one sample of a one-observation mean fits
        assert c0 is None
        return
    assert c0 is not None
    p = DPTSUCBPrivacy(T, alpha, c0)
    assert p.mu <= mu and p.samples == math.floor(mu * mu * L + 1e-9)
    assert math.sqrt((p.samples + 1) / L) > mu  # one sample more would exceed the target


def test_tune_simulates_each_alpha_as_a_run_with_the_same_seed() -> None:
    from bandits.dp_ts_ucb.tuner import tune_dp_ts_ucb

    env = parse_env("bernoulli:0.75,0.5,0.25")
    res = tune_dp_ts_ucb(env, 1500, target_mu=1.5, reps=3, seed=4, num=5, below_frontier=False,
                         progress=False)  # fmt: skip
    assert [(c.alpha, c.first_epoch) for c in res.candidates] == [
        (a, f) for a in (0.0, 0.25, 0.5, 0.75, 1.0) for f in (1, 4, 16, 64)
    ]
    assert all(c.mu <= 1.5 for c in res.candidates)
    # the three leaders of the first pass run again on 12 new runs; the best of them there wins
    lead = sorted(range(len(res.candidates)), key=lambda i: res.candidates[i].regret_mean)[:3]
    assert [i for i, _, _ in res.confirmed] == lead and res.confirm_reps == 12
    assert res.best is res.candidates[min(res.confirmed, key=lambda c: c[1])[0]]
    i, mean, _ = res.confirmed[0]
    c = res.candidates[i]
    pol = DPTSUCB(alpha=c.alpha, c0=c.c0, first_epoch=c.first_epoch, design_horizon=1500)
    again = simulate(pol, env, 1500, 12, 5, progress=False)
    assert again.final("pseudo") == mean
    for c in (res.candidates[2], res.candidates[9]):
        alone = simulate(DPTSUCB(alpha=c.alpha, c0=c.c0, first_epoch=c.first_epoch, design_horizon=1500), env,
                         1500, 3, 4, progress=False)  # fmt: skip
        assert alone.final("pseudo") == c.regret_mean
    only_one = tune_dp_ts_ucb(env, 1500, target_mu=1.5, reps=2, num=2, first_epochs=(1,),
                              below_frontier=False, progress=False)  # fmt: skip
    assert [c.first_epoch for c in only_one.candidates] == [1, 1]
    with pytest.raises(ValueError, match="target mu must be at least"):
        tune_dp_ts_ucb(env, 1500, target_mu=0.01, reps=2, num=3, progress=False)


@pytest.mark.slow
def test_tune_below_the_frontier_adds_smaller_budgets_and_more_stages() -> None:
    from bandits.dp_ts_ucb.tuner import BELOW_RATIO, sample_ladder, stage_plan, tune_dp_ts_ucb, tuning_runs

    env = parse_env("bernoulli:0.75,0.5,0.25")
    epochs = (1, 2, 4, 8, 16, 32, 64)
    front = tune_dp_ts_ucb(env, 600, target_mu=1.5, reps=3, seed=4, num=3, first_epochs=epochs,
                           below_frontier=False, progress=False)  # fmt: skip
    res = tune_dp_ts_ucb(env, 600, target_mu=1.5, reps=3, seed=4, num=3, progress=False)  # the default
    tops = {(c.alpha, c.first_epoch): c.samples for c in front.candidates}
    assert {(c.alpha, c.first_epoch, c.samples) for c in res.candidates} == {
        (a, f, phi) for (a, f), top in tops.items() for phi in sample_ladder(top, BELOW_RATIO)
    }
    assert all(c.mu <= 1.5 for c in res.candidates)
    by_key = {(c.alpha, c.first_epoch, c.samples): c for c in res.candidates}
    for c in front.candidates:  # the frontier candidates: the same policies on the same runs
        assert by_key[(c.alpha, c.first_epoch, c.samples)] == c
    # stage k keeps the leaders of the stage before and runs them on fresh runs of seed + k
    plan = stage_plan(len(res.candidates), 3, below_frontier=True)
    assert plan == [(max(3, math.ceil(len(res.candidates) / 10)), 4), (10, 16), (3, 64)]
    lead = sorted(range(len(res.candidates)), key=lambda i: res.candidates[i].regret_mean)
    stages = [(res.confirm_reps, res.confirmed), *res.later]
    for k, ((keep, times), (n, stage)) in enumerate(zip(plan, stages, strict=True)):
        assert n == 3 * times and [i for i, _, _ in stage] == lead[:keep]
        lead = [i for i, _, _ in sorted(stage, key=lambda c: c[1])]
        i, mean, _ = stage[0]
        c = res.candidates[i]
        pol = DPTSUCB(alpha=c.alpha, c0=c.c0, first_epoch=c.first_epoch, design_horizon=600)
        assert simulate(pol, env, 600, n, 5 + k, progress=False).final("pseudo") == mean
    assert res.best is res.candidates[lead[0]]
    runs = tuning_runs(len(res.candidates), 3, below_frontier=True)
    assert runs == 3 * len(res.candidates) + sum(n * len(stage) for n, stage in stages)
    assert tuning_runs(len(front.candidates), 3) == 3 * len(front.candidates) + 12 * 3
    assert "phi = " in res.confirmation() and res.confirmation().count("\n") == sum(k for k, _ in plan) - 1
    assert res.to_dict()["later"][-1]["reps"] == 192


def test_tune_command_line(capsys: pytest.CaptureFixture) -> None:
    import json

    assert main(["tune", "dp-ts-ucb", "--target-mu", "1", "-T", "400", "-R", "2", "--candidates", "3",
                 "--frontier-only", "--json"]) == 0  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert [(c["alpha"], c["first_epoch"]) for c in out["candidates"]] == [
        (a, f) for a in (0.0, 0.5, 1.0) for f in (1, 4, 16, 64)
    ] and out["config"]["target_mu"] == 1.0 and out["later"] == []
    assert main(["tune", "dp-ts-ucb", "--target-mu", "0.01", "-T", "400"]) == 2
    assert "target mu must be at least" in capsys.readouterr().err
    assert main(["tune", "dp-ts-ucb", "--target-epsilon", "1", "-T", "400"]) == 2
    assert "--target-epsilon needs --delta" in capsys.readouterr().err
    # the default searches below the frontier too, with first epochs 1, 2, 4, ..., 64 and three stages
    assert main(["tune", "dp-ts-ucb", "--target-mu", "1", "-T", "400", "-R", "2", "--candidates", "2"]) == 0
    out = capsys.readouterr().out
    assert "within the certified budget mu = 1" in out and "confirmed on 128 new runs" in out
    # the larger field is counted before anything runs: 10^9 rounds are refused with the count
    assert main(["tune", "dp-ts-ucb", "--target-mu", "5", "-T", "1000000", "-R", "100"]) == 2
    err = capsys.readouterr().err.strip()
    assert "runs of" in err and "candidates" in err and "\n" not in err


@pytest.mark.parametrize(
    "policy",
    [DPTSUCB(), DPTSUCB(alpha=0.5, index="max", ties="random"), DPTSUCB(first_epoch=3, c0=0.3)],
    ids=lambda p: p.name,
)
def test_compiled_chunk_is_the_step_loop(policy, monkeypatch):
    """The compiled round loop (numba) plays the same actions, regret and ledgers as the NumPy
    step loop, bit for bit; runs below KERNEL_MIN_ROUNDS and audits keep to the step loop."""
    from bandits.engine import compiled

    if not compiled.available():
        pytest.skip("numba is not installed: only the step loop exists")
    env = BernoulliEnv((0.75, 0.625, 0.5, 0.375, 0.25))
    runs = {}
    for mode in (True, False):
        monkeypatch.setattr(compiled, "worth_compiling", lambda rounds, m=mode: m)
        runs[mode] = simulate(policy, env, 20_000, 4, 3, progress=False, record_actions=True)
    a, b = runs[True], runs[False]
    assert np.array_equal(a.actions, b.actions) and np.array_equal(a.pseudo_regret, b.pseudo_regret)
    assert [lg.to_json() for lg in a.ledgers] == [lg.to_json() for lg in b.ledgers]


@pytest.mark.slow
def test_a_longer_first_epoch_keeps_dp_ts_ucb_off_suboptimal_arms_at_a_small_budget() -> None:
    """The numbers README.md, docs/leaderboard.md and the tuner quote: at μ = 0.5, T = 10⁵ on the
    Bernoulli §5.1 instance (20 runs, seed 0), a first epoch of one observation leaves φ = 2
    samples (α = 1) and 15 runs stuck on a suboptimal arm; f = 64 (α = 0) allows 16 samples."""
    from bandits.dp_ts_ucb.tuner import frontier_c0

    env, T = parse_env("bernoulli:0.75,0.625,0.5,0.375,0.25"), 100_000
    out = {}
    for f, a in ((1, 1.0), (64, 0.0)):
        c0 = frontier_c0(0.5, T, a, f)
        assert c0 is not None and DPTSUCBPrivacy(T, a, c0, f).mu <= 0.5
        sim = simulate(DPTSUCB(alpha=a, c0=c0, first_epoch=f), env, T, 20, 0, progress=False)
        fin = sim.pseudo_regret[:, -1]
        out[f] = (DPTSUCBPrivacy(T, a, c0, f).samples, round(float(fin.mean())),
                  round(float(fin.std() / math.sqrt(fin.size))),
                  int((fin > 0.5 * T * 0.125).sum()))  # fmt: skip
    assert out == {1: (2, 20047, 3346, 15), 64: (16, 149, 15, 0)}


@pytest.mark.slow
def test_tune_command_with_worker_processes_gives_the_same_numbers(capsys: pytest.CaptureFixture) -> None:
    import json

    argv = ["tune", "dp-ts-ucb", "--target-mu", "1", "-T", "300", "-R", "2", "--candidates", "2", "--json"]
    outs = []
    for extra in ([], ["--workers", "2"]):
        assert main(argv + extra) == 0
        out = json.loads(capsys.readouterr().out)
        out["config"].pop("elapsed_seconds")
        outs.append(out)
    assert outs[0] == outs[1] and outs[0]["later"]
    assert main(argv + ["--workers", "2", "--scheduler", "tcp://localhost:1"]) == 2
    assert "either --workers" in capsys.readouterr().err
