"""The main-job benchmark runs a small job against the plain loop at the job's own size, and its
README sentence renders the audit's numbers and says whether the target is met."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.bench_main_job import (
    _power_of_ten,
    _trajectories_clause,
    main,
    run_job,
    sentence,
    trajectories,
)


@pytest.mark.slow
def test_main_job_benchmark_measures_the_job_and_the_loop(tmp_path, capsys) -> None:
    out = tmp_path / "main_job.json"
    assert main(["--repeat", "1", "--args", "-T 2000 -R 2 --audit-trials 1000", "--json", str(out)]) == 0
    row = json.loads(out.read_text())
    assert row["job_s"] > 0 and row["loop_s"] > 0 and row["ratio"] == row["job_s"] / row["loop_s"]
    assert row["size"] == {"horizon": 2000, "arms": 5, "reps": 2, "prepulls": row["size"]["prepulls"],
                           "variance_scale": row["size"]["variance_scale"]}  # fmt: skip
    assert row["audit"]["verdict"] in ("consistent", "inconclusive")
    assert set(row["audit"]["mu_lower"]) == {"outputs", "releases"}
    text = capsys.readouterr().out
    assert text.strip() == sentence(row) and "-T 2000" in text and f"{row['ratio']:.1f}×" in text


def test_the_sentence_says_whether_the_target_is_met() -> None:
    row = json.loads((Path(__file__).resolve().parents[1] / "docs/img/main_job.json").read_text())
    assert ("not met" in sentence(row)) == (row["ratio"] > row["target"])
    assert ": met" in sentence(row | {"ratio": 2.5}) and "not met" in sentence(row | {"ratio": 3.5})
    # lower bounds rounded down, the certificate up
    fake = row | {"audit": row["audit"] | {"mu_lower": {"outputs": 0.03369}, "mu_certified": 0.14861}}
    assert "outputs mu >= 0.0336" in sentence(fake) and "certified 0.1487" in sentence(fake)


def test_a_bad_repeat_is_refused(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["--repeat", "0"])
    assert e.value.code == 2 and "--repeat must be >= 1, got 0" in capsys.readouterr().err


def test_the_agent_alone_is_timed_on_the_audits_own_main_sample() -> None:
    _, report = run_job(["-T", "2000", "-R", "2", "--audit-trials", "1000"])
    played = trajectories(report)
    d = report["audit"]["details"]
    assert played["per_table"] == d["certifying_test"]["trajectories_per_table"] > 0
    assert played["private_rounds"] == d["horizon"] - d["neighbour"]["first_private_round"] > 0
    assert played["normals"] == 2 * played["per_table"] * played["private_rounds"] * d["arms"]
    assert played["cpu_s"] > 0
    assert _power_of_ten(3.6e8) == "3.6·10⁸" and _power_of_ten(12_000) == "1.2·10⁴"
    row = {"loop_s": 1.0, "target": 3.0, "trajectories": played | {"cpu_s": 4.0}}
    assert "4.0× the loop: above the target before any statistic" in _trajectories_clause(row)
    assert "within the target" in _trajectories_clause(row | {"trajectories": played | {"cpu_s": 2.0}})
    assert _trajectories_clause({}) == ""
