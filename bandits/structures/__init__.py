"""Combinatorial action structures: sets of arms with an oracle, matroids and their greedy
bases, and the reward functions of combinatorial semi-bandits (single-arm, top-K and ranking
structures and the feedback models are in :mod:`bandits.actions`).

* :mod:`bandits.structures.combinatorial` — semi-bandit, matroid-basis and super-arm problems;
* :mod:`bandits.structures.matroids` — matroids with pluggable independence oracles, greedy;
* :mod:`bandits.structures.rewards` — reward functions with declared smoothness.
"""
