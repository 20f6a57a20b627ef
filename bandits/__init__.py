"""Bandit algorithms and a vectorised regret simulator (dpaudit's first client).

>>> from bandits import GaussianTS, parse_env, simulate
>>> res = simulate(GaussianTS(), parse_env("bernoulli:0.75,0.25"), 1000, repetitions=3, progress=False)
>>> res.pseudo_regret.shape[0]
3
"""

from bandits.environments import (
    BernoulliEnv,
    Environment,
    RewardTableEnv,
    TruncatedExponentialEnv,
    parse_env,
    truncexp_mean,
)
from bandits.policies import UCB1, Agent, BetaTS, GaussianTS, Policy
from bandits.simulator import (
    RepStreams,
    RewardReplacement,
    SimulationResult,
    log_checkpoints,
    rep_streams,
    reward_table,
    simulate,
)

__all__ = [
    "Environment",
    "BernoulliEnv",
    "TruncatedExponentialEnv",
    "RewardTableEnv",
    "parse_env",
    "truncexp_mean",
    "Policy",
    "Agent",
    "GaussianTS",
    "BetaTS",
    "UCB1",
    "RewardReplacement",
    "RepStreams",
    "SimulationResult",
    "simulate",
    "rep_streams",
    "reward_table",
    "log_checkpoints",
]
