"""Private bandit algorithms on one pipeline: policy → mechanisms → ledger → certified privacy → audit.

* :mod:`bandits.actions` — action structures (one arm, a set, a list) and feedback models;
* :mod:`bandits.environments` — stochastic environments with common random numbers;
* :mod:`bandits.policy` — the policy contract (:class:`Policy`, :class:`Agent`, :class:`RunContext`);
* :mod:`bandits.simulator` — regret simulation vectorised across repetitions;
* :mod:`bandits.run` — one run end to end (regret, certified privacy, ledger check, audit);
* :mod:`bandits.registry` — every algorithm the ``dpaudit run`` command knows;
* :mod:`bandits.lazy`, :mod:`bandits.full_info`, :mod:`bandits.baselines` — seed 002's lazy-epoch
  bandits (Anytime-Lazy-UCB, Lazy-DP-TS), RNM-FTNL and naive FTNL, and DP-SE / AdaP-UCB / AdaP-KLUCB.

>>> from bandits import GaussianTS, parse_env, simulate
>>> res = simulate(GaussianTS(), parse_env("bernoulli:0.75,0.25"), 1000, repetitions=3, progress=False)
>>> res.pseudo_regret.shape[0]
3
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_SOURCES = {
    "bandits.actions": ("ActionStructure", "Feedback", "Ranking", "SingleArm", "TopK"),
    "bandits.baselines": ("DPSE", "AdaP"),
    "bandits.environments": (
        "BernoulliEnv",
        "Environment",
        "RewardTableEnv",
        "TruncatedExponentialEnv",
        "parse_env",
        "truncexp_mean",
    ),
    "bandits.full_info": ("RNMFTNL", "NaiveFTNL"),
    "bandits.gaussian_ts": ("GaussianTS",),
    "bandits.lazy": ("LazyDPTS", "LazyUCB"),
    "bandits.neighbours": ("RewardReplacement", "RoundReplacement"),
    "bandits.policy": ("Agent", "Outcomes", "Policy", "RunContext"),
    "bandits.reference": ("UCB1", "BetaTS"),
    "bandits.simulator": ("SimulationResult", "log_checkpoints", "reward_table", "simulate", "simulate_many"),
    "bandits.streams": ("RepStreams", "rep_streams"),
}
"""Where each public name lives: importing :mod:`bandits` (or one of its submodules, such as the
registry) loads none of them; ``bandits.X`` imports X's module on first use (PEP 562)."""

_LAZY = {name: module for module, names in _SOURCES.items() for name in names}

if TYPE_CHECKING:  # the eager imports, for type checkers and IDEs
    from bandits.actions import ActionStructure, Feedback, Ranking, SingleArm, TopK
    from bandits.baselines import DPSE, AdaP
    from bandits.environments import (
        BernoulliEnv,
        Environment,
        RewardTableEnv,
        TruncatedExponentialEnv,
        parse_env,
        truncexp_mean,
    )
    from bandits.full_info import RNMFTNL, NaiveFTNL
    from bandits.gaussian_ts import GaussianTS
    from bandits.lazy import LazyDPTS, LazyUCB
    from bandits.neighbours import RewardReplacement, RoundReplacement
    from bandits.policy import Agent, Outcomes, Policy, RunContext
    from bandits.reference import UCB1, BetaTS
    from bandits.simulator import SimulationResult, log_checkpoints, reward_table, simulate, simulate_many
    from bandits.streams import RepStreams, rep_streams


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
