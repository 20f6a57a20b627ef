"""The bibliography (:mod:`dpaudit.papers`): one convention for short citations, full citations
with every field, and nothing heavy imported (declaring an algorithm imports it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dpaudit import papers
from dpaudit.papers import ALL, Citation

ROOT = Path(__file__).resolve().parents[1]


def test_short_citations_name_up_to_three_authors() -> None:
    assert papers.AZIZE_BASU_2022.short == "Azize & Basu 2022"
    assert papers.OU_2024.short == "Ou, Avella Medina & Cummings 2024"
    assert papers.AUER_2002.short == "Auer, Cesa-Bianchi & Fischer 2002"
    assert papers.HU_2024.short == "Hu et al. 2024"
    assert papers.CHEN_2020.short == "Chen et al. 2020"
    assert Citation(("Solo, Han",), 1977, "A Title", venue="V").short == "Solo 1977"


def test_places_in_a_paper() -> None:
    assert papers.OU_2024.at("Theorem 3") == "Ou, Avella Medina & Cummings (2024), Theorem 3"
    assert papers.HU_2024.at("") == "Hu et al. (2024)"
    assert papers.WANG_2021.textual == "Wang et al. (2021)"


def test_full_citations() -> None:
    assert str(papers.CHAN_SHI_SONG_2011) == (
        "Chan, T.-H. H., Shi, E. & Song, D. (2011). Private and Continual Release of Statistics. "
        "ACM Transactions on Information and System Security, 14(3):1–24."
    )
    assert str(papers.WANG_2021).endswith(
        "Cascading Bandit under Differential Privacy. arXiv preprint arXiv:2105.11126."
    )
    assert "PMLR 238" in str(papers.OU_2024) and "arXiv:2407.14879" in str(papers.OU_2024)


def test_every_constant_is_listed_once_and_distinct() -> None:
    constants = [getattr(papers, n) for n in papers.__all__ if isinstance(getattr(papers, n), Citation)]
    assert sorted(map(str, constants)) == sorted(map(str, ALL))
    assert len({c.short for c in ALL}) == len(ALL)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(authors=(), year=2020, title="T", venue="V"),
        dict(authors=("No Comma",), year=2020, title="T", venue="V"),
        dict(authors=("A, B",), year=2020, title=" ", venue="V"),
        dict(authors=("A, B",), year=2020, title="T"),  # neither a venue nor an arXiv id
    ],
)
def test_incomplete_citations_are_refused(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        Citation(**kwargs)


def test_the_bibliography_imports_nothing_heavy() -> None:
    code = "import json, sys, dpaudit.papers; print(json.dumps(sorted(sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    loaded = json.loads(proc.stdout)
    assert not [m for m in loaded if m.split(".")[0] in ("numpy", "scipy", "bandits", "mechanisms")]
    assert [m for m in loaded if m.startswith("dpaudit")] == ["dpaudit", "dpaudit.papers"]
