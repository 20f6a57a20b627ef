"""Tree-based aggregation of vector leaves for R repetitions at once (CUCB-DP, Chen et al. 2020).

The vectorised counterpart of :class:`mechanisms.continual.tree.BinaryTreeCounter` with
``tree="full", padded=True`` (same nodes, same order, tested against it): a stream of leaves
``x_1, x_2, …`` in ℝ^m (Chen et al. (2020), Algorithm 3: ``X_t ⊙ 1[S_t]``, support ≤ K) is aggregated in
a binary tree with ``levels = ⌈log₂T⌉ + 1`` levels; every dyadic node is released once, with
fresh i.i.d. ``Lap(b)`` noise on each of its m coordinates, when its block completes, and
:meth:`close` releases the unfinished nodes on the last step's root path — so that every step's
leaf enters exactly ``levels`` noisy nodes, one per level (Dwork et al. 2010; Chen et al. 2020, §4.2).
The noisy prefix sum after step t is the sum of the noisy nodes of t's binary digits (Chan, Shi
& Song 2011); nodes that are right children are released but never needed for prefix sums.

**Ledger.** A neighbouring stream changes one step's leaf by at most Δ in ℓ1 (Δ = K for
K-sparse leaves in [0, 1]^m), so every released node is one ``Lap(b)`` release of sensitivity Δ
for the steps it sums. The nodes of one level partition the steps; :meth:`flush` writes, per
level, one entry covering the steps its released nodes summed (per unit, the same composition as
one entry per node). Each user (step) is then charged ``levels`` releases: ε = levels·Δ/b
(Chen et al. (2020), Theorem 7, by basic composition).

Noise is drawn per chunk of steps from one generator per repetition (``prepare``), so the values
do not depend on the chunking.

Example:
    >>> import numpy as np
    >>> from dpaudit.ledger import RunLedgers
    >>> from mechanisms.randomness import RepRandom
    >>> seeds = [np.random.SeedSequence(5, spawn_key=(r,)) for r in range(2)]
    >>> led = RunLedgers(2)
    >>> tree = BatchTreeSums(2, 6, 3, noise_scale=4.0, sensitivity=2.0, noise=RepRandom(seeds), ledgers=led)
    >>> tree.levels, tree.epsilon_per_step
    (4, 2.0)
    >>> tree.prepare(0, 6)
    >>> out = [tree.step(np.ones((2, 3))) for _ in range(6)]
    >>> tree.close(); tree.flush()
    >>> sorted(set(led[0].charges().values())), len(led[0])   # 4 nodes per step, 4 entries
    ([4], 4)
"""

from __future__ import annotations

import numpy as np

from dpaudit.events import LaplaceEvent, PrivacyEvent
from dpaudit.ledger import RunLedgers
from dpaudit.validation import check_integer, check_positive
from mechanisms.continual.tree import tree_levels
from mechanisms.randomness import RepRandom

__all__ = ["BatchTreeSums", "nodes_released"]


def nodes_released(step: int) -> int:
    """Nodes the full tree releases at 1-based step s: lowbit(s) + 1 (the node completing at
    level lowbit(s) and the right children below it).

    >>> [nodes_released(s) for s in range(1, 9)]
    [1, 2, 1, 3, 1, 2, 1, 4]
    """
    s = check_integer("step", step)
    return (s & -s).bit_length()


class BatchTreeSums:
    """Full, padded binary tree over vector leaves for R repetitions (module docstring).

    Args:
        reps, horizon, dim: R, the number of steps T and the leaf dimension m.
        epsilon / noise_scale: exactly one; ``epsilon`` gives ``b = levels·Δ/ε`` (every step's
            leaf in ``levels`` nodes: ε in total); ``noise_scale`` is ``b`` itself (e.g. seed
            003's literal ``2K log T/ε``, whatever that spends).
        sensitivity: Δ, the ℓ1 change of one leaf between neighbouring streams.
        noise: one generator per repetition (standard Laplace blocks).
        ledgers: one ledger per repetition (or None).
    """

    def __init__(
        self,
        reps: int,
        horizon: int,
        dim: int,
        *,
        epsilon: float | None = None,
        noise_scale: float | None = None,
        sensitivity: float = 1.0,
        noise: RepRandom,
        ledgers: RunLedgers | None,
        label: str = "tree",
    ) -> None:
        self.reps = check_integer("reps", reps)
        self.horizon = check_integer("horizon", horizon)
        self.dim = check_integer("dim", dim)
        self.sensitivity = check_positive("sensitivity", sensitivity)
        self.levels = tree_levels(self.horizon, padded=True)
        if (epsilon is None) == (noise_scale is None):
            raise ValueError("give exactly one of epsilon or noise_scale")
        self.scale = (
            self.levels * self.sensitivity / check_positive("epsilon", epsilon)
            if epsilon is not None
            else check_positive("noise_scale", noise_scale)
        )
        if not isinstance(noise, RepRandom) or len(noise) != self.reps:
            raise ValueError(f"noise must be a RepRandom of {self.reps} generators")
        if ledgers is not None and len(ledgers) != self.reps:
            raise ValueError(f"ledgers must hold {self.reps} ledgers, got {len(ledgers)}")
        self.noise, self.ledgers, self.label = noise, ledgers, label
        R, L, m = self.reps, self.levels, self.dim
        self.t = 0
        self.alpha = np.zeros((R, L, m))  # exact sums of the nodes of t's binary digits
        self.alpha_hat = np.zeros((R, L, m))
        self.prefix = np.zeros((R, m))  # noisy prefix sum
        self.covered = np.zeros(L, dtype=np.int64)  # steps covered by released nodes, per level
        self.released = 0
        self.closed = False
        self._z = np.zeros((R, 0, m))
        self._zi = 0
        self._flushed = False

    @property
    def event(self) -> PrivacyEvent:
        """The event of one node release."""
        return LaplaceEvent(scale=self.scale, sensitivity=self.sensitivity)

    @property
    def epsilon_per_step(self) -> float:
        """levels · Δ / b: every step's charge after :meth:`close` (basic composition)."""
        return self.levels * self.sensitivity / self.scale

    def prepare(self, t0: int, t1: int) -> None:
        """Draw the noise of the nodes released in steps t0+1 .. t1 (0-based rounds t0 .. t1−1)."""
        n = sum(nodes_released(s) for s in range(t0 + 1, t1 + 1))
        self._z = self.noise.laplace((n, self.dim))
        self._zi = 0

    def _noise(self) -> np.ndarray:
        if self._zi >= self._z.shape[1]:
            self._z = self.noise.laplace((1, self.dim))  # outside prepare (close): one node
            self._zi = 0
        z = self._z[:, self._zi]
        self._zi += 1
        self.released += 1
        return self.scale * z

    def _transcript(self, key: str, values: np.ndarray) -> None:
        """Keep a released node's values when the ledgers keep transcripts (an audit)."""
        if self.ledgers is not None:
            self.ledgers.released(np.arange(self.reps), f"{self.label} {key}", values)

    def step(self, leaf: np.ndarray) -> np.ndarray:
        """Insert the leaves (R, m) of the next step; return the noisy prefix sums (R, m)."""
        if self.closed:
            raise ValueError("the tree is closed; no more steps can be inserted")
        if self.t >= self.horizon:
            raise ValueError(f"the tree's horizon is {self.horizon} steps; cannot insert another")
        x = np.asarray(leaf, dtype=float)
        if x.shape != (self.reps, self.dim):
            raise ValueError(f"leaf must have shape ({self.reps}, {self.dim}), got {x.shape}")
        self.t += 1
        s = self.t
        i = (s & -s).bit_length() - 1
        acc = x.copy()
        for j in range(i):  # right children: released, never used by prefix sums
            self._transcript(f"level {j} node ending at step {s}", acc + self._noise())
            self.covered[j] = s
            acc += self.alpha[:, j]
        hat = acc + self._noise()
        self._transcript(f"level {i} node ending at step {s}", hat)
        self.covered[i] = s
        self.prefix += hat - self.alpha_hat[:, :i].sum(axis=1)
        self.alpha[:, :i] = 0.0
        self.alpha_hat[:, :i] = 0.0
        self.alpha[:, i] = acc
        self.alpha_hat[:, i] = hat
        return self.prefix

    def close(self) -> None:
        """Release the unfinished nodes on the last step's root path (every step then lies in
        exactly ``levels`` released nodes)."""
        if self.closed or self.t == 0:
            self.closed = True
            return
        self.closed = True
        n = self.t
        for j in range(self.levels):
            start = ((n - 1) >> j << j) + 1
            if start + (1 << j) - 1 > n:
                total = sum(
                    (self.alpha[:, l] for l in range(j) if (n >> l) & 1), np.zeros((self.reps, self.dim))
                )
                self._transcript(f"level {j} node closing at step {n}", total + self._noise())
                self.covered[j] = n

    def flush(self) -> None:
        """Write the per-level charges to the ledgers (once, at the end)."""
        if self._flushed or self.ledgers is None:
            return
        self._flushed = True
        rows = np.arange(self.reps)
        for j in range(self.levels):
            if self.covered[j] > 0:
                self.ledgers.record(
                    rows,
                    self.event,
                    units=range(0, int(self.covered[j])),
                    label=f"{self.label} level {j} nodes",
                )
