"""Plain NumPy loops of every registered algorithm family, written independently of the toolkit.

The baselines of ``benchmarks/bench_families.py``: each loop implements one family's algorithm
from its paper's pseudocode, one round at a time and vectorised across repetitions (every
per-round quantity is an ``(R, N)`` array), with its own random numbers from
``numpy.random.default_rng(seed)``; it imports nothing from ``dpaudit``, ``mechanisms`` or
``bandits``. ``tests/test_family_loops.py`` checks that each loop's regret agrees with the
toolkit's at the same configuration (so the benchmark compares the same algorithm).

Each family module defines ``CASES``: a list of :class:`Case`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SEC51 = np.array([0.75, 0.625, 0.5, 0.375, 0.25])
"""The five Bernoulli arms of Ou, Avella Medina & Cummings (2024), §5.1 (= setting 1 of Hu et al.
2024): the default instance of the Thompson-sampling, DP-TS-UCB, lazy-epoch and reference loops."""


@dataclass(frozen=True)
class Case:
    """One benchmark row.

    ``algorithm``: the registry key run through ``dpaudit run``'s pipeline (``bandits.registry.get``)
    with ``options`` (everything else at its default) on ``env`` (an environment spec string that
    ``AlgorithmSpec.parse_env`` accepts, or None for the algorithm's default instance);
    ``loop(horizon, reps, seed) -> np.ndarray`` the plain NumPy loop's final pseudo-regret per
    repetition (shape (reps,)) on the same instance and options; ``numba_loop`` the same loop
    compiled with numba (None where the family is not a per-round loop, or numba is absent).
    ``horizon``/``reps`` are the benchmark's size; ``test_horizon``/``test_reps`` the agreement
    test's."""

    family: str
    algorithm: str
    options: dict[str, Any]
    env: str | None
    loop: Callable[[int, int, int], np.ndarray]
    numba_loop: Callable[[int, int, int], np.ndarray] | None = None
    horizon: int = 100_000
    reps: int = 10
    test_horizon: int = 2_000
    test_reps: int = 40
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
