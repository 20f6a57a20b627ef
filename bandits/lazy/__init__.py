"""Lazy-epoch private bandits (Hu, Huang, Mehta & Hegde): Anytime-Lazy-UCB and Lazy-DP-TS, and the
private baselines they are compared with, DP-SE (Sajed & Sheffet 2019) and AdaP-UCB / AdaP-KLUCB
(Azize & Basu 2022); their ``dpaudit run`` specifications and audit pairs.
"""
