"""Each paper's experiments are one command: ``python -m bandits.experiments.NAME [--full]`` runs
them (at reduced scale by default) and prints where the figures went; none exits 0 silently."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bandits.experiments import notebook_runner

ROOT = Path(__file__).resolve().parents[1]
STUDIES = ("matroid_bandits", "combinatorial_semibandits", "cascading_bandits", "thompson_sampling_figures")


@pytest.mark.parametrize("name", [*STUDIES, "private_stochastic_bandits"])
def test_every_study_is_a_command(name: str) -> None:
    text = (ROOT / "bandits" / "experiments" / f"{name}.py").read_text()
    assert 'if __name__ == "__main__":' in text, name
    if name in STUDIES:
        assert (notebook_runner.NOTEBOOKS / f"{name}.ipynb").exists(), name


def test_help_names_the_scale_flag_and_the_folder() -> None:
    res = subprocess.run([sys.executable, "-m", "bandits.experiments.matroid_bandits", "--help"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert res.returncode == 0 and "--full" in res.stdout and "--out" in res.stdout


def test_a_quick_run_never_writes_into_docs_img() -> None:
    assert notebook_runner.default_out("x", full=False).parts[-2:] == ("dpaudit-experiments", "x")
    assert notebook_runner.default_out("x", full=True) == ROOT / "docs" / "img"


@pytest.mark.slow
def test_runner_executes_the_notebook_and_says_where_the_figures_went(tmp_path, monkeypatch, capsys) -> None:
    cell = ("import os, matplotlib.pyplot as plt\nfig, ax = plt.subplots(); ax.plot([0, 1])\n"
            "fig.savefig(os.path.join(os.environ['DPAUDIT_FIGURES_DIR'], 'tiny.png'))\n"
            "print('scale:', os.environ['DPAUDIT_FULL_SCALE'])")  # fmt: skip
    code = {"cell_type": "code", "id": "tiny", "execution_count": None, "metadata": {}, "outputs": [],
            "source": cell}  # fmt: skip
    nb = {"cells": [code], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "tiny.ipynb").write_text(json.dumps(nb))
    monkeypatch.setattr(notebook_runner, "NOTEBOOKS", tmp_path)
    out = tmp_path / "figures"
    assert notebook_runner.main("tiny", "a tiny study", ["--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "tiny: reduced scale, figures to" in text and "scale: 0" in text
    assert "1 figure(s) written to" in text and str(out / "tiny.png") in text
    assert json.loads((tmp_path / "tiny.ipynb").read_text())["cells"][0]["outputs"] == []  # not rewritten


def test_a_missing_notebook_is_one_line_and_status_2(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(notebook_runner, "NOTEBOOKS", tmp_path)
    assert notebook_runner.main("nosuch", "t", []) == 2
    assert "not found" in capsys.readouterr().err
