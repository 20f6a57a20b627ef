"""Gaussian Thompson sampling with the (b, c) modification (Ou, Avella Medina & Cummings,
AISTATS 2024): the policy and its engines, its white-box audit, the (b, c) tuner and its
``dpaudit run ts`` specification. The privacy analysis is in :mod:`dpaudit.analyses.thompson_sampling`.
"""
