"""The pipeline every algorithm goes through (bandits.run, bandits.registry, bandits.auditing.black_box):
regret + certified privacy + ledger check + audit, the policy contract for every registered
algorithm, a user-written private policy, and a planted plumbing bug that must fail its run."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from bandits import BernoulliEnv, BetaTS, GaussianTS, parse_env, simulate, simulate_many
from bandits.auditing.contract import AuditSettings, PolicyAudit
from bandits.plots import plot_run
from bandits.policy import Agent, Policy, RunContext
from bandits.registry import algorithms, get
from bandits.run import run_algorithm, run_policy
from dpaudit.analyses.thompson_sampling import ThompsonConfig
from dpaudit.audit.report import AuditReport, Certified, Empirical
from dpaudit.conversions import gdp_epsilon
from dpaudit.declaration import Declaration, LedgerCheckError
from mechanisms import LaplaceMechanism

SPEC = "bernoulli:0.75,0.625,0.5,0.375,0.25"
EXAMPLE = Path(__file__).parents[1] / "docs" / "examples" / "private_epsilon_greedy.py"


def load_example():
    spec = importlib.util.spec_from_file_location("private_epsilon_greedy", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


class FakeAuditor:
    """Records its calls, returns a fixed verdict against the declaration's certificate."""

    def __init__(self, mu_lower: float = 0.3) -> None:
        self.calls: list[tuple[tuple, dict]] = []
        self.mu_lower = mu_lower

    def __call__(self, policy, horizon, env, settings: AuditSettings) -> PolicyAudit:
        kw = dataclasses.asdict(settings)
        self.calls.append(((policy, horizon, env.n_arms), kw))
        cfg = ThompsonConfig(horizon, env.n_arms, policy.b, policy.c)
        delta = kw["delta"]
        return PolicyAudit(AuditReport.build(
            target="thompson",
            certified=Certified(
                mu=cfg.mu_tight, epsilon=float(gdp_epsilon(cfg.mu_tight, delta)), delta=delta
            ),
            empirical=Empirical(
                epsilon_lower=0.1,
                mu_lower=self.mu_lower,
                delta=delta,
                confidence=kw["confidence"],
                trials=2 * kw["trials"],
                method="fake",
                statistic="fake",
            ),
        ))


# ---------------------------------------------------------------------------------------
# the run report


def test_run_policy_regret_privacy_ledger_and_reduced_horizon_audit():
    fake = FakeAuditor()
    rep = run_policy(
        GaussianTS(b=20, c=5.0),
        SPEC,
        3000,
        reps=3,
        audit_trials=50,
        seed=4,
        delta=1e-5,
        progress=False,
        audit_horizon=400,
        auditor=fake,
    )
    sim = simulate(GaussianTS(b=20, c=5.0), parse_env(SPEC), 3000, 3, 4, progress=False)
    assert rep.regret.mean == sim.final("pseudo") and rep.regret.empirical_mean == sim.final(
        "empirical"
    )
    assert list(rep.regret.curves.t) == sim.checkpoints.tolist()
    cfg = ThompsonConfig(3000, 5, 20, 5.0)
    assert rep.privacy.mu == pytest.approx(math.sqrt((3000 - 100) / (5.0 * 21)), rel=1e-14)
    assert rep.privacy.mu >= cfg.mu_tight * (1 - 1e-15)  # never below the closed form
    assert rep.privacy.guarantee == "gdp" and rep.privacy.unit == "one reward"
    assert rep.privacy.epsilon == min(v for v in rep.privacy.bounds.values() if v is not None)
    assert rep.privacy.published["source"] == "Ou, Avella Medina & Cummings (2024), Theorem 4"
    assert rep.privacy.published["status"].startswith("covered")
    assert rep.ledger_check.ok and rep.ledger_check.repetitions == 3
    (policy, horizon, arms), kw = fake.calls[0]
    assert (policy.b, policy.c, horizon, arms, kw["trials"], kw["seed"]) == (20, 5.0, 400, 5, 50, 4)
    assert rep.audit.horizon == 400 and "reduced horizon T = 400" in rep.audit.note
    d = json.loads(json.dumps(rep.to_dict()))
    assert set(d) == {"regret", "privacy", "ledger_check", "audit", "config", "timing"}
    assert "CONSISTENT" in str(rep) and "ledger check: ok" in str(rep)


def test_run_policy_skips_audit_and_reports_violation():
    def boom(*a, **k):
        raise AssertionError("the auditor must not be called")

    rep = run_policy(GaussianTS(b=2, c=2.0), "truncexp:0.1,1", 500, reps=2, progress=False, auditor=boom)
    assert rep.audit is None and "skipped" in str(rep)
    bad = run_policy(
        GaussianTS(b=2, c=2.0),
        "bernoulli:0.6,0.4",
        500,
        reps=2,
        audit_trials=10,
        progress=False,
        auditor=FakeAuditor(mu_lower=1e6),
    )
    assert bad.audit.verdict == "violated" and "VIOLATED" in str(bad)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"prepulls": 1, "variance_scale": 0.5}, "c must be in"),
        ({"prepulls": 250}, "prepulls"),
        ({"reps": 0}, "reps"),
        ({"audit_trials": -1}, "audit_trials"),
        ({"nosuch": 3}, "has no option"),
    ],
)
def test_run_algorithm_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_algorithm("ts", "bernoulli:0.6,0.4", 500, progress=False, **kwargs)


@pytest.mark.slow
def test_plot_run_writes_png(tmp_path):
    rep = run_algorithm("ts", "bernoulli:0.6,0.4", 300, reps=2, audit_trials=0, progress=False)
    path = tmp_path / "run.png"
    plot_run(rep, str(path))
    assert path.stat().st_size > 5_000


def test_run_ts_with_its_white_box_audit():
    rep = run_algorithm(
        "ts",
        "bernoulli:0.75,0.25",
        300,
        reps=2,
        prepulls=1,
        variance_scale=1.0,
        audit_trials=400,
        audit_horizon=40,
        progress=False,
    )
    a = rep.audit.to_dict()
    assert a["verdict"] == "consistent" and a["horizon"] == 40
    assert a["certified"]["mu"] == pytest.approx(ThompsonConfig(40, 2, 1, 1.0).mu_tight)
    assert 0 <= a["empirical"]["mu_lower"] <= a["certified"]["mu"]


# ---------------------------------------------------------------------------------------
# the policy contract, for every registered algorithm


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(algorithms()))
def test_policy_contract(key):
    """Every registered algorithm: valid actions, reproducible from its seed, independent of how
    repetitions are grouped, a declaration the accountant can certify (or none), and ledgers that
    the declaration covers."""
    spec = get(key)
    env = spec.env_parser(spec.default_env) if spec.env_parser else parse_env(spec.default_env)
    T = 600
    policy = spec.configure({}, env, T).policy
    assert policy.feedback == spec.feedback
    kw = dict(record_actions=True, progress=False)
    a = simulate(policy, env, T, 4, 11, **kw)
    b = simulate(policy, env, T, 4, 11, rep_chunk=1, chunk_size=97, **kw)
    assert np.array_equal(a.actions, b.actions) and np.array_equal(a.pseudo_regret, b.pseudo_regret)
    assert env.structure.valid(a.actions, env.n_arms)
    assert a.pulls.sum() == 4 * T * max(1, math.prod(env.structure.shape))
    assert np.all(a.pseudo_regret >= -1e-9)
    decl = policy.declare(T, env.n_arms, env.structure)
    assert (decl is None) == (spec.privacy == "none")
    if decl is not None:
        assert decl.unit == spec.unit
        rep = run_policy(policy, env, T, reps=2, progress=False)
        assert rep.ledger_check.ok
        # a declared NonPrivateEvent (e.g. the report-length leak of Wang et al. 2021) certifies no epsilon
        assert (rep.privacy.epsilon is None) == (spec.privacy == "not private (as specified)")
        if not any(len(led) for led in a.ledgers):  # e.g. DP-SE's first epoch outlasts T = 600
            long = simulate(policy, env, 100 * T, 1, 11, progress=False)
            assert any(len(led) for led in long.ledgers), "a private policy must record its releases"


def test_simulate_many_gives_each_agent_fresh_streams():
    """Agents built from shared per-repetition seed objects used to mutate them (SeedSequence.spawn):
    the second of two identical Beta-TS policies saw different streams (24.88 instead of 18.75)."""
    env = BernoulliEnv((0.75, 0.625, 0.5, 0.375, 0.25))
    alone = simulate(BetaTS(), env, 3000, 3, seed=2, progress=False)
    both = simulate_many([BetaTS(), BetaTS()], env, 3000, 3, seed=2, progress=False)
    assert alone.final() == pytest.approx(18.75)
    assert both[0].final() == both[1].final() == alone.final()


# ---------------------------------------------------------------------------------------
# a user-written private policy, and a planted plumbing bug


@pytest.mark.slow
def test_user_written_private_policy_runs_through_the_pipeline():
    ex = load_example()
    pol = ex.PrivateEpsilonGreedy(epsilon=1.0)
    rep = run_policy(pol, SPEC, 3000, reps=4, audit_trials=1000, audit_horizon=100, progress=False)
    assert rep.privacy.guarantee == "pure" and rep.privacy.epsilon_pure == pytest.approx(1.0)
    assert rep.privacy.mu is None and rep.privacy.epsilon <= 1.0 + 1e-9
    assert rep.ledger_check.ok and rep.ledger_check.check.worst["ratio"] == pytest.approx(1.0)
    assert rep.audit.verdict == "consistent" and rep.audit.result.primary.certified.epsilon <= 1.0 + 1e-9
    assert 0 <= rep.audit.result.primary.empirical.epsilon_lower <= 1.0
    # every reward released once: T units per repetition, each charged exactly one Laplace release
    sim = simulate(pol, parse_env(SPEC), 500, 2, 0, progress=False)
    assert all(
        sorted(set(led.charges().values())) == [1] and len(led.charges()) == 500 for led in sim.ledgers
    )
    # the policy's noise comes from the noise stream: changing it changes the actions
    assert not np.array_equal(
        simulate(pol, parse_env(SPEC), 300, 2, 0, record_actions=True, progress=False).actions,
        simulate(pol, parse_env(SPEC), 300, 2, 1, record_actions=True, progress=False).actions,
    )


@dataclasses.dataclass(frozen=True)
class DoubleRelease(Policy):
    """A planted bug: declares one Laplace release per reward, but its agent releases every tenth
    reward twice (say, a retry path that re-sends the noisy value with fresh noise)."""

    epsilon: float = 1.0

    @property
    def name(self) -> str:
        return "double-release"

    def declare(self, horizon, n_arms, structure=None):
        return Declaration(LaplaceMechanism.from_epsilon(self.epsilon).event, unit="one reward")

    def agent(self, run: RunContext) -> Agent:
        return _DoubleAgent(self, run)


class _DoubleAgent(Agent):
    def __init__(self, policy, run):
        super().__init__(run)
        self.mech = LaplaceMechanism.from_epsilon(policy.epsilon)
        self.sums = np.zeros((self.reps, self.n_arms))

    def prepare(self, t0, t1):
        self.t0, self.z = t0, self.run.noise.laplace((t1 - t0, 2))

    def select(self, t):
        return np.full(self.reps, t % self.n_arms)

    def update(self, t, arms, rewards):
        z = self.z[:, t - self.t0]
        self.sums[self.rows, arms] += self.mech.release_batch(
            rewards, z[:, 0], self.run.ledgers, self.rows, round=t
        )
        if t % 10 == 3:
            self.mech.release_batch(rewards, z[:, 1], self.run.ledgers, self.rows, round=t, label="retry")


def test_planted_double_release_fails_the_run():
    with pytest.raises(LedgerCheckError, match=r"unit 3 of repetition 0 was charged 2 releases"):
        run_policy(DoubleRelease(), SPEC, 200, reps=2, progress=False)
    # the same code without the retry passes (the check is not vacuous in the other direction)
    ok = run_policy(load_example().PrivateEpsilonGreedy(), SPEC, 200, reps=2, progress=False)
    assert ok.ledger_check.ok


def test_planted_double_release_fails_on_the_command_line(capsys, monkeypatch):
    from bandits.algorithm import AlgorithmSpec, Configured
    from bandits.registry import _REGISTRY
    from dpaudit.cli.main import main

    spec = AlgorithmSpec(
        key="double",
        title="planted bug",
        paper=None,
        feedback=DoubleRelease.feedback,
        privacy="central pure DP",
        unit="one reward",
        default_env=SPEC,
        default_horizon=300,
        options=(),
        build=lambda o, e, t: Configured(DoubleRelease(), "double release"),
    )
    algorithms()
    monkeypatch.setitem(_REGISTRY, "double", spec)
    code = main(["run", "double", "-R", "2", "--audit-trials", "0"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1
    assert err.startswith("dpaudit: privacy check failed: ledger check FAILED: unit 3")
