"""Continual release: running sums released at every step (binary tree, hybrid), lazy
doubling-epoch sums, and their vectorised counterparts for R repetitions at once.
"""
