"""Environments: what the learner faces, with common random numbers, and the ``--env`` grammars.

* :mod:`bandits.environments.stochastic` — K-armed stochastic environments (Bernoulli, truncated
  exponential, a fixed reward table) and :func:`parse_env`;
* :mod:`bandits.environments.grammar` — the ``--env`` grammar of combinatorial problems;
* :mod:`bandits.environments.semibandit` — outcome vectors of combinatorial semi-bandits;
* :mod:`bandits.environments.movielens` — MovieLens-1M and a synthetic stand-in;
* :mod:`bandits.environments.cascade` — cascading-bandit instances and their grammar.

The public names of :mod:`bandits.environments.stochastic` are importable from here.
"""

from bandits.environments.stochastic import (
    BernoulliEnv,
    Environment,
    RewardTableEnv,
    StochasticEnv,
    TruncatedExponentialEnv,
    parse_env,
    truncexp_mean,
)

__all__ = [
    "Environment",
    "StochasticEnv",
    "BernoulliEnv",
    "TruncatedExponentialEnv",
    "RewardTableEnv",
    "parse_env",
    "truncexp_mean",
]
