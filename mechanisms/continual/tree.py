"""Continual counting by the binary mechanism: private running sums released at every step.

A continual counter receives a stream ``x_1, x_2, ...`` (scalars or vectors of a fixed
``shape``) and after every step releases a noisy prefix sum ``S_t = x_1 + ... + x_t``. The
noise is added to *nodes* (dyadic partial sums, "p-sums"); each node is one randomised
release, recorded in the ledger as one event labelled with the data units of the steps it
sums. Per data unit the ledger therefore composes exactly the noisy nodes that unit entered
(basic composition over the levels of the tree); across units it is parallel composition.

The binary mechanism of Chan, Shi & Song (2011, "Private and continual release of statistics"):

:class:`BinaryTreeCounter` (the binary mechanism / tree-based aggregation, Dwork et al. 2010)
    Level ``j`` has the dyadic blocks ``[k·2^j + 1, (k+1)·2^j]`` (1-based steps). A block
    is released (once, with fresh noise) at the step where it completes; the output at step
    ``t`` is the sum of the ``popcount(t)`` released blocks of ``t``'s binary decomposition.

    **Release convention (exact; two choices).**

    * ``tree="binary"`` (default; Chan et al.'s binary mechanism): at step ``t`` only the
      block ``(t − 2^i, t]`` with ``i`` = lowest set bit of ``t`` is released (one node per
      step; right children are never needed for prefix sums). Step ``p`` is charged
      ``tree_charge(p, T) = #{j : bit j of p−1 is 0, 2^j·⌈p/2^j⌉ ≤ T}`` nodes: **not uniform**;
      the maximum, ``⌊log₂T⌋ + 1 = T.bit_length()``, is attained by step 1.
    * ``tree="full"`` (tree-based aggregation, Dwork et al. 2010, as in Chen et al. 2020): every
      dyadic block is released when it completes, and :meth:`BinaryTreeCounter.close`
      releases the unfinished blocks on the last step's root path (noisy partial sums). After
      ``close()`` **every** step has been charged exactly ``levels`` nodes, one per level.

    ``levels = tree_levels(T, padded=...)``: ``⌊log₂T⌋ + 1`` (default) or, with
    ``padded=True``, ``⌈log₂T⌉ + 1`` (the tree over ``2^⌈log₂T⌉`` leaves; one extra level
    whose root covers steps beyond ``T`` when ``T`` is not a power of 2). So "each unit is
    charged ``⌈log₂T⌉ + 1`` releases" holds exactly for ``tree="full", padded=True`` after
    ``close()``; for ``T`` a power of two both level conventions agree.

    Calibration: with ``epsilon`` (Laplace, ℓ1-sensitivity Δ) every node gets
    ``Lap(levels·Δ/ε)``, so each unit's basic composition is at most ``levels · ε/levels = ε``
    (exactly ε for charged-``levels`` units). With ``mu`` (Gaussian, ℓ2-sensitivity Δ) every
    node gets ``N(0, levels·Δ²/μ²)``: μ-GDP per unit. ``noise_scale`` sets the per-node scale
    directly (e.g. the literal ``2K log T/ε`` of Chen et al. (2020), Algorithm 3) and the ledger then
    certifies whatever that spends.

The anytime counter built on it is :class:`~mechanisms.continual.hybrid.HybridCounter`; the
vectorised counterpart for R repetitions is :mod:`mechanisms.continual.tree_batch`.

Use by the papers (see ``docs/mechanisms-continual.md``): CUCB-DP (Chen et al. (2020),
Algorithm 3) uses one :class:`BinaryTreeCounter` with vector leaves ``shape=(m,)`` (K-sparse),
``sensitivity=K`` and per-node ``Lap(2K log T/ε)`` (``noise_scale=``) or calibrated
``epsilon=ε``; the prose B_∞ variant is the ``K = 1`` case.

Outputs carry leading batch dimensions ``size`` (independent noise, same data), sampled
from an explicit :class:`numpy.random.Generator`.

Example:
    >>> import numpy as np
    >>> from dpaudit.ledger import Ledger
    >>> ledger = Ledger()
    >>> c = BinaryTreeCounter(6, epsilon=1.0, tree="full", padded=True,
    ...                       rng=np.random.default_rng(0), ledger=ledger)
    >>> c.levels, c.node_scale          # ⌈log₂6⌉ + 1 = 4 levels, Lap(4/ε) per node
    (4, 4.0)
    >>> outs = [c.step(1.0) for _ in range(6)]
    >>> [ledger.charges()[p] for p in range(1, 7)]   # before close(): completed blocks only
    [3, 3, 3, 3, 2, 2]
    >>> _ = c.close()
    >>> sorted(set(ledger.charges().values()))
    [4]
    >>> c.noise_variance(6) == 2 * 2 * 4.0**2     # popcount(6) = 2 Laplace nodes
    True
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from dpaudit.events import Neighbouring, PrivacyEvent
from dpaudit.ledger import Ledger
from dpaudit.validation import check_integer
from mechanisms.base import Norm, check_batch, check_neighbouring, check_rng, record_release
from mechanisms.continual.noise import NoiseKind, calibrate_noise
from mechanisms.continual.release_log import ReleaseLog, as_leaf, check_shape

if TYPE_CHECKING:
    from dpaudit.events_ml import TreeAggregationEvent

__all__ = ["TreeKind", "tree_levels", "tree_charge", "tree_node_layout", "BinaryTreeCounter"]

TreeKind = Literal["binary", "full"]


def tree_levels(horizon: int, *, padded: bool = False) -> int:
    """Number of tree levels for a stream of ``horizon`` steps.

    ``padded=False``: ``⌊log₂T⌋ + 1`` (levels whose blocks can complete by ``T``);
    ``padded=True``: ``⌈log₂T⌉ + 1`` (full tree over ``2^⌈log₂T⌉`` leaves).

    >>> [tree_levels(T) for T in (1, 2, 3, 4, 5, 8, 9)]
    [1, 2, 2, 3, 3, 4, 4]
    >>> [tree_levels(T, padded=True) for T in (1, 2, 3, 4, 5, 8, 9)]
    [1, 2, 3, 3, 4, 4, 5]
    """
    T = check_integer("horizon", horizon)
    return (T - 1).bit_length() + 1 if padded else T.bit_length()


def tree_charge(position: int, horizon: int, *, tree: TreeKind = "binary") -> int:
    """How many nodes released within ``horizon`` steps contain 1-based step ``p`` (before
    :meth:`BinaryTreeCounter.close`).

    ``tree="binary"`` (Chan et al.: only the block ``(t − 2^i, t]``, ``i`` = lowest set bit
    of ``t``, is released at step ``t``): ``#{j : bit j of p−1 is 0, 2^j·⌈p/2^j⌉ ≤ T}``.
    ``tree="full"`` (every completed dyadic block is released): ``#{j : 2^j·⌈p/2^j⌉ ≤ T}``.

    >>> [tree_charge(p, 8) for p in range(1, 9)]
    [4, 3, 3, 2, 3, 2, 2, 1]
    >>> [tree_charge(p, 5, tree="full") for p in range(1, 6)]
    [3, 3, 3, 3, 1]
    """
    p = check_integer("position", position)
    T = check_integer("horizon", horizon)
    if tree not in ("binary", "full"):
        raise ValueError(f"tree must be 'binary' or 'full', got {tree!r}")
    if p > T:
        raise ValueError(f"position must be <= horizon ({T}), got {p}")
    count, j = 0, 0
    while (1 << j) <= T:
        k = (p - 1) >> j
        if ((k + 1) << j) <= T and (tree == "full" or k % 2 == 0):
            count += 1
        j += 1
    return count


def tree_node_layout(
    num_steps: int, *, levels: int, tree: TreeKind = "binary", closed: bool = False
) -> list[tuple[int, int, int]]:
    """The nodes a :class:`BinaryTreeCounter` releases in ``num_steps`` steps, in release
    order, as ``(level, first_step, last_step)`` (1-based, inclusive). With ``closed=True``
    (full tree only) the partial nodes released by :meth:`BinaryTreeCounter.close` follow.

    >>> tree_node_layout(3, levels=2)
    [(0, 1, 1), (1, 1, 2), (0, 3, 3)]
    >>> tree_node_layout(3, levels=3, tree="full", closed=True)
    [(0, 1, 1), (0, 2, 2), (1, 1, 2), (0, 3, 3), (1, 3, 3), (2, 1, 3)]
    """
    n = check_integer("num_steps", num_steps)
    out: list[tuple[int, int, int]] = []
    for t in range(1, n + 1):
        low = (t & -t).bit_length() - 1
        for j in range(0 if tree == "full" else low, min(low, levels - 1) + 1):
            out.append((j, t - (1 << j) + 1, t))
    if closed:
        for j in range(levels):
            start = ((n - 1) >> j << j) + 1
            if start + (1 << j) - 1 > n:
                out.append((j, start, n))
    return out



class BinaryTreeCounter(ReleaseLog):
    """Binary-mechanism continual counter over a known horizon (see module docstring).

    Args:
        horizon: the number of steps ``T`` the tree is built for (``step`` refuses more).
        shape: the shape of one leaf (``()`` scalar, ``(m,)`` vector leaves).
        noise: ``"laplace"`` (pure ε-DP) or ``"gaussian"`` (μ-GDP).
        epsilon / mu / noise_scale: exactly one; the per-unit budget (calibrated over the
            ``levels`` nodes a unit enters) or the per-node scale ``b`` / ``σ`` directly.
        sensitivity: bound on ``‖x_t − x'_t‖`` (ℓ1 for Laplace, ℓ2 for Gaussian) between
            neighbouring streams, which differ in one step's leaf.
        neighbouring: the relation the sensitivity was computed for (``"replace"``: one
            step's leaf replaced; ``"add-remove"``: one step's leaf set to / from zero).
        tree: ``"binary"`` (Chan et al.) or ``"full"`` (every node); module docstring.
        padded: the level convention (module docstring).
        rng: the generator all noise is drawn from.
        size: leading batch dimensions (independent copies of the noise).
        ledger: where node releases are recorded (one entry per node, ``units`` = the units
            of the steps it sums, ``round`` = release step, ``arm`` = ``arm``).
    """

    def __init__(
        self,
        horizon: int,
        *,
        shape: int | Sequence[int] = (),
        noise: NoiseKind = "laplace",
        epsilon: float | None = None,
        mu: float | None = None,
        noise_scale: float | None = None,
        sensitivity: float = 1.0,
        neighbouring: Neighbouring | str = Neighbouring.REPLACE,
        tree: TreeKind = "binary",
        padded: bool = False,
        rng: np.random.Generator,
        size: int | tuple[int, ...] | None = None,
        ledger: Ledger | None = None,
        label: str = "tree",
        arm: int | None = None,
        round_offset: int = 0,
    ) -> None:
        self.horizon = check_integer("horizon", horizon)
        self.shape = check_shape(shape)
        if tree not in ("binary", "full"):
            raise ValueError(f"tree must be 'binary' or 'full', got {tree!r}")
        self.tree = tree
        self.padded = bool(padded)
        self.levels = tree_levels(self.horizon, padded=self.padded)
        self.noise = calibrate_noise(noise, self.levels, sensitivity, epsilon, mu, noise_scale)
        self.neighbouring = check_neighbouring(neighbouring)
        self.rng = check_rng(rng)
        self.size = check_batch(size)
        if ledger is not None and not isinstance(ledger, Ledger):
            raise ValueError(f"ledger must be a dpaudit.ledger.Ledger or None, got {type(ledger).__name__}")
        self.ledger = ledger
        self.label = label
        self.arm = arm
        self.t = 0
        self.closed = False
        self._alpha = [np.zeros(self.shape) for _ in range(self.levels)]
        self._csum: list[np.ndarray] = [np.zeros(self.shape)]  # exact prefix sums (full tree)
        self._alpha_hat = [np.zeros(self.size + self.shape) for _ in range(self.levels)]
        self.round_offset = check_integer("round_offset", round_offset, 0)
        self._units: list[Hashable] = []
        self.layout: list[tuple[int, int, int]] = []
        self._init_log()

    # -- properties ------------------------------------------------------------------------
    @property
    def node_scale(self) -> float:
        """The per-node noise scale (Laplace ``b`` or Gaussian ``σ``)."""
        return self.noise.scale

    @property
    def norm(self) -> Norm:
        return self.noise.norm

    @property
    def node_event(self) -> PrivacyEvent:
        """The event recorded for every node."""
        return self.noise.event

    @property
    def epsilon_per_unit(self) -> float:
        """Laplace: the basic-composition ε of a unit charged ``levels`` nodes."""
        if self.noise.kind != "laplace":
            raise ValueError("epsilon_per_unit is defined for Laplace noise; use mu_per_unit")
        return self.levels * self.noise.sensitivity / self.noise.scale

    @property
    def mu_per_unit(self) -> float:
        """Gaussian: the GDP μ of a unit charged ``levels`` nodes."""
        if self.noise.kind != "gaussian":
            raise ValueError("mu_per_unit is defined for Gaussian noise; use epsilon_per_unit")
        return float(np.sqrt(self.levels)) * self.noise.sensitivity / self.noise.scale

    @property
    def aggregation_event(self) -> TreeAggregationEvent:
        """Gaussian: the counter as tree aggregation (DP-FTRL's event; dp-accounting's
        ``SingleEpochTreeAggregationDpEvent``): noise multiplier σ/Δ on a tree of 2^(levels−1)
        leaves, whose ⌈log₂(n + 1)⌉ = ``levels`` nodes per record are exactly the most any unit is
        charged here (Δ is the sensitivity under the counter's own relation).

        >>> import numpy as np
        >>> c = BinaryTreeCounter(6, noise="gaussian", mu=1.0, rng=np.random.default_rng(0))
        >>> c.aggregation_event.nodes == c.levels, round(c.aggregation_event.noise_multiplier, 6)
        (True, 1.732051)
        """
        if self.noise.kind != "gaussian":
            raise ValueError("aggregation_event is defined for Gaussian noise (tree aggregation is Gaussian)")
        from dpaudit.events_ml import TreeAggregationEvent  # loaded here: the counters do not need it

        return TreeAggregationEvent(self.noise.scale / self.noise.sensitivity, (2 ** (self.levels - 1),))

    def noise_variance(self, t: int) -> float:
        """Theoretical variance (per coordinate) of the error of the output at step ``t``."""
        t = check_integer("t", t)
        return bin(t).count("1") * self.noise.variance

    # -- streaming -------------------------------------------------------------------------
    def _release(self, level: int, first: int, last: int, value: np.ndarray) -> np.ndarray:
        noisy = value + self.noise.sample(self.rng, self.size + self.shape)
        self._log(noisy, self.noise, first, last)
        self.layout.append((level, first, last))
        off = self.round_offset
        record_release(
            self.ledger,
            self.noise.event,
            label=f"{self.label} node level {level} steps {first + off}..{last + off}",
            round=self.t + off,
            arm=self.arm,
            units=self._units[first - 1 : last],
        )
        return noisy

    def step(self, x: object, *, unit: Hashable | None = None) -> np.ndarray:
        """Insert ``x`` (the next leaf) and return the noisy prefix sum, shape ``size + shape``.

        ``unit`` labels the data unit of this step in the ledger (default: the 1-based step
        plus ``round_offset``).
        """
        if self.closed:
            raise ValueError("the counter is closed; no more steps can be inserted")
        if self.t >= self.horizon:
            raise ValueError(f"the counter's horizon is {self.horizon} steps; cannot insert another")
        leaf = as_leaf(x, self.shape)
        self.t += 1
        t = self.t
        self._units.append(t + self.round_offset if unit is None else unit)
        i = (t & -t).bit_length() - 1  # lowest set bit; i < t.bit_length() <= levels
        if self.tree == "full":
            self._csum.append(self._csum[-1] + leaf)
            for j in range(i):  # right children: released, never used by the prefix sums
                self._release(j, t - (1 << j) + 1, t, self._csum[t] - self._csum[t - (1 << j)])
        acc = leaf.copy()
        for j in range(i):
            acc = acc + self._alpha[j]
            self._alpha[j] = np.zeros(self.shape)
            self._alpha_hat[j] = np.zeros(self.size + self.shape)
        self._alpha[i] = acc
        self._alpha_hat[i] = self._release(i, t - (1 << i) + 1, t, acc)
        return self.prefix_sum()

    def prefix_sum(self) -> np.ndarray:
        """The current noisy prefix sum (sum of the noisy nodes of ``t``'s binary digits)."""
        out = np.zeros(self.size + self.shape)
        for j in range(self.levels):
            if (self.t >> j) & 1:
                out = out + self._alpha_hat[j]
        return out

    def close(self) -> list[np.ndarray]:
        """Release the unfinished blocks on the last step's root path (noisy partial sums),
        so that every step is charged exactly ``levels`` nodes (``tree="full"`` only).
        Returns them (low level first).
        """
        if self.tree != "full":
            raise ValueError("close() applies to tree='full' (binary mechanism: no partial nodes)")
        if self.closed:
            raise ValueError("the counter is already closed")
        if self.t == 0:
            raise ValueError("nothing to close: no step was inserted")
        self.closed = True
        out = []
        n = self.t
        for j in range(self.levels):
            start = ((n - 1) >> j << j) + 1
            if start + (1 << j) - 1 > n:
                # steps start..n are exactly the completed nodes of n's binary digits below j
                total = np.zeros(self.shape)
                for l_ in range(j):
                    if (n >> l_) & 1:
                        total = total + self._alpha[l_]
                out.append(self._release(j, start, n, total))
        return out

    def node_sums(self, stream: object, *, closed: bool = False) -> np.ndarray:
        """Exact (noise-free) node values of ``stream`` (shape ``(n,) + shape``) in the order
        of :func:`tree_node_layout`."""
        xs = np.asarray(stream, dtype=float)
        if xs.ndim < 1 or xs.shape[1:] != self.shape:
            raise ValueError(f"stream must have shape (n,) + {self.shape}, got {xs.shape}")
        csum = np.concatenate([np.zeros((1,) + self.shape), np.cumsum(xs, axis=0)])
        lay = tree_node_layout(xs.shape[0], levels=self.levels, tree=self.tree, closed=closed)
        return np.stack([csum[b] - csum[a - 1] for _, a, b in lay])

