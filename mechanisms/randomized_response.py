"""Randomised response, binary and k-ary.

Report the true category with probability p = e^ε/(e^ε + k − 1) and each of the other
k − 1 categories with probability q = 1/(e^ε + k − 1). Pure ε-DP under replacement of one
respondent's value; the privacy loss is exactly ±ε on the two categories involved and 0
elsewhere.

Used by: none of the papers the toolkit implements (the local models of Wang et al. (2021) and
Chen et al. (2020) randomise with Laplace or Gaussian noise, see :mod:`mechanisms.laplace` /
:mod:`mechanisms.gaussian`). Binary RR on Bernoulli-ised rewards is an alternative ε-LDP
randomizer for the combinatorial semi-bandits of Chen et al. (2020) that is *not in the paper*;
it is provided here for that, for the local-model wrappers of :mod:`mechanisms.local`, and as
an exactly-known discrete mechanism for auditors.

Example:
    >>> import numpy as np
    >>> from mechanisms.randomized_response import RandomizedResponse
    >>> rr = RandomizedResponse(epsilon=np.log(3.0))           # binary: keep w.p. 3/4
    >>> [round(float(v), 12) for v in rr.output_distribution(1)]
    [0.25, 0.75]
    >>> rr.sample(np.array([0, 1, 1]), np.random.default_rng(2), size=4).shape
    (4, 3)
    >>> rr.event
    RandomizedResponseEvent(epsilon=1.0986122886681098, num_categories=2)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpaudit.events import Neighbouring, RandomizedResponseEvent
from dpaudit.validation import check_integer, check_positive
from mechanisms.base import NoiseMechanism, Norm, Size, check_batch, check_neighbouring, check_rng

__all__ = ["RandomizedResponse"]


@dataclass(frozen=True)
class RandomizedResponse(NoiseMechanism):
    """k-ary randomised response on values in ``{0, …, k−1}``.

    ``sensitivity`` is fixed to 1 (one respondent's value changes) and ``norm`` to ℓ∞
    (Hamming); ``neighbouring`` must be ``REPLACE``, the relation RR's guarantee is for.
    """

    epsilon: float
    num_categories: int = 2
    neighbouring: Neighbouring = Neighbouring.REPLACE

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        object.__setattr__(self, "num_categories", check_integer("num_categories", self.num_categories, 2))
        nb = check_neighbouring(self.neighbouring)
        if nb is not Neighbouring.REPLACE:
            raise ValueError(f"neighbouring must be 'replace' for randomised response, got {nb.value!r}")
        object.__setattr__(self, "neighbouring", nb)

    sensitivity = 1.0
    norm = Norm.LINF

    @property
    def keep_probability(self) -> float:
        """p = e^ε / (e^ε + k − 1), computed without overflow."""
        return 1.0 / (1.0 + (self.num_categories - 1) * math.exp(-self.epsilon))

    @property
    def event(self) -> RandomizedResponseEvent:
        return RandomizedResponseEvent(epsilon=self.epsilon, num_categories=self.num_categories)

    def _values(self, x: object) -> np.ndarray:
        arr = np.asarray(x)
        if arr.dtype.kind not in "iub" and not (arr.dtype.kind == "f" and np.all(arr == np.round(arr))):
            raise ValueError(f"x must hold integers in [0, {self.num_categories - 1}]")
        v = arr.astype(np.int64)
        if np.any(v < 0) or np.any(v >= self.num_categories):
            raise ValueError(f"x must hold integers in [0, {self.num_categories - 1}]")
        return v

    def sample(self, x: object, rng: np.random.Generator, size: Size = None) -> np.ndarray:
        """Randomise each value of ``x``; output shape ``size + x.shape`` (int64)."""
        rng = check_rng(rng)
        v = self._values(x)
        shape = check_batch(size) + v.shape
        keep = rng.random(shape) < self.keep_probability
        if self.num_categories == 2:
            return np.where(keep, v, 1 - v)
        other = (v + 1 + rng.integers(0, self.num_categories - 1, size=shape)) % self.num_categories
        return np.where(keep, v, other)

    def log_output_distribution(self, x: int) -> np.ndarray:
        """log P(output = j | x) for j = 0..k−1."""
        v = int(self._values(x).reshape(()))
        log_norm = math.log1p((self.num_categories - 1) * math.exp(-self.epsilon))  # -log p
        out = np.full(self.num_categories, -self.epsilon - log_norm)
        out[v] = -log_norm
        return out

    def output_distribution(self, x: int) -> np.ndarray:
        """P(output = j | x) for j = 0..k−1 (exact)."""
        return np.exp(self.log_output_distribution(x))

    def privacy_loss(self, output: object, x: int, x_prime: int) -> np.ndarray:
        """``log P(output|x) − log P(output|x')`` per output value (in {−ε, 0, ε})."""
        o = self._values(output)
        return (self.log_output_distribution(x) - self.log_output_distribution(x_prime))[o]
