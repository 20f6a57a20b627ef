"""The auditor and report contracts, for every registered algorithm.

Every registered algorithm's auditor (its spec's, or the default black-box audit) takes
``(policy, horizon, env, AuditSettings)`` and returns a
:class:`~bandits.auditing.contract.PolicyAudit` with one verdict, a ``to_dict`` that is strict
JSON after the CLI's :func:`~dpaudit.cli.common.jsonable`, and a readable ``str``; every run
report is a :class:`~bandits.report.RunReport` of frozen typed sections whose JSON is strict and
whose text shows each section; and every run computes exactly its pinned numbers
(``tests/data/pinned_runs.json``). The runs are those of ``tests/pinned_runs.py``, computed once per
worker process: the tests that read them live in this one file, so that ``--dist loadfile`` gives
them to one worker (in two files, a worker could run all 27 audits again, about 50 s of CPU).
"""

from __future__ import annotations

import dataclasses
import json
import math

import pytest

from bandits.auditing.contract import AuditSettings, PolicyAudit
from bandits.auditing.releases import records_releases
from bandits.auditing.views import VIEWS, audit_views
from bandits.environments import parse_env
from bandits.registry import get
from bandits.report import (
    AuditSection,
    LedgerSection,
    PrivacySection,
    RegretSection,
    RunConfig,
    RunReport,
    Timing,
)
from dpaudit.audit import runner
from dpaudit.audit.report import AuditReport, Verdict
from dpaudit.cli.common import jsonable
from tests.pinned_runs import DATA, SETTINGS, keys, pin, report

VERDICTS = {v.value for v in Verdict}
PINNED = json.loads(DATA.read_text())


def _frozen(obj: object) -> bool:
    return dataclasses.is_dataclass(obj) and type(obj).__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_every_registered_algorithm_is_pinned() -> None:
    assert sorted(PINNED) == keys()


def _same(a: object, b: object) -> bool:
    """Equal, NaN equal to NaN, and floats equal to 12 significant digits: NumPy picks its SIMD
    exp/log kernels by the CPU's instruction set, so the last bits of an accounting value can
    differ between machines (the PLD ε of cucb-dp moved by 3 ulps from one CPU to another)."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)
    return a == b


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(PINNED))
def test_run_reproduces_its_pinned_numbers(key: str) -> None:
    """A refactoring must not change what a run computes (``tests/pinned_runs.py``)."""
    now = pin(key)
    want = PINNED[key]
    assert sorted(now) == sorted(want), "the report's numbers moved: " + ", ".join(
        sorted(set(now) ^ set(want))[:10])
    changed = [f"{k}: {want[k]!r} -> {now[k]!r}" for k in want if not _same(now[k], want[k])]
    head = f"{len(changed)} pinned numbers of 'dpaudit run {key}' changed:\n"
    assert not changed, head + "\n".join(changed[:20])


@pytest.mark.slow
@pytest.mark.parametrize("key", keys())
def test_run_report_is_typed_and_strict(key: str) -> None:
    rep = report(key)
    assert isinstance(rep, RunReport)
    for section, kind in ((rep.regret, RegretSection), (rep.privacy, PrivacySection),
                          (rep.ledger_check, LedgerSection), (rep.config, RunConfig), (rep.timing, Timing)):
        assert isinstance(section, kind) and _frozen(section)
    text = json.dumps(jsonable(rep.to_dict()), allow_nan=False)  # strict JSON
    assert set(json.loads(text)) == {"regret", "privacy", "ledger_check", "audit", "config", "timing"}
    shown = str(rep)
    assert shown.splitlines()[0].startswith(rep.title) and "regret at T" in shown
    assert ("privacy: none" in shown) == (not rep.privacy.private)
    assert f"ledger check: {rep.ledger_check.message}" in shown
    if rep.privacy.private:
        assert isinstance(rep.audit, AuditSection) and rep.audit.horizon <= SETTINGS["horizon"]
    else:
        assert rep.audit is None and "audit: skipped" in shown


@pytest.mark.slow
@pytest.mark.parametrize("key", [k for k in keys() if get(k).privacy != "none"])
def test_every_auditor_fulfils_the_contract(key: str) -> None:
    """The auditor's result: one verdict among the four, the most severe of its components;
    strict JSON; a str that names the verdict; the same result again from the same settings."""
    rep = report(key)
    audit = rep.audit.result
    assert isinstance(audit, PolicyAudit) and isinstance(audit.primary, AuditReport)
    parts = [audit.primary, *audit.components.values()]
    assert audit.verdict in VERDICTS
    if any(p.verdict == "violated" for p in parts):
        assert audit.verdict == "violated"
    d = audit.to_dict()
    json.dumps(jsonable(d), allow_nan=False)
    assert d["verdict"] == audit.verdict == rep.audit.verdict
    assert str(audit).splitlines()[0].startswith(f"audit: {audit.verdict.upper()}")
    assert f"audit: {audit.verdict.upper()}" in str(rep)
    assert audit.primary.certified is not None and audit.primary.empirical.trials > 0
    spec = get(key)
    env = (spec.env_parser or parse_env)(spec.default_env)
    policy = spec.configure({}, env, SETTINGS["horizon"]).policy
    # both views, Bonferroni over them; Thompson sampling's auditor reads its posterior draws itself
    if key == "ts" or records_releases(policy, rep.audit.horizon, env):
        assert audit.components["releases"].details["view"] == "releases"
        assert audit.components["releases"].empirical.confidence == pytest.approx(1 - (1 - 0.95) / VIEWS)
    else:  # no release within the audited horizon (DP-SE's first epoch is longer): one view
        assert key == "dp-se" and "releases" not in audit.components
    # every test of the run shares the error level: no part may be falsely `violated` beyond 5 %
    assert audit.family_confidence >= 0.95 - 1e-12
    assert d.get("details", {}).get("family_confidence", 0.95) == pytest.approx(audit.family_confidence)
    if any(p.details.get("model") for p in parts):  # a model is labelled in the report
        assert "[model: " in str(audit)
    if audit.primary.details.get("model"):  # the header counts the running code's trials, not the model's
        assert rep.audit.trials == SETTINGS["audit_trials"] != audit.primary.empirical.trials // 2


@pytest.mark.slow
def test_auditor_is_reproducible_from_its_settings() -> None:
    """Calling a registered auditor again with the run's settings gives the run's audit."""
    from bandits.run import run_algorithm

    spec = get("lazy-ucb")
    first = run_algorithm("lazy-ucb", horizon=2000, reps=1, audit_trials=300, progress=False)
    env = parse_env(spec.default_env)
    policy = spec.configure({}, env, 2000).policy
    again = audit_views(spec.auditor, policy, first.audit.horizon, env, AuditSettings(trials=300))
    assert again.to_dict()["empirical"] == first.audit.result.to_dict()["empirical"]
    assert again.verdict == first.audit.verdict


def _report(verdict: str, model: bool = False) -> AuditReport:
    """A consistent (bound 0.5 < certified 1) or violated (bound 2) report; optionally of a model."""
    from dpaudit.audit.report import Certified, Empirical

    emp = Empirical(epsilon_lower=0.5 if verdict == "consistent" else 2.0, mu_lower=None, delta=1e-6,
                    confidence=0.975, trials=100, method="test", statistic="test")  # fmt: skip
    claim = Certified(epsilon=1.0, delta=1e-6)
    rep = AuditReport.build(target="t (black box)", certified=claim, empirical=emp)
    rep = dataclasses.replace(rep, verdict=Verdict(verdict))  # a consistent one as if it had power
    return dataclasses.replace(rep, details={"model": "a re-built mechanism"}) if model else rep


def test_a_model_refutes_but_never_makes_a_run_consistent() -> None:
    """A model of the mechanism that behaves says nothing of the running code; one that leaks
    refutes the certificate; and the family-wise confidence counts every part."""
    powerless = dataclasses.replace(_report("consistent"), verdict=Verdict.INCONCLUSIVE)
    assert PolicyAudit(_report("consistent", model=True), {"actions": powerless}).verdict == "inconclusive"
    seen = PolicyAudit(_report("consistent", model=True), {"actions": _report("consistent")})
    assert seen.verdict == "consistent"
    both = PolicyAudit(_report("violated", model=True), {"actions": powerless})
    assert both.verdict == "violated" and both.family_confidence == pytest.approx(0.95)
    text = str(both)
    assert "[model: a re-built mechanism; 50 samples per input]" in text and "family-wise 95%" in text


def test_shared_settings_split_the_error_level() -> None:
    s = AuditSettings(trials=10, confidence=0.9)
    assert s.shared(1) == s and s.shared(4).confidence == pytest.approx(0.975)
    with pytest.raises(ValueError, match="parts"):
        s.shared(0)


def test_audit_settings_refuse_bad_values() -> None:
    with pytest.raises(ValueError, match="trials"):
        AuditSettings(trials=0)
    with pytest.raises(ValueError, match="confidence"):
        AuditSettings(trials=10, confidence=1.5)
    with pytest.raises(ValueError, match="delta"):
        AuditSettings(trials=10, delta=0.0)


def test_a_part_with_a_zero_bound_is_not_a_pass() -> None:
    """A view whose bound is 0 did not see the algorithm's own loss: ``inconclusive`` with the
    reason, and the run is ``consistent`` only through a part that saw something; a view whose
    floor was measured on the algorithm keeps the verdict that floor decided. The rule is the
    PolicyAudit's own, so a family auditor called directly (not through ``audit_views``) says
    the same."""
    from bandits.auditing.contract import BLIND

    zero, seen = _report("consistent"), _report("consistent")
    zero = dataclasses.replace(zero, empirical=dataclasses.replace(zero.empirical, epsilon_lower=0.0))
    run = PolicyAudit(zero, {"releases": seen})
    assert run.primary.verdict == "inconclusive" and run.primary.details["no_power"] == BLIND
    assert run.components["releases"].verdict == "consistent" and run.verdict == "consistent"
    assert "INCONCLUSIVE, without power: bound 0" in str(run)
    blind = PolicyAudit(zero, {"releases": zero})
    assert blind.verdict == "inconclusive" and "bound 0: this view did not see" in str(blind)
    assert dataclasses.replace(run, components={}).verdict == "inconclusive"  # replace keeps the rule
    measured = dataclasses.replace(zero, details={"algorithm_floor": {"detect_leak": 0.5}})
    assert PolicyAudit(measured).verdict == "consistent"
    assert PolicyAudit(_report("violated")).verdict == "violated"


def test_the_floor_note_names_each_view_that_measured_its_floor() -> None:
    """The note lists the views whose floors were measured on the algorithm: the outputs view by
    that name, a primary of another kind (a mechanism model's) by its target, as its line does."""
    from bandits.auditing.contract import AuditSettings
    from bandits.auditing.views import _floor_note

    measured = {"algorithm_floor": {"stub": 1}}
    model = dataclasses.replace(_report("consistent"), details={"model": "a re-built mechanism", **measured})
    releases = dataclasses.replace(_report("consistent"), details={"view": "releases", **measured})
    audit = _floor_note(PolicyAudit(model, components={"releases": releases}), AuditSettings(trials=100))
    assert audit.primary.details["floor_note"] == "floors measured on this algorithm: t (black box), releases"
    outputs = dataclasses.replace(model, details={"view": "outputs", **measured})
    note = _floor_note(PolicyAudit(outputs), AuditSettings(trials=100)).primary.details["floor_note"]
    assert note == "floors measured on this algorithm: outputs"


def test_an_inconclusive_run_says_what_it_would_take() -> None:
    """A certificate below the reference floor: the run names the --audit-trials at which the
    cheapest view's floor reaches it (floors shrinking as 1/sqrt(trials))."""
    from bandits.auditing.views import _what_it_would_take
    from dpaudit.audit.power import floor_report

    part = _report("consistent")
    floor = floor_report(50, 50, 0.0125, certified_mu=None, certified_epsilon=0.05, delta=1e-6)
    assert floor.below(None, 0.05)  # 50 runs per side cannot see epsilon = 0.05
    low = dataclasses.replace(part, verdict=Verdict.INCONCLUSIVE, floor=floor,
                              certified=dataclasses.replace(part.certified, epsilon=0.05))  # fmt: skip
    outputs = dataclasses.replace(low, details={"view": "outputs"})
    audit = _what_it_would_take(PolicyAudit(outputs), trials=400)  # 400 audit trials, 50 runs per side here
    need = audit.primary.details["would_need"]
    expected = math.ceil(runner.trials_needed(floor, low.certified, 50) * 400 / 50)
    assert need == {"audit_trials": expected, "view": "outputs"} and expected > 400
    assert f"to see it: about --audit-trials {expected:,}" in str(audit)
    # a primary that is not the outputs view (a mechanism model's) is named as its line names it
    model = dataclasses.replace(low, details={"model": "a re-built mechanism"})
    named = _what_it_would_take(PolicyAudit(model), trials=400).primary.details["would_need"]
    assert named["view"] == "t (black box)"
    assert _what_it_would_take(PolicyAudit(part), trials=400) == PolicyAudit(part)  # consistent: nothing
