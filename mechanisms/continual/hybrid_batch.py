"""Hybrid continual counters (Chan, Shi & Song 2011) for R repetitions at once.

They serve Cascading-UCB under DP (Wang et al. (2021), Algorithm 1).

The vectorised counterparts of :class:`mechanisms.continual.hybrid.HybridCounter` (same nodes, same noise
values from the same standard draws, same outputs bit for bit — tested against it):

* :class:`BatchHybridStreams` — one scalar counter per (repetition, stream) with its **own**
  position: Wang et al. (2021), Algorithm 1, inserts ``w_t(e)`` into item e's counter only when e is
  observed, so the streams advance at data-dependent times. Each insertion releases exactly one
  node (a logarithmic block at positions 2^k, else one binary-block node: the binary mechanism
  releases one node per step), so each insertion consumes exactly one standard Laplace draw.
* :class:`BatchHybridSums` — one vector counter per repetition, advanced every round (time
  indexed, so positions are public): the sound variant of Algorithm 1 feeds it every item's
  click and examination indicator each round (0 when unobserved).

Scales (Chan et al. 2011, §4): budget ε per element, half to the logarithmic mechanism
(``Lap(2Δ/ε)`` per log block) and half to the binary block ``B_k`` of steps 2^k+1..2^{k+1}−1
(k levels, ``Lap(2kΔ/ε)`` per node): each element enters one log node and at most k block nodes,
ε/2 + k·ε/(2k) = ε. ``noise_factor`` multiplies every scale (Wang et al. (2021), §7: "× 0.01"), which
spends ε/factor.

**Ledgers.** :class:`BatchHybridStreams` records, per insertion, the per-element guarantee of the
counter as one ``PureDpEvent(2Δ/b_log)`` (= ε/factor, the basic composition of the log node and the
block nodes the element enters; per unit it composes over the ≤ K streams the unit touched —
tested to dominate the per-node ledger of :class:`~mechanisms.continual.hybrid.HybridCounter`).
:class:`BatchHybridSums` records every released node exactly (per unit: its log block and the
c nodes of its binary block, aggregated into one entry per (block, c));
:func:`hybrid_unit_event` is the worst case of one unit, one branch per block.

Example:
    >>> import numpy as np
    >>> from dpaudit.ledger import RunLedgers
    >>> led = RunLedgers(1)
    >>> h = BatchHybridStreams(1, 2, epsilon=np.array([1.0]), ledgers=led)
    >>> z = np.zeros(3)
    >>> h.insert(np.array([0, 0]), np.array([0, 1]), np.array([1.0, 0.0]), z[:2], unit=0).tolist()
    [1.0, 0.0]
    >>> h.insert(np.array([0]), np.array([0]), np.array([1.0]), z[2:], unit=1).tolist()
    [2.0]
    >>> h.flush(); led.flush(); sorted(led[0].charges().items())
    [(0, 2), (1, 1)]
    >>> [round(x, 3) for x in hybrid_error_scales(5, 2.0)]   # t = 5: 3 log nodes + 1 block-2 node
    [2.0, 2.0, 2.0, 4.0]
"""

from __future__ import annotations

import numpy as np

from dpaudit.data_units import UnitRuns
from dpaudit.events import ComposedEvent, LaplaceEvent, ParallelEvent, PrivacyEvent, PureDpEvent
from dpaudit.ledger import RunLedgers
from dpaudit.numerics import unique
from dpaudit.validation import check_integer, check_positive

__all__ = [
    "BatchHybridStreams",
    "BatchHybridSums",
    "hybrid_error_scales",
    "hybrid_error_sum_b2",
    "hybrid_unit_event",
    "lowbit",
]


def lowbit(j: np.ndarray) -> np.ndarray:
    """Index of the lowest set bit of positive integers ``j``.

    >>> lowbit(np.array([1, 2, 6, 8])).tolist()
    [0, 1, 1, 3]
    """
    j = np.asarray(j, dtype=np.int64)
    return np.log2(j & -j).astype(np.int64)


def _floor_log2(n: np.ndarray) -> np.ndarray:
    """floor(log2 n) for positive int64 ``n`` (exact: via the float exponent, n < 2^53)."""
    return np.frexp(np.asarray(n, dtype=np.float64))[1].astype(np.int64) - 1


def _count_runs(n: int, chunk: int = 1 << 16) -> list[tuple[int, list[tuple[int, UnitRuns]]]]:
    """After ``n`` steps, per binary block k ≥ 1 holding a step that is not a power of two
    (ascending), and per number c ≥ 1 of its released nodes that contain a step (ascending): the
    rounds (step − 1) with c such nodes, as runs. What :meth:`BatchHybridSums.node_counts` gives,
    from the released nodes' closed form a chunk of steps at a time: the step at offset j of block
    k lies in a released node of level i < k iff bit i of j − 1 is 0 and that node ends by offset
    min(n − 2^k, 2^k − 1) (:meth:`BatchHybridSums.released_nodes`)."""
    out: list[tuple[int, list[tuple[int, UnitRuns]]]] = []
    for k in range(1, n.bit_length()):
        jmax = min(n - (1 << k), (1 << k) - 1)
        if jmax < 1:
            continue
        parts: dict[int, list[UnitRuns]] = {}
        for j0 in range(1, jmax + 1, chunk):
            j = np.arange(j0, min(j0 + chunk, jmax + 1), dtype=np.int64)
            count = np.zeros(j.size, dtype=np.int64)
            for i in range(k):
                q = (j - 1) >> i
                count += ((q & 1) == 0) & (((q + 1) << i) <= jmax)
            for c in unique(count).tolist():
                if c:
                    parts.setdefault(c, []).append(UnitRuns.from_units((1 << k) + j[count == c] - 1))
        # runs split only by a chunk's edge join up again
        out.append((k, [(c, runs[0].followed_by(*runs[1:])) for c, runs in sorted(parts.items())]))
    return out


def hybrid_error_scales(t: int, log_scale: float) -> list[float]:
    """The Laplace scales of the noise in the hybrid counter's output at step ``t``: k + 1 log
    nodes ``b`` (t ∈ [2^k, 2^{k+1})) and popcount(t − 2^k) nodes ``k·b`` of block k."""
    t = check_integer("t", t)
    b = check_positive("log_scale", log_scale)
    k = t.bit_length() - 1
    r = t - (1 << k)
    return [b] * (k + 1) + [k * b] * bin(r).count("1")


def hybrid_error_sum_b2(t: np.ndarray | int, log_scale: np.ndarray | float) -> np.ndarray:
    """Σ b² of the Laplace scales in the output at step ``t`` (vectorised; 0 at t = 0).

    >>> hybrid_error_sum_b2(np.array([0, 5]), 2.0).tolist()
    [0.0, 28.0]
    """
    t = np.asarray(t, dtype=np.int64)
    b = np.asarray(log_scale, dtype=float)
    safe = np.maximum(t, 1)
    k = _floor_log2(safe)
    r = safe - (np.int64(1) << k)
    pop = np.zeros_like(r)
    x = r.copy()
    while np.any(x):
        pop += x & 1
        x >>= 1
    out = b * b * ((k + 1) + pop * k * k)
    return np.where(t > 0, out, 0.0)


def hybrid_unit_event(
    epsilon: float, sensitivity: float, horizon: int, noise_factor: float = 1.0
) -> PrivacyEvent:
    """The worst case of one element of a hybrid counter over ``horizon`` steps: one branch per
    block k (elements at powers of two: the log node only; in block k ≥ 1: the log node and k
    nodes of block k). Every branch with k ≥ 1 composes to ε/factor by basic composition.

    >>> from dpaudit.accounting import account
    >>> ev = hybrid_unit_event(1.0, 1.0, 8)       # blocks 0 (log only), 1 and 2
    >>> len(ev.events), round(account(ev, delta=1e-6).bounds["basic"].value, 12)
    (3, 1.0)
    """
    eps = check_positive("epsilon", epsilon)
    sens = check_positive("sensitivity", sensitivity)
    f = check_positive("noise_factor", noise_factor)
    n = check_integer("horizon", horizon)
    log_ev = LaplaceEvent(scale=(1 * sens / (eps / 2)) * f, sensitivity=sens)
    branches: list[PrivacyEvent] = [log_ev]
    for k in range(1, n.bit_length()):
        if (1 << k) + 1 > n:
            break
        blk = LaplaceEvent(scale=(k * sens / (eps / 2)) * f, sensitivity=sens)
        branches.append(ComposedEvent((log_ev, blk.repeat(k))))
    return branches[0] if len(branches) == 1 else ParallelEvent(tuple(branches))


def _checked_batch(
    reps: int, epsilon: np.ndarray, noise_factor: np.ndarray | None, sensitivity: float, levels: int,
    ledgers: RunLedgers | None,
) -> tuple[np.ndarray, np.ndarray, float, int, RunLedgers | None]:
    """The per-repetition ε and noise factors, the sensitivity, the level cap and the ledgers of a
    batch of hybrid counters, validated (``ValueError`` naming the parameter)."""
    eps = np.asarray(epsilon, dtype=float).reshape(-1)
    if eps.shape != (reps,) or not np.all(eps > 0) or not np.all(np.isfinite(eps)):
        raise ValueError(f"epsilon must hold {reps} positive finite values")
    f = np.ones(reps) if noise_factor is None else np.asarray(noise_factor, dtype=float).reshape(-1)
    if f.shape != (reps,) or not np.all(f > 0) or not np.all(np.isfinite(f)):
        raise ValueError(f"noise_factor must hold {reps} positive finite values")
    if ledgers is not None and len(ledgers) != reps:
        raise ValueError(f"ledgers must hold {reps} ledgers, got {len(ledgers)}")
    return eps, f, check_positive("sensitivity", sensitivity), check_integer("levels", levels), ledgers


class BatchHybridStreams:
    """One scalar hybrid counter per (repetition, stream) with its own position (module docstring).

    Args:
        reps, streams: R and the number of streams per repetition (Wang et al. 2021: L items).
        epsilon: per-row budget ε of each counter, shape (R,) (Wang et al. 2021, Alg. 1: ε/L).
        sensitivity: Δ of one element (1 for 0/1 attractions).
        noise_factor: per-row multiplier of every scale, shape (R,) (default 1).
        levels: binary-block levels kept (enough for 2^levels − 1 elements per stream).
        ledgers: one ledger per repetition (or None); charges are written by :meth:`flush`.
    """

    def __init__(
        self,
        reps: int,
        streams: int,
        *,
        epsilon: np.ndarray,
        sensitivity: float = 1.0,
        noise_factor: np.ndarray | None = None,
        levels: int = 40,
        ledgers: RunLedgers | None = None,
        label: str = "hybrid",
    ) -> None:
        self.reps = check_integer("reps", reps)
        self.streams = check_integer("streams", streams)
        self.epsilon, self.factor, self.sensitivity, self.levels, self.ledgers = _checked_batch(
            self.reps, epsilon, noise_factor, sensitivity, levels, ledgers)
        self.label = label
        R, L, V = self.reps, self.streams, self.levels
        self.n = np.zeros((R, L), dtype=np.int64)  # elements inserted per stream
        self.beta = np.zeros((R, L))  # running total of the noisy log blocks
        self.pending = np.zeros((R, L))  # exact sum of the current log block
        self.alpha = np.zeros((R, L, V))  # exact node sums of the current binary block
        self.alpha_hat = np.zeros((R, L, V))  # their noisy releases
        self.out = np.zeros((R, L))  # current noisy prefix sums
        self._units: list[int] = []
        self._counts: list[np.ndarray] = []

    def log_scale(self, rows: np.ndarray) -> np.ndarray:
        """``Lap`` scale of a log-block release for the given rows: (2Δ/ε)·factor."""
        return (1 * self.sensitivity / (self.epsilon[rows] / 2)) * self.factor[rows]

    @property
    def insertion_epsilon(self) -> np.ndarray:
        """Per-row ε of one element (basic composition of its log node and block nodes)."""
        rows = np.arange(self.reps)
        return 2 * self.sensitivity / self.log_scale(rows)

    def insert(
        self, rows: np.ndarray, streams: np.ndarray, x: np.ndarray, z: np.ndarray, *, unit: int
    ) -> np.ndarray:
        """Insert ``x[i]`` into stream ``streams[i]`` of repetition ``rows[i]`` (pairs distinct),
        using the standard Laplace draw ``z[i]`` for the node it releases; ``unit`` is the data
        unit (round) the elements belong to. Returns the new noisy prefix sums of those streams."""
        rows = np.asarray(rows, dtype=np.intp)
        streams = np.asarray(streams, dtype=np.intp)
        x = np.asarray(x, dtype=float)
        z = np.asarray(z, dtype=float)
        if not (rows.shape == streams.shape == x.shape == z.shape) or rows.ndim != 1:
            raise ValueError("rows, streams, x and z must be 1-D arrays of one length")
        if rows.size == 0:
            return np.empty(0)
        n = self.n[rows, streams] + 1
        if int(n.max()) >= 1 << (self.levels + 1):
            raise ValueError(f"a stream exceeded 2^{self.levels + 1} elements; raise levels")
        self.n[rows, streams] = n
        self.pending[rows, streams] = self.pending[rows, streams] + x
        pow2 = (n & (n - 1)) == 0
        if pow2.any():
            pr, ps = rows[pow2], streams[pow2]
            noisy = self.pending[pr, ps] + self.log_scale(pr) * z[pow2]
            self.beta[pr, ps] = self.beta[pr, ps] + noisy
            self.pending[pr, ps] = 0.0
            self.alpha[pr, ps] = 0.0
            self.alpha_hat[pr, ps] = 0.0
            self.out[pr, ps] = self.beta[pr, ps]
        blk = ~pow2
        if blk.any():
            br, bs, nb = rows[blk], streams[blk], n[blk]
            k = _floor_log2(nb)
            j = nb - (np.int64(1) << k)
            i = lowbit(j)
            a = self.alpha[br, bs]  # (m, V) copies
            ah = self.alpha_hat[br, bs]
            below = np.arange(self.levels)[None, :] < i[:, None]
            # acc = leaf + alpha[0] + ... + alpha[i−1] in that order (a cumulative sum over the
            # levels with 0.0 for the others adds the same floats in the same order)
            terms = np.concatenate([x[blk][:, None], np.where(below, a, 0.0)], axis=1)
            acc = np.cumsum(terms, axis=1)[:, -1]
            a[below] = 0.0
            ah[below] = 0.0
            m = np.arange(nb.size)
            a[m, i] = acc
            scale = (k * self.sensitivity / (self.epsilon[br] / 2)) * self.factor[br]
            ah[m, i] = acc + scale * z[blk]
            self.alpha[br, bs] = a
            self.alpha_hat[br, bs] = ah
            # Σ of the noisy nodes over the set bits of j, lowest bit first (as BinaryTreeCounter)
            bits = ((j[:, None] >> np.arange(self.levels)[None, :]) & 1) == 1
            prefix = np.cumsum(np.where(bits, ah, 0.0), axis=1)[:, -1]
            self.out[br, bs] = self.beta[br, bs] + prefix
        if self.ledgers is not None:
            self._units.append(int(unit))
            self._counts.append(np.bincount(rows, minlength=self.reps))
            if self.ledgers.transcripts is not None:  # an audit keeps the released prefix sums
                keys = [f"{self.label} stream {s} element {k}" for s, k in zip(streams.tolist(), n.tolist())]
                self.ledgers.released(rows, keys, self.out[rows, streams])
        return self.out[rows, streams]

    def inserted(self, units: range, counts: np.ndarray) -> None:
        """Book insertions made outside :meth:`insert` by a loop that updates the state arrays
        (``n``, ``beta``, ``pending``, ``alpha``, ``alpha_hat``, ``out``) with its arithmetic:
        ``counts`` (R, len(units)) elements of each repetition in each unit, one call of
        :meth:`insert` per unit (each inserting something). Not when transcripts are kept (the
        released prefix sums are not passed)."""
        if self.ledgers is None:
            return
        if self.ledgers.transcripts is not None:
            raise RuntimeError("transcripts are kept: insert() each unit's elements")
        counts = np.asarray(counts, dtype=np.int64)
        if counts.shape != (self.reps, len(units)):
            raise ValueError(f"counts must have shape ({self.reps}, {len(units)})")
        self._units.extend(units)
        self._counts.extend(counts[:, i] for i in range(len(units)))

    def flush(self) -> None:
        """Write the per-insertion charges recorded since the last flush (one entry per repetition
        and number of insertions m: ``PureDpEvent(ε/factor).repeat(m)`` on the rounds with m)."""
        if self.ledgers is None or not self._units:
            return
        units = np.asarray(self._units, dtype=np.int64)
        counts = np.stack(self._counts, axis=1)  # (R, n)
        self._units, self._counts = [], []
        eps_ins = self.insertion_epsilon
        for r in range(self.reps):
            for m in unique(counts[r]).tolist():
                if m == 0:
                    continue
                ev = PureDpEvent(epsilon=float(eps_ins[r]))
                self.ledgers.record(
                    [r], ev.repeat(m) if m > 1 else ev,
                    units=UnitRuns.from_units(units[counts[r] == m]),
                    label=f"{self.label}: {m} insertion(s) per round",
                )  # fmt: skip


class BatchHybridSums:
    """One vector hybrid counter per repetition, advanced every round (module docstring).

    Args:
        reps, dim: R and the leaf dimension.
        epsilon: per-row budget (R,); ``sensitivity``: ℓ1 change of one leaf between neighbours.
        noise_factor: per-row multiplier of every scale (R,).
        ledgers: one ledger per repetition (or None); :meth:`flush` writes the node releases.
    """

    def __init__(
        self,
        reps: int,
        dim: int,
        *,
        epsilon: np.ndarray,
        sensitivity: float,
        noise_factor: np.ndarray | None = None,
        levels: int = 40,
        ledgers: RunLedgers | None = None,
        label: str = "hybrid sums",
    ) -> None:
        self.reps = check_integer("reps", reps)
        self.dim = check_integer("dim", dim)
        self.epsilon, self.factor, self.sensitivity, self.levels, self.ledgers = _checked_batch(
            self.reps, epsilon, noise_factor, sensitivity, levels, ledgers)
        self.label = label
        R, d, V = self.reps, self.dim, self.levels
        self.t = 0
        self.beta = np.zeros((R, d))
        self.pending = np.zeros((R, d))
        self.alpha = np.zeros((R, V, d))
        self.alpha_hat = np.zeros((R, V, d))
        self.out = np.zeros((R, d))
        self._flushed = False

    def log_scale(self) -> np.ndarray:
        """Per-row log-block scale (2Δ/ε)·factor, shape (R,)."""
        return (1 * self.sensitivity / (self.epsilon / 2)) * self.factor

    def block_scale(self, k: int) -> np.ndarray:
        """Per-row scale (2kΔ/ε)·factor of a node of binary block k, shape (R,)."""
        return (k * self.sensitivity / (self.epsilon / 2)) * self.factor

    def error_sum_b2(self, t: int | None = None) -> np.ndarray:
        """Per-row Σ b² of the Laplace noise in the output after step ``t`` (default: now)."""
        t = self.t if t is None else check_integer("t", t, 0)
        if t == 0:
            return np.zeros(self.reps)
        k = t.bit_length() - 1
        pop = bin(t - (1 << k)).count("1")
        b = self.log_scale()
        return b * b * ((k + 1) + pop * k * k)

    def step(self, x: np.ndarray, z: np.ndarray) -> np.ndarray:
        """Insert the leaves ``x`` (R, d) with the standard Laplace draws ``z`` (R, d) of the one
        node this step releases; return the noisy prefix sums (R, d). (A compiled loop may do the
        same arithmetic on the state arrays and advance ``t``: :mod:`bandits.cascading._kernel`.)"""
        x = np.asarray(x, dtype=float)
        z = np.asarray(z, dtype=float)
        if x.shape != (self.reps, self.dim) or z.shape != x.shape:
            raise ValueError(f"x and z must have shape ({self.reps}, {self.dim})")
        if self.t + 1 >= 1 << (self.levels + 1):
            raise ValueError(f"more than 2^{self.levels + 1} steps; raise levels")
        self.t += 1
        t = self.t
        self.pending = self.pending + x
        k = t.bit_length() - 1
        if t == 1 << k:
            noisy = self.pending + self.log_scale()[:, None] * z
            self.beta = self.beta + noisy
            self.pending = np.zeros_like(self.pending)
            self.alpha[:] = 0.0
            self.alpha_hat[:] = 0.0
            self.out = self.beta.copy()
            self._transcript(t, noisy)
            return self.out
        j = t - (1 << k)
        i = (j & -j).bit_length() - 1
        acc = x.copy()
        for lv in range(i):
            acc = acc + self.alpha[:, lv]
        self.alpha[:, :i] = 0.0
        self.alpha_hat[:, :i] = 0.0
        self.alpha[:, i] = acc
        self.alpha_hat[:, i] = acc + self.block_scale(k)[:, None] * z
        self._transcript(t, self.alpha_hat[:, i])
        prefix = np.zeros((self.reps, self.dim))
        for lv in range(j.bit_length()):
            if (j >> lv) & 1:
                prefix = prefix + self.alpha_hat[:, lv]
        self.out = self.beta + prefix
        return self.out

    def _transcript(self, t: int, node: np.ndarray) -> None:
        """Keep the node released at step ``t`` when the ledgers keep transcripts (an audit)."""
        if self.ledgers is not None:
            self.ledgers.released(np.arange(self.reps), f"{self.label} node of step {t}", node)

    def released_nodes(self) -> list[tuple[int, int, np.ndarray, np.ndarray]]:
        """The released nodes so far as (block k (0: log), level, first steps, last steps), steps
        1-based; the nodes of one (block, level) are listed together."""
        n = self.t
        out: list[tuple[int, int, np.ndarray, np.ndarray]] = []
        if n == 0:
            return out
        top = n.bit_length() - 1
        starts = np.array([1] + [(1 << (k - 1)) + 1 for k in range(1, top + 1)], dtype=np.int64)
        stops = np.array([1 << k for k in range(top + 1)], dtype=np.int64)
        out.append((0, 0, starts, stops))
        for k in range(1, top + 1):
            jmax = min(n - (1 << k), (1 << k) - 1)
            for i in range(k):
                m = np.arange(0, (jmax // (1 << i) + 1) // 2, dtype=np.int64)
                ends = (2 * m + 1) << i
                ends = ends[ends <= jmax]
                if ends.size:
                    out.append((k, i, (1 << k) + ends - (1 << i) + 1, (1 << k) + ends))
        return out

    def node_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """Per step 1..t: its binary block k (0 at powers of two) and how many released nodes of
        that block contain it (from :meth:`released_nodes`)."""
        n = self.t
        steps = np.arange(1, n + 1, dtype=np.int64)
        block = np.where((steps & (steps - 1)) == 0, 0, _floor_log2(steps))
        diff = np.zeros(n + 2, dtype=np.int64)
        for k, _, first, last in self.released_nodes():
            if k:
                np.add.at(diff, first, 1)
                np.add.at(diff, last + 1, -1)
        return block, np.cumsum(diff)[1 : n + 1]

    def flush(self) -> None:
        """Write every released node to the ledgers (once, at the end). Per unit (round = step − 1)
        the releases are its log block (one entry over the rounds of the released log blocks) and
        the c released nodes of its binary block k, written as one entry ``Lap(2kΔ/ε).repeat(c)``
        per (k, c) over the rounds with that count: the same per-unit composition as one entry per
        node, in about (log T)² entries whatever T."""
        if self._flushed or self.ledgers is None:
            return
        self._flushed = True
        if self.t == 0:
            return
        blocks = _count_runs(self.t)  # a chunk of steps at a time: no array over every step
        top = 1 << (self.t.bit_length() - 1)
        groups: dict[tuple[float, float], list[int]] = {}
        for r, (e, f) in enumerate(zip(self.epsilon.tolist(), self.factor.tolist())):
            groups.setdefault((e, f), []).append(r)
        for (eps, f), rows in groups.items():
            log_ev = LaplaceEvent(scale=(1 * self.sensitivity / (eps / 2)) * f, sensitivity=self.sensitivity)
            self.ledgers.record(rows, log_ev, units=range(0, top), label=f"{self.label}: log blocks")
            for k, per_count in blocks:
                ev = LaplaceEvent(scale=(k * self.sensitivity / (eps / 2)) * f, sensitivity=self.sensitivity)
                for c, units in per_count:
                    self.ledgers.record(
                        rows, ev.repeat(c) if c > 1 else ev, units=units,
                        label=f"{self.label}: block {k}, {c} node(s) per step",
                    )  # fmt: skip
