"""Private matroid bandits (Chandak, Hu & Hegde, CoLLAs 2023): DPUCB-MAT, DPTS-MAT and the
non-private baselines OMM and CTS-Gaussian; their audit, specifications and the paper's lemmas.
"""
