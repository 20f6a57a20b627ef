"""Every table of numbers the README quotes (and the values it repeats in prose) is what its script
produces (``benchmarks/readme_tables.py``, whose docstring names the script behind each table).

The quick test renders every marked table and value from the stored results and compares it
with README.md and docs/*.md; the slow tests recompute the command-backed tables at the README's
own scale (deterministic: to the digit) and compare them with the stored results.
"""

from __future__ import annotations

import pytest

from benchmarks import readme_tables


def test_the_docs_show_what_the_stored_results_say() -> None:
    assert readme_tables.differences() == [], "run: python benchmarks/readme_tables.py --write"


def test_every_table_is_marked() -> None:
    text = (readme_tables.ROOT / "README.md").read_text()
    for name in ("tuning", "audits", "hu-regret", "full-info", "figure5"):
        assert f"<!-- table:{name} -->" in text, name
    assert "<!-- value:rnm-ftnl-audit -->" in text


@pytest.mark.slow
@pytest.mark.parametrize("name", ["audits", "tuning"])
def test_command_backed_tables_reproduce_to_the_digit(name: str) -> None:
    run = {"audits": readme_tables.run_audits, "tuning": readme_tables.run_tuning}[name]
    stored = readme_tables._stored()[name]
    assert run(readme_tables.FULL) == stored, f"run: python benchmarks/readme_tables.py --run {name}"
