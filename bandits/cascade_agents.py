"""Vectorised agents of seed 001's cascading bandits (:mod:`bandits.cascade_policies`).

One agent plays R rows at once: the repetitions of one policy, or — in a stacked experiment
(:mod:`bandits.cascade_stacked`) — several configurations of one kind (ε, noise factor, c₁ per
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

For audits an agent can keep the report of one round: set ``capture_round`` before playing; the
report is then in ``captured`` (R, width; NaN for values not sent; the raw w₀ for round 0).
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence

import numpy as np

from bandits.cascade_policies import (
    COUNT_LEAK,
    LENGTH_LEAK,
    W0_LEAK,
    CascadeDP,
    CascadeDPCounts,
    CascadeLDP,
    CascadeLDPFixed,
    CascadePolicy,
    counts_sensitivity,
)
from bandits.combinatorial import ranking
from bandits.policy import Agent, Outcomes, RunContext
from dpaudit.events import NonPrivateEvent
from dpaudit.ledger import RunLedgers
from mechanisms.hybrid_batch import BatchHybridStreams, BatchHybridSums
from mechanisms.row_reports import RowReports

__all__ = [
    "CascadeAgent",
    "UCBAgent",
    "ObservedReportsAgent",
    "FixedReportsAgent",
    "HybridStreamsAgent",
    "HybridCountsAgent",
    "top_k",
]


def top_k(scores: np.ndarray, k: int, tie_keys: np.ndarray | None = None) -> np.ndarray:
    """The k columns of largest score per row, in decreasing score; ties to the lower column
    (k passes of ``argmax``: the first k of a stable descending sort) or by ``tie_keys``.

    >>> top_k(np.array([[0.1, 0.5, 0.5, np.inf]]), 3).tolist()
    [[3, 1, 2]]
    """
    if tie_keys is not None:
        return ranking(scores, tie_keys)[:, :k]
    u = np.array(scores, dtype=float, copy=True)
    flat, base = u.reshape(-1), np.arange(u.shape[0]) * u.shape[1]
    out = np.empty((u.shape[0], k), dtype=np.intp)
    for j in range(k):
        best = np.argmax(u, axis=1)
        out[:, j] = best
        flat[base + best] = -np.inf
    return out


class CascadeAgent(Agent):
    """The shared loop (module docstring); subclasses give ``index``, ``absorb`` and the noise.

    The index of an item is kept in parts that change only when the item is updated (its mean,
    ``1/sqrt(T)``), so a round costs a few multiply-adds per item: ``U = mean + c_t · isq`` with
    ``c_t`` one number per row and round (:meth:`coefficient`).
    """

    noise_width: int = 0
    noise_sampler: str = "laplace"
    private: bool = True

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
        self.k = run.structure.k
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
        for s in range(t0, t1):
            i = s - t0
            if s == 0 and self.init == "paper":
                a = self.top(np.zeros((self.reps, self.n_arms)), s)  # data-independent
                self.observe_w0(np.asarray(outcomes.table[:, i], dtype=float))
            else:
                a = self.select(s)
                flat = self.base + a
                hit = np.asarray(outcomes.table[:, i]).reshape(-1)[flat] >= 0.5  # observe(CASCADE, ...)
                click = np.where(hit.any(axis=1), hit.argmax(axis=1), self.k)
                self._absorb_click(s, a, flat, click[:, None])
            acts[:, i] = a
        self.end_chunk(t0, t1)
        return acts

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
        """``c_t`` per row, shape (R, 1): ``sqrt(1.5 log t)`` plus the privacy part."""
        return np.full((self.reps, 1), math.sqrt(1.5 * math.log(t)))

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


class UCBAgent(CascadeAgent):
    """CascadeUCB1: exact clicks of the examined positions; ``U = ŵ + sqrt(1.5 log t / T)``."""

    private = False

    def absorb(
        self, s: int, actions: np.ndarray, flat: np.ndarray, examined: np.ndarray, clicked: np.ndarray
    ) -> None:
        self.T.reshape(-1)[flat] += examined
        self.S.reshape(-1)[flat] += clicked
        self.refresh(flat)


class ObservedReportsAgent(CascadeAgent):
    """Algorithms 2, 3 and the Theorem 7 variant: each examined position's ``1{C = k}`` + noise;
    ``ŵ ← (T ŵ + value)/(T + 1)`` (kept as the running sum S and the count T). Index: Alg. 2
    ``ŵ + sqrt(1.5 log t/T) + b sqrt(24 log t/T)`` (Lemma 6, γ = t⁻³), Alg. 3
    ``ŵ + sqrt(1.5 log t/T) + σ sqrt(2 log(2t³)/T)`` (Lemma 7, γ = t⁻³)."""

    def __init__(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> None:
        super().__init__(run, rows, record=record)
        pols: list[CascadeLDP] = [p for p in rows if isinstance(p, CascadeLDP)]
        if len(pols) != self.reps:
            raise ValueError("rows must be CascadeLDP policies")
        self.noise = pols[0].noise
        self.noise_width = self.k
        self.noise_sampler = "laplace" if self.noise == "laplace" else "standard_normal"
        self.reports = RowReports([p.value_mechanism(self.k) for p in pols], self.k, self.ledgers, "value")
        self.bonus = self._row_column([p.bonus_scale(self.k) for p in pols])

    def coefficient(self, t: int) -> np.ndarray:
        lt = math.log(t)
        if self.noise == "laplace":
            return math.sqrt(1.5 * lt) + self.bonus * math.sqrt(24.0 * lt)
        return math.sqrt(1.5 * lt) + self.bonus * math.sqrt(2.0 * math.log(2.0 * float(t) ** 3))

    def absorb(
        self, s: int, actions: np.ndarray, flat: np.ndarray, examined: np.ndarray, clicked: np.ndarray
    ) -> None:
        y = self.reports.release(clicked.astype(float), self._z[:, s - self._t0], examined, s)
        if self.capture_round == s:
            self.captured = np.where(examined, y, np.nan)
        self.S.reshape(-1)[flat] += np.where(examined, y, 0.0)
        self.T.reshape(-1)[flat] += examined
        self.refresh(flat)

    def end_chunk(self, t0: int, t1: int) -> None:
        self.reports.flush()
        if self.k >= 2:
            self._record_chunk(NonPrivateEvent(LENGTH_LEAK), t0, t1, "report length")


class FixedReportsAgent(CascadeAgent):
    """The fixed-length LDP variant (:class:`~bandits.cascade_policies.CascadeLDPFixed`):
    ``U = S/E⁺ + sqrt(1.5 log t/E⁺) + dev/E⁺`` with dev = b sqrt(24 P log t) (Laplace) or
    σ sqrt(2 P log(2t³)) (Gaussian); cached as ``mean + sqrt(1.5 log t)·isq + c'_t·g2``,
    ``g2 = sqrt(P)/E⁺``."""

    def __init__(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> None:
        super().__init__(run, rows, record=record)
        pols: list[CascadeLDPFixed] = [p for p in rows if isinstance(p, CascadeLDPFixed)]
        if len(pols) != self.reps:
            raise ValueError("rows must be CascadeLDPFixed policies")
        self.noise = pols[0].noise
        self.noise_width = self.k
        self.noise_sampler = "laplace" if self.noise == "laplace" else "standard_normal"
        self.reports = RowReports([p.report_mechanism(self.k) for p in pols], 1, self.ledgers, "report")
        self.bonus = self._row_column([p.bonus_scale(self.k) for p in pols])
        R, L = self.reps, self.n_arms
        self.E = np.zeros((R, L))  # noisy examinations
        self.D = np.zeros((R, L))  # displays (public: the lists are the output)
        self.P = np.zeros((R, L))  # sum of the 1-based positions shown at (public)
        self.g2 = np.zeros((R, L))  # sqrt(P) / max(E, 1)

    def index(self, t: int, s: int) -> np.ndarray:
        lt = math.log(t)
        if self.noise == "laplace":
            c2 = self.bonus * math.sqrt(24.0 * lt)
        else:
            c2 = self.bonus * math.sqrt(2.0 * math.log(2.0 * float(t) ** 3))
        return self.mean + math.sqrt(1.5 * lt) * self.isq + c2 * self.g2

    def absorb(
        self, s: int, actions: np.ndarray, flat: np.ndarray, examined: np.ndarray, clicked: np.ndarray
    ) -> None:
        y = self.reports.release(clicked.astype(float), self._z[:, s - self._t0], None, s)
        if self.capture_round == s:
            self.captured = y.copy()
        above = np.concatenate([np.zeros((self.reps, 1)), np.cumsum(y, axis=1)[:, :-1]], axis=1)
        S, E, P = self.S.reshape(-1), self.E.reshape(-1), self.P.reshape(-1)
        S[flat] += y
        E[flat] += 1.0 - above
        self.D.reshape(-1)[flat] += 1.0
        P[flat] += self.positions + 1.0
        ep = np.maximum(E[flat], 1.0)
        self.mean.reshape(-1)[flat] = S[flat] / ep  # D > 0 now
        self.isq.reshape(-1)[flat] = 1.0 / np.sqrt(ep)
        self.g2.reshape(-1)[flat] = np.sqrt(P[flat]) / ep

    def end_chunk(self, t0: int, t1: int) -> None:
        self.reports.flush()


class HybridStreamsAgent(CascadeAgent):
    """Algorithm 1: per-item hybrid counters (ε/L), un-noised counts in the index
    ``(w_0 + S̃)/T + sqrt(1.5 log t/T) + coef·log t/T`` (cached: mean, isq and 1/T)."""

    def __init__(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> None:
        super().__init__(run, rows, record=record)
        pols: list[CascadeDP] = [p for p in rows if isinstance(p, CascadeDP)]
        if len(pols) != self.reps:
            raise ValueError("rows must be CascadeDP policies")
        L = self.n_arms
        self.noise_width = self.k
        self.mech = BatchHybridStreams(
            self.reps,
            L,
            epsilon=np.array([p.counter_epsilon(L) for p in pols]),
            noise_factor=np.array([p.noise_factor for p in pols]),
            levels=max(2, self.horizon.bit_length()),
            ledgers=self.ledgers,
            label="item hybrid counter",
        )
        self.coef = self._row_column([p.bonus_coefficient(L, self.horizon) for p in pols])
        self.w0 = np.zeros((self.reps, L))
        self.inv = np.ones((self.reps, L))  # 1 / max(T, 1)

    def observe_w0(self, row: np.ndarray) -> None:
        super().observe_w0(row)
        self.w0 = self.S.copy()

    def index(self, t: int, s: int) -> np.ndarray:
        lt = math.log(t)
        return self.mean + math.sqrt(1.5 * lt) * self.isq + (self.coef * lt) * self.inv

    def absorb(
        self, s: int, actions: np.ndarray, flat: np.ndarray, examined: np.ndarray, clicked: np.ndarray
    ) -> None:
        rr, kk = np.nonzero(examined)
        items = actions[rr, kk]
        self.mech.insert(rr, items, clicked[rr, kk].astype(float), self._z[rr, s - self._t0, kk], unit=s)
        f = flat[rr, kk]
        T = self.T.reshape(-1)
        T[f] += 1.0
        tp = T[f]  # >= 1
        self.mean.reshape(-1)[f] = (self.w0.reshape(-1)[f] + self.mech.out.reshape(-1)[f]) / tp
        self.isq.reshape(-1)[f] = 1.0 / np.sqrt(tp)
        self.inv.reshape(-1)[f] = 1.0 / tp

    def end_chunk(self, t0: int, t1: int) -> None:
        self.mech.flush()
        self._record_chunk(NonPrivateEvent(COUNT_LEAK), t0, t1, "un-noised counts")


class HybridCountsAgent(CascadeAgent):
    """The sound central variant (:class:`~bandits.cascade_policies.CascadeDPCounts`): the counter
    moves every item's statistics every round, so the index is recomputed in full."""

    def __init__(self, run: RunContext, rows: Sequence[CascadePolicy], *, record: bool = True) -> None:
        super().__init__(run, rows, record=record)
        pols: list[CascadeDPCounts] = [p for p in rows if isinstance(p, CascadeDPCounts)]
        if len(pols) != self.reps:
            raise ValueError("rows must be CascadeDPCounts policies")
        L = self.n_arms
        self.noise_width = 2 * L
        self.mech = BatchHybridSums(
            self.reps,
            2 * L,
            epsilon=np.array([p.epsilon for p in pols]),
            sensitivity=counts_sensitivity(self.k),
            noise_factor=np.array([p.noise_factor for p in pols]),
            levels=max(2, self.horizon.bit_length()),
            ledgers=self.ledgers,
            label="clicks and examinations",
        )
        # λ from the noise really added ("noise-and-bonus") or from the unscaled noise ("noise")
        self.bonus_mult = np.array(
            [1.0 if p.factor_on == "noise-and-bonus" else 1.0 / p.noise_factor for p in pols]
        )
        self.D = np.zeros((self.reps, L))

    def index(self, t: int, s: int) -> np.ndarray:
        L = self.n_arms
        out = self.mech.out
        lt = math.log(t)
        npos = np.maximum(out[:, L:], 1.0)
        lam = self.bonus_mult * np.sqrt(24.0 * lt * self.mech.error_sum_b2())
        u = out[:, :L] / npos + np.sqrt(1.5 * lt / npos) + 2.0 * lam[:, None] / npos
        return np.where(self.D > 0, u, np.inf)

    def absorb(
        self, s: int, actions: np.ndarray, flat: np.ndarray, examined: np.ndarray, clicked: np.ndarray
    ) -> None:
        L = self.n_arms
        r = self.rows[:, None]
        leaf = np.zeros((self.reps, 2 * L))
        leaf[r, actions] = clicked
        leaf[r, L + actions] = examined
        self.mech.step(leaf, self._z[:, s - self._t0])
        self.D.reshape(-1)[flat] += 1.0

    def finish(self) -> None:
        self.mech.flush()
        super().finish()
