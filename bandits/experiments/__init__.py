"""Experiment drivers: scripts that regenerate the papers' experiments
(``python -m bandits.experiments.private_stochastic_bandits``) and the functions the notebooks call
(``notebooks/matroid_bandits.ipynb``, ``notebooks/combinatorial_semibandits.ipynb``). Each runs at a reduced
scale by default; ``DPAUDIT_FULL_SCALE=1`` selects the full scale (:func:`full_scale`)."""

from __future__ import annotations

import os

__all__ = ["full_scale"]


def full_scale() -> bool:
    """Whether the environment asks for the full-scale experiments (``DPAUDIT_FULL_SCALE=1``).

    >>> isinstance(full_scale(), bool)
    True
    """
    return os.environ.get("DPAUDIT_FULL_SCALE", "0") == "1"
