"""Differentially private matroid bandits — DPUCB-MAT, DPTS-MAT — and the baselines OMM and
CTS-Gaussian (Chandak, Hu & Hegde, *Differentially Private Algorithms for Efficient Online Matroid
Optimization*, CoLLAs 2023).

Each round the learner plays a basis A^t of a matroid (greedy on per-arm indices, see
:mod:`bandits.structures.matroids`; ties by lower index unless ``ties="random"``) and observes the reward
of every arm in it (semi-bandit feedback); the reward is linear (``LinearSum``).

**DPUCB-MAT** (Algorithm 2; ε₀ = ε/K). Per arm, lazy doubling epochs of fresh observations,
each released once as ``Σ epoch + Lap(1/ε₀)``
(:class:`mechanisms.continual.epoch_sums_batch.BatchLazyEpochs`):
w̃_e, T_e ∈ {1, 2, 4, …}. The index, eq. (3), at paper round t ≥ 1:
``U_t(e) = w̃_e + sqrt(3 ln(Kt)/T_e) + 3 ln(Kt)/(ε₀ T_e)``.

**DPTS-MAT** (Algorithm 3): the same estimator; ``θ_e ~ N(w̃_e + 3 ln(Kt)/(ε₀ T_e), 1/T_e)``
(variance 1/T_e, no square-root bonus).

**OMM** (Kveton et al. 2014; the paper gives no formula — UCB1's bonus, on which OMM is built):
``U_t(e) = ŵ_e + sqrt(2 ln t / T_e)`` with running means updated every round. **CTS-Gaussian**
(the paper's App. A "CTS with Gaussian priors"): ``θ_e ~ N(ŵ_e, 1/T_e)``, non-lazy.

**Initialisation** (``init``; the paper never says whether w₀ belongs to the protected data):

* ``"paper"`` — Algorithm 2 line 2, literally: w₀(e) is observed for **every** arm (not a
  legal semi-bandit observation — the loop e7 can never be played, yet is observed) and each is
  released as ``w₀(e) + Lap(1/ε₀)``. Simulation round 0 is this initialisation round: its action
  is the data-independent greedy basis on all-equal scores and its whole outcome row is w₀;
  paper round t is simulation round t. The record w₀ is charged **L releases, L·ε₀**, which
  exceeds ε = K·ε₀ whenever L > K: the declaration says so and certifies L·ε₀.
* ``"public-w0"`` — the same computation, with w₀ declared public (outside the protected data):
  round 0 is not charged and neighbouring inputs never differ there.
* ``"cover"`` — a legal initialisation: the first rounds play a data-independent list of bases
  that covers every non-loop arm (:func:`~bandits.structures.greedy.cover_with_bases`); each
  arm's first observation is its epoch 0. Paper round t is simulation round t − 1.

**Privacy** (unit: one round's reward vector, replace-one; central model). A round's vector can
only enter the releases of the ≤ K arms it was observed on, each in exactly one epoch, so every
round is charged ≤ K releases of ``Lap(1/ε₀)`` with sensitivity 1: K·ε₀ = ε by basic
(adaptive) composition — Theorems 1 and 3 for rounds t ≥ 1. Actions and Gaussian samples are
post-processing. Rewards must lie in [0, 1] (the sensitivity-1 Laplace argument and Hoeffding's
inequality need it; the environments here are Bernoulli).

Example:
    >>> from bandits.environments.grammar import parse_combinatorial_env
    >>> from bandits.engine.simulator import simulate
    >>> env = parse_combinatorial_env("matroid-linear:e1")
    >>> decl = DPUCBMat(epsilon=2.0).declare(1000, env.n_arms, env.structure)
    >>> from dpaudit.accounting import account
    >>> round(account(decl.event, delta=1e-6).bounds["basic"].value, 4)  # L·ε₀ = 7·2/3: the init record
    4.6667
    >>> cover = DPUCBMat(2.0, init="cover").declare(1000, 7, env.structure)
    >>> round(account(cover.event, delta=1e-6).bounds["basic"].value, 4)    # K·ε₀ = ε
    2.0
    >>> res = simulate(DPUCBMat(2.0), env, 2000, repetitions=2, seed=1, progress=False)
    >>> bool(res.final() < 2000 * (2.15 - 1.504))   # better than random greedy
    True
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass
from typing import ClassVar

import numpy as np

from bandits.actions import ActionStructure, Feedback
from bandits.engine.memory import memory_limit
from bandits.policy import Agent, Outcomes, Policy, RunContext
from bandits.structures.combinatorial import COMBINATORIAL, TIE_RULES, problem
from bandits.structures.greedy import cover_with_bases
from bandits.structures.matroids import UniformMatroid
from bandits.structures.rewards import LinearSum
from dpaudit.declaration import Declaration, PublishedClaim
from dpaudit.events import LaplaceEvent, ParallelEvent, PrivacyEvent
from dpaudit.papers import CHANDAK_HU_HEGDE_2023
from dpaudit.validation import check_positive
from mechanisms.continual.epoch_sums_batch import BatchLazyEpochs
from mechanisms.randomness import NoiseTape

__all__ = ["INIT_MODES", "UNIT", "MatroidPolicy", "DPUCBMat", "DPTSMat", "OMM", "CTSGaussian", "cover_bases"]

INIT_MODES = ("paper", "public-w0", "cover")
_GAP, _MAX_BLOCK, _MAX_SOLO = 16, 2048, 512  # the lazy engine's lengths (_MatroidAgent.run_chunk)
_BLOCK_CELLS = 1 << 20  # at most this many scores (R x rounds x arms) per block: 8 MB
UNIT = "one round's reward vector"


def cover_bases(structure: ActionStructure, n_arms: int) -> tuple[tuple[int, ...], ...]:
    """Data-independent bases covering every non-loop arm (the ``"cover"`` initialisation).

    >>> from bandits.actions import TopK
    >>> cover_bases(TopK(2), 5)
    ((0, 1), (2, 3), (4, 0))
    """
    prob = problem(structure)
    matroid = prob.matroid if prob.matroid is not None else UniformMatroid(n_arms, prob.k)
    return cover_with_bases(matroid)


@dataclass(frozen=True)
class MatroidPolicy(Policy):
    """Shared configuration of the four matroid-bandit algorithms (module docstring).

    Attributes:
        init: ``"paper"``, ``"public-w0"`` or ``"cover"``.
        ties: ``"index"`` (lower arm index first) or ``"random"`` (policy randomness).
    """

    _: KW_ONLY
    init: str = "paper"
    ties: str = "index"

    feedback: ClassVar[Feedback] = Feedback.SEMI_BANDIT
    structures: ClassVar[tuple[type[ActionStructure], ...]] = COMBINATORIAL
    lazy: ClassVar[bool] = False
    private: ClassVar[bool] = False
    rule: ClassVar[str] = "ucb"
    label: ClassVar[str] = ""
    theorem: ClassVar[str] = ""

    def __post_init__(self) -> None:
        if self.init not in INIT_MODES:
            raise ValueError(f"init must be one of {INIT_MODES}, got {self.init!r}")
        if self.ties not in TIE_RULES:
            raise ValueError(f"ties must be one of {TIE_RULES}, got {self.ties!r}")

    @property
    def name(self) -> str:
        extra = [f"init={self.init}"] if self.init != "paper" else []
        extra += [f"ties={self.ties}"] if self.ties != "index" else []
        eps = getattr(self, "epsilon", None)
        if eps is not None:
            extra.insert(0, f"eps={eps:g}")
        return self.label + (f"({', '.join(extra)})" if extra else "")

    def check_structure(self, structure: ActionStructure) -> None:
        super().check_structure(structure)
        if not isinstance(problem(structure).reward, LinearSum):
            raise ValueError(
                f"{self.name} is for linear rewards (the sum over the basis), "
                f"not {problem(structure).reward!r}"
            )

    def agent(self, run: RunContext) -> Agent:
        self.check_structure(run.structure)
        return _MatroidAgent(self, run)

    def privacy_epsilon(self) -> float:
        """The ε of a private variant (its field ``epsilon``); ``ValueError`` for a baseline."""
        eps = getattr(self, "epsilon", None)
        if eps is None:
            raise ValueError(f"{self.name} is not private: it has no epsilon")
        return float(eps)

    def epsilon0(self, k: int) -> float:
        """ε₀ = ε/K (Chandak, Hu & Hegde 2023, §4)."""
        return self.privacy_epsilon() / k

    def declare(
        self, horizon: int, n_arms: int, structure: ActionStructure | None = None
    ) -> Declaration | None:
        if not self.private:
            return None
        if structure is None:
            raise ValueError("structure is needed: K (the rank) sets epsilon0 = epsilon/K")
        K, L = problem(structure).k, n_arms
        eps0 = self.epsilon0(K)
        lap = LaplaceEvent(scale=1.0 / eps0, sensitivity=1.0)
        per_round = lap.repeat(K)
        note = (
            f"every round t >= 1 enters <= K = {K} epoch releases Lap(1/eps0), eps0 = eps/K "
            "(one per observed arm; "
            "epochs of an arm are disjoint): K*eps0 = eps by basic composition; actions are post-processing"
        )
        event: PrivacyEvent
        if self.init == "paper" and L > K:
            event = ParallelEvent((lap.repeat(L), per_round))
            note += (
                f"; the initial record w0 is observed for all L = {L} arms and released L times: "
                f"L*eps0 = {L * eps0:.6g} > eps (the paper does not say that w0 is public)"
            )
        else:
            event = per_round
            if self.init == "public-w0":
                note += "; w0 (round 0) is declared public and is not a protected record"
            elif self.init == "cover":
                note += "; initialisation by covering bases, each round touches <= K arms"
        eps = self.privacy_epsilon()
        claim = PublishedClaim(
            CHANDAK_HU_HEGDE_2023, self.theorem, epsilon=eps, note=f"epsilon-DP, eps0 = eps/K = {eps0:.6g}"
        )
        return Declaration(event, unit=UNIT, model="central", published=claim, note=note)


@dataclass(frozen=True)
class DPUCBMat(MatroidPolicy):
    """DPUCB-MAT (Chandak, Hu & Hegde 2023, Algorithm 2), privacy budget ``epsilon``."""

    epsilon: float = 2.0
    lazy: ClassVar[bool] = True
    private: ClassVar[bool] = True
    rule: ClassVar[str] = "ucb"
    label: ClassVar[str] = "dpucb-mat"
    theorem: ClassVar[str] = "Theorem 1"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))


@dataclass(frozen=True)
class DPTSMat(MatroidPolicy):
    """DPTS-MAT (Chandak, Hu & Hegde 2023, Algorithm 3), privacy budget ``epsilon``."""

    epsilon: float = 2.0
    lazy: ClassVar[bool] = True
    private: ClassVar[bool] = True
    rule: ClassVar[str] = "ts"
    label: ClassVar[str] = "dpts-mat"
    theorem: ClassVar[str] = "Theorem 3"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))


@dataclass(frozen=True)
class OMM(MatroidPolicy):
    """OMM (Kveton et al. 2014): UCB1 indices ŵ + sqrt(2 ln t / T), greedy; not private."""

    label: ClassVar[str] = "omm"


@dataclass(frozen=True)
class CTSGaussian(MatroidPolicy):
    """CTS with Gaussian priors (Wang & Chen 2018, as adapted in Chandak, Hu & Hegde 2023,
    App. A):
    θ_e ~ N(ŵ_e, 1/T_e), greedy; not private."""

    rule: ClassVar[str] = "ts"
    label: ClassVar[str] = "cts-gaussian"


def _refuse_unfitting_record(reps: int, n_arms: int, horizon: int, width: int) -> None:
    """Refuse, before it is allocated, a record of observed arms (what the lazy epochs' exact
    ledger charges need until the end) larger than the memory a simulation may hold."""
    need = BatchLazyEpochs.record_bytes(reps, n_arms, horizon, width)
    limit = memory_limit()
    if need > limit:
        most = limit // BatchLazyEpochs.record_bytes(reps, n_arms, 1, width)  # linear in the horizon
        raise ValueError(
            f"horizon must be at most {most} for {reps} repetition(s) at once on this machine: the "
            f"lazy epochs' record of the {width} arms observed in each of {horizon} rounds needs "
            f"{need / 2**30:.1f} GiB, more than the {limit / 2**30:.1f} GiB a simulation may hold"
        )


class _MatroidAgent(Agent):
    def __init__(self, policy: MatroidPolicy, run: RunContext) -> None:
        super().__init__(run)
        self.policy = policy
        self.problem = problem(run.structure)
        self.K = self.problem.k
        R, L = self.reps, self.n_arms
        self.full_init = policy.init in ("paper", "public-w0")
        self.cover = cover_bases(run.structure, L) if policy.init == "cover" else ()
        self.offset = 0 if self.full_init else 1  # paper round = simulation round + offset
        if policy.lazy:
            self.eps0 = policy.epsilon0(self.K)
            _refuse_unfitting_record(R, L, self.horizon, self.K)
            self.est = BatchLazyEpochs(
                R,
                L,
                self.horizon,
                epsilon=self.eps0,
                noise=NoiseTape(run.noise.child(0), "laplace"),
                ledgers=run.ledgers,
                width=self.K,
                label=f"{policy.label} epoch",
            )
        else:
            self.sums = np.zeros((R, L))
            self.counts = np.zeros((R, L), dtype=np.int64)
        self._normal = run.random.child(0) if policy.rule == "ts" else None
        self._keys = run.random.child(1) if policy.ties == "random" else None
        self._z: np.ndarray | None = None
        self._k: np.ndarray | None = None
        self._t0 = 0
        self._w0: np.ndarray | None = None
        self.released_init: np.ndarray | None = None
        self._block, self._solo = 0, _GAP  # the lazy engine's next block (0: single rounds) and stretch

    # -- randomness --------------------------------------------------------------------------
    def prepare(self, t0: int, t1: int) -> None:
        self._t0 = t0
        if self._normal is not None:
            self._z = self._normal.standard_normal((t1 - t0, self.n_arms))
        if self._keys is not None:
            self._k = self._keys.random((t1 - t0, self.n_arms))

    def run_chunk(self, t0: int, t1: int, outcomes: Outcomes) -> np.ndarray:
        """Rounds ``t0 .. t1-1``. The lazy (private) algorithms play blocks of rounds at once: their
        estimates change only when an epoch fills, so until then every round's indices are known
        in advance (:meth:`block_scores`) and one greedy call serves a whole block. A block is
        cut after the first round in which some repetition fills an epoch
        (:meth:`~BatchLazyEpochs.rounds_to_release`), so the actions, estimates, releases and
        noise order are those of the round-by-round loop (tested).

        Blocks pay off only where epochs fill rarely: where some repetition fills one every few
        rounds (many arms, early rounds) the rounds a cut block computed in vain cost more than
        they save. So rounds are played one at a time in stretches (doubling up to
        :data:`_MAX_SOLO`) until a stretch sees fewer than one release per :data:`_GAP` rounds;
        then in blocks (doubled after a block played in full, else twice the rounds played) until
        one is cut within :data:`_GAP` rounds. Either way every round is computed exactly as the
        loop computes it."""
        if t0 == 0 and self.full_init:
            self._w0 = np.array(outcomes.table[:, 0], dtype=float)  # w0: the whole first row
        if not self.policy.lazy:
            return super().run_chunk(t0, t1, outcomes)
        self.prepare(t0, t1)
        actions = np.empty((self.reps, t1 - t0, self.K), dtype=np.intp)
        t, data_free = t0, (1 if self.full_init else len(self.cover))
        if t < data_free:  # the data-independent initial rounds, one at a time
            t = self._play_rounds(t, min(t1, data_free), t0, outcomes, actions)
        while t < t1:
            if not self._block:  # a stretch of single rounds
                start, drawn = t, int(self.est.draws.sum())
                t = self._play_rounds(t, min(t1, t + self._solo), t0, outcomes, actions)
                rare = (int(self.est.draws.sum()) - drawn) * _GAP < t - start  # releases per round
                self._block, self._solo = (_GAP, _GAP) if rare else (0, min(_MAX_SOLO, 2 * self._solo))
                continue
            b = min(self._block, t1 - t, max(1, _BLOCK_CELLS // (self.reps * self.n_arms)))
            n = self._play_block(t, b, t0, outcomes, actions)
            t += n
            self._block = min(_MAX_BLOCK, 2 * b) if n == b else (2 * n if n >= _GAP else 0)
        return actions

    def _play_rounds(self, t: int, end: int, t0: int, outcomes: Outcomes, actions: np.ndarray) -> int:
        """Rounds ``t .. end-1`` one at a time (``select``, ``update``); returns ``end``."""
        for s in range(t, end):
            a = self.select(s)
            self.update(s, a, outcomes.observe(s - t0, a))
            actions[:, s - t0] = a
        return end

    def _play_block(self, t: int, b: int, t0: int, outcomes: Outcomes, actions: np.ndarray) -> int:
        """Rounds ``t ..`` of a block of at most ``b``, up to the first that fills an epoch; their
        number."""
        acts = self.block_actions(t, b)
        n = min(b, int(self.est.rounds_to_release(acts).min()) + 1)
        acts, k = acts[:, :n], t - t0
        x = outcomes.table[self.rows[:, None, None], np.arange(k, k + n)[None, :, None], acts]
        self.est.push_block(acts, np.clip(x, 0.0, 1.0), t)  # rewards in [0, 1]
        actions[:, k : k + n] = acts
        return n

    def block_actions(self, t: int, b: int) -> np.ndarray:
        """(R, b, K): the bases of rounds ``t .. t+b-1`` if no estimate changes meanwhile."""
        R, N = self.reps, self.n_arms
        keys = None if self._k is None else self._k[:, t - self._t0 : t - self._t0 + b].reshape(R * b, N)
        return self.problem.oracle(self.block_scores(t, b).reshape(R * b, N), keys).reshape(R, b, self.K)

    # -- estimates ---------------------------------------------------------------------------
    def _stats(self) -> tuple[np.ndarray, np.ndarray]:
        if self.policy.lazy:
            return self.est.estimate, self.est.size
        # an arm never observed has sum 0.0, so sum / max(count, 1) is its mean 0.0: no 0/0 to mask
        return self.sums / np.maximum(self.counts, 1), self.counts

    def scores(self, t: int) -> np.ndarray:
        """The per-arm indices of paper round ``t + offset`` (UCB values or posterior samples)."""
        return self.block_scores(t, 1)[:, 0]

    def block_scores(self, t: int, b: int) -> np.ndarray:
        """(R, b, N): the indices of rounds ``t .. t+b-1`` from the current estimates — what
        :meth:`scores` gives round by round while no estimate changes (every float operation is
        the same, broadcast over the rounds; ``math.log`` as in a per-round loop)."""
        pol = self.policy
        c = self.K if pol.private else 1  # ln(K t) for the private indices, ln t for OMM
        log = np.array([math.log(c * (s + self.offset)) for s in range(t, t + b)])[:, None]
        mean, n = self._stats()
        mean = mean[:, None, :]
        z = None if self._z is None else self._z[:, t - self._t0 : t - self._t0 + b]  # TS draws
        T = np.maximum(n, 1).astype(float)[:, None, :]  # never-observed arms (loops) are never chosen
        if pol.private:
            if pol.rule == "ucb":  # Chandak, Hu & Hegde (2023), eq. (3)
                return mean + np.sqrt(3.0 * log / T) + 3.0 * log / (self.eps0 * T)
            assert z is not None  # Algorithm 3 lines 5-6: N(w~ + 3 ln(Kt)/(eps0 T), 1/T)
            return mean + 3.0 * log / (self.eps0 * T) + z / np.sqrt(T)
        if pol.rule == "ucb":  # OMM
            return mean + np.sqrt(2.0 * log / T)
        assert z is not None
        return mean + z / np.sqrt(T)  # CTS-Gaussian

    # -- the contract ------------------------------------------------------------------------
    def select(self, t: int) -> np.ndarray:
        if self.full_init and t == 0:  # the initialisation round: a data-independent basis
            return self.problem.oracle(np.zeros((self.reps, self.n_arms)))
        if t < len(self.cover):  # the covering rounds (init="cover"): data-independent bases
            return np.tile(np.array(self.cover[t], dtype=np.int64), (self.reps, 1))
        keys = None if self._k is None else self._k[:, t - self._t0]
        return self.problem.oracle(self.scores(t), keys)

    def update(self, t: int, actions: np.ndarray, feedback: np.ndarray) -> None:
        if self.full_init and t == 0:
            if self._w0 is None:
                raise ValueError("the initialisation needs the whole first outcome row (run_chunk)")
            w0 = np.clip(self._w0, 0.0, 1.0)
            if self.policy.lazy:
                self.est.release_all(w0, 0, charge=self.policy.init == "paper")
                self.released_init = self.est.estimate.copy()
            else:
                self.sums += w0
                self.counts += 1
            return
        x = np.clip(np.asarray(feedback, dtype=float), 0.0, 1.0)  # rewards in [0, 1]
        if self.policy.lazy:
            self.est.push(actions, x, t)
        else:
            rows = self.rows[:, None]
            self.sums[rows, actions] += x
            self.counts[rows, actions] += 1

    def finish(self) -> None:
        if self.policy.lazy:
            self.est.flush()
        super().finish()
