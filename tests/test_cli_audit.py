"""`dpaudit audit`: JSON output, plots, one-line errors with exit status 2."""

from __future__ import annotations

import json

import pytest

from dpaudit.cli.main import main


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_gaussian_json_has_required_keys(capsys):
    code, out, err = run_cli(capsys, "audit", "gaussian", "--sigma", "1", "--trials", "100000", "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["verdict"] == "consistent"
    assert d["certified"]["mu"] == pytest.approx(1.0) and d["certified"]["source"] == "dpaudit"
    for k in ("epsilon_lower", "mu_lower", "delta", "confidence", "trials", "method", "statistic"):
        assert k in d["empirical"]
    assert d["empirical"]["trials"] == 100000 and d["empirical"]["confidence"] == 0.95


@pytest.mark.slow
def test_claims_and_verdicts(capsys):
    code, out, _ = run_cli(capsys, "audit", "laplace", "--scale", "1", "--claim-epsilon", "0.5", "--json")
    d = json.loads(out)
    assert code == 1 and d["verdict"] == "violated" and d["certified"]["epsilon"] == 0.5  # exit 1 gates CI
    assert d["detection_floor"]["epsilon"] > 0 and d["estimate"]["lower"] <= d["estimate"]["upper"]
    code, out, _ = run_cli(
        capsys, "audit", "gaussian", "--sigma", "0.5", "--claim-mu", "1", "--json", "--trials", "20000"
    )
    assert json.loads(out)["verdict"] == "violated"
    code, out, _ = run_cli(capsys, "audit", "randomized-response", "--epsilon", "1", "--json", "--seed", "3")
    assert json.loads(out)["verdict"] == "consistent"


@pytest.mark.slow
def test_published_claims_from_the_command_line(capsys):
    code, out, _ = run_cli(
        capsys, "audit", "rnm-laplace", "--scale", "1", "--epoch-length", "16", "--claim-published", "--json"
    )
    d = json.loads(out)
    assert code == 1 and d["verdict"] == "violated"
    assert d["certified"]["source"] == "Hu et al. (2024), Theorem 8"
    code, out, _ = run_cli(capsys, "audit", "rnm-laplace", "--scale", "1", "--epoch-length", "16", "--json")
    assert json.loads(out)["verdict"] == "consistent"
    code, out, _ = run_cli(
        capsys,
        "audit",
        "rnm-gaussian",
        "--sensitivities",
        "0.5",
        "--sigmas",
        "0.70710678,0.70710678",
        "--claim-published",
        "--claim-delta",
        "0.01",
        "--json",
    )
    assert json.loads(out)["verdict"] == "violated"
    code, out, _ = run_cli(
        capsys,
        "audit",
        "rnm-gaussian",
        "--sensitivities",
        "1",
        "--sigmas",
        "1,2",
        "--values",
        "0,0.5",
        "--json",
        "--trials",
        "20000",
    )
    assert code == 0 and json.loads(out)["details"]["neighbours"]["x"] in (
        [0.0, 0.5],
        [1.0, 0.5],
        [0.0, 1.5],
        [0.0, -0.5],
        [-1.0, 0.5],
    )
    code, out, _ = run_cli(capsys, "audit", "cascade", "--positions", "4", "--epsilon", "1", "--json")
    assert json.loads(out)["verdict"] == "violated"


@pytest.mark.slow
def test_text_output_and_plot(tmp_path, capsys):
    path = tmp_path / "audit.png"
    code, out, _ = run_cli(
        capsys, "audit", "gaussian", "--sigma", "1", "--trials", "20000", "--plot", str(path)
    )
    assert code == 0 and "CONSISTENT" in out and "recovered" in out
    assert "samples     : pilot 2,000; certifying test 9,000 on x, 9,000 on x'" in out
    assert path.stat().st_size > 10_000
    path2 = tmp_path / "eps.png"
    code, _, _ = run_cli(
        capsys,
        "audit",
        "rnm-laplace",
        "--scale",
        "1",
        "--claim-published",
        "--plot",
        str(path2),
        "--trials",
        "20000",
    )
    assert code == 1 and path2.stat().st_size > 10_000  # Theorem 8 of Hu et al. (2024) is violated: exit 1


@pytest.mark.parametrize(
    "args,needle",
    [
        (["gaussian", "--sigma", "-1"], "--sigma"),
        (["gaussian", "--sigma", "1", "--trials", "5"], "--trials"),
        (["gaussian", "--sigma", "1", "--confidence", "1.5"], "--confidence"),
        (["laplace", "--scale", "0"], "--scale"),
        (["randomized-response", "--epsilon", "nan"], "--epsilon"),
        (["rnm-laplace", "--scale", "1", "--arms", "1"], "--arms"),
        (["rnm-laplace", "--scale", "1", "--neighbouring", "swap"], "--neighbouring"),
        (["rnm-laplace", "--scale", "1", "--epoch-length", "4", "--gap", "9"], "--gap"),
        (["rnm-gaussian", "--sensitivities", "1,1,1", "--sigmas", "1,2"], "--sensitivities"),
        (["rnm-gaussian", "--sensitivities", "1", "--sigmas", "1"], "--sigmas"),
        (["rnm-gaussian", "--sensitivities", "1", "--sigmas", "1,2", "--values", "0"], "--values"),
        (["rnm-gaussian", "--sensitivities", "1", "--sigmas", "1,-2"], "--sigmas"),
        (["rnm-gaussian", "--sensitivities", "1", "--sigmas", "1,2", "--claim-published"], "--claim-delta"),
        (["gaussian", "--sigma", "1", "--claim-mu", "1", "--claim-epsilon", "1"], "--claim"),
        (["gaussian", "--sigma", "1", "--claim-delta", "0.1"], "--claim-delta"),
        (["cascade", "--positions", "0", "--epsilon", "1"], "--positions"),
        (["cascade", "--positions", "3", "--epsilon", "1", "--click", "zero"], "--click"),
    ],
)
def test_bad_input_is_one_line_with_status_2(capsys, args, needle):
    code, out, err = run_cli(capsys, "audit", *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("dpaudit: error:") and needle in err
