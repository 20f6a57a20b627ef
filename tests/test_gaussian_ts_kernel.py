"""The compiled Gaussian-TS round loop (bandits.engine.compiled.gaussian_ts_rounds) and its NumPy fallback:
identical actions and state, bit for bit, with numba and without (``DPAUDIT_NUMBA=0``); and the
audit's lookup-table statistics against the former per-round computation (tests/ts_audit_reference)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from bandits import GaussianTS, RewardTableEnv, parse_env, rep_streams, reward_table, simulate
from bandits.engine import compiled
from bandits.policy import Outcomes, RunContext
from bandits.thompson import joint as gts
from bandits.thompson.audit_designs import TSNeighbour, candidate_designs
from bandits.thompson.audit_trajectories import (
    _exact_block,
    _hits_and_counts,
    _start_counts,
    policy_actions,
    score_statistic,
)
from mechanisms.randomness import RepRandom
from tests import ts_audit_reference as ref
from tests.conftest import NUMBA


def _agent(policy, env, T, seeds):
    return policy.agent(RunContext.create(env, T, seeds))


def _play(agent, T, tab, chunks):
    out = []
    for t0, t1 in zip(chunks[:-1], chunks[1:]):
        out.append(agent.run_chunk(t0, t1, Outcomes(tab[:, t0:t1], agent.policy.feedback)))
    return np.concatenate(out, axis=1)


@pytest.mark.parametrize("numba_mode", NUMBA, indirect=True)
@pytest.mark.parametrize(
    "spec,b,c,chunks",
    [
        ("bernoulli:0.5,0.5", 0, 1.0, (0, 700, 1500)),
        ("bernoulli:0.5,0.5,0.5,0.5,0.5", 37, 47.7, (0, 100, 333, 900)),  # pre-pulls end mid-chunk
        ("bernoulli:0.75,0.625,0.5,0.375,0.25", 3, 1e4, (0, 1200)),  # heavy exploration
        ("truncexp:0.1,1,2,5,10", 2, 1.5, (0, 400, 1200)),  # light: the speculative engine runs
    ],
)
def test_every_engine_plays_the_step_loop(numba_mode, spec, b, c, chunks):
    env, R = parse_env(spec), 5
    T = chunks[-1]
    seeds = [rep_streams(3, r).policy for r in range(R)]
    tab = np.stack([reward_table(env, T, 3, r) for r in range(R)])
    step = _agent(GaussianTS(b=b, c=c, engine="step"), env, T, seeds)
    ref_actions = _play(step, T, tab, chunks)
    for engine in ("kernel", "speculative"):
        ag = _agent(GaussianTS(b=b, c=c, engine=engine), env, T, seeds)
        assert np.array_equal(_play(ag, T, tab, chunks), ref_actions), engine
        for name in ("S", "n", "_mu", "_scale"):
            assert np.array_equal(getattr(ag, name), getattr(step, name)), (engine, name)


@pytest.mark.parametrize("numba_mode", NUMBA, indirect=True)
def test_simulate_engines_agree(numba_mode):
    env = parse_env("bernoulli:0.6,0.55,0.5")
    kw = dict(repetitions=4, seed=11, record_actions=True, progress=False, chunk_size=333)
    runs = [simulate(GaussianTS(b=5, c=c, engine=e), env, 1500, **kw)
            for c in (2.0, 400.0) for e in ("speculative", "kernel", "step")]  # fmt: skip
    for i in (0, 3):
        for j in (1, 2):
            assert np.array_equal(runs[i].actions, runs[i + j].actions)
            assert np.array_equal(runs[i].empirical_regret, runs[i + j].empirical_regret)


@pytest.mark.parametrize("numba_mode", NUMBA, indirect=True)
def test_play_together_with_the_kernel_equals_alone(numba_mode):
    """play_gaussian_ts_together: kernel agents (one by one when numba is there) and a step agent
    (the stacked NumPy loop) each equal the agent played alone with the step engine."""
    env, T, R = parse_env("bernoulli:0.5,0.5,0.4"), 2000, 3
    seeds = [rep_streams(2, r).policy for r in range(R)]
    tab = np.stack([reward_table(env, T, 2, r) for r in range(R)])
    conf = [(0, 1e4, "kernel"), (4, 300.0, "speculative"), (300, 2.0, "kernel"), (9, 50.0, "step")]
    alone = [_agent(GaussianTS(b=b, c=c, engine="step"), env, T, seeds) for b, c, _ in conf]
    both = [_agent(GaussianTS(b=b, c=c, engine=e), env, T, seeds) for b, c, e in conf]
    tape = gts.SharedNoise(RepRandom(seeds), env.n_arms)
    for t0, t1 in ((0, 700), (700, T)):
        acts = gts.play_together(both, t0, t1, tab[:, t0:t1], tape)
        for a, ag, act in zip(alone, both, acts):
            assert np.array_equal(_play(a, T, tab, (t0, t1)), act)
            assert np.array_equal(a.S, ag.S) and np.array_equal(a.n, ag.n)


def test_kernel_rounds_like_numpy_not_fused():
    """A state where one fused multiply-add (θ = fma(Z, scale, μ)) would flip the argmax: the
    kernel must round Z·scale and then add μ, as NumPy does."""
    if not compiled.available():
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(0)
    sqrtc = math.sqrt(3.0)
    found = 0
    for _ in range(2000):
        S1, n1 = float(rng.integers(1, 50)) + 0.1 * rng.random(), float(rng.integers(1, 50))
        z = float(rng.standard_normal())
        sc = sqrtc / math.sqrt(n1 + 1.0)
        mu = S1 / (n1 + 1.0)
        two = z * sc + mu  # Python floats: two roundings
        fused = float(Fraction(z) * Fraction(sc) + Fraction(mu))
        if two == fused:
            continue
        found += 1
        # arm 0: n = 0, Z = 0, S = x: θ_0 = x exactly; arm 1: θ_1 = two (NumPy) or fused (FMA)
        x = two if fused > two else fused  # a tie goes to arm 0; FMA would decide the other way
        S = np.array([[x, S1]])
        n = np.array([[0.0, n1]])
        Z = np.array([[[0.0, z]]])
        act = np.zeros((1, 1), dtype=np.intp)
        compiled.gaussian_ts_rounds(S, n, Z, 0, np.zeros((1, 1, 2)), np.zeros(1, np.intp), np.array([sqrtc]),
                                    act)  # fmt: skip
        th = Z[0, 0] * (sqrtc / np.sqrt(np.array([0.0, n1]) + 1.0))
        th += np.array([x, S1]) / (np.array([0.0, n1]) + 1.0)
        assert act[0, 0] == int(th.argmax()) == (0 if fused > two else 1)
        if found >= 20:
            break
    assert found >= 20


def test_kernel_checks_the_scale():
    if not compiled.available():
        pytest.skip("numba is not installed")
    with pytest.raises(ValueError, match=r"scale must hold sqrt\(c\) in one entry, got shape \(3,\)"):
        compiled.gaussian_ts_rounds(np.zeros((1, 2)), np.full((1, 2), 2.0), np.zeros((1, 4, 2)), 0,
                                 np.zeros((1, 4, 2)), np.zeros(1, np.intp), np.ones(3),
                                 np.zeros((1, 4), np.intp))  # fmt: skip


def test_kernel_scales_counts_of_any_size_as_the_step_loop():
    """Counts near 10⁹ (a horizon the run allows): the kernel's σ = √c/√(n+1), computed for the
    played arm, is the step loop's float, so the draws it watches are the step loop's θ bit for
    bit — with no table of one entry per count (which held 8 bytes a round of the horizon)."""
    if not compiled.available():
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(3)
    sqrtc = math.sqrt(47.69)
    n = np.array([[1e9 - 3.0, 7e8 + 1.0, 123456789.0]])
    S = n * np.array([[0.75, 0.625, 0.5]])
    Z = rng.standard_normal((1, 40, 3))
    table = (rng.random((1, 40, 3)) < 0.6).astype(float)
    act = np.zeros((1, 40), dtype=np.intp)
    drawn = np.zeros((1, 40))
    S0, n0 = S.copy(), n.copy()
    compiled.gaussian_ts_rounds(S, n, Z, 0, table, np.zeros(1, np.intp), np.array([sqrtc]), act,
                                np.array([1]), drawn)  # fmt: skip
    for k in range(40):  # the step loop's arithmetic (GaussianTSAgent.select/update)
        theta = Z[0, k] * (sqrtc / np.sqrt(n0[0] + 1.0))
        theta += S0[0] / (n0[0] + 1.0)
        a = int(theta.argmax())
        assert act[0, k] == a and drawn[0, k] == theta[1]
        S0[0, a] += table[0, k, a]
        n0[0, a] += 1.0
    assert np.array_equal(S, S0) and np.array_equal(n, n0)


def test_the_kernel_engine_holds_no_memory_per_round_of_the_horizon():
    """Ten times the horizon, the same peak of traced memory (within a chunk's noise): the agent
    keeps per-arm state only (its old lookup table grew by 8–16 bytes a round)."""
    if not compiled.available():
        pytest.skip("numba is not installed")
    import tracemalloc

    env, pol = parse_env("bernoulli:0.75,0.625,0.5,0.375,0.25"), GaussianTS(b=10, c=20.0, engine="kernel")
    peaks = []
    for T in (200_000, 2_000_000):
        tracemalloc.start()
        simulate(pol, env, T, 1, seed=0, progress=False)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert peaks[1] < peaks[0] + 2 * 2**20, peaks


@pytest.mark.parametrize("numba_mode", NUMBA, indirect=True)
def test_policy_actions_with_the_kernel_are_the_simulators(numba_mode):
    pol = GaussianTS(b=4, c=20.0)  # the audit plays the kernel engine, simulate the speculative one
    tab = TSNeighbour().tables(pol, 260, 3)
    seq = np.random.SeedSequence(9)
    a0, a = policy_actions(pol, tab.null, 260, 30, seq)
    res = simulate(pol, RewardTableEnv(tab.null), 260, 30, seq, record_actions=True, progress=False)
    assert np.array_equal(res.actions[:, 12:], a) and np.array_equal(res.actions[:, 0], a0)


@pytest.mark.parametrize(
    "N,b,c,T,design",
    [
        (2, 60, 20.0, 520, None),  # the near tie
        (2, 0, 1.0, 60, TSNeighbour(leader_reward=0.55)),  # b = 0: two holders, two start states
        (2, 3, 4.0, 300, TSNeighbour(arm=0, leader=1)),
        (4, 5, 2.0, 200, None),
    ],
)
def test_block_statistics_equal_the_per_round_computation(N, b, c, T, design):
    """Score, 2-arm exact loss and goodness-of-fit sums from the lookup tables equal, bit for bit,
    the former computation (every round's state evaluated on its own)."""
    pol = GaussianTS(b=b, c=c)
    tab = (design or candidate_designs(N)[-1]).tables(pol, T, N)
    for side in (0, 1):
        a0, a = policy_actions(pol, tab.null if side == 0 else tab.alt, T, 700, np.random.SeedSequence(side))
        start, hold = _start_counts(a0, tab, b)
        assert np.array_equal(score_statistic(a, hold, start, c), ref.score_statistic(a, hold, start, c))
        if N == 2:
            new = _exact_block(a, hold, start, tab, c, side, np.random.default_rng(0))
            old = ref.exact_two(a, hold, start, tab, c, side)
            assert np.array_equal(new["L"], old["L"])
            assert (new["gof_sum"], new["gof_var"]) == (old["gof_sum"], old["gof_var"])
            _, cnt = _hits_and_counts(a, hold)
            held = start[np.arange(700), hold][:, None]
            assert np.array_equal(cnt + held, ref.holder_counts(a, hold, start))
            if b == 0:
                assert len(np.unique(hold)) == 2


@pytest.mark.parametrize("shape", [(0, 5), (1, 1), (7, 3), (1000, 5)])
def test_fill_standard_normal_is_numpys_draw(shape):
    """Same values and the same generator state afterwards as Generator.standard_normal(out=)."""
    from bandits.engine.compiled import fill_standard_normal

    a, b = np.empty(shape), np.empty(shape)
    ga, gb = np.random.default_rng(7), np.random.default_rng(7)
    fill_standard_normal(ga, a)
    gb.standard_normal(out=b)
    assert np.array_equal(a, b) and ga.random() == gb.random()
    with pytest.raises(ValueError, match="contiguous"):  # as NumPy's own: refused
        fill_standard_normal(np.random.default_rng(1), np.empty((4, 10))[:, :3])
