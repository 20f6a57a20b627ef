"""Every table of numbers the README quotes (and the values it repeats in prose) is what its script
produces (``benchmarks/readme_tables.py``, whose docstring names the script behind each table).

The quick test renders every marked table and value from the stored results and compares it
with README.md and docs/*.md; the slow tests recompute the tuning table and the cheap rows of the
audit table at the README's own scale (deterministic: to the digit) and compare them with the
stored results.
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


QUICK_AUDIT_ROWS = tuple(label for label, args in readme_tables.AUDITS if "ftnl" in args)
"""The rows of the audit table recomputed by the suite: the three full-information rows (9 s each
on 2 cores), among them the refutation of Theorem 8. The five bandit rows cost 13-137 s each
(simulating T = 10^5 twice, then the audit; 4.4 min in all) and are recomputed by
``python benchmarks/readme_tables.py --run audits --check``; the suite checks that the docs show
their stored results (above)."""


@pytest.mark.slow
def test_tuning_table_reproduces_to_the_digit() -> None:
    stored = readme_tables._stored()["tuning"]
    again = readme_tables.run_tuning(readme_tables.FULL)
    assert again == stored, "run: python benchmarks/readme_tables.py --run tuning"


@pytest.mark.slow
def test_full_information_audit_rows_reproduce_to_the_digit() -> None:
    stored = [row for row in readme_tables._stored()["audits"] if row["label"] in QUICK_AUDIT_ROWS]
    assert len(stored) == 3
    again = readme_tables.run_audits(readme_tables.FULL, labels=QUICK_AUDIT_ROWS)
    assert again == stored, "run: python benchmarks/readme_tables.py --run audits"
