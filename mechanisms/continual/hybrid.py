"""The hybrid mechanism of Chan, Shi & Song (2011, "Private and continual release of statistics").

An anytime continual counter (no horizon) built from the logarithmic mechanism and blocks of the
binary mechanism (:class:`~mechanisms.continual.tree.BinaryTreeCounter`); every noisy release is
recorded in the ledger as one event labelled with the data units of the steps it sums.

:class:`HybridCounter` (anytime; no horizon)
    Half the budget runs the *logarithmic mechanism*: at ``t = 2^k`` it releases the noisy
    sum of the block ``(2^{k-1}, 2^k]`` (``[1]`` for ``k = 0``) and outputs the running total
    ``β`` of these noisy block sums. The other half runs, for every ``k ≥ 1``, a fresh binary
    mechanism ``B_k`` on the steps ``2^k+1 .. 2^{k+1}-1`` (horizon ``2^k − 1``, ``k`` levels).
    Output at ``t ∈ (2^k, 2^{k+1})`` is ``β + B_k(t − 2^k)``. Each step enters one
    logarithmic release (``Lap(2Δ/ε)``) and at most ``k`` nodes of ``B_k`` (``Lap(2kΔ/ε)``):
    at most ``ε/2 + ε/2 = ε``, exactly ε for ``t = 2^k + 1``.

Use by the papers (see ``docs/mechanisms-continual.md``): Cascading-UCB under DP
(Wang et al. (2021), Algorithm 1) uses one :class:`HybridCounter` per item ``e`` with
``epsilon = ε/L``, fed ``w_t(e)`` with ``unit=t`` for every observed item. The vectorised
counterparts are in :mod:`mechanisms.continual.hybrid_batch`.

Outputs carry leading batch dimensions ``size`` (independent noise, same data), sampled
from an explicit :class:`numpy.random.Generator`.

Example:
    >>> import numpy as np
    >>> h = HybridCounter(epsilon=1.0, rng=np.random.default_rng(1))
    >>> [h.charge(t) for t in range(1, 9)]
    [1, 1, 2, 1, 3, 2, 2, 1]
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from dpaudit.events import Neighbouring
from dpaudit.ledger import Ledger
from dpaudit.validation import check_integer, check_positive
from mechanisms.base import check_batch, check_neighbouring, check_rng, record_release
from mechanisms.continual.noise import NodeNoise, NoiseKind, calibrate_noise
from mechanisms.continual.release_log import ReleaseLog, as_leaf, check_shape
from mechanisms.continual.tree import BinaryTreeCounter, tree_charge

__all__ = ["HybridCounter"]


class HybridCounter(ReleaseLog):
    """Hybrid mechanism of Chan, Shi & Song (2011): anytime, logarithmic + binary blocks.

    Args:
        shape: the leaf shape.
        noise: ``"laplace"`` (with ``epsilon``) or ``"gaussian"`` (with ``mu``); half of the
            budget goes to the logarithmic mechanism, half to the binary blocks (for
            Gaussian: ``μ/√2`` each, so the per-unit total is μ-GDP).
        sensitivity, neighbouring, rng, size, ledger, label, arm: as :class:`BinaryTreeCounter`.
    """

    def __init__(
        self,
        *,
        shape: int | Sequence[int] = (),
        noise: NoiseKind = "laplace",
        epsilon: float | None = None,
        mu: float | None = None,
        sensitivity: float = 1.0,
        neighbouring: Neighbouring | str = Neighbouring.REPLACE,
        rng: np.random.Generator,
        size: int | tuple[int, ...] | None = None,
        ledger: Ledger | None = None,
        label: str = "hybrid",
        arm: int | None = None,
    ) -> None:
        self.shape = check_shape(shape)
        if (epsilon is None) == (mu is None):
            raise ValueError("give exactly one of epsilon (Laplace) or mu (Gaussian)")
        self._kind = noise
        self._sens = check_positive("sensitivity", sensitivity)
        if noise == "laplace":
            if epsilon is None:
                raise ValueError("mu calibrates Gaussian noise; use epsilon= for noise='laplace'")
            self.epsilon = check_positive("epsilon", epsilon)
            self.log_noise = calibrate_noise("laplace", 1, self._sens, self.epsilon / 2, None, None)
        elif noise == "gaussian":
            if mu is None:
                raise ValueError("epsilon calibrates Laplace noise; use mu= (GDP) for noise='gaussian'")
            self.mu = check_positive("mu", mu)
            self.log_noise = calibrate_noise("gaussian", 1, self._sens, None, self.mu / np.sqrt(2), None)
        else:
            raise ValueError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")
        self._epsilon, self._mu = epsilon, mu
        self.neighbouring = check_neighbouring(neighbouring)
        self.rng = check_rng(rng)
        self.size = check_batch(size)
        if ledger is not None and not isinstance(ledger, Ledger):
            raise ValueError(f"ledger must be a dpaudit.ledger.Ledger or None, got {type(ledger).__name__}")
        self.ledger = ledger
        self.label = label
        self.arm = arm
        self.t = 0
        self._beta = np.zeros(self.size + self.shape)  # running total of noisy log-blocks
        self._pending = np.zeros(self.shape)  # exact sum of the current log-block
        self._pending_units: list[Hashable] = []
        self._block: BinaryTreeCounter | None = None
        self._init_log()

    def block_noise(self, k: int) -> NodeNoise:
        """Per-node noise of the binary block ``B_k`` (steps ``2^k+1 .. 2^{k+1}-1``, k levels)."""
        k = check_integer("k", k)
        half_eps = None if self._epsilon is None else self.epsilon / 2
        half_mu = None if self._mu is None else self.mu / np.sqrt(2)
        return calibrate_noise(self._kind, k, self._sens, half_eps, half_mu, None)

    @staticmethod
    def charge(t: int) -> int:
        """How many releases step ``t`` enters once its blocks are complete (1 logarithmic +
        the binary-block nodes)."""
        t = check_integer("t", t)
        k = t.bit_length() - 1
        if t == 1 << k:
            return 1
        return 1 + tree_charge(t - (1 << k), (1 << k) - 1)

    def noise_variance(self, t: int) -> float:
        """Theoretical variance (per coordinate) of the error of the output at step ``t``."""
        t = check_integer("t", t)
        k = t.bit_length() - 1
        var = (k + 1) * self.log_noise.variance
        r = t - (1 << k)
        if r:
            var += bin(r).count("1") * self.block_noise(k).variance
        return var

    def step(self, x: object, *, unit: Hashable | None = None) -> np.ndarray:
        """Insert ``x`` and return the noisy prefix sum (shape ``size + shape``)."""
        leaf = as_leaf(x, self.shape)
        self.t += 1
        t = self.t
        u = t if unit is None else unit
        self._pending = self._pending + leaf
        self._pending_units.append(u)
        k = t.bit_length() - 1
        if t == 1 << k:
            noisy = self._pending + self.log_noise.sample(self.rng, self.size + self.shape)
            self._beta = self._beta + noisy
            first = t // 2 + 1 if t > 1 else 1
            self._log(noisy, self.log_noise, first, t)
            record_release(
                self.ledger,
                self.log_noise.event,
                label=f"{self.label} log-block steps {first}..{t}",
                round=t,
                arm=self.arm,
                units=self._pending_units,
            )
            self._pending = np.zeros(self.shape)
            self._pending_units = []
            self._block = None
            if k >= 1:
                bn = self.block_noise(k)
                self._block = BinaryTreeCounter(
                    (1 << k) - 1,
                    shape=self.shape,
                    noise=self._kind,
                    noise_scale=bn.scale,
                    sensitivity=self._sens,
                    neighbouring=self.neighbouring,
                    rng=self.rng,
                    size=self.size,
                    ledger=self.ledger,
                    label=f"{self.label} block {k}",
                    arm=self.arm,
                    round_offset=1 << k,
                )
            return self._beta.copy()
        assert self._block is not None
        b = self._block
        before = len(b.release_spans)
        out = b.step(leaf, unit=u)
        for r in range(before, len(b.release_spans)):
            first, last = b.release_spans[r]
            self._log(b._rel_values[r], b.noise, first + (1 << k), last + (1 << k))
        return self._beta + out

