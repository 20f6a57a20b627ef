"""The releases view: transcripts of what mechanisms released, and the audit that tests them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from bandits.auditing.black_box import black_box_audit
from bandits.auditing.contract import AuditSettings
from bandits.auditing.leak_floor import NoiseScaled
from bandits.auditing.release_pilot import fit_statistics, played_key
from bandits.auditing.releases import ReleaseStatistic, audit_releases, records_releases, release_pairs
from bandits.auditing.views import audit_views
from bandits.engine.simulator import simulate
from bandits.environments import parse_env
from bandits.environments.grammar import parse_combinatorial_env
from bandits.full_info.audit import release_design as rnm_release_design
from bandits.full_info.policies import RNMFTNL, FTNLAgent
from bandits.lazy.policies import LazyDPTS, LazyUCB, LazyUCBAgent
from bandits.policy import RunContext
from bandits.semibandits.policies import CUCBDP
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


@dataclass(frozen=True)
class _OneForgottenDraw(RNMFTNL):
    """RNM-FTNL that forgets arm 1's noise in epoch 2 only (a bug the default pairs cannot reach)."""

    def agent(self, run: RunContext) -> FTNLAgent:
        agent = super().agent(run)
        agent.Z[:, 2, 1] = 0.0
        return agent


def test_rnm_ftnl_pairs_reach_a_draw_forgotten_in_one_epoch() -> None:
    pairs, stats = rnm_release_design(15, 3)
    assert len(pairs) == 4 * 3 and set(stats) == {p.name for p in pairs}  # 4 epochs start before 15
    env = parse_env("bernoulli:0.6,0.5,0.5")
    settings = AuditSettings(trials=2000, seed=2)
    good = RNMFTNL(epsilon=1.0)
    ok = audit_releases(good, 15, env, settings, design=good.release_audit(15, 3))
    assert ok.verdict.value == "consistent" and 0.5 < ok.empirical.epsilon_lower <= ok.certified.epsilon
    bug = _OneForgottenDraw(epsilon=1.0)
    alone = audit_releases(bug, 15, env, settings)  # the default family never changes epoch 2 for arm 1
    assert alone.verdict.value != "violated"
    caught = audit_releases(bug, 15, env, settings, design=bug.release_audit(15, 3))
    assert caught.verdict.value == "violated"
    assert caught.details["chosen"]["pair"]["name"] == "arm 1 against the rest at round 3 (epoch 2)"


def test_a_gated_statistic_counts_each_release_only_where_its_arm_was_played() -> None:
    gate = played_key(0, 2)
    cols = {"a": np.array([1.0, 1.0, 1.0]), gate: np.array([1.0, 0.0, 1.0])}
    lap = ReleaseStatistic("laplace", ("a",), (1.0,), (0.0,), (1.0,), (gate,))
    np.testing.assert_allclose(lap(cols, 3), [-1.0, 0.0, -1.0])
    assert "played its arm" in lap.describe()
    assert lap({"a": cols["a"]}, 3).tolist() == [0.0, 0.0, 0.0]  # no actions kept: nothing counts


def test_the_fit_gates_releases_reached_only_where_the_changed_round_played_their_arm() -> None:
    rng = np.random.default_rng(0)
    n = 400
    played = rng.random(n) < 0.3
    noise = rng.laplace(0.0, 1.0, n)
    x = {"node[2]": 1.0 * played + noise, played_key(0, 2): played.astype(float),
         played_key(0, 1): (~played).astype(float)}  # fmt: skip
    y = {"node[2]": noise, **{k: v for k, v in x.items() if k != "node[2]"}}
    stats, _ = fit_statistics(x, y)
    gated = [s for s in stats if any(s.gates)]
    assert {s.kind for s in gated} == {"laplace", "gaussian"}
    assert gated[0].gates == (played_key(0, 2),)
    assert gated[0].null[0] == pytest.approx(1.0, abs=0.2) and gated[0].alt[0] == pytest.approx(0.0, abs=0.2)
    ungated = [s for s in stats if s.kind == "laplace" and not s.gates]
    assert 0.0 < ungated[0].null[0] < 0.5  # the median over every run, as without gates


def test_gating_by_the_played_set_catches_a_tree_noise_bug() -> None:
    """CUCB-DP's tree nodes carry the changed round only on the base arms it played, a random set;
    the released actions say which, and the gated statistic sees the noise at a tenth."""
    env = parse_combinatorial_env("topk:k=2,means=0.5x4,reward=min")
    settings = AuditSettings(trials=2000, seed=0)
    ok = audit_releases(CUCBDP(epsilon=1.0), 8, env, settings)
    assert ok.verdict.value != "violated"
    bad = audit_releases(NoiseScaled(CUCBDP(epsilon=1.0), 0.1), 8, env, settings)
    assert bad.verdict.value == "violated", bad.details["chosen"]
    assert "played its arm" in bad.details["chosen"]["statistic"]
