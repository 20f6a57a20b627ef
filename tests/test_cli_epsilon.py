"""`dpaudit epsilon`: output formats and one-line errors with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dpaudit.cli.main import main


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_ts_json_has_every_method(capsys):
    code, out, _ = run_cli(capsys, "epsilon", "ts", "--horizon", "100000", "--arms", "5", "--prepulls", "100",
                           "--variance-scale", "10", "--delta", "1e-6", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["delta"] == 1e-6
    for m in ("gdp", "rdp", "pld", "advanced", "basic"):
        assert isinstance(d["bounds"][m], float)
    assert d["best"] == {"method": "gdp", "value": d["bounds"]["gdp"]}
    assert d["mu"] == pytest.approx((99500 / 1010) ** 0.5)


def test_gaussian_epsilon_query_reports_delta(capsys):
    code, out, _ = run_cli(capsys, "epsilon", "gaussian", "--mu", "1", "--epsilon", "1", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["epsilon"] == 1.0 and "delta" not in d
    assert d["bounds"]["gdp"] == pytest.approx(0.1269367, rel=1e-6)
    assert d["mu"] == pytest.approx(1.0)


def test_laplace_table_and_not_applicable_are_explained(capsys):
    code, out, _ = run_cli(
        capsys, "epsilon", "laplace", "--epsilon0", "0.1", "--steps", "100", "--delta", "1e-5"
    )
    assert code == 0
    assert "basic" in out and "10.000001" in out  # the sum 10 + 2 ulp, printed rounded up
    assert "best" in out


def test_rnm_gaussian(capsys):
    code, out, _ = run_cli(capsys, "epsilon", "rnm-gaussian", "--sensitivities", "1,1,1", "--sigmas", "1,2,4",
                           "--delta", "1e-6", "--json")
    assert code == 0
    assert json.loads(out)["mu"] == pytest.approx(1.0)


@pytest.mark.slow
def test_plot_is_written(tmp_path, capsys):
    path = tmp_path / "eps.png"
    code, _, _ = run_cli(capsys, "epsilon", "gaussian", "--sigma", "2", "--steps", "10", "--delta", "1e-5",
                         "--plot", str(path))
    assert code == 0
    assert path.stat().st_size > 10_000


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["epsilon", "gaussian", "--mu", "1", "--delta", "1.5"], "--delta must be in (0, 1)"),
        (["epsilon", "gaussian", "--mu", "1", "--delta", "0"], "--delta must be in (0, 1)"),
        (["epsilon", "gaussian", "--sigma", "-2", "--delta", "0.1"], "--sigma must be in (0, inf)"),
        (["epsilon", "gaussian", "--mu", "x", "--delta", "0.1"], "--mu must be a number"),
        (["epsilon", "ts", "--horizon", "100", "--arms", "5", "--variance-scale", "0.9", "--delta", "0.1"],
         "--variance-scale must be in [1, inf)"),
        (["epsilon", "ts", "--horizon", "100", "--arms", "5", "--prepulls", "20", "--delta", "0.1"],
         "prepulls*arms must be < horizon"),
        (["epsilon", "rnm-gaussian", "--sensitivities", "1,1", "--sigmas", "1,2,3", "--delta", "0.1"],
         "--sensitivities must have 1 entry or 3"),
        (["epsilon", "gaussian", "--mu", "1"], "one of the arguments --delta --epsilon is required"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, args, needle):
    code, out, err = run_cli(capsys, *args)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err


def test_console_script_exit_status():
    proc = subprocess.run([sys.executable, "-m", "dpaudit.cli.main", "epsilon", "gaussian", "--mu", "-1",
                           "--delta", "0.1"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("dpaudit: error:") and "Traceback" not in proc.stderr
