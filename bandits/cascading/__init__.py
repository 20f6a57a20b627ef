"""Cascading bandits under DP and LDP (Wang, Dong, Wang, Li & Shao): the cascade policies and
their vectorised agents, CUCB under Gaussian LDP, the stacked engine for ε grids, the plain-loop
reference, the paper's formulas, the audit and the ``dpaudit run`` specifications.
"""
