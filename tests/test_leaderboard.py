"""The leaderboard of private stochastic bandits (``bandits/experiments/leaderboard.py``) on a tiny
configuration: one footing, common random numbers, the winner logic, bad input."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from bandits.experiments import leaderboard as lb
from bandits.lazy.spec import SETTING_1, SETTING_2
from bandits.registry import algorithms
from bandits.run import run_algorithm
from dpaudit.conversions import gdp_epsilon

TINY = lb.LeaderboardConfig(("bernoulli",), (3000,), (2.0,), reps=3, tuner_reps=2, tuner_candidates=2)


@pytest.fixture(scope="module")
def board() -> lb.Leaderboard:
    return lb.run_leaderboard(TINY)


def test_every_private_stochastic_bandit_is_on_the_board() -> None:
    specs = algorithms()
    private_bandits = {k for k, s in specs.items() if s.feedback.value == "bandit" and s.privacy != "none"}
    assert private_bandits == set(lb.ALGORITHMS)


def test_the_instances_are_the_papers() -> None:
    from benchmarks.readme_tables import TUNING

    specs = {spec for _, spec in lb.INSTANCES.values()}
    assert {env for _, env, _ in TUNING} <= specs
    assert {SETTING_1, SETTING_2} <= specs


def test_one_footing(board: lb.Leaderboard) -> None:
    (cell,) = board.cells
    assert cell.epsilon == pytest.approx(float(gdp_epsilon(2.0, 1e-6)), rel=1e-12)
    assert [r.algorithm for r in cell.rows] == list(lb.ALGORITHMS)
    assert all(r.footing == "ok" for r in cell.rows)  # DP-TS-UCB too: its alpha spends the budget exactly
    for r in cell.rows:
        assert r.ledger_ok
        if r.footing == "ok":
            assert r.certified_epsilon == pytest.approx(cell.epsilon, rel=1e-6), r.algorithm
        else:  # the row says why; the certified budget is never exceeded
            assert r.algorithm == "dp-ts-ucb" and "phi is an integer" in r.footing
            assert r.certified_epsilon <= cell.epsilon * (1 + 1e-6)
        if r.algorithm in lb.GDP:
            assert r.guarantee == "gdp" and r.certified_mu is not None and r.certified_mu <= 2.0 * (1 + 1e-9)
        else:  # pure eps-DP at the converted eps, delta = 0
            assert r.epsilon_pure == pytest.approx(cell.epsilon, rel=1e-12)


def test_published_rows_are_at_the_papers_accounting(board: lb.Leaderboard) -> None:
    (cell,) = board.cells
    by = {r.algorithm: r for r in cell.published_rows}
    assert by["ts"].published_epsilon == pytest.approx(cell.epsilon, rel=1e-6)  # Theorem 4 at the budget
    assert by["ts"].certified_epsilon < cell.epsilon  # which certifies less: the paper is conservative
    dp_ts_ucb = by["dp-ts-ucb"].published_epsilon  # Theorem 4.4, sqrt(2) loose: alpha spends it exactly
    assert dp_ts_ucb == pytest.approx(cell.epsilon, rel=1e-6)
    for key in ("lazy-dp-ts", "lazy-ucb", "dp-se", "adap-ucb", "adap-klucb"):  # paper's eps = certified
        assert by[key] == next(r for r in cell.rows if r.algorithm == key)


def test_common_random_numbers(board: lb.Leaderboard) -> None:
    """Every algorithm runs at the leaderboard's root seed: a row is what the ``dpaudit run``
    pipeline gives alone at that seed, and again on a second run."""
    (cell,) = board.cells
    for r in cell.rows[:3] + cell.rows[-1:]:
        alone = run_algorithm(r.algorithm, cell.env, cell.horizon, reps=TINY.reps, seed=TINY.seed,
                              audit_trials=0, progress=False, **r.options)  # fmt: skip
        assert tuple(alone.simulation.pseudo_regret[:, -1].tolist()) == r.finals, r.algorithm
    again = lb.run_cell(dataclasses.replace(TINY, algorithms=("lazy-ucb", "dp-se")), "bernoulli", 3000, 2.0)
    assert [r.finals for r in again.rows] == [
        r.finals for r in cell.rows if r.algorithm in ("lazy-ucb", "dp-se")
    ]


def _row(key: str, finals: tuple[float, ...]) -> lb.Row:
    mean = sum(finals) / len(finals)
    return lb.Row(key, {}, "pure", None, 1.0, 1.0, 1.0, None, mean, 0.0, finals, True, None, None, "ok", 0.0)


def test_winner_logic_on_a_constructed_result() -> None:
    a, b = _row("lazy-dp-ts", (100, 110, 105, 95)), _row("dp-se", (300, 320, 310, 290))
    close = _row("lazy-ucb", (101, 112, 104, 97))  # within 2 paired s.e. of a
    assert lb.winner([a, b]) == "lazy-dp-ts"
    assert lb.winner([a, b, close]) is None
    assert lb.contenders([a, b, close]) == ["lazy-dp-ts", "lazy-ucb"]
    cells = [
        lb.Cell("bernoulli", SETTING_1, 1000, mu, 1.0, rows) for mu, rows in ((1.0, (a, b)), (2.0, (a, b)))
    ]
    assert lb.winner_sentence(cells, "bernoulli") == (
        "Bernoulli §5.1 (= Hu et al. setting 1): Lazy-DP-TS wins in every cell "
        "(lowest regret by more than 2 s.e.)."
    )
    mixed = cells[:1] + [lb.Cell("bernoulli", SETTING_1, 1000, 2.0, 1.0, (a, b, close))]
    assert lb.winner_sentence(mixed, "bernoulli").endswith(
        "μ = 2: no clear winner (Lazy-DP-TS, Anytime-Lazy-UCB within 2 s.e.)."
    )


def test_json_and_table(board: lb.Leaderboard, tmp_path: Path) -> None:
    data = json.loads(json.dumps(board.to_dict()))
    text = lb.markdown_table(data)
    assert text.count("\n") == 1 + len(lb.ALGORITHMS)
    assert "| Bernoulli §5.1 (= Hu et al. setting 1) | 3000 | 2 (10.9972) |" in text
    assert lb.markdown_table(data, published=True).startswith(
        "| instance | T | μ (ε at δ = 10⁻⁶) | algorithm | paper's ε"
    )
    assert lb.plot_instance(data, "bernoulli", tmp_path).exists()


def test_audited_cell() -> None:
    cfg = dataclasses.replace(TINY, algorithms=("dp-se", "adap-ucb"), audit_trials=500, published=False)
    cell = lb.run_cell(cfg, "bernoulli", 3000, 2.0)
    # DP-SE at T = 3000: its audit sees nothing (bound 0), so it cannot pass
    assert [r.audit for r in cell.rows] == ["inconclusive", "consistent"]
    data = json.loads(json.dumps(lb.Leaderboard(cfg, (cell,)).to_dict()))
    table = lb.markdown_table(data)
    assert "| consistent (outputs ε ≥ " in table and ", releases ε ≥ " in table and "| inconclusive" in table


def test_rows_run_again_with_their_stored_options(tmp_path: Path) -> None:
    """``leaderboard_update --stored-options``: the same simulation (its regrets checked equal to the
    stored ones), today's audit with every view's bound; other rows untouched; a stored row that
    does not reproduce is an error."""
    from bandits.experiments.leaderboard_update import main, update_rows

    cfg = dataclasses.replace(TINY, algorithms=("dp-se", "adap-ucb"), audit_trials=500, published=False)
    data = json.loads(json.dumps(lb.Leaderboard(cfg, (lb.run_cell(cfg, "bernoulli", 3000, 2.0),)).to_dict()))
    for r in data["cells"][0]["rows"]:  # as a board stored before the audit changed
        r.update(audit="stale", audit_bounds=None)
    path = tmp_path / "board.json"
    path.write_text(json.dumps(data))
    new = update_rows(path, ("adap-ucb",), stored_options=True)
    old_rows, rows = data["cells"][0]["rows"], new["cells"][0]["rows"]
    assert rows[0]["audit"] == "stale" and rows[1]["audit"] == "consistent"
    assert list(rows[1]["finals"]) == old_rows[1]["finals"]
    assert set(rows[1]["audit_bounds"]) == {"outputs", "releases"}
    assert "stored options" in new["notes"][-1]
    data["cells"][0]["rows"][1]["finals"][0] += 1.0
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="adap-ucb at T = 3000, mu = 2 .*not reproduced"):
        update_rows(path, ("adap-ucb",), stored_options=True)
    assert main([str(path), "adap-ucb", "--stored-options"]) == 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"budgets": (0.0,)}, r"budgets must be GDP mu in \(0, 50\]"),
        ({"horizons": (10,)}, r"horizons must be integers in \[100, 10000000\]"),
        ({"reps": 1}, "reps must be an integer >= 2"),
        ({"instances": ("nope",)}, "instances must be among bernoulli, truncexp, hu-setting-2"),
        ({"algorithms": ("ucb1",)}, "algorithms must be among ts, dp-ts-ucb"),
    ],
)
def test_bad_config(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(TINY, **change)


def test_bad_command_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert lb.main(["--reps", "1"]) == 2
    assert "reps must be an integer >= 2, got 1" in capsys.readouterr().err
    assert lb.main(["--json", str(tmp_path / "no" / "such.json")]) == 2
    assert "--json" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        lb.main(["--reps", "x"])
    assert exc.value.code == 2


@pytest.mark.slow
def test_the_full_scale_tuner_keeps_dp_ts_ucb_off_suboptimal_arms() -> None:
    """The numbers docs/leaderboard.md quotes: DP-TS-UCB as the full-scale leaderboard tunes it
    (α and first epoch, 10 runs on the tuner's seed, the three leaders confirmed on 40 more) on
    the Bernoulli instance at T = 10⁵, then 20 runs at seed 0: no run stuck on a suboptimal arm."""
    import numpy as np

    from bandits.environments import parse_env

    env = parse_env(lb.INSTANCES["bernoulli"][1])
    cfg = dataclasses.replace(lb.FULL, horizons=(100_000,))
    got = {}
    for mu in (0.5, 1.0, 2.0):
        opts = lb._tuned_options("dp-ts-ucb", env, 100_000, mu, cfg)
        rep = run_algorithm("dp-ts-ucb", env.spec, 100_000, reps=20, seed=0, audit_trials=0, progress=False,
                            **opts)  # fmt: skip
        fin = rep.simulation.pseudo_regret[:, -1]
        got[mu] = (opts["first_epoch"], round(float(fin.mean())), round(float(fin.std(ddof=1) / np.sqrt(20))),
                   int((fin > 0.5 * 100_000 * 0.125).sum()))  # fmt: skip
    assert got == {0.5: (16, 107, 17, 0), 1.0: (16, 116, 15, 0), 2.0: (4, 103, 11, 0)}


def test_the_prose_about_the_t1e6_run_is_its_stored_table() -> None:
    """The numbers docs/leaderboard.md and the README quote about the T = 10⁶ run are those of
    ``docs/img/leaderboard_full-T1000000.json``: Thompson sampling last in every cell (15–275
    times the best), the quoted regrets rows of that table."""
    root = Path(__file__).resolve().parent.parent
    data = json.loads((root / "docs" / "img" / "leaderboard_full-T1000000.json").read_text())
    rows = [line.split("|") for line in lb.markdown_table(data).splitlines()[2:]]
    cells: dict[tuple[str, str], list[tuple[float, str, str]]] = {}
    for r in rows:
        reg = float(r[6].split("±")[0].replace(" ", ""))
        cells.setdefault((r[1], r[3]), []).append((reg, r[4].strip(" *"), r[6].strip()))
    assert len(cells) == 9
    ts = [next(float(r[7]) for r in rows if (r[1], r[3]) == k and "Thompson" in r[4]) for k in cells]
    assert all(max(v)[1].startswith("Thompson") for v in cells.values())
    assert (f"{min(ts):.0f}", f"{max(ts):.0f}") == ("15", "275")
    quoted = {r[2] for v in cells.values() for r in v}
    for text in ("104 ± 11", "426 ± 11", "119 ± 17", "275 ± 10", "3855 ± 3677", "532 ± 8", "453 ± 29",
                 "422 ± 18"):
        assert text in quoted, text
    doc = (root / "docs" / "leaderboard.md").read_text()
    assert "(15–275 times the best regret)" in doc and "104 ± 11" in doc
