"""Reading a Bernoulli outcome table lazily (bandits.engine.bernoulli_stream, the stream kernels):
the PCG64 emulation against NumPy's generator, the jump constants against ``PCG64.advance``, and
Gaussian Thompson sampling on the stream against the same run on the drawn table — actions,
regret curves, pulls, ledgers and the generators' states after the run, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bandits import GaussianTS, parse_env, simulate
from bandits.engine import compiled
from bandits.engine.bernoulli_stream import MULTIPLIER, BernoulliStream, jump_constants
from bandits.engine.results import RegretTally, log_checkpoints
from bandits.engine.streams import rep_streams
from bandits.engine.tables import _Tables
from bandits.environments import BernoulliEnv
from bandits.policy import Outcomes
from tests.conftest import NUMBA

needs_numba = pytest.mark.skipif(not compiled.available(), reason="numba is not installed")


def _value(words: np.ndarray) -> int:
    return (int(words[0]) << 64) | int(words[1])


@given(seed=st.integers(0, 2**63), inc_seed=st.integers(0, 2**20), d=st.integers(0, 40))
@settings(max_examples=60, deadline=None)
def test_a_jump_of_d_numbers_is_numpys_advance(seed, inc_seed, d):
    bg = np.random.PCG64(np.random.SeedSequence([seed, inc_seed]))
    state = bg.state["state"]
    mul, add = jump_constants(state["inc"], 40)
    jumped = (_value(mul[d]) * state["state"] + _value(add[d])) % 2**128
    assert jumped == bg.advance(d).state["state"]["state"]


def test_the_multiplier_is_pcg64s():
    bg = np.random.PCG64(7)
    s = bg.state["state"]
    one = (s["state"] * MULTIPLIER + s["inc"]) % 2**128
    assert one == bg.advance(1).state["state"]["state"]


@needs_numba
@given(seed=st.integers(0, 2**63), count=st.integers(0, 3000), skip=st.integers(0, 50))
@settings(max_examples=40, deadline=None)
def test_the_compiled_uniforms_are_numpys(seed, count, skip):
    g = np.random.default_rng(seed)
    g.random(skip)
    stream = BernoulliStream.of((0.5, 0.5), [g])
    assert stream is not None
    got = compiled.stream_uniforms(stream.state[0], stream.inc[0], count)
    ref = np.random.default_rng(seed)
    ref.random(skip)
    assert np.array_equal(got, ref.random(count))
    assert _value(stream.state[0]) == ref.bit_generator.state["state"]["state"]


@needs_numba
def test_drawing_and_reading_interleave():
    rngs = [np.random.default_rng(11), np.random.default_rng(12)]
    stream = BernoulliStream.of((0.3, 0.6, 0.9), rngs)
    ref = np.random.default_rng(12).random(3000)
    a = compiled.stream_uniforms(stream.state[1], stream.inc[1], 1000)
    with stream.drawing():  # the NumPy generator continues where the stream stopped
        b = rngs[1].random(1000)
    c = compiled.stream_uniforms(stream.state[1], stream.inc[1], 1000)  # the stream continues after it
    assert np.array_equal(np.concatenate([a, b, c]), ref)


def test_only_plain_pcg64_generators_make_a_stream():
    assert BernoulliStream.of((0.5, 0.5), [np.random.Generator(np.random.Philox(1))]) is None
    assert BernoulliStream.of((0.5, 0.5), [np.random.default_rng(1)]) is not None


def test_a_streamed_chunk_draws_its_table_when_read_and_refuses_after_a_lazy_read():
    env = BernoulliEnv((0.2, 0.7))
    streams = [rep_streams(4, r) for r in range(3)]
    plain = _Tables(env, range(3), streams).chunk(0, 50, None)
    tables = _Tables(env, range(3), streams)
    tables.use_stream()
    out = tables.outcomes(0, 50, None, GaussianTS().feedback)
    assert out.stream is not None
    assert np.array_equal(out.table, plain)
    assert out.stream is None  # drawn: nobody may read the stream for this chunk any more
    lazy = tables.outcomes(50, 60, None, GaussianTS().feedback)
    lazy.observed = np.zeros((3, 10))
    with pytest.raises(RuntimeError, match="stream"):
        lazy.table  # noqa: B018


def test_other_environments_get_no_stream():
    env = parse_env("truncexp:0.1,1")
    tables = _Tables(env, range(2), [rep_streams(0, r) for r in range(2)])
    tables.use_stream()
    assert tables.stream is None
    assert isinstance(tables.outcomes(0, 10, None, GaussianTS().feedback), Outcomes)


CASES = [
    # spec, b, c, T, R, chunk
    ("bernoulli:0.75,0.625,0.5,0.375,0.25", 0, 1.0, 30000, 6, None),
    ("bernoulli:0.5,0.5,0.5", 7, 3.0, 5000, 4, 777),  # pre-pulls in the first chunk: drawn, then streamed
    ("bernoulli:0.9,0.1", 0, 1.0, 20000, 3, 1000),
    ("bernoulli:" + ",".join(str(round(0.2 + 0.015 * i, 3)) for i in range(40)), 2, 2.5, 6000, 3, 1500),
]


def _run(spec, b, c, T, R, chunk, engine):
    return simulate(GaussianTS(b=b, c=c, engine=engine), parse_env(spec), T, R, 5, progress=False,
                    record_actions=True, chunk_size=chunk)  # fmt: skip


@needs_numba
@pytest.mark.parametrize("spec,b,c,T,R,chunk", CASES)
def test_thompson_sampling_on_the_stream_plays_the_drawn_table(spec, b, c, T, R, chunk, monkeypatch):
    calls = []
    real = compiled.gaussian_ts_stream_rounds
    monkeypatch.setattr(compiled, "gaussian_ts_stream_rounds", lambda *a: calls.append(1) or real(*a))
    lazy = _run(spec, b, c, T, R, chunk, "kernel")
    assert calls, "the stream was not read"
    monkeypatch.setenv("DPAUDIT_NUMBA", "0")  # every array drawn, NumPy step loop and tally
    drawn = _run(spec, b, c, T, R, chunk, "step")
    for field in ("actions", "pseudo_regret", "empirical_regret", "pulls"):
        assert np.array_equal(getattr(lazy, field), getattr(drawn, field)), field
    assert [e.entries for e in lazy.ledgers] == [e.entries for e in drawn.ledgers]


@pytest.mark.parametrize("numba_mode", NUMBA, indirect=True)
def test_the_tally_is_the_same_compiled_or_not(numba_mode):
    rng = np.random.default_rng(3)
    env = BernoulliEnv((0.9, 0.5, 0.1))
    T, R = 20000, 4
    ck = log_checkpoints(T)
    tally = RegretTally(env, T, R, ck, record_actions=False)
    if numba_mode:
        compiled._kernel()
    for t0 in range(0, T, 6000):
        t1 = min(T, t0 + 6000)
        a = rng.integers(0, 3, (R, t1 - t0))
        table = (rng.random((R, t1 - t0, 3)) < env.means).astype(float)
        tally.add(t0, t1, a, table)
    res = tally.result()
    rng = np.random.default_rng(3)
    gaps, obs, acts = [], [], []
    for t0 in range(0, T, 6000):
        t1 = min(T, t0 + 6000)
        a = rng.integers(0, 3, (R, t1 - t0))
        table = (rng.random((R, t1 - t0, 3)) < env.means).astype(float)
        acts.append(a)
        gaps.append(env.gaps[a])
        obs.append(np.take_along_axis(table, a[:, :, None], axis=2)[:, :, 0])
    g = np.cumsum(np.concatenate(gaps, axis=1), axis=1)
    w = np.cumsum(np.concatenate(obs, axis=1), axis=1)
    assert np.array_equal(res["pseudo"], g[:, ck - 1])
    assert np.array_equal(res["emp"], env.optimum * ck[None, :] - w[:, ck - 1])
    pulls = np.stack([np.bincount(row, minlength=3) for row in np.concatenate(acts, axis=1)])
    assert np.array_equal(res["pulls"], pulls)


@needs_numba
def test_streamed_rounds_get_chunks_sized_for_no_table(monkeypatch):
    """Past the pre-pulls the agent holds no (R, C, N) table: the memory budget buys longer chunks
    there (fewer kernel calls), and the run is the same as with the table-sized chunks."""
    from bandits.engine.memory import ChunkPlan

    env, R, memory = parse_env("bernoulli:" + ",".join(["0.5"] * 50)), 40, 2**20
    plan = ChunkPlan.budget(R, 50, memory)
    assert plan.stream_rounds > 10 * plan.rounds
    sizes = []
    real = compiled.gaussian_ts_stream_rounds
    spy = lambda *a: sizes.append(a[5].shape[1]) or real(*a)  # noqa: E731 - a[5]: the chunk's actions
    monkeypatch.setattr(compiled, "gaussian_ts_stream_rounds", spy)
    kw = dict(progress=False, record_actions=True)
    budget = simulate(GaussianTS(b=2, c=1.0, engine="kernel"), env, 3000, R, 1, memory=memory, **kw)
    assert max(sizes) == plan.stream_rounds and len(sizes) <= 3000 // plan.stream_rounds + 1
    fixed = simulate(GaussianTS(b=2, c=1.0, engine="kernel"), env, 3000, R, 1, chunk_size=plan.rounds, **kw)
    for field in ("actions", "pseudo_regret", "empirical_regret", "pulls"):
        assert np.array_equal(getattr(budget, field), getattr(fixed, field)), field
