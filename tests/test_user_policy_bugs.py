"""A user-written policy is audited like a registered one: the private ε-greedy of
``docs/examples/private_epsilon_greedy.py`` passes, and three buggy variants of it — the kind of
bug a user writes — fail the run, each seen by the view that can see it:

* noise at half its scale (the mechanism built from 2ε while ε is declared): the *releases* view;
* arm 2's rewards released without noise: the *releases* view (the pair that changes arm 2's
  first observed reward reaches it);
* the greedy choice made on the raw rewards, the noisy ones released beside it: nothing released
  is wrong, so only the *outputs* view (the action sequences) can see it.

Each audit is the one ``run_policy`` runs (the generic black-box auditor on the outputs, the
releases audit beside it, Bonferroni over the two views), at 2000 runs per side.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from bandits.auditing.black_box import black_box_audit
from bandits.auditing.contract import AuditSettings
from bandits.auditing.views import audit_views
from bandits.environments import parse_env
from mechanisms import LaplaceMechanism

EXAMPLE = Path(__file__).parents[1] / "docs" / "examples" / "private_epsilon_greedy.py"
ENV = "bernoulli:0.75,0.625,0.5,0.375,0.25"
HORIZON = 12
SETTINGS = AuditSettings(trials=2000, seed=3)


def _example():
    spec = importlib.util.spec_from_file_location("private_epsilon_greedy_bugs", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


example = _example()


class _HalfNoiseAgent(example._Agent):
    def __init__(self, policy, run) -> None:
        super().__init__(policy, run)
        self.mechanism = LaplaceMechanism.from_epsilon(2.0 * policy.epsilon)  # the bug


class _Arm2NoiselessAgent(example._Agent):
    def update(self, t: int, arms: np.ndarray, rewards: np.ndarray) -> None:
        self.noise[arms == 2, t - self.t0] = 0.0  # the bug: arm 2's noise forgotten
        super().update(t, arms, rewards)


class _RawGreedyAgent(example._Agent):
    def __init__(self, policy, run) -> None:
        super().__init__(policy, run)
        self.raw = np.zeros((self.reps, self.n_arms))

    def select(self, t: int) -> np.ndarray:
        coin, pick = self.coins[:, t - self.t0].T
        greedy = (self.raw / np.maximum(self.counts, 1)).argmax(axis=1)  # the bug: raw means
        return np.where(coin < self.policy.explore, (pick * self.n_arms).astype(int), greedy)

    def update(self, t: int, arms: np.ndarray, rewards: np.ndarray) -> None:
        self.raw[self.rows, arms] += rewards
        super().update(t, arms, rewards)


def _variant(agent_class: type, label: str) -> type:
    @dataclass(frozen=True)
    class Buggy(example.PrivateEpsilonGreedy):
        @property
        def name(self) -> str:
            return f"{super().name} [{label}]"

        def agent(self, run):
            return agent_class(self, run)

    return Buggy


DOCUMENTED = {  # docs/planted-bugs.md, "A user-written policy": (outputs, releases) ε lower bounds
    "as written": (0.523, 0.774),
    "noise x1/2": (1.121, 1.682),
    "arm 2 noiseless": (0.299, 1.190),
    "greedy on raw rewards": (1.610, 0.774),
}


def _documented(label: str, audit) -> None:
    got = (audit.primary.empirical.epsilon_lower, audit.components["releases"].empirical.epsilon_lower)
    assert tuple(round(v, 3) for v in got) == DOCUMENTED[label], (label, got)


def _audit(policy):
    return audit_views(black_box_audit, policy, HORIZON, parse_env(ENV), SETTINGS)


def test_the_correct_user_policy_passes_and_is_seen_by_both_views() -> None:
    audit = _audit(example.PrivateEpsilonGreedy(epsilon=1.0))
    assert set(audit.components) >= {"releases"}
    assert audit.verdict == "consistent", audit.verdict
    releases = audit.components["releases"]
    assert releases.verdict.value == "consistent"
    assert 0.5 < releases.empirical.epsilon_lower <= 1.0  # the releases view proves most of ε
    _documented("as written", audit)


@pytest.mark.parametrize(
    ("agent_class", "label", "view"),
    [
        (_HalfNoiseAgent, "noise x1/2", "releases"),
        (_Arm2NoiselessAgent, "arm 2 noiseless", "releases"),
        (_RawGreedyAgent, "greedy on raw rewards", "outputs"),
    ],
    ids=["noise-half", "arm2-noiseless", "raw-greedy"],
)
def test_a_buggy_user_policy_fails_the_run_in_the_view_that_can_see_it(agent_class, label, view) -> None:
    audit = _audit(_variant(agent_class, label)(epsilon=1.0))
    parts = {"outputs": audit.primary, **audit.components}
    assert audit.verdict == "violated", (label, {k: r.verdict.value for k, r in parts.items()})
    assert parts[view].verdict.value == "violated", label
    assert parts[view].empirical.epsilon_lower > 1.0
    _documented(label, audit)
