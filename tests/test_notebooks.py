"""Execute the notebooks at reduced scale (nbclient, kernel python3) and check their outputs.

Each notebook contains its own assertions (e.g. the paper's qualitative findings at reduced
scale); a failing cell fails the test. Every figure is displayed inline; with
``DPAUDIT_FIGURES_DIR`` (a temporary directory here) it is saved there too, and without it a
notebook writes nothing. Ctrl-C stops the suite and the kernel
(:func:`bandits.experiments.notebook_runner.execute_notebook`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bandits.experiments.notebook_runner import execute_notebook

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
REPO = NOTEBOOKS.parent


def execute(name: str, workdir: Path, monkeypatch, figures: bool = True) -> tuple[object, str]:
    monkeypatch.setenv("DPAUDIT_FULL_SCALE", "0")
    if figures:
        monkeypatch.setenv("DPAUDIT_FIGURES_DIR", str(workdir / "figures"))
    else:
        monkeypatch.delenv("DPAUDIT_FIGURES_DIR", raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    execute_notebook(nb, workdir, timeout=120)  # Ctrl-C stops the suite, the kernel is shut down
    text = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error", out
            if out.get("output_type") == "stream" and out.get("name") == "stdout":
                text.append(out["text"])
    return nb, "".join(text)


def inline_images(nb: object) -> int:
    """The number of figures a notebook displays inline (PNG display outputs)."""
    return sum("image/png" in out.get("data", {}) for cell in nb.cells if cell.cell_type == "code"
               for out in cell.get("outputs", []))  # fmt: skip


@pytest.mark.slow
def test_quickstart_notebook(tmp_path, monkeypatch):
    """Run without a figures folder (the other notebooks' tests run with one, and check each
    figure saved there): its figure is shown inline and nothing is written."""
    nb, text = execute("quickstart.ipynb", tmp_path, monkeypatch, figures=False)
    assert inline_images(nb) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    assert "scale: reduced" in text
    assert "best certified: gdp" in text or "best certified: pld" in text
    assert "verdict: consistent" in text
    assert "best: b =" in text
    # the run's audit at this size (certified mu 0.05 at its horizon) sees nothing in either view:
    # bounds of 0 are not a pass
    assert "Gaussian Thompson sampling (b =" in text and "audit: INCONCLUSIVE" in text
    assert "bound 0: this view did not see even the algorithm's own loss" in text


@pytest.mark.slow
def test_thompson_sampling_figures_notebook(tmp_path, monkeypatch):
    nb, text = execute("thompson_sampling_figures.ipynb", tmp_path, monkeypatch)
    assert inline_images(nb) == 4
    assert "scale: reduced" in text
    for fig in ("fig1_epsilon_vs_delta", "fig2_bernoulli", "fig3_truncexp", "fig4_gdp_rdp_standard"):
        assert (tmp_path / "figures" / f"{fig}.png").stat().st_size > 10_000, fig
    assert "figure 1 saved" in text and "figure 4 saved" in text
    # the in-notebook check of the paper's findings ran for all six panels
    assert text.count("b=0 regret / best =") == 6


@pytest.mark.slow
def test_private_stochastic_bandits_notebook(tmp_path, monkeypatch):
    nb, text = execute("private_stochastic_bandits.ipynb", tmp_path, monkeypatch)
    assert inline_images(nb) == 4
    assert "scale: reduced" in text and "checks passed" in text
    figures = ("private_stochastic_setting1", "private_stochastic_setting2", "private_stochastic_full_info")
    for fig in (*figures, "thompson_fig5"):
        assert (tmp_path / "figures" / f"{fig}.png").stat().st_size > 10_000, fig
    assert "Lazy-DP-TS always performs better than DP-SE and Anytime-Lazy-UCB" in text
    assert "TS is not best at the smallest epsilon" in text


@pytest.mark.slow
def test_private_stochastic_bandits_script(tmp_path, monkeypatch):
    """The script that regenerates every figure, end to end (options, results file, figures) at a
    tiny scale (T = 500: what is checked here does not depend on it, and the figures cost the same
    at any T): the notebook above runs the same experiments at the reduced scale."""
    import json

    from bandits.experiments import grid
    from bandits.experiments.private_stochastic_bandits import main

    tiny = grid.Scale("reduced", 500, 2, 2**8 - 1, 2, (4, 16), 500, 2, 2, 2)
    monkeypatch.setitem(grid.SCALES, "reduced", tiny)
    assert main(["--out", str(tmp_path), "--workers", "1"]) == 0
    assert (tmp_path / "private_stochastic_results.json").stat().st_size > 1000
    saved = json.loads((tmp_path / "private_stochastic_results.json").read_text())
    assert saved["scale"] == "reduced" and saved["workers"] == 1 and len(saved["bandit_grid"]["table"]) == 24
    assert len(saved["figure5"]["panels"]) == 3 and len(saved["full_info"]["rows"]) > 0
    figures = ("private_stochastic_setting1", "private_stochastic_setting2", "private_stochastic_full_info")
    assert sorted(p.stem for p in tmp_path.glob("*.png")) == sorted((*figures, "thompson_fig5"))
