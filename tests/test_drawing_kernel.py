"""Gaussian TS drawing its posterior noise inside the compiled loop
(bandits.engine.compiled.gaussian_ts_drawing_rounds through a typed list of the repetitions'
generators) plays exactly what filling a noise buffer and reading it plays: actions, state,
watched draws and the generators' states afterwards, bit for bit; and the audit's neighbour
log-probabilities (shared factors) equal the three separate trapezoid rules and the exact
quadrature."""

from __future__ import annotations

import numpy as np
import pytest

from bandits import GaussianTS, parse_env, rep_streams, reward_table
from bandits.engine import compiled
from bandits.policy import Outcomes, RunContext
from bandits.thompson.action_probabilities import (
    _fast_log_probabilities,
    _log_argmax_trapezoid,
    neighbour_log_probabilities,
)
from bandits.thompson.audit_trajectories import policy_actions
from dpaudit.analyses.gaussian_argmax import log_argmax_probability

needs_numba = pytest.mark.skipif(not compiled.available(), reason="numba is not installed")


def _play(policy, env, T, R, chunks, watch=None):
    seeds = [rep_streams(7, r).policy for r in range(R)]
    agent = policy.agent(RunContext.create(env, T, seeds))
    if watch is not None:
        agent.watch = np.full(R, watch, dtype=np.intp)
    tab = np.stack([reward_table(env, T, 7, r) for r in range(R)])
    acts, drawn = [], []
    for t0, t1 in zip(chunks[:-1], chunks[1:]):
        acts.append(agent.run_chunk(t0, t1, Outcomes(tab[:, t0:t1], policy.feedback)))
        drawn.append(agent.drawn)
    after = [g.standard_normal(3) for g in agent.run.random.generators]
    return agent, np.concatenate(acts, axis=1), drawn, after


@needs_numba
@pytest.mark.parametrize(
    "spec,b,c,chunks,watch",
    [
        ("truncexp:0.1,1,2,5,10", 0, 1.0, (0, 1, 300, 700), None),  # b = 0: every round samples
        ("bernoulli:0.5,0.5,0.5,0.5,0.5", 37, 47.7, (0, 100, 333, 900), 3),  # pre-pulls end mid-chunk
        ("bernoulli:0.75,0.625,0.5,0.375,0.25", 3, 1e4, (0, 1200), 0),  # heavy exploration
    ],
)
def test_drawing_in_the_loop_plays_the_filled_buffer(spec, b, c, chunks, watch, monkeypatch):
    env, T, R = parse_env(spec), chunks[-1], 6
    calls = []
    real = compiled.gaussian_ts_drawing_rounds
    monkeypatch.setattr(compiled, "gaussian_ts_drawing_rounds", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(compiled, "GENERATOR_LIST_MIN_REPS", 1)
    loop = _play(GaussianTS(b=b, c=c, engine="kernel"), env, T, R, chunks, watch)
    assert calls, "the noise was not drawn in the loop"
    monkeypatch.setattr(compiled, "GENERATOR_LIST_MIN_REPS", 10**9)
    calls.clear()
    buffered = _play(GaussianTS(b=b, c=c, engine="kernel"), env, T, R, chunks, watch)
    assert not calls
    assert np.array_equal(loop[1], buffered[1])
    for name in ("S", "n", "_mu", "_scale"):
        assert np.array_equal(getattr(loop[0], name), getattr(buffered[0], name)), name
    if watch is not None:
        assert all(np.array_equal(x, y, equal_nan=True) for x, y in zip(loop[2], buffered[2]))
    assert all(np.array_equal(x, y) for x, y in zip(loop[3], buffered[3]))  # the generators moved alike


@needs_numba
@pytest.mark.parametrize("watch", [None, -1, 2])
def test_the_audit_block_draws_in_the_loop_and_plays_what_a_buffer_plays(watch, monkeypatch):
    """At an audit block's size (above GENERATOR_LIST_MIN_REPS) the real audit path draws in the loop."""
    pol, R = GaussianTS(b=4, c=3.0), compiled.GENERATOR_LIST_MIN_REPS + 3
    tab = np.tile([0.5, 1.0, 0.0, 0.5, 0.25], (4 * 5 + 120, 1))
    calls = []
    real = compiled.gaussian_ts_drawing_rounds
    monkeypatch.setattr(compiled, "gaussian_ts_drawing_rounds", lambda *a: calls.append(1) or real(*a))
    loop = policy_actions(pol, tab, tab.shape[0], R, np.random.SeedSequence(5), watch=watch)
    assert calls
    monkeypatch.setattr(compiled, "GENERATOR_LIST_MIN_REPS", 10**9)
    buffered = policy_actions(pol, tab, tab.shape[0], R, np.random.SeedSequence(5), watch=watch)
    assert len(loop) == len(buffered)
    assert all(np.array_equal(x, y, equal_nan=True) for x, y in zip(loop, buffered))


def test_only_plain_generators_are_listed():
    class Wrapped(np.random.Generator):
        pass

    assert compiled.generator_list([]) is None
    assert compiled.generator_list([Wrapped(np.random.PCG64(0))]) is None


@needs_numba
@pytest.mark.parametrize("size", [1, 64, 130])  # one, a whole block, and blocks with a padded last one
def test_the_list_holds_the_generators_in_order_and_shares_their_streams(size):
    from numba import njit

    @njit
    def draw(gens, i):
        return gens[i].standard_normal()

    gens = [np.random.default_rng(s) for s in range(size)]
    twins = [np.random.default_rng(s) for s in range(size)]
    listed = compiled.generator_list(gens)
    assert len(listed) == size
    for i in range(size):  # drawn in compiled code from entry i, then in Python from gens[i]: one stream
        assert draw(listed, i) == twins[i].standard_normal()
        assert gens[i].standard_normal() == twins[i].standard_normal()


def _states(B, N, seed):
    rng = np.random.default_rng(seed)
    n = rng.integers(1897, 2800, (B, N)).astype(float)  # tied arms, as in the audit
    m0, sg = 0.5 * n / (n + 1), np.sqrt(47.69 / (n + 1))
    hold = rng.integers(0, N, B)
    act = np.where(rng.random(B) < 0.3, hold, rng.integers(0, N, B))
    m1 = m0.copy()
    m1[np.arange(B), hold] += 1 / (n[np.arange(B), hold] + 1)
    return m0, m1, sg, act, hold


@pytest.mark.parametrize("N,side", [(3, 0), (5, 1), (8, 0)])
def test_neighbour_probabilities_are_the_three_rules_and_the_exact_quadrature(N, side):
    m0, m1, sg, act, hold = _states(3000, N, N)
    a, b, h, info = neighbour_log_probabilities(m0, m1, sg, act, hold, side, np.random.default_rng(1))
    assert info["rule"].startswith("41-node") and info["checked_states"] == 256
    ms = m1 if side else m0
    for got, m, c in ((a, m0, act), (b, m1, act), (h, ms, hold)):
        np.testing.assert_allclose(got, _log_argmax_trapezoid(m, sg, c), rtol=0, atol=1e-14)
        np.testing.assert_allclose(got, log_argmax_probability(m, sg, c), rtol=0, atol=1e-8)
    # the check reads the same entries as the stacked rule's check: the same report
    stack = np.concatenate([m0, m1, ms]), np.concatenate([sg, sg, sg]), np.concatenate([act, act, hold])
    _, stacked = _fast_log_probabilities(*stack, np.random.default_rng(1))
    assert stacked == info


def test_neighbour_probabilities_fall_back_to_the_exact_quadrature():
    rng = np.random.default_rng(2)
    n = rng.integers(1, 40, (400, 5)).astype(float)
    m0, sg = rng.random((400, 5)) * n / (n + 1), np.sqrt(1.0 / (n + 1))
    hold, act = rng.integers(0, 5, 400), rng.integers(0, 5, 400)
    m1 = m0 + 0.3 * (np.arange(5) == hold[:, None])
    a, b, h, info = neighbour_log_probabilities(m0, m1, sg, act, hold, 1, np.random.default_rng(1))
    assert info["rule"].startswith("exact")
    for got, m, c in ((a, m0, act), (b, m1, act), (h, m1, hold)):
        np.testing.assert_array_equal(got, log_argmax_probability(m, sg, c))


@needs_numba
@pytest.mark.parametrize("factor", [0.5, 3.0])
def test_a_noise_scaled_stream_draws_in_the_loop_as_its_buffer_holds_it(factor, monkeypatch):
    """The measured floor's variants (every posterior draw times a factor) draw in the loop too."""
    pol, R = GaussianTS(b=4, c=3.0), compiled.GENERATOR_LIST_MIN_REPS + 1
    tab = np.tile([0.5, 1.0, 0.0, 0.5, 0.25], (4 * 5 + 80, 1))
    calls = []
    real = compiled.gaussian_ts_drawing_rounds
    monkeypatch.setattr(compiled, "gaussian_ts_drawing_rounds", lambda *a: calls.append(a[-1]) or real(*a))
    seq = np.random.SeedSequence(8)
    loop = policy_actions(pol, tab, tab.shape[0], R, seq, watch=-1, noise_factor=factor)
    assert calls and set(calls) == {factor}
    monkeypatch.setattr(compiled, "GENERATOR_LIST_MIN_REPS", 10**9)
    buffered = policy_actions(pol, tab, tab.shape[0], R, seq, watch=-1, noise_factor=factor)
    plain = policy_actions(pol, tab, tab.shape[0], R, seq, watch=-1)
    assert all(np.array_equal(x, y, equal_nan=True) for x, y in zip(loop, buffered))
    assert not np.array_equal(loop[2], plain[2], equal_nan=True)  # the factor took effect
