"""Figures 1-4 of Ou, Avella Medina & Cummings (2024), *Thompson Sampling Itself is Differentially
Private* (AISTATS 2024): ε(δ) of one configuration by composition method, the regret curves along
the paper's budget curve on Bernoulli (§5.1) and truncated-exponential (§5.2) rewards, and GDP
against RDP and "standard" DP accounting.

``python -m bandits.experiments.thompson_sampling_figures [--full] [--out DIR]`` executes
``notebooks/thompson_sampling_figures.ipynb`` (:mod:`bandits.experiments.notebook_runner`).
Figure 5 of the same paper is part of ``python -m bandits.experiments.private_stochastic_bandits``.
"""

from __future__ import annotations

TITLE = "Ou, Avella Medina & Cummings (2024), Figures 1-4"

if __name__ == "__main__":  # pragma: no cover
    from bandits.experiments.notebook_runner import main

    raise SystemExit(main("thompson_sampling_figures", TITLE))
