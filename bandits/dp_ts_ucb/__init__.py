"""DP-TS-UCB (Hu, Huang, Zhang, Lécuyer & Hegde 2025): Gaussian samples of per-arm epoch means, at
most φ per arm and epoch, then their maximum reused as an optimistic index; its ``dpaudit run``
specification and audit (``docs/dp-ts-ucb.md``).
"""
