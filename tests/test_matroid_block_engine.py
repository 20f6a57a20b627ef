"""The block engine of the lazy matroid bandits (``_MatroidAgent.run_chunk``, DPUCB-MAT and
DPTS-MAT: blocks of rounds mixed with stretches of single rounds) plays exactly the round-by-round
loop of the base ``Agent.run_chunk``: same actions, estimates, buffers, released values, noise
consumed and ledgers — on continuous rewards outside [0, 1] (the clip and the float order of the
buffer sums matter), every initialisation and tie rule, and chunks that cut blocks anywhere.
``BatchLazyEpochs.push_block`` is checked against ``push`` directly."""

from __future__ import annotations

import numpy as np
import pytest

from bandits.environments.grammar import parse_combinatorial_env
from bandits.matroid import policies as matroid_policies
from bandits.matroid.policies import OMM, CTSGaussian, DPTSMat, DPUCBMat
from bandits.policy import Agent, Outcomes, RunContext
from dpaudit.transcripts import Transcripts
from mechanisms.continual.epoch_sums_batch import BatchLazyEpochs
from mechanisms.randomness import NoiseTape, RepRandom

ENVS = ["matroid-linear:e1", "matroid-partition:blocks=0_0_1_1_2,caps=1_2_1,means=0.5/0.6/0.4/0.7/0.55"]


def _play(policy, env, table, chunk, per_round):
    R, T = table.shape[0], table.shape[1]
    seeds = [np.random.SeedSequence(11, spawn_key=(r,)) for r in range(R)]
    run = RunContext.create(env, T, seeds)
    run.ledgers.transcripts = Transcripts(R)
    agent = policy.agent(run)
    acts = []
    for t0 in range(0, T, chunk):
        t1 = min(T, t0 + chunk)
        out = Outcomes(table[:, t0:t1], policy.feedback)
        if per_round:  # the base loop, round by round (what run_chunk did before the engine)
            if t0 == 0 and agent.full_init:
                agent._w0 = np.array(out.table[:, 0], dtype=float)
            acts.append(Agent.run_chunk(agent, t0, t1, out))
        else:
            acts.append(agent.run_chunk(t0, t1, out))
    agent.finish()
    return np.concatenate(acts, axis=1), agent, run


@pytest.mark.parametrize("env_spec", ENVS)
@pytest.mark.parametrize("make", [DPUCBMat, DPTSMat])
@pytest.mark.parametrize("init", ["paper", "public-w0", "cover"])
@pytest.mark.parametrize("ties", ["index", "random"])
def test_block_engine_equals_round_by_round(env_spec, make, init, ties, monkeypatch):
    env = parse_combinatorial_env(env_spec)
    R, T = 5, 1500
    monkeypatch.setattr(matroid_policies, "_GAP", 2)  # blocks from a release per 2 rounds (default: 16)
    blocks = []
    push_block = BatchLazyEpochs.push_block
    monkeypatch.setattr(BatchLazyEpochs, "push_block", lambda self, a, *r: blocks.append(a.shape[1]) or
                        push_block(self, a, *r))
    rng = np.random.default_rng(3)
    table = rng.uniform(-0.3, 1.3, size=(R, T, env.n_arms))  # clipped; sums depend on float order
    table[:, :, 1] = np.round(table[:, :, 1])  # exact ties between arms' estimates, too
    policy = make(epsilon=1.5, init=init, ties=ties)
    for chunk in (T, 97, 5):
        blocks.clear()
        a, ea, ra = _play(policy, env, table, chunk, per_round=False)
        assert len(blocks) > 3 and sum(blocks) > T // 3  # the engine did play blocks
        b, eb, rb = _play(policy, env, table, chunk, per_round=True)
        np.testing.assert_array_equal(a, b)
        for name in ("estimate", "size", "draws", "epoch", "_sum", "_cnt", "_start", "_observed"):
            np.testing.assert_array_equal(getattr(ea.est, name), getattr(eb.est, name), err_msg=name)
        np.testing.assert_array_equal(ea.est.noise.drawn, eb.est.noise.drawn)
        assert [led.to_dict() for led in ra.ledgers] == [led.to_dict() for led in rb.ledgers]
        ca, cb = ra.ledgers.transcripts.columns(), rb.ledgers.transcripts.columns()
        assert ca.keys() == cb.keys()
        for key in ca:
            np.testing.assert_array_equal(ca[key], cb[key], err_msg=key)


def test_default_switch_plays_long_blocks_on_e1(monkeypatch):
    """With the default switch (_GAP = 16) the engine reaches long blocks on E1's Bernoulli
    rewards, and still plays the loop's actions."""
    env = parse_combinatorial_env(ENVS[0])
    R, T = 3, 12_000
    table = (np.random.default_rng(6).random((R, T, env.n_arms)) < env.means).astype(float)
    blocks = []
    push_block = BatchLazyEpochs.push_block
    monkeypatch.setattr(BatchLazyEpochs, "push_block", lambda self, a, *r: blocks.append(a.shape[1]) or
                        push_block(self, a, *r))
    a, ea, _ = _play(DPUCBMat(2.0), env, table, 8192, per_round=False)
    b, eb, _ = _play(DPUCBMat(2.0), env, table, 8192, per_round=True)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ea.est.estimate, eb.est.estimate)
    assert max(blocks) >= 512 and sum(blocks) > T // 2


@pytest.mark.parametrize("make", [OMM, CTSGaussian])
def test_baselines_keep_the_round_loop(make):
    """OMM and CTS-Gaussian update every round: their run_chunk is the base loop."""
    env = parse_combinatorial_env(ENVS[0])
    table = np.random.default_rng(4).random((3, 200, env.n_arms))
    a, _, _ = _play(make(), env, table, 64, per_round=False)
    b, _, _ = _play(make(), env, table, 64, per_round=True)
    np.testing.assert_array_equal(a, b)


def _tape(R):
    return NoiseTape(RepRandom([np.random.SeedSequence(5, spawn_key=(r,)) for r in range(R)]))


def test_push_block_equals_pushes_and_refuses_an_early_epoch():
    R, N, K, T = 4, 6, 2, 400
    rng = np.random.default_rng(8)
    arms = np.stack([np.stack([rng.choice(N, K, replace=False) for _ in range(T)]) for _ in range(R)])
    vals = rng.random((R, T, K)) * 0.3 + 0.1
    one = BatchLazyEpochs(R, N, T, epsilon=1.0, noise=_tape(R), ledgers=None, width=K)
    blk = BatchLazyEpochs(R, N, T, epsilon=1.0, noise=_tape(R), ledgers=None, width=K)
    for t in range(T):
        one.push(arms[:, t], vals[:, t], t)
    t = 0
    while t < T:
        n = min(T - t, int(blk.rounds_to_release(arms[:, t : t + 50]).min()) + 1)
        blk.push_block(arms[:, t : t + n], vals[:, t : t + n], t)
        t += n
    for name in ("estimate", "size", "draws", "_sum", "_cnt", "_start", "_observed"):
        np.testing.assert_array_equal(getattr(one, name), getattr(blk, name), err_msg=name)
    fresh = BatchLazyEpochs(R, N, T, epsilon=1.0, noise=_tape(R), ledgers=None, width=K)
    with pytest.raises(ValueError, match="before the block's last round"):
        fresh.push_block(arms[:, :2], vals[:, :2], 0)  # epoch 0 (one observation) fills at round 0


def test_the_record_of_observed_arms_is_one_byte_an_arm_and_is_refused_when_it_would_not_fit(monkeypatch):
    """The lazy epochs keep which arms each round observed until the end (int8 for up to 128
    arms; int16 before, flushed with int64 temporaries); a horizon whose record
    would not fit is refused before it is allocated, naming the horizon and the most that fits."""
    assert BatchLazyEpochs.record_dtype(128) is np.int8 and BatchLazyEpochs.record_dtype(129) is np.int16
    env = parse_combinatorial_env(ENVS[1])
    run = RunContext.create(env, 10**5, [np.random.SeedSequence(0, spawn_key=(r,)) for r in range(2)])
    agent = DPUCBMat(epsilon=1.0).agent(run)
    assert agent.est._observed.nbytes == 2 * 10**5 * agent.K  # one byte per observed arm
    per_round = BatchLazyEpochs.record_bytes(2, env.n_arms, 1, agent.K)
    monkeypatch.setattr(matroid_policies, "memory_limit", lambda: 10**5 * per_round - 1)
    with pytest.raises(ValueError, match=rf"horizon must be at most {10**5 - 1} for 2 repetition"):
        DPUCBMat(epsilon=1.0).agent(run)
    monkeypatch.setattr(matroid_policies, "memory_limit", lambda: 10**5 * per_round)
    DPTSMat(epsilon=1.0).agent(run)  # exactly fits


def test_released_counts_in_blocks_equal_one_block():
    env = parse_combinatorial_env(ENVS[1])
    policy = DPUCBMat(epsilon=1.0)
    table = np.random.default_rng(5).uniform(size=(3, 700, env.n_arms))
    _, agent, run = _play(policy, env, table, 700, per_round=False)
    for rep in range(3):
        whole = agent.est.released_counts(rep, block=700)
        assert whole.sum() > 0 and (whole < agent.K).any()  # some rounds still buffered at the end
        for block in (1, 7, 64):
            assert np.array_equal(agent.est.released_counts(rep, block=block), whole)
