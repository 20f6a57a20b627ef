"""`dpaudit run ALG`, `dpaudit list` and `dpaudit tune ts`: outputs, defaults, regression against the
JSON of `dpaudit run ts` before the pipeline rewrite, exit statuses (0, 1, 2) and one-line errors."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

import bandits.registry
from bandits.auditing.contract import AuditSettings, PolicyAudit
from dpaudit.analyses.thompson_sampling import ThompsonConfig
from dpaudit.audit.report import AuditReport, Certified, Empirical
from dpaudit.cli.main import main
from dpaudit.conversions import gdp_mu
from dpaudit.formatting import fmt_up


class FakeAuditor:
    """Stands in for bandits.thompson.audit.audit_thompson: records its calls, returns 'consistent'."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple, dict]] = []

    def __call__(self, policy, horizon, env, settings: AuditSettings) -> PolicyAudit:
        kw = dataclasses.asdict(settings)
        arms = env.n_arms
        self.calls.append(((policy, horizon, arms), kw))
        mu = ThompsonConfig(horizon, arms, policy.b, policy.c).mu_tight
        return PolicyAudit(AuditReport.build(
            target="thompson",
            certified=Certified(mu=mu),
            empirical=Empirical(
                epsilon_lower=0.1,
                mu_lower=0.2,
                delta=kw["delta"],
                confidence=kw["confidence"],
                trials=2 * kw["trials"],
                method="fake",
                statistic="fake",
            ),
        ))


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def fake_audit(monkeypatch):
    fake = FakeAuditor()
    spec = bandits.registry.get("ts")
    monkeypatch.setitem(bandits.registry._REGISTRY, "ts", dataclasses.replace(spec, auditor=fake))
    return fake


def test_run_ts_json_keys_and_reduced_audit(capsys, fake_audit):
    code, out, err = run_cli(
        capsys,
        "run",
        "ts",
        "--horizon",
        "5000",
        "--reps",
        "2",
        "--target-mu",
        "2",
        "--audit-trials",
        "20",
        "--json",
    )
    assert code == 0
    assert err == ""  # --json: no progress bars
    d = json.loads(out)
    assert {"regret", "privacy", "audit", "config"} <= set(d)
    assert {"mean", "stderr", "checkpoints"} <= set(d["regret"])
    assert d["regret"]["checkpoints"]["t"][-1] == 5000
    assert {"mu", "mu_paper", "epsilon", "delta", "bounds"} <= set(d["privacy"])
    assert {"certified", "empirical", "verdict"} <= set(d["audit"])
    c = d["config"]
    b = c["prepulls"]
    assert b == round(6 * 5000**0.5 / 2)  # the rule of thumb
    assert 2 * (1 - 1e-12) <= d["privacy"]["mu"] <= 2.0
    assert d["privacy"]["mu"] == pytest.approx(
        ThompsonConfig(5000, 5, b, c["variance_scale"]).mu_tight, rel=1e-15
    )
    assert d["ledger_check"]["ok"] is True
    assert d["privacy"]["published"]["source"] == "Ou, Avella Medina & Cummings (2024), Theorem 4"
    # default audit horizon: all pre-pulls plus 2000 private rounds, capped at T
    assert c["audit_horizon"] == d["audit"]["horizon"] == min(5000, 5 * b + 2000)
    (policy, horizon, arms), kw = fake_audit.calls[0]
    assert (policy.b, policy.c, horizon, arms, kw["trials"]) == (
        b,
        c["variance_scale"],
        c["audit_horizon"],
        5,
        20,
    )


def test_run_ts_defaults_are_the_section51_instance_at_1gdp(capsys):
    code, out, _ = run_cli(capsys, "run", "ts", "--reps", "1", "--audit-trials", "0", "--json")
    assert code == 0
    d = json.loads(out)
    c = d["config"]
    assert c["env"] == "bernoulli:0.75,0.625,0.5,0.375,0.25" and c["horizon"] == 100_000
    assert (c["prepulls"], round(c["variance_scale"], 3)) == (1897, 47.69)
    assert 1 - 1e-12 <= d["privacy"]["mu"] <= 1.0
    assert d["privacy"]["epsilon"] == pytest.approx(4.8866, abs=1e-3)  # 1-GDP at delta = 1e-6
    assert d["audit"] is None


@pytest.mark.slow
def test_run_ts_explicit_b_c_text_output_and_plot(capsys, tmp_path, fake_audit):
    path = tmp_path / "run.png"
    code, out, _ = run_cli(
        capsys,
        "run",
        "ts",
        "--env",
        "truncexp:0.1,1,2",
        "--horizon",
        "3000",
        "--reps",
        "2",
        "--prepulls",
        "10",
        "--variance-scale",
        "4",
        "--audit-trials",
        "5",
        "--audit-horizon",
        "500",
        "--plot",
        str(path),
    )
    assert code == 0
    mu = ThompsonConfig(3000, 3, 10, 4.0).mu_tight
    assert f"mu = {fmt_up(mu)}-GDP" in out  # certified: printed rounded up
    assert "audit: CONSISTENT (5 trials per neighbouring stream at T = 500)" in out
    assert "reduced horizon T = 500" in out
    assert path.stat().st_size > 5_000


def test_tune_ts_json(capsys):
    code, out, _ = run_cli(
        capsys,
        "tune",
        "ts",
        "--target-mu",
        "1",
        "--horizon",
        "5000",
        "--reps",
        "2",
        "--candidates",
        "6",
        "--json",
    )
    assert code == 0
    d = json.loads(out)
    cands = d["candidates"]
    assert len(cands) >= 6 and cands[0]["b"] == 0  # the grid, the rule of thumb, the refinement
    for k in ("b", "c", "mu", "regret_mean", "regret_stderr"):
        assert k in cands[0] and k in d["best"]
    assert all(x["mu"] <= 1.0 and x["c"] >= 1.0 for x in cands)
    assert d["best"]["regret_mean"] == min(x["regret_mean"] for x in cands)


@pytest.mark.slow
def test_tune_ts_epsilon_target_arms_and_plot(capsys, tmp_path):
    path = tmp_path / "tune.png"
    code, out, _ = run_cli(
        capsys,
        "tune",
        "ts",
        "--target-epsilon",
        "4",
        "--delta",
        "1e-5",
        "--horizon",
        "3000",
        "--arms",
        "3",
        "--reps",
        "2",
        "--candidates",
        "4",
        "--plot",
        str(path),
    )
    assert code == 0
    mu = gdp_mu(4.0, 1e-5)
    assert f"mu = {mu:.6g}" in out and "N = 3" in out and "bernoulli:0.75,0.5,0.25" in out
    assert "best: b =" in out
    assert path.stat().st_size > 10_000


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "ts", "--env", "bernoulli:1.5,0.2"], "--env"),
        (["run", "ts", "--env", "poisson:1,2"], "--env"),
        (["run", "ts", "--prepulls", "1", "--variance-scale", "0.5"], "--variance-scale must be in [1, inf)"),
        (["run", "ts", "--prepulls", "20000"], "--prepulls must be in [0, 19999]"),
        (
            ["run", "ts", "--horizon", "100", "--prepulls", "20", "--variance-scale", "2"],
            "--prepulls must be in [0, 19]",
        ),
        (["run", "ts", "--prepulls", "18000"], "--prepulls must be in [0, 16666]"),
        (["run", "ts", "--reps", "-2"], "--reps must be an integer in [1, 100000]"),
        (["run", "ts", "--reps", "ten"], "--reps must be an integer in [1, 100000]"),
        (["run", "ts", "--horizon", "1e5x"], "--horizon must be an integer in [2, 1000000000]"),
        (["run", "ts", "--target-mu", "-1"], "--target-mu must be in (0, inf)"),
        (["run", "ts", "--target-mu", "abc"], "--target-mu must be a number"),
        (["run", "ts", "--audit-trials", "-5"], "--audit-trials must be an integer in [0, 10000000]"),
        (["run", "ts", "--delta", "2"], "--delta must be in (0, 1)"),
        (["run", "ts", "--variance-scale", "3"], "--variance-scale needs --prepulls"),
        (["run", "ts", "--prepulls", "2", "--variance-scale", "3", "--target-mu", "1"], "not both"),
        (
            ["run", "ts", "--prepulls", "100", "--variance-scale", "3", "--audit-horizon", "400"],
            "--audit-horizon",
        ),
        (["run", "nosuch"], "ALG must be one of"),
        (["run", "ucb1", "--prepulls", "3"], "unrecognized arguments"),
        (
            ["run", "ts", "--horizon", "3000", "--audit-horizon", "5000"],
            "--audit-horizon must be in [2, 3000]",
        ),
        (["run", "ts", "-T", "1000000000", "-R", "100"], "more than the limit"),
        (["run", "ts", "-R", "1000000000"], "--reps must be an integer in [1, 100000]"),
        (["run", "ts", "-T", "1000000000000"], "--horizon must be an integer in [2, 1000000000]"),
        (["run", "ts", "--audit-trials", "10000000000000"], "--audit-trials must be an integer in"),
        (["run", "ts", "--plot", "/nonexistent/dir/x.png"], "does not exist"),
        (["run", "ts", "--plot", ""], "--plot must name a file"),
        (["run", "ts", "--env", "bernoulli:" + ",".join(["0.5"] * 10001)], "at most 10000 arms"),
        (["tune", "ts", "--target-mu", "1", "--arms", "1000000"], "--arms must be an integer in [2, 10000]"),
        (["tune", "ts", "--target-mu", "1", "-R", "1000000000"], "--reps must be an integer in"),
        (["tune", "ts"], "--target-mu"),
        (["tune", "ts", "--target-epsilon", "1"], "--delta"),
        (["tune", "ts", "--target-mu", "1", "--delta", "1e-5"], "--delta"),
        (["tune", "ts", "--target-mu", "0"], "--target-mu must be in (0, inf)"),
        (["tune", "ts", "--target-mu", "1", "--arms", "3", "--env", "bernoulli:0.5,0.4"], "--arms"),
        (["tune", "ts", "--target-mu", "1", "--reps", "0"], "--reps must be an integer in [1, 100000]"),
        (["tune", "ts", "--target-mu", "1", "--env", "truncexp:-1,2"], "--env"),
    ],
)
def test_bad_input_is_one_line_with_status_2(capsys, args, needle):
    code, out, err = run_cli(capsys, *args)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("dpaudit: error:") and needle in lines[0], lines[0]
    assert out == ""


def test_bad_input_subprocess_has_no_traceback():
    p = subprocess.run(
        [sys.executable, "-m", "dpaudit.cli.main", "run", "ts", "--prepulls", "5", "--variance-scale", "0.9"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert "--variance-scale must be in [1, inf)" in p.stderr


# ---------------------------------------------------------------------------------------
# the same numbers as before the pipeline rewrite (JSON saved from `dpaudit run ts` at 6402830)

DATA = Path(__file__).parent / "data"
REGRESSION = [
    ("run_ts_T3000_R3_seed5.json", ["-T", "3000", "-R", "3", "--audit-trials", "300", "--seed", "5"]),
    ("run_ts_default_noaudit.json", ["--audit-trials", "0"]),
    (
        "run_ts_b3_c4_T5000_seed1.json",
        ["-T", "5000", "-R", "2", "-b", "3", "-c", "4", "--audit-trials", "200", "--seed", "1"],
    ),
    (
        "run_ts_truncexp_mu2_T2000.json",
        ["-T", "2000", "-R", "2", "--env", "truncexp:0.1,1,2", "--target-mu", "2", "--audit-trials", "0"],
    ),
]


def _close(old, new, path="", rel=1e-12):
    if isinstance(old, dict):
        for k, v in old.items():
            _close(v, new[k], f"{path}.{k}", rel)
    elif isinstance(old, list):
        assert len(old) == len(new), path
        for i, (a, b) in enumerate(zip(old, new)):
            _close(a, b, f"{path}[{i}]", rel)
    elif isinstance(old, float):
        assert new == pytest.approx(old, rel=rel, abs=rel), path
    else:
        assert new == old, path


@pytest.mark.slow
@pytest.mark.parametrize(("name", "args"), REGRESSION)
def test_run_ts_numbers_unchanged(capsys, name, args):
    """Regret, certified privacy and config equal the saved output (floats to 1e-12: the regret
    sums are now continued from the carry across chunks, so they no longer depend on the chunk
    size; the certified mu is the accountant's, one ulp from the old closed form)."""
    code, out, _ = run_cli(capsys, "run", "ts", *args, "--json")
    assert code == 0
    old, new = json.loads((DATA / name).read_text()), json.loads(out)
    _close(old["regret"], new["regret"], "regret")
    _close(old["config"], new["config"], "config")
    for k in ("mu", "mu_paper", "delta", "epsilon", "epsilon_method", "bounds", "private_rounds"):
        # certified values carry rounding margins of ~1e-11 relative (dpaudit.conversions)
        _close(old["privacy"][k], new["privacy"][k], f"privacy.{k}", rel=1e-9)
    if old["audit"] is not None:
        _close(old["audit"]["certified"], new["audit"]["certified"], "audit.certified", rel=1e-9)


def test_list_shows_every_algorithm(capsys):
    code, out, _ = run_cli(capsys, "list")
    assert code == 0 and "Ou, Avella Medina & Cummings 2024" in out and "Hu et al. 2024" in out
    code, out, _ = run_cli(capsys, "list", "--json")
    algs = {a["key"]: a for a in json.loads(out)["algorithms"]}
    assert {"ts", "ucb1", "beta-ts"} <= set(algs)
    assert algs["ts"]["privacy"] == "central GDP" and algs["ts"]["unit"] == "one reward"
    assert algs["ucb1"]["privacy"] == "none" and algs["ucb1"]["feedback"] == "bandit"


@pytest.mark.parametrize("alg", ["ucb1", "beta-ts"])
def test_non_private_references_report_privacy_none(capsys, alg):
    code, out, _ = run_cli(capsys, "run", alg, "-T", "2000", "-R", "2", "--json")
    assert code == 0
    d = json.loads(out)
    assert d["privacy"]["private"] is False and d["privacy"]["epsilon"] is None and d["privacy"]["mu"] is None
    assert d["audit"] is None and d["ledger_check"]["ok"] is True and d["regret"]["mean"] > 0
    code, out, _ = run_cli(capsys, "run", alg, "-T", "500", "-R", "2")
    assert "privacy: none" in out


def test_audit_violation_exits_1(capsys, monkeypatch):
    class Liar(FakeAuditor):
        def __call__(self, policy, horizon, env, settings):
            rep = super().__call__(policy, horizon, env, settings).primary
            return PolicyAudit(dataclasses.replace(rep, verdict="violated"))

    spec = bandits.registry.get("ts")
    monkeypatch.setitem(bandits.registry._REGISTRY, "ts", dataclasses.replace(spec, auditor=Liar()))
    code, out, _ = run_cli(capsys, "run", "ts", "-T", "2000", "-R", "2", "--audit-trials", "10")
    assert code == 1 and "VIOLATED" in out


def test_run_help_lists_algorithm_options(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "ts", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--prepulls" in out and "--variance-scale" in out and "--audit-horizon" in out


def test_audit_pair_beyond_the_horizon_is_one_line(capsys):
    """DP-SE's audit pair changes round 1151 (its first epoch): at T = 200 the run is refused with
    one line, not a traceback from the audit."""
    code, out, err = run_cli(capsys, "run", "dp-se", "-T", "200", "-R", "2", "--audit-trials", "20")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "no neighbouring pair of the audit is reachable within the audit horizon 200" in err


def test_a_measured_floor_too_large_for_the_machine_is_refused_up_front(capsys):
    """DP-SE's audit at 10,000 trials (horizon 29,611) with ``--audit-floor algorithm`` would
    simulate up to 880 runs per trial, 2.6·10¹¹ rounds: refused with one line and status 2 before
    any work; an unknown floor is refused by name."""
    code, out, err = run_cli(capsys, "run", "dp-se", "--audit-trials", "10000", "--audit-floor", "algorithm")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "measured floor's runs" in err and "limit 1e+11" in err and "use fewer --audit-trials" in err
    code, out, err = run_cli(capsys, "run", "lazy-ucb", "--audit-floor", "oracle")
    assert code == 2 and out == "" and err.count("\n") == 1 and "--audit-floor" in err
