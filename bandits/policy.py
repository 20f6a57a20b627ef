"""The policy contract: configuration, agent, and what a private algorithm declares.

A :class:`Policy` is a small immutable configuration. It states

* ``feedback`` — what it observes (:class:`~bandits.actions.Feedback`: one reward, a reward per
  chosen arm, a click position, or the full reward vector);
* :meth:`Policy.declare` — for a configuration (horizon, arms, the problem's action structure),
  the :class:`~dpaudit.declaration.Declaration` of its worst-case releases per unit of privacy
  (None for a non-private reference policy). That is what the accountant certifies;
* :meth:`Policy.agent` — a fresh :class:`Agent` for one vectorised run.

An :class:`Agent` holds the state of R independent repetitions as arrays with a leading
dimension R and is handed everything it needs in a :class:`RunContext`: the problem's size and
action structure, ready per-repetition generators for its own randomness (``run.random``) and
for its mechanisms' noise (``run.noise``), and one ledger per repetition (``run.ledgers``) where
its mechanisms record what they release. It implements two methods:

* ``select(t) -> actions`` — shape (R,) for one arm, (R, K) for a set or a list;
* ``update(t, actions, feedback)`` — the feedback of :func:`~bandits.actions.observe`.

``prepare(t0, t1)`` may pre-draw a chunk's randomness; ``run_chunk`` may be overridden by a
faster engine (Gaussian TS does) as long as the actions are identical; ``finish()`` flushes
what the agent recorded. Rounds are 0-based.

When several configurations of one algorithm are simulated together
(:func:`bandits.engine.simulator.simulate_many`, the tuner), a policy class may offer a
:class:`JointPlayer` (``Policy.joint_player``): it plays all their agents chunk by chunk,
sharing work between them (one step loop, one noise draw), with exactly the actions each agent
would play alone. The simulator knows no algorithm; it only calls this hook.

A complete private policy in about twenty lines — ε-greedy on Laplace-noised means, one noisy
release per observed reward — is ``docs/examples/private_epsilon_greedy.py``; it runs through
:func:`bandits.run.run_policy` with its certified ε, the ledger check and an audit.

Example:
    >>> import numpy as np
    >>> from bandits.references.policies import UCB1
    >>> from bandits.environments import BernoulliEnv
    >>> seeds = np.random.SeedSequence(0).spawn(2)
    >>> run = RunContext.create(BernoulliEnv((0.9, 0.1)), horizon=10, seeds=seeds)
    >>> agent = UCB1().agent(run)
    >>> agent.select(0).tolist(), agent.rows.tolist()
    ([0, 0], [0, 1])
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from bandits.actions import ActionStructure, Feedback, SingleArm, observe
from dpaudit.declaration import Declaration
from dpaudit.ledger import RunLedgers
from dpaudit.validation import check_integer
from mechanisms.randomness import RepRandom

if TYPE_CHECKING:  # pragma: no cover
    from bandits.environments import Environment

__all__ = ["RunContext", "Agent", "Policy", "Outcomes", "JointPlayer", "JointContext"]


@dataclass(frozen=True, eq=False)
class RunContext:
    """What an agent is given for one vectorised run of R repetitions.

    Attributes:
        n_arms: number of arms (items).
        horizon: number of rounds T.
        structure: the problem's action structure (one arm, a set, a list).
        random: one generator per repetition for the policy's own randomness.
        noise: one generator per repetition for its mechanisms' privacy noise (independent of
            ``random``; use ``noise.child(k)`` for the k-th mechanism).
        ledgers: one ledger per repetition; mechanisms record their releases here.
    """

    n_arms: int
    horizon: int
    structure: ActionStructure
    random: RepRandom
    noise: RepRandom
    ledgers: RunLedgers

    @property
    def reps(self) -> int:
        return len(self.random)

    @classmethod
    def create(
        cls,
        env: Environment,
        horizon: int,
        seeds: Sequence[np.random.SeedSequence],
        noise_seeds: Sequence[np.random.SeedSequence] | None = None,
    ) -> RunContext:
        """A context for ``env`` with the given per-repetition seeds (noise: their child 1)."""
        random = RepRandom(seeds)
        noise = RepRandom(noise_seeds) if noise_seeds is not None else random.child(1)
        return cls(
            env.n_arms,
            check_integer("horizon", horizon),
            env.structure,
            random,
            noise,
            RunLedgers(len(random)),
        )


class Outcomes:
    """One chunk of outcome vectors for R repetitions, (R, C, N), and the feedback they give.

    >>> o = Outcomes(np.array([[[0.0, 1.0]]]), Feedback.BANDIT)
    >>> o.observe(0, np.array([1])).tolist()
    [1.0]
    """

    stream: Any = None
    """A :class:`~bandits.engine.bernoulli_stream.BernoulliStream` an agent may read the chunk's
    outcomes from instead of :attr:`table` (then it sets :attr:`observed`); None for most chunks."""
    observed: np.ndarray | None = None
    """(R, C) outcomes of the played arms, set by an agent that read :attr:`stream`."""

    def __init__(self, table: np.ndarray, feedback: Feedback) -> None:
        self._table = table
        self.feedback = Feedback(feedback)

    @property
    def table(self) -> np.ndarray:
        """The (R, C, N) outcome table."""
        return self._table

    def observe(self, k: int, actions: np.ndarray) -> np.ndarray:
        """The feedback of the chunk's k-th round for ``actions``."""
        return observe(self.feedback, self.table[:, k], actions)


class Agent(abc.ABC):
    """Mutable per-run state of a policy for R repetitions (module docstring).

    Attributes set here for subclasses: ``run`` (the :class:`RunContext`), ``n_arms``,
    ``horizon``, ``reps`` (R) and ``rows`` (``arange(R)``, for fancy indexing).
    """

    reads_outcome_stream: bool = False
    """Whether :meth:`run_chunk` may read :attr:`Outcomes.stream` (then the simulator offers one)."""

    stream_start: int = 0
    """With :attr:`reads_outcome_stream`: the first round from which chunks read the stream (a
    chunk starting earlier reads a drawn table); the simulator sizes the later chunks for an agent
    that holds no (R, C, N) table (:class:`bandits.engine.memory.ChunkPlan`)."""

    def __init__(self, run: RunContext) -> None:
        if not isinstance(run, RunContext):
            raise ValueError(f"run must be a RunContext, got {type(run).__name__}")
        self.run = run
        self.n_arms = run.n_arms
        self.horizon = run.horizon
        self.reps = run.reps
        self.rows = np.arange(self.reps)

    def prepare(self, t0: int, t1: int) -> None:
        """Pre-draw the randomness of rounds ``t0 .. t1-1`` (default: none)."""
        return None

    @abc.abstractmethod
    def select(self, t: int) -> np.ndarray:
        """The actions of round ``t``: shape (R,) (one arm) or (R, K) (a set or a list)."""

    @abc.abstractmethod
    def update(self, t: int, actions: np.ndarray, feedback: np.ndarray) -> None:
        """Observe the ``feedback`` of the ``actions`` played in round ``t``."""

    def finish(self) -> None:
        """Called once after the last round: write what is still buffered (ledgers)."""
        self.run.ledgers.flush()

    def run_chunk(self, t0: int, t1: int, outcomes: Outcomes) -> np.ndarray:
        """Play rounds ``t0 .. t1-1``; return the actions, shape (R, t1−t0, *action shape)."""
        self.prepare(t0, t1)
        shape = self.run.structure.shape
        actions = np.empty((self.reps, t1 - t0) + shape, dtype=np.intp)
        for k in range(t1 - t0):
            a = self.select(t0 + k)
            self.update(t0 + k, a, outcomes.observe(k, a))
            actions[:, k] = a
        return actions


@dataclass(frozen=True)
class JointContext:
    """What a :class:`JointPlayer` is given besides its agents (all of one run's repetitions).

    Attributes:
        reps: repetitions R.
        n_arms: arms N.
        chunk: rounds per chunk the simulator will ask for.
        memory: the simulator's memory budget in bytes (for buffers shared by the agents).
        policy_random: a fresh generator per repetition of the policy stream each agent's
            ``run.random`` was built from (so shared draws are the ones each agent would make).
    """

    reps: int
    n_arms: int
    chunk: int
    memory: int
    policy_random: Callable[[], RepRandom]


class JointPlayer(abc.ABC):
    """Plays several agents of one policy class together, chunk by chunk (module docstring).

    Each agent must play exactly the actions it would play alone (its :meth:`Agent.run_chunk`):
    the joint player only shares work. The simulator calls :meth:`play` for every chunk, in
    order, then each agent's :meth:`Agent.finish`.
    """

    def __init__(self, agents: Sequence[Agent], context: JointContext) -> None:
        self.agents = list(agents)
        self.context = context

    @abc.abstractmethod
    def play(self, t0: int, t1: int, table: np.ndarray) -> list[np.ndarray]:
        """Rounds ``t0 .. t1-1`` of every agent on the shared outcome ``table`` (R, t1−t0, N);
        the actions of each agent, in the order of :attr:`agents`."""


@dataclass(frozen=True)
class Policy(abc.ABC):
    """Base class of policy configurations (immutable, picklable); see the module docstring."""

    feedback: ClassVar[Feedback] = Feedback.BANDIT
    structures: ClassVar[tuple[type[ActionStructure], ...]] = (SingleArm,)
    joint_player: ClassVar[type[JointPlayer] | None] = None
    """A player for several agents of this class at once (None: each agent plays alone)."""
    release_trials: ClassVar[int] = 1
    """The releases view's runs per side as a multiple of the audit's trials
    (:func:`bandits.auditing.views.audit_views`): 2 where a unit's change moves several
    coordinates of one release (a local report), 4 where the certificate composes it over many
    releases (the nodes of a tree over the rounds) — a leak spread that way is seen thinly."""

    privacy_stream: ClassVar[str] = "noise"
    """The stream of :class:`RunContext` whose draws make the policy private: ``"noise"`` (its
    mechanisms' noise) or ``"random"`` (a posterior sampler's own draws); a measuring audit
    floor scales it (:mod:`bandits.auditing.leak_floor`)."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """A short label for tables and progress bars."""

    @abc.abstractmethod
    def agent(self, run: RunContext) -> Agent:
        """A fresh agent for ``run.reps`` repetitions."""

    def declare(
        self, horizon: int, n_arms: int, structure: ActionStructure | None = None
    ) -> Declaration | None:
        """The worst-case releases per unit of privacy for this configuration (None: not
        private). Private policies override it."""
        return None

    def release_audit(
        self, horizon: int, n_arms: int
    ) -> tuple[Sequence[Any], Mapping[str, Sequence[Any]]] | None:
        """The policy's own additions to the releases audit
        (:func:`bandits.auditing.releases.audit_releases`, ``design``), pre-registered before any
        run: neighbouring pairs (``PairDesign``) added to the default family, and candidate
        statistics (``ReleaseStatistic``) by pair name that the pilot scores beside the ones it
        fits. None (the default): the default family only."""
        return None

    def linear_regret(self, horizon: int, env: Any) -> str | None:
        """Why this configuration's regret is linear in ``horizon`` on ``env`` by construction
        (constants that keep every index at its maximum, a first phase longer than the run, ...),
        or None; the run report states it beside the regret."""
        return None

    def check_structure(self, structure: ActionStructure) -> None:
        """Raise ``ValueError`` if this policy cannot play problems with ``structure``."""
        if not isinstance(structure, self.structures):
            allowed = ", ".join(s.__name__ for s in self.structures)
            raise ValueError(f"{self.name} plays {allowed} problems, not {type(structure).__name__}")
