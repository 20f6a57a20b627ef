"""The start-up benchmark runs (one interleaved pair) and its README sentence renders."""

from __future__ import annotations

from benchmarks.bench_startup import measure, sentence


def test_startup_benchmark_measures_both_commands_and_the_phases() -> None:
    row = measure(1)
    assert row["numpy_s"] > 0 and row["run_s"] > 0 and row["ratio"] == row["run_s"] / row["numpy_s"]
    assert list(row["phases_ms"]) == ["numpy", "accountant and CLI", "run pipeline", "the run"]
    assert all(v > 0 for v in row["phases_ms"].values())
    assert "import numpy" in sentence(row) and f"{row['ratio']:.2f}×" in sentence(row)
