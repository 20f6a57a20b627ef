"""Privacy analyses of specific algorithms, checked against their papers.

* :mod:`dpaudit.analyses.thompson_sampling` — Gaussian Thompson sampling with (b, c): certified
  GDP, the published bounds and the reachable-state check of Theorem 7;
* :mod:`dpaudit.analyses.rnm_gaussian` — report-noisy-max with heterogeneous Gaussian noise:
  exact output distribution and privacy profile.
"""
