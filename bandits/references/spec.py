"""Non-private references: UCB1 and Beta-Bernoulli Thompson sampling (privacy "none")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bandits.actions import Feedback
from bandits.algorithm import AlgorithmSpec, Configured, Option
from dpaudit.papers import AGRAWAL_GOYAL_2012, AUER_2002

if TYPE_CHECKING:
    from bandits.environments import Environment

DEFAULT_ENV = "bernoulli:0.75,0.625,0.5,0.375,0.25"


def _ucb1(options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
    from bandits.references.policies import UCB1

    pol = UCB1(alpha=options["alpha"])
    return Configured(pol, f"UCB1 (alpha = {pol.alpha:g})", config={"alpha": pol.alpha})


def _beta_ts(options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
    from bandits.references.policies import BetaTS

    return Configured(BetaTS(), "Beta-Bernoulli Thompson sampling")


SPECS = (
    AlgorithmSpec(
        key="ucb1",
        title=f"UCB1 ({AUER_2002.short}), non-private reference",
        paper=AUER_2002,
        feedback=Feedback.BANDIT,
        privacy="none",
        unit=None,
        default_env=DEFAULT_ENV,
        default_horizon=100_000,
        options=(
            Option(
                "alpha",
                float,
                2.0,
                "exploration constant of the bonus sqrt(alpha ln t / n)",
                low=0.0,
                low_open=True,
            ),
        ),
        build=_ucb1,
    ),
    AlgorithmSpec(
        key="beta-ts",
        title=f"Beta-Bernoulli Thompson sampling ({AGRAWAL_GOYAL_2012.short}), non-private reference",
        paper=AGRAWAL_GOYAL_2012,
        feedback=Feedback.BANDIT,
        privacy="none",
        unit=None,
        default_env=DEFAULT_ENV,
        default_horizon=100_000,
        options=(),
        build=_beta_ts,
    ),
)
