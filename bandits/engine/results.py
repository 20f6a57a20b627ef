"""What a simulation returns: regret curves at log-spaced checkpoints, pull counts, the actions
(optionally) and every repetition's ledger, and the tally that builds them chunk by chunk.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from bandits.actions import SingleArm
from bandits.engine.compiled import running_sums, single_arm_tally
from bandits.environments import Environment
from dpaudit.ledger import Ledger
from dpaudit.numerics import unique
from dpaudit.validation import check_integer

if TYPE_CHECKING:
    from bandits.engine.replacement import Replacement

__all__ = [
    "log_checkpoints",
    "SimulationResult",
    "RegretTally",
]


def log_checkpoints(horizon: int, num: int = 50) -> np.ndarray:
    """About ``num`` log-spaced round counts in [1, T], always including T.

    >>> log_checkpoints(1000, 4).tolist()
    [1, 10, 100, 1000]
    """
    horizon = check_integer("horizon", horizon)
    num = check_integer("checkpoints", num)
    pts = unique(np.round(np.geomspace(1, horizon, num)).astype(np.int64))
    return unique(np.append(pts, horizon))


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """Regret curves of one (policy, environment) pair over R repetitions.

    Arrays: ``checkpoints`` (C,) round counts; ``pseudo_regret`` and ``empirical_regret``
    (R, C): Σ_{s<t}(opt − E[reward of a_s]) and opt·t − Σ_{s<t} r_s; ``pulls`` (R, N) how often
    each arm was played (in a set or list, each member counts); ``actions`` (R, T, *action
    shape) or None; ``ledgers``: each repetition's recorded releases; ``transcripts`` (when
    asked for): per release key, each repetition's first released value (R,), NaN where it made
    no such release (:mod:`dpaudit.transcripts`).
    """

    policy: str
    env: str
    horizon: int
    repetitions: int
    seed_entropy: int | None
    means: np.ndarray = field(repr=False)
    checkpoints: np.ndarray = field(repr=False)
    pseudo_regret: np.ndarray = field(repr=False)
    empirical_regret: np.ndarray = field(repr=False)
    pulls: np.ndarray = field(repr=False)
    actions: np.ndarray | None = field(default=None, repr=False)
    replacement: Replacement | None = None
    elapsed: float = 0.0
    ledgers: tuple[Ledger, ...] = field(default=(), repr=False)
    transcripts: dict[str, np.ndarray] | None = field(default=None, repr=False)

    def _curves(self, kind: str) -> np.ndarray:
        if kind == "pseudo":
            return self.pseudo_regret
        if kind == "empirical":
            return self.empirical_regret
        raise ValueError(f"kind must be 'pseudo' or 'empirical', got {kind!r}")

    def mean(self, kind: str = "pseudo") -> np.ndarray:
        """Mean regret over repetitions at each checkpoint."""
        return self._curves(kind).mean(axis=0)

    def stderr(self, kind: str = "pseudo") -> np.ndarray:
        """Standard error of the mean (0 for a single repetition)."""
        c = self._curves(kind)
        if c.shape[0] < 2:
            return np.zeros(c.shape[1])
        return c.std(axis=0, ddof=1) / math.sqrt(c.shape[0])

    def band(self, kind: str = "pseudo", level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """A ``level`` confidence band for the mean regret: mean ∓ t·stderr with the Student t
        quantile on R − 1 degrees of freedom (4.30 at R = 3, 1.98 at R = 100; the normal 1.96
        would be far too narrow for a few repetitions). One repetition: the band is the curve.

        >>> from bandits.environments import BernoulliEnv
        >>> from bandits.engine.simulator import simulate
        >>> from bandits.references.policies import UCB1
        >>> r = simulate(UCB1(), BernoulliEnv((0.5, 0.4)), 100, repetitions=3, progress=False)
        >>> lo, hi = r.band()
        >>> bool(np.allclose(hi - r.mean(), 4.302653 * r.stderr(), rtol=1e-6))
        True
        """
        from scipy import stats

        m, s = self.mean(kind), self.stderr(kind)
        if self.repetitions < 2:
            return m, m
        t = float(stats.t.ppf(0.5 + level / 2.0, self.repetitions - 1))
        return m - t * s, m + t * s

    def final(self, kind: str = "pseudo") -> float:
        """Mean regret at the horizon."""
        return float(self.mean(kind)[-1])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (arrays as nested lists; ledgers are not included).

        >>> import json
        >>> from bandits.environments import BernoulliEnv
        >>> from bandits.engine.simulator import simulate
        >>> from bandits.references.policies import UCB1
        >>> r = simulate(UCB1(), BernoulliEnv((0.5, 0.4)), 10, repetitions=2, progress=False)
        >>> sorted(json.loads(json.dumps(r.to_dict())))[:4]
        ['actions', 'checkpoints', 'elapsed', 'empirical_regret']
        """
        return {
            "policy": self.policy,
            "env": self.env,
            "horizon": self.horizon,
            "repetitions": self.repetitions,
            "seed_entropy": self.seed_entropy,
            "means": self.means.tolist(),
            "checkpoints": self.checkpoints.tolist(),
            "pseudo_regret": self.pseudo_regret.tolist(),
            "empirical_regret": self.empirical_regret.tolist(),
            "pseudo_regret_mean": self.mean("pseudo").tolist(),
            "pseudo_regret_stderr": self.stderr("pseudo").tolist(),
            "empirical_regret_mean": self.mean("empirical").tolist(),
            "empirical_regret_stderr": self.stderr("empirical").tolist(),
            "pulls": self.pulls.tolist(),
            "actions": None if self.actions is None else self.actions.tolist(),
            "replacement": None if self.replacement is None else asdict(self.replacement),
            "elapsed": self.elapsed,
        }


def _action_dtype(n_arms: int) -> type:
    return np.int8 if n_arms <= 127 else (np.int16 if n_arms <= 32767 else np.int32)


class RegretTally:
    """Regret curves, pulls and (optionally) actions of R rows, fed chunk by chunk.

    A row is a repetition, or (a stacked experiment, ``copies`` = P) one of P configurations ×
    R repetitions that share each repetition's outcome table."""

    def __init__(
        self, env: Environment, horizon: int, R: int, checkpoints: np.ndarray, record_actions: bool
    ) -> None:
        N = env.n_arms
        self.R, self.N, self.ck = R, N, checkpoints
        self.structure, self.means = env.structure, env.means
        self.single = isinstance(self.structure, SingleArm)
        self.gaps, self.opt = env.gaps, env.optimum
        C = checkpoints.size
        self.pseudo = np.empty((R, C))
        self.emp = np.empty((R, C))
        self.pulls = np.zeros((R, N), dtype=np.int64)
        shape = (R, horizon) + self.structure.shape
        self.acts: np.ndarray | None = np.empty(shape, dtype=_action_dtype(N)) if record_actions else None
        self.cum_gap = np.zeros(R)
        self.cum_rew = np.zeros(R)
        self.ci = 0

    def _instant(
        self, a: np.ndarray, table: np.ndarray | None, copies: int, observed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(regret of each action's expected reward, realised reward), shape (rows, C) each."""
        if observed is not None:
            return self.gaps[a], observed
        assert table is not None
        if self.single and copies == 1:
            return self.gaps[a], np.take_along_axis(table, a[:, :, None], axis=2)[:, :, 0]
        gap = self.opt - self.structure.expected_reward(self.means, a)
        if copies == 1:
            return gap, self.structure.realised_reward(table, a)
        stacked = a.reshape((copies, table.shape[0]) + a.shape[1:])
        return gap, self.structure.realised_reward(table[None], stacked).reshape(a.shape[0], -1)

    def add(
        self, t0: int, t1: int, a: np.ndarray, table: np.ndarray | None, copies: int = 1,
        observed: np.ndarray | None = None,
    ) -> None:
        """Record the actions ``a`` (rows, t1−t0, ...) played against ``table`` (R, t1−t0, N),
        where rows = ``copies`` × R (row p·R + r reads repetition r's outcomes), or, for single
        arms, with their outcomes ``observed`` (R, t1−t0) already read (then ``table`` may be None)."""
        R, N, checkpoints = self.R, self.N, self.ck
        if table is None and (observed is None or not self.single or copies != 1):
            raise ValueError("table is needed unless single-arm outcomes are observed")
        if self.single and copies == 1 and a.ndim == 2 and observed is None and table is not None:
            # the played arms' outcomes, read once for whichever path tallies them
            observed = np.take_along_axis(table, a[:, :, None], axis=2)[:, :, 0]
        if not (checkpoints.size and observed is not None and self._compiled_single(t0, t1, a, observed)):
            if checkpoints.size:
                self._regret(t0, t1, a, table, copies, observed)
            flat = (a.reshape(R, -1) + (np.arange(R) * N)[:, None]).ravel()
            self.pulls += np.bincount(flat, minlength=R * N).reshape(R, N)
        if self.acts is not None:
            self.acts[:, t0:t1] = a

    def _compiled_single(self, t0: int, t1: int, a: np.ndarray, observed: np.ndarray) -> bool:
        """Single arms with their outcomes ``observed``: the regret sums and pulls in one compiled
        pass (:func:`bandits.engine.compiled.single_arm_tally`, the same numbers), if it runs."""
        ci, cj = self._checkpoints_in(t1)
        loc = self.ck[ci:cj] - t0 - 1
        g_at, w_at = np.empty((self.R, cj - ci)), np.empty((self.R, cj - ci))
        sums = (self.cum_gap, self.cum_rew, loc, g_at, w_at, self.pulls)
        if not single_arm_tally(a, self.gaps, observed, *sums):
            return False
        self._fill(ci, cj, g_at, w_at)
        return True

    def _checkpoints_in(self, t1: int) -> tuple[int, int]:
        """The checkpoints ci .. cj−1 that fall in the chunk ending at round t1."""
        ci = cj = self.ci
        while cj < self.ck.size and self.ck[cj] <= t1:
            cj += 1
        return ci, cj

    def _fill(self, ci: int, cj: int, g_at: np.ndarray, w_at: np.ndarray) -> None:
        """Checkpoints ci .. cj−1 from the running sums at them."""
        if cj > ci:
            self.pseudo[:, ci:cj] = g_at
            self.emp[:, ci:cj] = (self.opt * self.ck[ci:cj])[None, :] - w_at
            self.ci = cj

    def _regret(
        self, t0: int, t1: int, a: np.ndarray, table: np.ndarray | None, copies: int,
        observed: np.ndarray | None,
    ) -> None:
        """Continue the regret's running sums over rounds t0..t1 and fill the checkpoints in it."""
        gap, obs = self._instant(a, table, copies, observed)
        # running sums continued from the carry, left to right: the same floats whatever the
        # chunk boundaries (adding the carry after summing the chunk would not be)
        g = running_sums(self.cum_gap, np.asarray(gap, dtype=float))
        w = running_sums(self.cum_rew, np.asarray(obs, dtype=float))
        ci, cj = self._checkpoints_in(t1)
        loc = self.ck[ci:cj] - t0 - 1
        self._fill(ci, cj, g[:, loc], w[:, loc])
        self.cum_gap, self.cum_rew = g[:, -1].copy(), w[:, -1].copy()

    def result(self) -> dict[str, Any]:
        return {"pseudo": self.pseudo, "emp": self.emp, "pulls": self.pulls, "actions": self.acts}
