"""Execute the cascading-bandits notebook (Wang et al. 2021) at reduced scale: the paper's numbers,
every run of Figures 1 and 2, the claims with their verdicts, the figures and the audits (literal
violated, sound consistent)."""

from __future__ import annotations

import pytest

pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

from test_notebooks import execute, inline_images  # noqa: E402  (tests/ is on sys.path under pytest)


@pytest.mark.slow
def test_cascading_bandits_notebook(tmp_path, monkeypatch):
    nb, text = execute("cascading_bandits.ipynb", tmp_path, monkeypatch)
    assert inline_images(nb) == 3
    assert "scale: reduced" in text and "Alg. 3 sigma at K = 4, eps = 1, delta = 1e-3: 7.552959" in text
    assert "claims checked: 20" in text and "Figure 1:" in text and "Figure 2:" in text
    assert "[HOLDS] 1(a)-(d): non-private <= Gaussian <= Laplace -- published (noise x 0.01)" in text
    assert "literal violated: 3 of 3; sound never violated: 3 of 3" in text
    for fig in ("cascading_fig1_published", "cascading_fig1_nominal", "cascading_fig2"):
        assert (tmp_path / "figures" / f"{fig}.png").stat().st_size > 10_000, fig
