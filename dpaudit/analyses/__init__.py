"""Privacy analyses of specific algorithms, checked against their papers.

* :mod:`dpaudit.analyses.thompson_sampling` — Gaussian Thompson sampling with (b, c): certified
  GDP, the published bounds and the reachable-state check of Theorem 7;
* :mod:`dpaudit.analyses.gaussian_argmax` — the exact output distribution of report-noisy-max
  with heterogeneous Gaussian noise (quadrature in log space);
* :mod:`dpaudit.analyses.rnm_gaussian` — its exact and worst-case privacy profiles, the GDP bound
  and the published bounds.
"""
