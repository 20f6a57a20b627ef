"""The horizon-memory benchmark measures a whole ``dpaudit run`` at two horizons and tells a run
whose memory is bounded from one that grows (its README sentence: the module's doctest)."""

from __future__ import annotations

from benchmarks.bench_horizon_memory import BOUNDED, measure, sentence


def test_the_main_job_holds_no_memory_per_round_of_its_horizon() -> None:
    data = measure(["ts"], [100_000, 400_000])
    (row,) = data["rows"]
    assert data["horizons"] == [100_000, 400_000] and len(row["peak_mib"]) == 2
    assert all(p > 0 for p in row["peak_mib"])
    assert row["bytes_per_round"] < BOUNDED, row  # a table per count held 8-16 bytes a round
    assert sentence(data).startswith("1 of 1 runs hold memory independent of the horizon")
