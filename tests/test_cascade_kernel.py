"""The compiled round loop of the cascading agents (:mod:`bandits.cascading._kernel`) against the
NumPy step loop (``DPAUDIT_NUMBA=0``): same actions, regret and ledgers, bit for bit; the kernel's
Python source against the step loop too (what runs without numba is the step loop, but the source
is the specification the compiled code follows)."""

from __future__ import annotations

import numpy as np
import pytest

from bandits.cascading import _kernel
from bandits.cascading.base import CascadeAgent, top_k
from bandits.cascading.policies import CascadeDP, CascadeDPCounts, CascadeLDP, CascadeLDPFixed, CascadeUCB1
from bandits.cascading.stacked import simulate_stacked
from bandits.engine.simulator import simulate
from bandits.environments.cascade import cascade_instance
from bandits.policy import RunContext
from dpaudit.ledger import RunLedgers
from mechanisms.continual.hybrid_batch import BatchHybridStreams, BatchHybridSums
from mechanisms.randomness import RepRandom
from mechanisms.row_reports import RowReports

needs_numba = pytest.mark.skipif(not _kernel.NUMBA, reason="numba is not installed")


@pytest.fixture(autouse=True)
def _short_runs_compile(monkeypatch):
    """These runs are short; below KERNEL_MIN_ROUNDS the agents would keep to the step loop."""
    from bandits.engine import compiled

    monkeypatch.setattr(compiled, "KERNEL_MIN_ROUNDS", 0)


@needs_numba
def test_the_kernel_is_what_runs(monkeypatch):
    """With numba enabled the agent's round loop is the kernel (so the comparisons compare it)."""
    monkeypatch.setenv("DPAUDIT_NUMBA", "1")
    env = cascade_instance(10, 3)
    agent = CascadeUCB1().agent(RunContext.create(env, 700, np.random.SeedSequence(0).spawn(2)))
    assert agent._kernel(0, 97) is _kernel.cascade_rounds
    monkeypatch.setenv("DPAUDIT_NUMBA", "0")
    assert agent._kernel(0, 97) is None

COMPILED = [
    CascadeUCB1(),
    CascadeUCB1(init="none"),
    CascadeLDP(1.0, "laplace"),
    CascadeLDP(1.0, "laplace", noise_factor=0.01, init="none"),
    CascadeLDP(0.5, "gaussian", noise_factor=0.01),
    CascadeLDP(1.0, "laplace", calibration="theorem7", noise_factor=0.1, factor_on="noise"),
    CascadeLDPFixed(1.0, "laplace", noise_factor=0.01),
    CascadeLDPFixed(2.0, "gaussian", factor_on="noise", noise_factor=0.1),
    CascadeDP(1.0, noise_factor=0.01),
    CascadeDP(0.5, init="none", factor_on="noise", noise_factor=0.1),
    CascadeDPCounts(1.0, noise_factor=0.01),
    CascadeDPCounts(1.0, noise_factor=0.05, factor_on="noise"),
]


def _run(pol, env, monkeypatch, numba: bool, **kw):
    monkeypatch.setenv("DPAUDIT_NUMBA", "1" if numba else "0")
    return simulate(pol, env, 700, 4, 11, record_actions=True, progress=False, chunk_size=97, **kw)


def _same(a, b) -> None:
    assert np.array_equal(a.actions, b.actions)
    assert np.array_equal(a.pseudo_regret, b.pseudo_regret)
    assert [led.to_json() for led in a.ledgers] == [led.to_json() for led in b.ledgers]


@needs_numba
@pytest.mark.parametrize("pol", COMPILED, ids=lambda p: p.name)
def test_compiled_loop_plays_the_numpy_step_loop_bit_for_bit(pol, monkeypatch):
    env = cascade_instance(10, 3)
    _same(_run(pol, env, monkeypatch, True), _run(pol, env, monkeypatch, False))


@needs_numba
def test_compiled_loop_in_stacked_rows(monkeypatch):
    env = cascade_instance(8, 2)
    for pols in (
        [CascadeLDP(e, "laplace", noise_factor=f) for e, f in ((0.5, 0.01), (2.0, 1.0))],
        [CascadeLDPFixed(e, "laplace", noise_factor=f) for e, f in ((0.5, 0.01), (2.0, 1.0))],
        [CascadeDP(e, noise_factor=f) for e, f in ((0.5, 0.01), (2.0, 1.0))],
        [CascadeDPCounts(e, noise_factor=f) for e, f in ((0.5, 0.01), (2.0, 1.0))],
    ):
        runs = []
        for flag in ("1", "0"):
            monkeypatch.setenv("DPAUDIT_NUMBA", flag)
            runs.append(simulate_stacked(pols, env, 400, 3, seed=2, record=True, chunk_size=123))
        for a, b in zip(*runs):
            assert np.array_equal(a.pseudo_regret, b.pseudo_regret) and np.array_equal(a.pulls, b.pulls)
            assert [led.to_json() for led in a.ledgers] == [led.to_json() for led in b.ledgers]


def test_the_step_loop_runs_where_the_kernel_would_differ(monkeypatch):
    """Random ties, a captured report or a variant with another index: no kernel."""
    monkeypatch.setenv("DPAUDIT_NUMBA", "1")
    env = cascade_instance(6, 2)
    seeds = np.random.SeedSequence(0).spawn(2)
    run = RunContext(6, 50, env.structure, RepRandom(seeds), RepRandom(seeds).child(2), RunLedgers(2))
    for pol in (CascadeUCB1(ties="random"), CascadeLDP(1.0, "laplace", ties="random")):
        agent = pol.agent(run)
        assert isinstance(agent, CascadeAgent) and agent._kernel(0, 50) is None
    agent = CascadeLDP(1.0, "laplace").agent(run)
    agent.capture_round = 3
    assert agent._kernel(0, 50) is None and (agent._kernel(4, 50) is not None) == _kernel.NUMBA


def _source(name: str):
    """A kernel as plain Python (``py_func``; the function itself without numba)."""
    f = getattr(_kernel, name)
    return getattr(f, "py_func", f)


@pytest.mark.parametrize("pol", COMPILED[0:11:2], ids=lambda p: p.name)
def test_kernel_source_plays_the_numpy_step_loop(pol, monkeypatch):
    """The kernel's Python source, swapped in for the compiled one on a short run."""
    env = cascade_instance(7, 3)
    monkeypatch.setenv("DPAUDIT_NUMBA", "0")
    ref = simulate(pol, env, 120, 2, 4, record_actions=True, progress=False, chunk_size=50)
    for helper in ("_play", "_taken", "_hybrid_insert", "_sums_step"):
        monkeypatch.setattr(_kernel, helper, _source(helper))
    monkeypatch.setattr(
        CascadeAgent, "_kernel", lambda self, t0, t1: _source(self.compiled) if self.compiled else None
    )
    got = simulate(pol, env, 120, 2, 4, record_actions=True, progress=False, chunk_size=50)
    _same(got, ref)


@pytest.mark.parametrize("compiled", [False, True] if _kernel.NUMBA else [False])
def test_play_takes_what_top_k_takes(compiled, monkeypatch):
    """The kernels' top-K is the step loop's (stable descending order, ±inf included), and the
    click is the first attractive position."""
    if not compiled:
        monkeypatch.setattr(_kernel, "_taken", _source("_taken"))
    play = _kernel._play if compiled else _source("_play")
    rng = np.random.default_rng(3)
    u = np.round(rng.random((300, 9)), 1)
    u[rng.random(u.shape) < 0.1] = np.inf
    u[rng.random(u.shape) < 0.1] = -np.inf
    u[-100:][rng.random((100, 9)) < 0.7] = -np.inf  # often fewer than 4 finite items
    want = top_k(u, 4)
    for row, w in zip(u, want):
        a = np.empty(4, dtype=np.int64)
        outcomes = np.zeros(9)
        outcomes[w[2]] = 1.0
        assert play(row.copy(), outcomes, a) == 2 and a.tolist() == w.tolist()


@needs_numba
@pytest.mark.parametrize(
    "pol, owner, name",
    [
        (CascadeLDP(1.0, "laplace"), RowReports, "release"),
        (CascadeLDPFixed(1.0, "gaussian"), RowReports, "release"),
        (CascadeDP(1.0), BatchHybridStreams, "insert"),
        (CascadeDPCounts(1.0), BatchHybridSums, "step"),
    ],
    ids=lambda x: getattr(x, "name", getattr(x, "__name__", str(x))),
)
def test_a_replaced_mechanism_method_runs_the_step_loop(pol, owner, name, monkeypatch):
    """A planted bug (``benchmarks/planted_bugs.py``) edits the mechanism's method: the kernel,
    which replays its arithmetic, must step aside so that the edit is what runs."""
    monkeypatch.setenv("DPAUDIT_NUMBA", "1")
    env = cascade_instance(6, 2)
    seeds = np.random.SeedSequence(0).spawn(2)
    run = RunContext(6, 50, env.structure, RepRandom(seeds), RepRandom(seeds).child(2), RunLedgers(2))
    assert pol.agent(run)._kernel(0, 50) is not None
    original = getattr(owner, name)
    monkeypatch.setattr(owner, name, lambda *a, **k: original(*a, **k))
    assert pol.agent(run)._kernel(0, 50) is None
