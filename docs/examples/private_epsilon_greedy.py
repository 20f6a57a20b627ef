"""A user-written private policy: ε-greedy on Laplace-noised rewards, through the whole pipeline.

Every observed reward is released once by a Laplace mechanism (scale 1/ε, rewards in [0, 1]);
the arm means are averages of the noisy rewards, i.e. post-processing. One reward is in exactly
one release, so the run is ε-DP per reward (parallel composition over rewards). The policy
declares that; the mechanism records each release in the repetition's ledger; the pipeline
certifies the declaration, checks every ledger against it, and audits the action sequences.

Run it:  python docs/examples/private_epsilon_greedy.py
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bandits.policy import Agent, Policy, RunContext
from dpaudit.declaration import Declaration
from mechanisms import LaplaceMechanism


@dataclass(frozen=True)
class PrivateEpsilonGreedy(Policy):
    epsilon: float = 1.0  # privacy of each reward
    explore: float = 0.1  # probability of playing a uniformly random arm

    @property
    def name(self) -> str:
        return f"private-eps-greedy(eps={self.epsilon:g})"

    def declare(self, horizon, n_arms, structure=None) -> Declaration:
        return Declaration(
            LaplaceMechanism.from_epsilon(self.epsilon).event,
            unit="one reward",
            note="each reward enters exactly one Laplace release; the means are post-processing",
        )

    def agent(self, run: RunContext) -> Agent:
        return _Agent(self, run)


class _Agent(Agent):
    def __init__(self, policy: PrivateEpsilonGreedy, run: RunContext) -> None:
        super().__init__(run)
        self.policy, self.mechanism = policy, LaplaceMechanism.from_epsilon(policy.epsilon)
        self.sums, self.counts = np.zeros((self.reps, self.n_arms)), np.zeros((self.reps, self.n_arms))

    def prepare(self, t0: int, t1: int) -> None:  # a chunk's randomness, each repetition its own
        self.t0, self.coins = t0, self.run.random.random((t1 - t0, 2))
        self.noise = self.run.noise.laplace((t1 - t0,))

    def select(self, t: int) -> np.ndarray:
        coin, pick = self.coins[:, t - self.t0].T
        greedy = (self.sums / np.maximum(self.counts, 1)).argmax(axis=1)
        return np.where(coin < self.policy.explore, (pick * self.n_arms).astype(int), greedy)

    def update(self, t: int, arms: np.ndarray, rewards: np.ndarray) -> None:
        noisy = self.mechanism.release_batch(
            rewards, self.noise[:, t - self.t0], self.run.ledgers, self.rows, round=t, label="noisy reward"
        )
        self.sums[self.rows, arms] += noisy
        self.counts[self.rows, arms] += 1


if __name__ == "__main__":
    from bandits.run import run_policy

    report = run_policy(
        PrivateEpsilonGreedy(epsilon=1.0),
        "bernoulli:0.75,0.625,0.5,0.375,0.25",
        20_000,
        reps=10,
        audit_trials=2000,
        audit_horizon=200,
    )
    print(str(report))
