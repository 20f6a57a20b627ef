"""What every cascading-bandit algorithm shares: the configuration base, the vectorised agent base.

Each round t a user browses an ordered list ``A_t`` of K of the L items and clicks the first
attractive one; the unit of privacy is **one user — one round's attraction vector, replaced**
(Definition 1, event level, of Wang, Dong, Wang, Li & Shao). Rounds are 0-based here; the paper's
round index (its ``log t``) is the simulation round plus 1, or the simulation round itself with
the paper's initialisation (round 0 is then the round that observes ``w_0``).

:class:`CascadePolicy` is the configuration every variant extends (:mod:`bandits.cascading.ucb`,
:mod:`bandits.cascading.ldp`, :mod:`bandits.cascading.dp`); :class:`CascadeAgent` plays R rows at
once.
One agent plays R rows at once: the repetitions of one policy, or — in a stacked experiment
(:mod:`bandits.cascading.stacked`) — several configurations of one kind (ε, noise factor, c₁ per
row) × repetitions. Every row draws from its own repetition's generators (ties: ``run.random``,
noise: ``run.noise``), so a stacked row plays exactly what the same policy plays alone.

Per round (paper round ``t`` = simulation round + 1, or + 0 with the paper's initialisation):
the index ``U`` of every item, the K items of largest index in decreasing order (ties: lower item
first — the stable order of CascadeUCB1 — or random keys from the policy stream), the click
``C`` (0-based; K = none), and the update of the examined positions ``k ≤ C``. Noise is pre-drawn
per chunk, one standard draw per report slot (``K`` slots; 2L coordinates for the counts
variant), so results do not depend on chunking or on how repetitions are grouped.

With ``init="paper"`` round 0 is the paper's "Observe w_0": the agent plays the data-independent
list (items 0..K−1 by the tie rule), reads the whole attraction vector ``w_0`` un-noised (as the
paper does; it is not observable under cascade feedback) and sets ``T(e) = 1, ŵ(e) = w_0(e)``.

The rounds are played by a NumPy step loop over the rows, or — with numba enabled, tie rule
"index", no report captured and no transcripts kept — by the compiled loop of
:mod:`bandits.cascading._kernel` named by the agent's ``compiled`` (same numbers bit for bit; the
releases are booked per chunk).

For audits an agent can keep the report of one round: set ``capture_round`` before playing; the
report is then in ``captured`` (R, width; NaN for values not sent; the raw w₀ for round 0).
"
"""


from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar

import numpy as np

from bandits.actions import ActionStructure, Feedback, Ranking
from bandits.cascading.theory import (
    NOISE_KINDS,
)
from bandits.engine.compiled import worth_compiling
from bandits.policy import Agent, Outcomes, Policy, RunContext
from bandits.structures.combinatorial import TIE_RULES, ranking
from dpaudit.events import NonPrivateEvent, ParallelEvent, PrivacyEvent
from dpaudit.ledger import RunLedgers
from dpaudit.validation import check_positive, check_probability

__all__ = [
    "UNIT",
    "INIT_MODES",
    "FACTOR_TARGETS",
    "CALIBRATIONS",
    "C1",
    "LENGTH_LEAK",
    "COUNT_LEAK",
    "W0_LEAK",
    "CascadePolicy",
    "CascadeAgent",
    "top_k",
    "fixed_sensitivity",
    "counts_sensitivity",
]

UNIT = "one user (one round's attraction vector)"
INIT_MODES = ("paper", "none")
FACTOR_TARGETS = ("noise-and-bonus", "noise")
CALIBRATIONS = ("basic", "theorem7")
C1 = 2.7
"""Algorithm 1's constant c₁ (Lemma 1: the hybrid counter's error at n is at most
c₁ log^{1.5}n log(1/γ)/ε w.p. 1 − γ; the paper gives no value). 2.7 covers the Monte-Carlo
(1 − γ)-quantile of the counter's error for every n in [3, 10⁶] at γ = 10⁻² and 10⁻³ (largest
ratios 2.66 at n = 3 and 2.60 at n = 2²⁰ − 1; the bonus's γ = t⁻³ is below 10⁻² from t = 5 on).
It does not cover n = 2 (4.5) nor γ = 0.1 (3.24 at n = 2²⁰ − 1); tests/test_cascade.py."""

LENGTH_LEAK = (
    "the user sends one value per examined position, min(C_t, K) values: the number of values is the "
    "click position (Wang et al. 2021, Algs. 2-3)"
)
COUNT_LEAK = (
    "the un-noised observation counts T_t(e) (which items were examined, i.e. the click) enter the index "
    "outside the hybrid counters (Wang et al. 2021, Alg. 1)"
)
W0_LEAK = "the initial attraction vector w_0 of user 0 is used un-noised (Wang et al. 2021, 'Observe w_0')"


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")


def _k(structure: ActionStructure | None) -> int:
    if not isinstance(structure, Ranking):
        raise ValueError("structure must be a Ranking(k): K sets the noise and the declaration")
    return structure.k


def fixed_sensitivity(k: int, noise: str) -> float:
    """Sensitivity of the fixed-length click report ``(1{C = k})_k``: one-hot or zero, so ℓ1 = 2
    and ℓ2 = √2 for K ≥ 2 (clicks at two positions), 1 for K = 1.

    >>> fixed_sensitivity(4, "laplace"), round(fixed_sensitivity(4, "gaussian"), 6)
    (2.0, 1.414214)
    >>> fixed_sensitivity(1, "laplace")
    1.0
    """
    if k <= 1:
        return 1.0
    return 2.0 if noise == "laplace" else math.sqrt(2.0)


def counts_sensitivity(k: int) -> float:
    """ℓ1 change of the leaf (clicks, examinations) of one user: clicks differ in ≤ 2 items, the
    examined prefix in ≤ K − 1 (C = 1 vs C = K): K + 1 for K ≥ 2, 1 for K = 1.

    >>> counts_sensitivity(4), counts_sensitivity(1)
    (5.0, 1.0)
    """
    return 1.0 if k <= 1 else float(k + 1)


@dataclass(frozen=True)
class CascadePolicy(Policy):
    """Shared configuration: ``init`` (``"paper"``: observe w₀; ``"none"``) and ``ties``
    (``"index"``: lower item first, the stable order of CascadeUCB1; ``"random"``)."""

    _: KW_ONLY
    init: str = "paper"
    ties: str = "index"

    feedback: ClassVar[Feedback] = Feedback.CASCADE
    structures: ClassVar[tuple[type[ActionStructure], ...]] = (Ranking,)
    label: ClassVar[str] = ""
    sound_init_only: ClassVar[bool] = False
    # bytes a round and repetition the run's ledgers hold until its check, at most (the simulator
    # refuses a run whose ledgers would not fit; measured by benchmarks/bench_horizon_memory.py,
    # tests/test_bench_horizon_memory.py): the hybrid counts agent (cascade-dp-sound), or any other
    # (the most any cascading agent was measured to hold, 20, rounded up)
    ledger_bytes_per_round = 24

    def __post_init__(self) -> None:
        _check_choice("init", self.init, INIT_MODES)
        _check_choice("ties", self.ties, TIE_RULES)
        if self.sound_init_only and self.init != "none":
            raise ValueError(f"init must be 'none' for {self.label} (w_0 would be an unprotected record)")

    @property
    def name(self) -> str:
        parts = self._parts()
        if self.init != "paper" and not self.sound_init_only:
            parts.append(f"init={self.init}")
        if self.ties != "index":
            parts.append(f"ties={self.ties}")
        return self.label + (f"({', '.join(parts)})" if parts else "")

    def _parts(self) -> list[str]:
        return []

    def stack_key(self) -> tuple:
        """Policies with equal keys can share one vectorised agent (per-row parameters)."""
        return (type(self), self.init, self.ties)

    def agent(self, run: RunContext) -> Agent:
        self.check_structure(run.structure)
        return self.agent_for_rows(run, [self] * run.reps)

    @abc.abstractmethod
    def agent_for_rows(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> Agent:
        """One agent whose row r plays ``rows[r]`` (all with this policy's :meth:`stack_key`);
        ``record=False`` writes no ledger entries (stacked experiments: same actions)."""

    def _init_event(self, per_user: PrivacyEvent) -> PrivacyEvent:
        return ParallelEvent((per_user, NonPrivateEvent(W0_LEAK))) if self.init == "paper" else per_user


def _noise_fields(policy: CascadePolicy) -> None:
    object.__setattr__(policy, "epsilon", check_positive("epsilon", policy.epsilon))  # type: ignore[attr-defined]
    _check_choice("noise", policy.noise, NOISE_KINDS)  # type: ignore[attr-defined]
    check_probability("calibration_delta", policy.calibration_delta)  # type: ignore[attr-defined]
    check_positive("noise_factor", policy.noise_factor)  # type: ignore[attr-defined]
    _check_choice("factor_on", policy.factor_on, FACTOR_TARGETS)  # type: ignore[attr-defined]


def _factor_parts(policy: CascadePolicy) -> list[str]:
    f = policy.noise_factor  # type: ignore[attr-defined]
    if f == 1.0:
        return []
    return [f"noise x{f:g}" + (" (bonus too)" if policy.factor_on == "noise-and-bonus" else "")]  # type: ignore[attr-defined]


def top_k(scores: np.ndarray, k: int, tie_keys: np.ndarray | None = None) -> np.ndarray:
    """The k columns of largest score per row, in decreasing score; ties to the lower column
    (the first k of a stable descending sort: one ``argsort`` of 20 items costs a fifth of k
    passes of ``argmax``) or by ``tie_keys``. Scores must not be NaN.

    >>> top_k(np.array([[0.1, 0.5, 0.5, np.inf]]), 3).tolist()
    [[3, 1, 2]]
    >>> top_k(np.array([[5.0, -np.inf, -np.inf]]), 2).tolist()
    [[0, 1]]
    """
    if tie_keys is not None:
        return ranking(scores, tie_keys)[:, :k]
    return np.argsort(-np.asarray(scores, dtype=float), axis=1, kind="stable")[:, :k]


def repetition_table(outcomes: Outcomes) -> np.ndarray:
    """The chunk's (R₀, C, L) outcome array: the table itself, or the repetitions' table of a
    stacked one (:mod:`bandits.cascading.stacked`: row p·R₀ + r reads repetition r)."""
    table = outcomes.table
    return table if isinstance(table, np.ndarray) else table.base


class CascadeAgent(Agent):
    """The shared loop (module docstring); subclasses give ``index``, ``absorb`` and the noise.

    The index of an item is kept in parts that change only when the item is updated (its mean,
    ``1/sqrt(T)``), so a round costs a few multiply-adds per item: ``U = mean + c_t · isq`` with
    ``c_t`` one number per row and round (:meth:`coefficient`).
    """

    noise_width: int = 0
    noise_sampler: str = "laplace"
    private: bool = True
    compiled: ClassVar[str | None] = None
    """The function of :mod:`bandits.cascading._kernel` that plays the agent's rounds (None: the
    step loop only); :meth:`_run_compiled` calls it (here: ``cascade_rounds``, the index
    ``mean + c_t · isq``)."""
    replays: ClassVar[tuple[tuple[type, str, Any], ...]] = ()
    """(class, method name, function): the mechanism methods whose arithmetic the kernel replays.
    When one has been replaced since (a subclass, or a planted bug of
    ``benchmarks/planted_bugs.py``), the step loop runs, so that the replacement is what runs."""

    def __init__(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> None:
        super().__init__(run)
        rows = list(rows)
        if len(rows) != self.reps:
            raise ValueError(f"rows must hold one policy per row ({self.reps}), got {len(rows)}")
        if len({p.stack_key() for p in rows}) != 1:
            raise ValueError("rows must share one stack_key (same kind, init, ties and noise)")
        p0 = rows[0]
        self.policies = rows
        self.record = bool(record) and self.private
        self.k = _k(run.structure)
        self.init = p0.init
        self.offset = 0 if self.init == "paper" else 1
        self._tie_stream = run.random.child(0) if p0.ties == "random" else None
        self._noise_stream = run.noise.child(0)
        R, L = self.reps, self.n_arms
        self.S = np.zeros((R, L))  # clicks (or noisy values) per item
        self.T = np.zeros((R, L))  # observations per item
        self.mean = np.full((R, L), np.inf)  # S / max(T, 1); +inf while T = 0
        self.isq = np.ones((R, L))  # 1 / sqrt(max(T, 1))
        self.positions = np.arange(self.k)
        self.base = (np.arange(R) * L)[:, None]  # row offsets: flat index of (r, e) is base[r] + e
        self.capture_round: int | None = None
        self.captured: np.ndarray | None = None
        self._keys: np.ndarray | None = None
        self._z: np.ndarray | None = None
        self._t0 = 0

    @property
    def ledgers(self) -> RunLedgers | None:
        """Where releases are recorded (None when recording is off: stacked experiments)."""
        return self.run.ledgers if self.record else None

    # -- the loop ----------------------------------------------------------------------------
    @property
    def chunk_noise(self) -> np.ndarray:
        """The standard noise draws of the chunk being played (``prepare`` draws them)."""
        if self._z is None:
            raise RuntimeError("no noise drawn: prepare() the chunk first (a private agent draws in prepare)")
        return self._z

    def prepare(self, t0: int, t1: int) -> None:
        self._t0 = t0
        if self._tie_stream is not None:
            self._keys = self._tie_stream.random((t1 - t0, self.n_arms))
        if self.noise_width:
            self._z = getattr(self._noise_stream, self.noise_sampler)((t1 - t0, self.noise_width))

    def top(self, scores: np.ndarray, s: int) -> np.ndarray:
        keys = None if self._keys is None else self._keys[:, s - self._t0]
        return top_k(scores, self.k, keys)

    def select(self, s: int) -> np.ndarray:
        return self.top(self.index(s + self.offset, s), s)

    def update(self, s: int, actions: np.ndarray, feedback: np.ndarray) -> None:
        self._absorb_click(s, actions, self.base + actions, np.asarray(feedback).reshape(-1, 1))

    def _absorb_click(self, s: int, actions: np.ndarray, flat: np.ndarray, click: np.ndarray) -> None:
        examined = self.positions[None, :] <= click
        clicked = self.positions[None, :] == click
        self.absorb(s, actions, flat, examined, clicked)

    def run_chunk(self, t0: int, t1: int, outcomes: Outcomes) -> np.ndarray:
        self.prepare(t0, t1)
        acts = np.empty((self.reps, t1 - t0, self.k), dtype=np.intp)
        kernel = self._kernel(t0, t1)
        start = t0
        if kernel is not None and t0 == 0 and self.init == "paper":
            acts[:, 0] = self._step(0, 0, outcomes)  # round 0 observes w_0: not a kernel round
            start = 1
        if kernel is None:
            for s in range(t0, t1):
                acts[:, s - t0] = self._step(s, s - t0, outcomes)
        elif start < t1:
            self._run_compiled(kernel, t0, t1, start, outcomes, acts)
        self.end_chunk(t0, t1)
        return acts

    def _step(self, s: int, i: int, outcomes: Outcomes) -> np.ndarray:
        """Play round ``s`` (the chunk's ``i``-th) with NumPy operations over the rows."""
        if s == 0 and self.init == "paper":
            a = self.top(np.zeros((self.reps, self.n_arms)), s)  # data-independent
            self.observe_w0(np.asarray(outcomes.table[:, i], dtype=float))
            return a
        a = self.select(s)
        flat = self.base + a
        hit = np.asarray(outcomes.table[:, i]).reshape(-1)[flat] >= 0.5  # observe(CASCADE, ...)
        click = np.where(hit.any(axis=1), hit.argmax(axis=1), self.k)
        self._absorb_click(s, a, flat, click[:, None])
        return a

    # -- the compiled loop -------------------------------------------------------------------
    def _kernel(self, t0: int, t1: int) -> Any:
        """The compiled round loop when it gives what the step loop gives, numba is enabled and the
        run is long enough to repay loading it (:func:`~bandits.engine.compiled.worth_compiling`):
        tie rule "index", no report captured in the chunk, no transcripts kept, the replayed
        methods (:attr:`replays`) unchanged; else None."""
        if self.compiled is None or self._tie_stream is not None:
            return None
        if any(getattr(owner, name) is not fn for owner, name, fn in self.replays):
            return None
        if self.capture_round is not None and t0 <= self.capture_round < t1:
            return None
        if self.record and self.run.ledgers.transcripts is not None:
            return None
        if not worth_compiling(self.reps * self.horizon):  # a short run: loading numba costs more
            return None
        from bandits.cascading import _kernel

        return getattr(_kernel, self.compiled) if _kernel.NUMBA else None

    def _run_compiled(
        self, kernel: Any, t0: int, t1: int, start: int, outcomes: Outcomes, acts: np.ndarray
    ) -> None:
        """Rounds ``start .. t1 − 1`` of the chunk by the compiled loop; the releases are then
        booked by :meth:`compiled_releases`."""
        i0 = start - t0
        coef = np.empty((self.reps, t1 - t0))
        coef[:, i0:] = self.chunk_coefficients(range(start + self.offset, t1 + self.offset))
        noise = self.chunk_report_noise()
        clicks = np.empty((self.reps, t1 - t0), dtype=np.int64)
        kernel(
            repetition_table(outcomes), i0, coef,
            np.zeros((1, 1, 1)) if noise is None else noise, noise is not None,
            self.S, self.T, self.mean, self.isq, acts, clicks,
        )  # fmt: skip
        self.compiled_releases(start, clicks[:, i0:])

    def chunk_coefficients(self, ts: range | Sequence[int]) -> np.ndarray:
        """``c_t`` of the paper rounds ``ts`` per row, shape (R, len(ts)), or (1, len(ts)) when
        it is the same for every row: ``sqrt(1.5 log t)`` plus the privacy part (subclasses)."""
        return np.array([[math.sqrt(1.5 * math.log(t)) for t in ts]])

    def chunk_report_noise(self) -> np.ndarray | None:
        """The noise added to each position's report in the chunk (R, C, K), or None (exact)."""
        return None

    def compiled_releases(self, s0: int, clicks: np.ndarray) -> None:
        """Book what rounds ``s0 ..`` released, given their clicks (R, n; K = none): nothing here."""
        return None

    # -- hooks -------------------------------------------------------------------------------
    def observe_w0(self, row: np.ndarray) -> None:
        """The paper's "Observe w_0": T(e) = 1, ŵ(e) = w_0(e) for every item (un-noised)."""
        w0 = (row >= 0.5).astype(float)
        self.S = w0.copy()
        self.T = np.ones_like(w0)
        self.mean = w0.copy()
        self.isq = np.ones_like(w0)
        if self.capture_round == 0:
            self.captured = w0.copy()
        if self.record:
            self.run.ledgers.record(self.rows, NonPrivateEvent(W0_LEAK), units=range(0, 1), label="w_0")

    def coefficient(self, t: int) -> np.ndarray:
        """``c_t`` per row, shape (R, 1) (or (1, 1): the same for every row)."""
        return self.chunk_coefficients((t,))

    def index(self, t: int, s: int) -> np.ndarray:
        return self.mean + self.coefficient(t) * self.isq

    def refresh(self, flat: np.ndarray) -> None:
        """Recompute the cached parts of the given entries (flat indices) from S and T."""
        t = self.T.reshape(-1)[flat]
        tp = np.maximum(t, 1.0)
        self.mean.reshape(-1)[flat] = np.where(t > 0, self.S.reshape(-1)[flat] / tp, np.inf)
        self.isq.reshape(-1)[flat] = 1.0 / np.sqrt(tp)

    @abc.abstractmethod
    def absorb(
        self, s: int, actions: np.ndarray, flat: np.ndarray, examined: np.ndarray, clicked: np.ndarray
    ) -> None:
        """Fold the chunk's observations of ``s`` repetitions into the agent's statistics."""

    def end_chunk(self, t0: int, t1: int) -> None:
        """Write what the chunk released (subclasses)."""
        return None

    def _record_chunk(self, event: NonPrivateEvent, t0: int, t1: int, label: str) -> None:
        a = max(t0, 1) if self.init == "paper" else t0
        if self.record and a < t1:
            self.run.ledgers.record(self.rows, event, units=range(a, t1), label=label)

    def _row_column(self, values: Sequence[float]) -> np.ndarray:
        return np.asarray(values, dtype=float).reshape(-1, 1)
