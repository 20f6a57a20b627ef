"""``dpaudit compare``: several algorithms through the one pipeline, on common random numbers,
with the footing (certified ε, unit, neighbouring relation, trust model) judged explicitly."""

from __future__ import annotations

import json

import pytest

from dpaudit.cli.compare import footing
from dpaudit.cli.main import main

ENV = "bernoulli:0.75,0.5,0.25"


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_json_is_the_run_pipeline_on_common_random_numbers(capsys):
    common = ["--env", ENV, "-T", "3000", "-R", "2", "--seed", "7"]
    code, out, _ = run_cli(
        capsys, "compare", "lazy-ucb --epsilon 1", "lazy-dp-ts --epsilon 1", "ucb1", *common, "--json"
    )
    assert code == 0
    d = json.loads(out)
    assert [r["algorithm"] for r in d["results"]] == [
        "lazy-ucb --epsilon 1",
        "lazy-dp-ts --epsilon 1",
        "ucb1",
    ]
    assert d["footing"] == {
        "equal": True,
        "epsilon_spread": pytest.approx(1.0),
        "notes": [],
        "non_private_references": 1,
    }
    assert all(r["ledger_check"]["ok"] for r in d["results"])
    # the same numbers as `dpaudit run` with the same options and seed
    code, out, _ = run_cli(
        capsys, "run", "lazy-dp-ts", "--epsilon", "1", *common, "--audit-trials", "0", "--json"
    )
    single = json.loads(out)
    assert d["results"][1]["regret"]["mean"] == single["regret"]["mean"]
    assert d["results"][1]["privacy"]["epsilon"] == single["privacy"]["epsilon"]


def test_compare_text_flags_a_different_footing(capsys, tmp_path):
    plot = tmp_path / "c.png"
    code, out, _ = run_cli(
        capsys,
        "compare",
        "lazy-ucb --epsilon 1",
        "lazy-ucb --epsilon 2",
        "--env",
        ENV,
        "-T",
        "2000",
        "-R",
        "2",
        "--plot",
        str(plot),
    )
    assert code == 0
    assert "NOT one footing -- certified epsilons differ (largest/smallest 2" in out
    assert "x best" in out and plot.stat().st_size > 10_000


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        (["lazy-ucb --epsilon 1 -T 10"], "-T is shared by all algorithms"),
        (["nosuch"], "ALG must be one of"),
        (["lazy-ucb --epsilon -1"], "--epsilon"),
        (["lazy-ucb 'unbalanced"], "No closing quotation"),
        (["ucb1"] * 13, "at most 12 algorithms"),
    ],
)
def test_compare_bad_input_is_one_line(capsys, entries, message):
    code, out, err = run_cli(capsys, "compare", *entries, "--env", ENV, "-T", "100")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_footing_names_every_difference():
    def row(eps, unit="u", nb="replace", model="central"):
        return {
            "privacy": {"private": True, "epsilon": eps, "unit": unit, "neighbouring": nb, "model": model}
        }

    f = footing([row(1.0), row(1.0, unit="v", model="local")])
    assert not f["equal"] and f["notes"] == [
        "units of privacy differ (u, v)",
        "trust models differ (central, local)",
    ]
    f = footing([row(1.0), row(None)])
    assert not f["equal"] and "some certify no epsilon" in f["notes"]
