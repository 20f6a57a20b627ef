"""Private bandit algorithms on one pipeline: policy → mechanisms → ledger → certified privacy → audit.

* :mod:`bandits.actions` — action structures (one arm, a set, a list) and feedback models;
* :mod:`bandits.environments` — stochastic environments with common random numbers;
* :mod:`bandits.policy` — the policy contract (:class:`Policy`, :class:`Agent`, :class:`RunContext`);
* :mod:`bandits.engine.simulator` — regret simulation vectorised across repetitions;
* :mod:`bandits.run` — one run end to end (regret, certified privacy, ledger check, audit);
* :mod:`bandits.registry` — every algorithm the ``dpaudit run`` command knows;
* one subpackage per algorithm family: :mod:`bandits.thompson`, :mod:`bandits.lazy`,
  :mod:`bandits.full_info`, :mod:`bandits.matroid`, :mod:`bandits.semibandits`,
  :mod:`bandits.cascading`, :mod:`bandits.references`.

>>> from bandits import GaussianTS, parse_env, simulate
>>> res = simulate(GaussianTS(), parse_env("bernoulli:0.75,0.25"), 1000, repetitions=3, progress=False)
>>> res.pseudo_regret.shape[0]
3
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpaudit.lazy import exports

_SOURCES = {
    "bandits.actions": ("ActionStructure", "Feedback", "Ranking", "SingleArm", "TopK"),
    "bandits.lazy.baselines": ("DPSE", "AdaP"),
    "bandits.environments": (
        "BernoulliEnv",
        "Environment",
        "RewardTableEnv",
        "TruncatedExponentialEnv",
        "parse_env",
        "truncexp_mean",
    ),
    "bandits.full_info.policies": ("RNMFTNL", "NaiveFTNL"),
    "bandits.thompson.policy": ("GaussianTS",),
    "bandits.lazy.policies": ("LazyDPTS", "LazyUCB"),
    "bandits.dp_ts_ucb.policy": ("DPTSUCB",),
    "bandits.engine.replacement": ("RewardReplacement", "RoundReplacement"),
    "bandits.policy": ("Agent", "Outcomes", "Policy", "RunContext"),
    "bandits.references.policies": ("UCB1", "BetaTS"),
    "bandits.engine.results": ("SimulationResult", "log_checkpoints"),
    "bandits.engine.simulator": ("simulate", "simulate_many"),
    "bandits.engine.tables": ("reward_table",),
    "bandits.engine.streams": ("RepStreams", "rep_streams"),
}
"""Where each public name lives: importing :mod:`bandits` (or one of its submodules, such as the
registry) loads none of them; ``bandits.X`` imports X's module on first use (PEP 562)."""

_LAZY = {name: module for module, names in _SOURCES.items() for name in names}

if TYPE_CHECKING:  # the eager imports, for type checkers and IDEs
    from bandits.actions import ActionStructure, Feedback, Ranking, SingleArm, TopK
    from bandits.dp_ts_ucb.policy import DPTSUCB
    from bandits.engine.replacement import RewardReplacement, RoundReplacement
    from bandits.engine.results import SimulationResult, log_checkpoints
    from bandits.engine.simulator import simulate, simulate_many
    from bandits.engine.streams import RepStreams, rep_streams
    from bandits.engine.tables import reward_table
    from bandits.environments import (
        BernoulliEnv,
        Environment,
        RewardTableEnv,
        TruncatedExponentialEnv,
        parse_env,
        truncexp_mean,
    )
    from bandits.full_info.policies import RNMFTNL, NaiveFTNL
    from bandits.lazy.baselines import DPSE, AdaP
    from bandits.lazy.policies import LazyDPTS, LazyUCB
    from bandits.policy import Agent, Outcomes, Policy, RunContext
    from bandits.references.policies import UCB1, BetaTS
    from bandits.thompson.policy import GaussianTS


__getattr__, __dir__ = exports(__name__, {name: mod.removeprefix("bandits.") for name, mod in _LAZY.items()})


__all__ = [
    "ActionStructure",
    "Feedback",
    "SingleArm",
    "TopK",
    "Ranking",
    "Environment",
    "BernoulliEnv",
    "TruncatedExponentialEnv",
    "RewardTableEnv",
    "parse_env",
    "truncexp_mean",
    "Policy",
    "Agent",
    "Outcomes",
    "RunContext",
    "GaussianTS",
    "BetaTS",
    "UCB1",
    "LazyUCB",
    "LazyDPTS",
    "DPTSUCB",
    "RNMFTNL",
    "NaiveFTNL",
    "DPSE",
    "AdaP",
    "RewardReplacement",
    "RoundReplacement",
    "RepStreams",
    "SimulationResult",
    "simulate",
    "simulate_many",
    "rep_streams",
    "reward_table",
    "log_checkpoints",
]
