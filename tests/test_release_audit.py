"""The releases view: transcripts of what mechanisms released, and the audit that tests them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from bandits.auditing.black_box import black_box_audit
from bandits.auditing.contract import AuditSettings
from bandits.auditing.releases import ReleaseStatistic, audit_releases, records_releases, release_pairs
from bandits.auditing.views import audit_views
from bandits.engine.simulator import simulate
from bandits.environments import parse_env
from bandits.lazy.policies import LazyDPTS, LazyUCB, LazyUCBAgent
from bandits.policy import RunContext
from dpaudit.transcripts import Transcripts, merge


def test_transcripts_keep_the_first_value_per_key_and_row() -> None:
    tr = Transcripts(3)
    tr.add([0, 2], "a", [1.0, 2.0])
    tr.add([2], "a", [5.0])  # not the first: ignored
    tr.add([1, 2], ["b", "c"], np.array([[1.0, 2.0], [3.0, 4.0]]))
    cols = tr.columns()
    assert cols["a"].tolist()[0] == 1.0 and np.isnan(cols["a"][1]) and cols["a"][2] == 2.0
    assert cols["b[1]"][1] == 2.0 and cols["c[0]"][2] == 3.0 and np.isnan(cols["c[0]"][1])
    with pytest.raises(ValueError, match="one per row"):
        tr.add([0, 1], ["x"], [1.0, 2.0])
    both = merge([cols, {"z": np.array([7.0])}], [3, 1])
    assert np.all(np.isnan(both["z"][:3])) and both["z"][3] == 7.0
    assert np.isnan(both["a"][3])


@pytest.mark.parametrize("policy", [LazyUCB(epsilon=1.0), LazyDPTS(epsilon=1.0)])
def test_keeping_transcripts_does_not_change_the_run(policy: object) -> None:
    env = parse_env("bernoulli:0.7,0.5,0.3")
    plain = simulate(policy, env, 300, 4, 5, record_actions=True, progress=False)
    kept = simulate(policy, env, 300, 4, 5, record_actions=True, progress=False, transcripts=True)
    assert plain.transcripts is None and kept.transcripts
    np.testing.assert_array_equal(plain.actions, kept.actions)
    # every arm's first epoch is released once per run, with Lap(1/eps) noise on one reward
    first = [kept.transcripts[f"epoch 0 mean of arm {j}"] for j in range(3)]
    assert all(np.all(np.isfinite(c)) for c in first)


@dataclass(frozen=True)
class _QuietLazyUCB(LazyUCB):
    """Lazy-UCB whose noise is ``factor`` times what it declares (a planted bug)."""

    factor: float = 0.1

    def agent(self, run: RunContext) -> LazyUCBAgent:
        agent = super().agent(run)
        agent.Z *= self.factor
        return agent


def test_release_pairs_reach_every_arm() -> None:
    names = [p.name for p in release_pairs(20, 4)]
    assert all(f"arm {j} at round {j} 1 vs 0, others 0" in names for j in range(4))
    moved = [p.name for p in release_pairs(20, 4, first_play={2: 7})]
    assert "arm 2 at round 7 1 vs 0, others 0" in moved
    assert any("(1, 0) vs (0, 1)" in n for n in names)


def test_the_releases_view_catches_a_noise_bug_the_outputs_miss() -> None:
    env = parse_env("bernoulli:0.5,0.5,0.5")
    settings = AuditSettings(trials=2000, seed=1)
    good = audit_releases(LazyUCB(epsilon=1.0), 4, env, settings)
    assert good.verdict.value == "consistent" and 0.3 < good.empirical.epsilon_lower <= 1.0
    bad = audit_views(black_box_audit, _QuietLazyUCB(epsilon=1.0), 4, env, settings)
    assert bad.verdict == "violated"
    assert bad.components["releases"].verdict.value == "violated"
    assert bad.components["releases"].empirical.epsilon_lower > 2.0


def test_a_statistic_is_a_frozen_function_of_the_transcript() -> None:
    cols = {"a": np.array([0.0, 1.0, np.nan]), "b": np.array([2.0, 2.0, 2.0])}
    lap = ReleaseStatistic("laplace", ("a", "b"), (0.0, 2.0), (1.0, 3.0), (1.0, 1.0))
    np.testing.assert_allclose(lap(cols, 3), [-1.0 - 1.0, 1.0 - 1.0, -1.0])
    val = ReleaseStatistic("value", ("a",), (0.0,), (1.0,), (1.0,))
    assert val(cols, 3)[2] < -1e299 and val({}, 3).shape == (3,)
    gau = ReleaseStatistic("gaussian", ("a",), (0.0,), (2.0,), (1.0,))
    np.testing.assert_allclose(gau(cols, 3), [-2.0, 0.0, 0.0])


def test_no_release_no_view() -> None:
    from bandits.thompson.policy import GaussianTS

    env = parse_env("bernoulli:0.5,0.5")
    assert not records_releases(GaussianTS(b=1, c=1.0), 10, env)
    assert records_releases(LazyUCB(epsilon=1.0), 10, env)
