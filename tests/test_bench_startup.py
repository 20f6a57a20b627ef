"""The start-up benchmark runs (one interleaved pair) and its README sentence renders."""

from __future__ import annotations

import math

from benchmarks.bench_startup import measure, sentence


def test_startup_benchmark_measures_both_commands_and_the_phases() -> None:
    row = measure(1)
    assert row["numpy_s"] > 0 and row["run_s"] > 0 and row["ratio"] == row["run_s"] / row["numpy_s"]
    assert list(row["phases_ms"]) == ["numpy", "accountant and CLI", "run pipeline", "the run"]
    assert all(v > 0 for v in row["phases_ms"].values())
    assert "import numpy" in sentence(row) and f"{row['ratio']:.2f}×" in sentence(row)


def test_every_algorithm_is_timed_and_summarised() -> None:
    from benchmarks.bench_startup import measure_every

    every = measure_every(1, ["ts", "lazy-ucb"])
    assert list(every) == ["ts", "lazy-ucb"]
    assert all(r["ratio"] == r["run_s"] / r["numpy_s"] > 0 for r in every.values())
    ratios = {"a": {"ratio": 1.5}, "b": {"ratio": 2.5}, "c": {"ratio": 1.9}}
    row = {"command": "c", "runs": 1, "numpy_s": 0.1, "run_s": 0.2, "ratio": 2.0, "phases_ms": {"numpy": 1.0},
           "every": {"runs": 1, "algorithms": ratios}}
    text = sentence(row)
    assert "median 1.90×, 2 of 3 within 2×, at most 2.50× (b)" in text


def test_the_certificate_of_a_run_above_2x_is_timed_and_named() -> None:
    import tempfile

    from benchmarks.bench_startup import _certificate_s, _env, with_certificate

    with tempfile.TemporaryDirectory() as cache:
        seconds = _certificate_s("cascade-dp-sound", _env(cache))
        below = {"numpy_s": 0.1, "run_s": 0.2, "ratio": 2.0}
        assert with_certificate("cascade-dp-sound", below, _env(cache), 1) is below  # at 2×: not timed
        above = with_certificate("cascade-dp-sound", below | {"run_s": 0.3, "ratio": 3.0}, _env(cache), 1)
    # the run's own timing of its certificate (a few tens of ms here); no wall-clock ceiling, as
    # a loaded machine may take any time: positive and finite is what the benchmark relies on
    assert all(math.isfinite(x) and x > 0.0 for x in (seconds, above["certificate_s"]))
    assert above["ratio_without_certificate"] == (0.3 - above["certificate_s"]) / 0.1
    algs = {"a": {"ratio": 1.5}, "b": {"ratio": 2.5, "certificate_s": 0.05, "ratio_without_certificate": 2.0}}
    row = {"command": "c", "runs": 1, "numpy_s": 0.1, "run_s": 0.2, "ratio": 2.0, "phases_ms": {"numpy": 1.0},
           "every": {"runs": 1, "algorithms": algs}}
    assert "above 2×: b 2.50× (its certificate 50 ms; 2.00× without it)" in sentence(row)
