"""Specs written back: the ``--env`` text that :func:`bandits.environments.grammar.parse_combinatorial_env`
turns back into a given combinatorial problem (a report names its environment by this text).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bandits.actions import ActionStructure, Ranking, TopK
from bandits.structures.combinatorial import MatroidBasis, SemiBandit, SuperArms, problem
from bandits.structures.linear_matroid import LinearMatroid
from bandits.structures.matroids import GraphicMatroid, PartitionMatroid, UniformMatroid
from bandits.structures.rewards import COUPLINGS

__all__ = ["spec_for"]


def _list(values: Any) -> str:
    return "/".join(repr(float(v)) for v in values)


def _vec(v: Any) -> str:
    return "_".join(str(int(x)) if float(x).is_integer() else repr(float(x)) for x in v)


def spec_for(structure: ActionStructure, means: np.ndarray, coupling: str) -> str:
    """A spec that :func:`parse_combinatorial_env` turns back into this problem.

    >>> spec_for(TopK(2), np.array([0.5, 0.25, 0.125]), "independent")
    'topk:k=2,means=0.5/0.25/0.125,reward=sum,coupling=independent'
    """
    if coupling not in COUPLINGS:
        raise ValueError(f"coupling must be one of {COUPLINGS}, got {coupling!r}")
    mu = _list(np.asarray(means, dtype=float))
    reward = problem(structure).reward.name
    tail = f"reward={reward},coupling={coupling}"
    if isinstance(structure, Ranking):
        return f"ranking:k={structure.k},means={mu}"
    if isinstance(structure, (TopK, SemiBandit)):
        return f"topk:k={structure.k},means={mu},{tail}"
    if isinstance(structure, SuperArms):
        k, sets = structure.k, structure.sets
        if coupling == "paths":
            path_means = _list(np.asarray(means, dtype=float)[::k][: len(sets)])
            return f"paths:k={k},means={path_means},reward={reward}"
        return f"superarms:sets={'/'.join(_vec(s) for s in sets)},means={mu},{tail}"
    if isinstance(structure, MatroidBasis):
        m = structure.matroid
        if isinstance(m, LinearMatroid):
            return f"matroid-linear:vectors={'/'.join(_vec(v) for v in m.vectors)},means={mu},{tail}"
        if isinstance(m, UniformMatroid):
            return f"matroid-uniform:k={m.k},means={mu},{tail}"
        if isinstance(m, PartitionMatroid):
            return f"matroid-partition:blocks={_vec(m.blocks)},caps={_vec(m.caps)},means={mu},{tail}"
        if isinstance(m, GraphicMatroid):
            edges = "/".join(f"{u}-{v}" for u, v in m.edges)
            return f"matroid-graphic:vertices={m.n_vertices},edges={edges},means={mu},{tail}"
    raise ValueError(f"no spec for the structure {structure!r}")
