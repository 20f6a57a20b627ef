"""Papers are cited as people cite them: every registered algorithm names its paper
(:mod:`dpaudit.papers`), ``dpaudit list`` shows the short citation and ``dpaudit run ALG --help``
the full one, and nothing a user or reader sees names a paper by a file name."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bandits.registry import algorithms
from dpaudit.cli.main import main
from dpaudit.papers import ALL, Citation

ROOT = Path(__file__).resolve().parents[1]

WITHOUT_PAPER: set[str] = set()
"""Registered algorithms that come from no paper (none today: every reference has one)."""


def test_every_registered_algorithm_with_a_paper_has_a_citation() -> None:
    specs = algorithms()
    assert {k for k, s in specs.items() if s.paper is None} == WITHOUT_PAPER
    for key, spec in specs.items():
        if spec.paper is not None:
            assert isinstance(spec.paper, Citation), key
            assert spec.paper in ALL, f"{key}: cite a constant of dpaudit.papers"


def test_list_shows_each_short_citation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line for line in lines if line and not line.startswith(" ")}
    for key, spec in algorithms().items():
        want = spec.paper.short if spec.paper else "-"
        assert f"  {want}  " in rows[key], (key, rows[key])
    assert main(["list", "--json"]) == 0
    listed = {a["key"]: a for a in json.loads(capsys.readouterr().out)["algorithms"]}
    for key, spec in algorithms().items():
        assert listed[key]["paper"] == (spec.paper.short if spec.paper else None)
        assert listed[key]["citation"] == (str(spec.paper) if spec.paper else None)


@pytest.mark.parametrize("key", ["ts", "lazy-ucb", "cucb-dp", "cascade-ucb", "ucb1"])
def test_run_help_gives_the_full_citation(key: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", key, "--help"])
    out = " ".join(capsys.readouterr().out.split())  # argparse re-wraps the description
    paper = algorithms()[key].paper
    assert paper is not None and " ".join(str(paper).split()) in out


def test_docs_papers_gives_every_citation_in_full() -> None:
    text = (ROOT / "docs" / "papers.md").read_text(encoding="utf-8")
    for c in ALL:
        assert f"## {c.short}\n\n{c}\n" in text, c.short


FILE_HASH = re.compile(r"[0-9]{3}_[0-9a-f]{16}", re.IGNORECASE)
"""A file-hash reference (three digits, an underscore, sixteen hex digits, as the paper files the
toolkit was built from are named): readers never see those files."""


def _shipped_files() -> list[Path]:
    files = [ROOT / "README.md"]
    for top in ("dpaudit", "mechanisms", "bandits", "docs", "notebooks", "benchmarks", "tests"):
        files += [p for p in (ROOT / top).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return files


# Built from pieces so that this file does not itself contain what it looks for.
SEED_LABEL = re.compile(
    "|".join(["seeds?" + r"[ _-]?" + "00[0-4]", FILE_HASH.pattern, "dig" + "est"]), re.IGNORECASE
)
"""An internal seed label ("seed" and a three-digit number, as the papers were numbered while the
toolkit was built), a paper file's hash name, or a pointer to the reading notes the toolkit was
built from: readers have none of them, so papers are cited by authors and year and what a note
said is stated where it is used."""


def test_no_file_names_a_paper_by_a_seed_label_a_file_hash_or_points_at_reading_notes() -> None:
    hits = []
    for path in _shipped_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # images
            continue
        rel = path.relative_to(ROOT)
        for m in SEED_LABEL.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            hits.append(f"{rel}:{line}: {text.splitlines()[line - 1].strip()[:100]}")
    assert not hits, "\n".join(hits)
