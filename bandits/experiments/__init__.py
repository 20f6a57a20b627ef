"""Scripts that regenerate the papers' experiments (``python -m bandits.experiments.seed002``)."""
