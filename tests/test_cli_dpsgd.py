"""`dpaudit epsilon dpsgd` and `dpaudit calibrate dpsgd` (issue 23): the table and JSON of the other
`epsilon` commands, the calibrated parameter under its own JSON key, one-line errors (exit 2)."""

from __future__ import annotations

import json

import pytest

from dpaudit.accounting import epsilon_under
from dpaudit.cli.main import main
from dpaudit.events import GaussianEvent
from dpaudit.events_ml import SampledWithReplacementEvent


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_epsilon_dpsgd_table_and_json(capsys):
    code, out, _ = run_cli(capsys, "epsilon", "dpsgd", "--sampling-rate", "0.01", "--noise-multiplier", "1",
                           "--steps", "1000", "--delta", "1e-5")
    assert code == 0
    assert out.splitlines()[0] == ("DP-SGD: 1000 steps, noise multiplier 1, Poisson sampling q = 0.01 "
                                   "(add or remove one record)")
    assert "  pld                     1.828244" in out and "certified by pld" in out
    code, out, _ = run_cli(capsys, "epsilon", "dpsgd", "-q", "0.01", "-s", "1", "-k", "1000",
                           "--epsilon", "1", "--json")
    d = json.loads(out)
    assert code == 0 and d["quantity"] == "delta" and d["best"]["method"] == "pld"
    assert "rdp and pld methods bound it" in d["reasons"]["gdp"]


def test_epsilon_dpsgd_fixed_batches(capsys):
    code, out, _ = run_cli(capsys, "epsilon", "dpsgd", "--sampling", "without-replacement", "--dataset-size",
                           "60000", "--batch-size", "256", "--noise-multiplier", "1.1", "--steps", "2000",
                           "--delta", "1e-5", "--json")
    d = json.loads(out)
    assert code == 0 and d["best"]["method"] == "rdp" and d["num_releases"] == 2000
    assert "Wang, Balle & Kasiviswanathan" in d["reasons"]["pld"]
    # the same batches sampled by Poisson at q = B/N are accounted under add/remove
    code, out, _ = run_cli(capsys, "epsilon", "dpsgd", "--dataset-size", "60000", "--batch-size", "256",
                           "--noise-multiplier", "1.1", "--steps", "2000", "--delta", "1e-5", "--json")
    assert code == 0 and json.loads(out)["best"]["method"] == "pld"


def test_epsilon_dpsgd_batches_drawn_with_replacement(capsys):
    code, out, _ = run_cli(capsys, "epsilon", "dpsgd", "--sampling", "with-replacement", "--dataset-size",
                           "1000", "--batch-size", "10", "--noise-multiplier", "2", "--steps", "50",
                           "--delta", "1e-5", "--json")
    d = json.loads(out)
    wr = SampledWithReplacementEvent(1000, 10, GaussianEvent(sigma=2.0, sensitivity=2.0)).repeat(50)
    assert code == 0 and d["best"]["method"] == "pld" and d["num_releases"] == 50
    assert d["best"]["value"] >= epsilon_under("pld", wr, 1e-5) * (1 - 1e-12)
    assert "revealing the record's number of copies" in d["reasons"]["gdp"]
    code, _, err = run_cli(capsys, "epsilon", "dpsgd", "--sampling", "with-replacement", "-q", "0.1",
                           "--noise-multiplier", "2", "--steps", "5", "--delta", "1e-5")
    assert code == 2 and "--sampling with-replacement needs --dataset-size" in err


def test_calibrate_dpsgd_json_and_text(capsys):
    code, out, _ = run_cli(capsys, "calibrate", "dpsgd", "--target-epsilon", "1", "--delta", "1e-5",
                           "--sampling-rate", "0.02", "--steps", "100", "--json")
    d = json.loads(out)
    assert code == 0 and list(d)[0] == "noise_multiplier" and d["parameter"] == "noise_multiplier"
    assert d["epsilon"] <= 1.0 and d["infeasible"] < d["noise_multiplier"] <= d["infeasible"] * 1.001
    code, out, _ = run_cli(capsys, "calibrate", "dpsgd", "--target-epsilon", "1", "--delta", "1e-5",
                           "--sampling-rate", "0.02", "--noise-multiplier", "1.5")
    assert code == 0 and out.startswith("steps = ") and "certified epsilon = " in out


EPS = ["epsilon", "dpsgd", "--delta", "1e-5"]
CAL = ["calibrate", "dpsgd", "--delta", "1e-5"]


@pytest.mark.parametrize("argv,message", [
    (EPS + ["-s", "1", "-k", "10"], "give --sampling-rate, or --dataset-size"),
    (EPS + ["-q", "0.1", "-s", "1", "-k", "10", "--dataset-size", "10"],
     "--dataset-size and --batch-size together"),
    (EPS + ["-s", "1", "-k", "10", "--dataset-size", "10", "--batch-size", "11"],
     "--batch-size must be at most --dataset-size"),
    (EPS + ["-q", "1.5", "-s", "1", "-k", "10"], "--sampling-rate must be in"),
    (EPS + ["-q", "0.1", "-s", "nan", "-k", "10"], "--noise-multiplier must be"),
    (CAL + ["--target-epsilon", "1", "-k", "10"], "give exactly two of"),
    (CAL + ["--target-epsilon", "0", "-k", "10", "-q", "0.1"], "--target-epsilon must be in"),
    (CAL + ["--target-epsilon", "1e-9", "-s", "0.5", "-q", "0.5"], "no steps in"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("dpaudit: error: ") and message in err
