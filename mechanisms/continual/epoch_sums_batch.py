"""Lazy doubling-epoch Laplace estimates of N arms for R repetitions at once, with exact ledgers.

The vectorised counterpart of :class:`mechanisms.continual.epoch_sums.LazyEpochSums` (same schedule, tested
against it) for semi-bandit feedback (DPUCB-MAT and DPTS-MAT of Chandak, Hu & Hegde (2023),
Algorithms 2–3): every arm buffers its fresh observations; its epoch j holds exactly 2ʲ of them
(epoch 0: one observation — the initial w₀ or the arm's first pull); when the epoch fills, one noisy
sum ``Σ epoch + Lap(b)`` is released and the arm's estimate becomes ``(Σ + Lap(b))/2ʲ`` with
``T_e = 2ʲ`` (lines 10–15 of Algorithm 2). Older data are never reused, the epoch in progress is
unused, and the buffer left at the horizon is never released.

So after N pulls (epoch 0 included, i.e. N + 1 observations with the initial w₀ counted as one):
``T_e = 2^{⌊log₂(N+2)⌋−1}`` and ``⌊log₂(N+2)⌋`` Laplace draws (N = 0, 1 → T_e = 1; N = 2..5 → 2;
N = 6..13 → 4; N = 14..29 → 8; tested).

**Ledger.** Every observation enters at most one release, so a round (the unit of privacy: one
round's reward vector) is charged one release of ``Lap(b)`` (sensitivity ``Δ``) per observed
arm whose epoch has been released. The charges are written by :meth:`flush` from the record of
which arms each round observed and where each arm's unreleased buffer starts: an observation at
round t of arm e is released iff t < (start of e's final buffer). Rounds are written as ranges
(one entry per run of rounds with at least c released observations, c = 1..K), so the ledger
stays small at 10⁶ rounds. :meth:`release_all` is the paper's initialisation — w₀ observed for
**every** arm in one round — and charges that round N releases (or none if w₀ is declared
public).

Example:
    >>> import numpy as np
    >>> from dpaudit.ledger import RunLedgers
    >>> from mechanisms.randomness import NoiseTape, RepRandom
    >>> seeds = [np.random.SeedSequence(3, spawn_key=(r,)) for r in range(2)]
    >>> led = RunLedgers(2)
    >>> tape = NoiseTape(RepRandom(seeds))
    >>> lazy = BatchLazyEpochs(2, 3, horizon=8, epsilon=1.0, noise=tape, ledgers=led, width=1)
    >>> for t in range(8):
    ...     lazy.push(np.array([[0], [t % 3]]), np.ones((2, 1)), t)
    >>> lazy.size.tolist(), lazy.draws.tolist()          # T_e after 8 (rep 0) and 3/3/2 pulls
    ([[4, 0, 0], [2, 2, 1]], [[3, 0, 0], [2, 2, 1]])
    >>> lazy.flush(); sorted(led[0].charges().items())   # rounds 0..6 released, round 7 buffered
    [(0, 1), (1, 1), (2, 1), (3, 1), (4, 1), (5, 1), (6, 1)]
"""

from __future__ import annotations

import numpy as np

from dpaudit.events import LaplaceEvent, PrivacyEvent
from dpaudit.ledger import RunLedgers
from dpaudit.validation import check_integer, check_positive
from mechanisms.randomness import NoiseTape

__all__ = ["BatchLazyEpochs", "lazy_count", "lazy_draws"]


def lazy_count(pulls: int) -> int:
    """``T_e`` after ``pulls`` pulls following the initial observation: 2^{⌊log₂(N+2)⌋−1}.

    >>> [lazy_count(n) for n in (0, 1, 2, 5, 6, 13, 14, 30)]
    [1, 1, 2, 2, 4, 4, 8, 16]
    """
    n = check_integer("pulls", pulls, 0)
    return 1 << ((n + 2).bit_length() - 2)


def lazy_draws(pulls: int) -> int:
    """Laplace draws of one arm after the initial observation and ``pulls`` pulls: ⌊log₂(N+2)⌋.

    >>> [lazy_draws(n) for n in (0, 1, 2, 5, 6)]
    [1, 1, 2, 2, 3]
    """
    n = check_integer("pulls", pulls, 0)
    return (n + 2).bit_length() - 1


class BatchLazyEpochs:
    """Per-arm lazy doubling epochs for R repetitions (module docstring).

    Args:
        reps, n_arms, horizon: R, N and the number of rounds T (rounds are 0-based).
        epsilon / noise_scale: exactly one; ``epsilon`` gives ``b = Δ/ε`` (one release is ε-DP).
        sensitivity: Δ, the bound on one observation's change (rewards in [0, 1]: 1).
        noise: a tape of standard Laplace draws (one stream per repetition).
        ledgers: one ledger per repetition.
        width: the most observations per round (K).
        label: prefix of the ledger labels.

    Attributes:
        size: (R, N) ``T_e`` — the size of the last released epoch (0: none yet).
        estimate: (R, N) the last released noisy mean (0: none yet).
        draws: (R, N) Laplace releases so far.
    """

    def __init__(
        self,
        reps: int,
        n_arms: int,
        horizon: int,
        *,
        epsilon: float | None = None,
        noise_scale: float | None = None,
        sensitivity: float = 1.0,
        noise: NoiseTape,
        ledgers: RunLedgers | None,
        width: int,
        label: str = "lazy epoch",
    ) -> None:
        self.reps = check_integer("reps", reps)
        self.n_arms = check_integer("n_arms", n_arms)
        self.horizon = check_integer("horizon", horizon)
        self.width = check_integer("width", width)
        self.sensitivity = check_positive("sensitivity", sensitivity)
        if (epsilon is None) == (noise_scale is None):
            raise ValueError("give exactly one of epsilon or noise_scale")
        self.scale = (
            self.sensitivity / check_positive("epsilon", epsilon)
            if epsilon is not None
            else check_positive("noise_scale", noise_scale)
        )
        if not isinstance(noise, NoiseTape) or noise.sampler != "laplace":
            raise ValueError("noise must be a NoiseTape of standard Laplace draws")
        if ledgers is not None and len(ledgers) != self.reps:
            raise ValueError(f"ledgers must hold {self.reps} ledgers, got {len(ledgers)}")
        self.noise, self.ledgers, self.label = noise, ledgers, label
        R, N = self.reps, self.n_arms
        self.epoch = np.zeros((R, N), dtype=np.int64)  # epochs released so far
        self.size = np.zeros((R, N), dtype=np.int64)
        self.estimate = np.zeros((R, N))
        self.draws = np.zeros((R, N), dtype=np.int64)
        self._sum = np.zeros((R, N))
        self._cnt = np.zeros((R, N), dtype=np.int64)
        self._start = np.full((R, N), self.horizon, dtype=np.int64)  # first round of the buffer
        self._observed = np.full((R, self.horizon, self.width), -1, dtype=self.record_dtype(N))
        self._rows = np.arange(R)
        self._flushed = False

    @staticmethod
    def record_dtype(n_arms: int) -> type[np.signedinteger]:
        """The integer type of the per-round record of observed arms (−1: none): the smallest
        that holds every arm index."""
        return np.int8 if n_arms <= 2**7 else np.int16 if n_arms <= 2**15 else np.int32

    @classmethod
    def record_bytes(cls, reps: int, n_arms: int, horizon: int, width: int) -> int:
        """Peak bytes of the record of which arms every round observed, kept until :meth:`flush`
        (``reps × horizon × width`` entries of :meth:`record_dtype`; the exact charges need it,
        since whether an observation is released is known only when its epoch fills), plus
        :meth:`flush`'s per-round temporaries (a count, a mask and its difference: 4 bytes a round
        for ``width < 256``, one repetition at a time).

        >>> BatchLazyEpochs.record_bytes(10, 10, 10**6, 3)
        34000000
        """
        count = 1 if width < 2**8 else 4
        return reps * horizon * width * np.dtype(cls.record_dtype(n_arms)).itemsize + (count + 3) * horizon

    @property
    def event(self) -> PrivacyEvent:
        """The event of one epoch release."""
        return LaplaceEvent(scale=self.scale, sensitivity=self.sensitivity)

    @property
    def epsilon(self) -> float:
        return self.sensitivity / self.scale

    def _release(self, rows: np.ndarray, arms: np.ndarray) -> None:
        z = self.noise.take(rows, 1)[:, 0]
        need = np.left_shift(1, self.epoch[rows, arms])
        self.estimate[rows, arms] = (self._sum[rows, arms] + self.scale * z) / need
        if self.ledgers is not None and self.ledgers.transcripts is not None:
            epochs = self.epoch[rows, arms].tolist()
            keys = [f"{self.label} arm {a} epoch {e}" for a, e in zip(arms.tolist(), epochs)]
            self.ledgers.released(rows, keys, self.estimate[rows, arms])
        self.size[rows, arms] = need
        self.epoch[rows, arms] += 1
        self.draws[rows, arms] += 1
        self._sum[rows, arms] = 0.0
        self._cnt[rows, arms] = 0
        self._start[rows, arms] = self.horizon

    def release_all(self, values: np.ndarray, round: int, *, charge: bool = True) -> None:
        """Epoch 0 of every arm from one full observation ``values`` (R, N) at ``round``
        (Chandak, Hu & Hegde (2023), Algorithm 2, line 2); charges that round N releases unless
        ``charge=False`` (public w₀)."""
        v = np.asarray(values, dtype=float)
        if v.shape != (self.reps, self.n_arms):
            raise ValueError(f"values must have shape ({self.reps}, {self.n_arms}), got {v.shape}")
        if self.epoch.any() or self._cnt.any():
            raise ValueError("release_all is the initialisation: no observation may precede it")
        t = check_integer("round", round, 0)
        z = self.noise.take(self._rows, self.n_arms)  # arm e gets each repetition's e-th draw
        self.estimate[:] = (v + self.scale * z) / 1.0
        if self.ledgers is not None:
            self.ledgers.released(self._rows, f"{self.label} initial release", self.estimate)
        self.size[:] = 1
        self.epoch[:] = 1
        self.draws[:] += 1
        if charge and self.ledgers is not None:  # N releases about the one record w0, one entry
            self.ledgers.record(
                self._rows,
                self.event.repeat(self.n_arms),
                units=[t],
                label=f"{self.label}: initial w0 of all {self.n_arms} arms",
                round=t,
            )

    def push(self, arms: np.ndarray, values: np.ndarray, round: int) -> None:
        """Buffer the observations ``values`` (R, K) of ``arms`` (R, K; distinct per row) made at
        ``round`` and release the epochs they complete."""
        a = np.asarray(arms, dtype=np.int64)
        v = np.asarray(values, dtype=float)
        K = a.shape[1]
        if a.shape != (self.reps, K) or v.shape != a.shape or K > self.width:
            raise ValueError(
                f"arms and values must have shape ({self.reps}, <= {self.width}), got {a.shape}, {v.shape}"
            )
        t = int(round)
        self._observed[:, t, :K] = a
        r = self._rows[:, None]
        self._sum[r, a] += v
        self._cnt[r, a] += 1
        cnt = self._cnt[r, a]
        fresh = cnt == 1
        if fresh.any():
            rr, kk = np.nonzero(fresh)
            self._start[rr, a[rr, kk]] = t
        self._release_full(a, cnt)

    def _release_full(self, a: np.ndarray, cnt: np.ndarray) -> None:
        """Release the epochs that the round's arms ``a`` (R, K), with buffer counts ``cnt``
        (R, K) after it, have just filled: column by column, rows in order (the noise order)."""
        full = cnt == np.left_shift(1, self.epoch[self._rows[:, None], a])
        if full.any():
            for k in range(a.shape[1]):
                rows = np.flatnonzero(full[:, k])
                if rows.size:
                    self._release(rows, a[rows, k])

    def _pulls(self, arms: np.ndarray) -> np.ndarray:
        """(R, B, N) booleans: arm e observed in the block's round b (``arms``: (R, B, K))."""
        R, B, K = arms.shape
        hit = np.zeros((R, B, self.n_arms), dtype=bool)
        hit[self._rows[:, None, None], np.arange(B)[None, :, None], arms] = True
        return hit

    def rounds_to_release(self, arms: np.ndarray) -> np.ndarray:
        """(R,) for a block of rounds whose observed ``arms`` are (R, B, K): the offset of the first
        round of the block in which each repetition would fill an epoch (B: none in the block).

        Every round observes an arm at most once, so an arm with ``n`` observations left in its
        epoch fills it at the round of its n-th pull in the block."""
        left: np.ndarray = np.left_shift(1, self.epoch) - self._cnt  # >= 1 for every arm
        pulled = np.cumsum(self._pulls(arms), axis=1, dtype=np.int64)
        fills = np.any(pulled >= left[:, None, :], axis=2)
        return np.where(fills.any(axis=1), fills.argmax(axis=1), arms.shape[1])

    def push_block(self, arms: np.ndarray, values: np.ndarray, round: int) -> None:
        """:meth:`push` of the B rounds ``round .. round+B-1`` at once (``arms``, ``values``:
        (R, B, K)), where no epoch fills before the last round (:meth:`rounds_to_release`);
        the same state, releases and noise order as B calls of :meth:`push`.

        The sums are accumulated by ``bincount``, which adds its weights one by one in input
        order: each arm's buffer sum is followed by its observations in round order, so every
        float addition is the one :meth:`push` makes."""
        a = np.asarray(arms, dtype=np.int64)
        v = np.asarray(values, dtype=float)
        R, B, K = a.shape
        if R != self.reps or v.shape != a.shape or K > self.width or B < 1:
            raise ValueError(f"arms and values must have shape ({self.reps}, B, <= {self.width}), got "
                             f"{a.shape}, {v.shape}")
        t, N = int(round), self.n_arms
        self._observed[:, t : t + B, :K] = a
        pulls = self._pulls(a)
        cells = (self._rows[:, None, None] * N + a).ravel()
        order = np.concatenate([np.arange(R * N), cells])
        weights = np.concatenate([self._sum.ravel(), v.ravel()])
        self._sum[:] = np.bincount(order, weights, minlength=R * N).reshape(R, N)
        fresh = (self._cnt == 0) & pulls.any(axis=1)
        self._start[fresh] = t + pulls.argmax(axis=1)[fresh]
        self._cnt += pulls.sum(axis=1)
        early = self._cnt - pulls[:, -1] >= np.left_shift(1, self.epoch)
        if early.any():
            raise ValueError("push_block: an epoch fills before the block's last round")
        last = a[:, -1]
        self._release_full(last, self._cnt[self._rows[:, None], last])

    def released_counts(self, rep: int, block: int = 2**16) -> np.ndarray:
        """(T,) how many of each round's observations repetition ``rep`` has released so far
        (the smallest unsigned type that holds ``width``), computed ``block`` rounds at a time so
        that the temporaries do not grow with the horizon."""
        out = np.zeros(self.horizon, dtype=np.uint8 if self.width < 2**8 else np.uint32)
        start_of = self._start[rep]
        for a in range(0, self.horizon, block):
            obs = self._observed[rep, a : a + block]
            valid = obs >= 0
            start = start_of[np.where(valid, obs, 0)]
            rounds = np.arange(a, a + obs.shape[0])[:, None]
            out[a : a + obs.shape[0]] = (valid & (rounds < start)).sum(axis=1)
        return out

    def flush(self) -> None:
        """Write the charges of every released observation to the ledgers (once, at the end)."""
        if self._flushed or self.ledgers is None or not self.ledgers.recording:
            return
        self._flushed = True
        for rep in range(self.reps):
            counts = self.released_counts(rep)
            for c in range(1, self.width + 1):
                mask = counts >= c
                if not mask.any():
                    continue
                edges = np.flatnonzero(np.diff(mask.view(np.int8), prepend=np.int8(0), append=np.int8(0)))
                for a, b in zip(edges[::2].tolist(), edges[1::2].tolist()):
                    self.ledgers[rep].record(
                        self.event,
                        units=range(a, b),
                        label=f"{self.label} releases (observation {c} of a round)",
                    )
