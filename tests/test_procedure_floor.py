"""The detection floor of the procedure an audit runs (dpaudit.audit.procedure_floor).

Checked: the simulated pilots have the distribution of real pilots (design_family on samples);
the batched choice is the pilot's own choice; the exact error rates match sampled rates; the
interpolated binomial sums match the exact ones; the procedure is weaker than the oracle; and,
at reduced scale, a mechanism placed at the reported floor is detected about half of the time.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dpaudit.audit.pilot import NULL_SHARES, batch_of_one, choose_tests, main_splits, pilot_choice
from dpaudit.audit.power import (
    _eps_allowed,
    _mu_allowed,
    _prob_above,
    conditional_detections,
    detection_floor,
    detection_probability,
    subsample_detections,
)
from dpaudit.audit.procedure_floor import Procedure, procedure_detection, procedure_floor
from dpaudit.audit.reference_pairs import (
    GaussianReference,
    LaplaceReference,
    RandomizedResponseReference,
    uniform_order_statistics,
)
from dpaudit.audit.runner import run_audit
from dpaudit.audit.thresholds import design_family
from mechanisms.auditing.targets import gaussian_target, laplace_target
from mechanisms.laplace import LaplaceMechanism


def _real_families(sample, n: int, reps: int, grid: int, support=None):
    rows = [design_family(*sample(), support, grid) for _ in range(reps)]
    return np.array([r[0] for r in rows]), np.array([r[3] for r in rows]), np.array([r[2] for r in rows])


def _z(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    se = np.sqrt(a.var(0) / len(a) + b.var(0) / len(b))
    ok = se > 1e-9
    return np.abs(a.mean(0) - b.mean(0))[ok] / se[ok]


def test_uniform_order_statistics_match_sorted_uniforms():
    rng = np.random.default_rng(0)
    ranks = np.array([1, 5, 50, 99])
    u, v = uniform_order_statistics(99, ranks, rng, 20_000)
    real = np.sort(rng.random((20_000, 99)), axis=1)[:, ranks - 1]
    assert _z(u, real).max() < 4.5
    assert np.allclose(u.std(0), real.std(0), rtol=0.05)
    assert np.allclose(u + v, 1.0)


@pytest.mark.parametrize("shift", [0.0, 0.6])
def test_gaussian_pilot_families_have_the_real_distribution(shift):
    rng = np.random.default_rng(1)
    n, reps = 150, 1500
    sim = GaussianReference().pilot_families(shift, n, n, 30, rng, reps, leak=shift > 0)
    t, fn, fp = _real_families(lambda: (rng.normal(0, 1, n), rng.normal(shift, 1, n)), n, reps, 30)
    assert np.array_equal(sim.false_positives[0], fp[0])
    assert _z(sim.thresholds, t).max() < 4.5 and _z(sim.false_negatives, fn).max() < 4.5
    assert np.allclose(sim.false_negatives.std(0), fn.std(0), rtol=0.15, atol=0.3)


def test_laplace_pilot_families_have_the_real_distribution_atoms_included():
    rng = np.random.default_rng(2)
    eps, n, reps = 0.8, 150, 1500
    mech = LaplaceMechanism(scale=1 / eps)

    def sample():
        return (mech.privacy_loss(mech.sample(0.0, rng, size=n), 0.0, 1.0),
                mech.privacy_loss(mech.sample(1.0, rng, size=n), 0.0, 1.0))  # fmt: skip

    sim = LaplaceReference().pilot_families(eps, n, n, 30, rng, reps)
    t, fn, _ = _real_families(sample, n, reps, 30)
    assert np.allclose(sim.thresholds.mean(0), t.mean(0), atol=0.03)
    assert _z(sim.false_negatives, fn).max() < 4.5
    # the atoms are exact ties in both: the same share of thresholds sits at +eps
    assert abs(np.mean(np.isclose(sim.thresholds, eps)) - np.mean(np.isclose(t, eps))) < 0.01


def test_randomized_response_families_are_the_support_cuts():
    rng = np.random.default_rng(3)
    ref = RandomizedResponseReference()
    sim = ref.pilot_families(1.0, 200, 200, 300, rng, 4000)
    p = 1 / (1 + np.e)
    assert sim.discrete and sim.thresholds.shape == (4000, 2)
    # orientation +1 at -eps: FP counts the null's +eps outputs (probability 1 - p)
    assert abs(sim.false_positives[:, 0].mean() / 200 - (1 - p)) < 0.01
    fpr, fnr = ref.error_rates(1.0, sim.thresholds[0], sim.orientations[0])
    assert np.allclose(fpr, [1 - p, p]) and np.allclose(fnr, [1 - p, p])


@pytest.mark.parametrize("ref", [GaussianReference(), LaplaceReference()])
def test_error_rates_match_sampled_rates(ref):
    rng = np.random.default_rng(4)
    s, n = 0.9, 400_000
    if ref.name == "gaussian":
        x, y = rng.normal(0, 1, n), rng.normal(s, 1, n)
    else:
        mech = LaplaceMechanism(scale=1 / s)
        x = mech.privacy_loss(mech.sample(0.0, rng, size=n), 0.0, 1.0)
        y = mech.privacy_loss(mech.sample(1.0, rng, size=n), 0.0, 1.0)
    a = s if ref.name == "gaussian" else 1.0 / mech.scale  # the atoms, as the mechanism computes them
    t = np.array([-a, -0.3, 0.0, 0.45, a, -a, 0.2, a])
    o = np.array([1, 1, 1, 1, 1, -1, -1, -1])
    fpr, fnr = ref.error_rates(a, t, o)
    emp_fp = np.where(o == 1, (x[:, None] > t).mean(0), (x[:, None] < t).mean(0))
    emp_fn = np.where(o == 1, (y[:, None] <= t).mean(0), (y[:, None] >= t).mean(0))
    assert np.allclose(fpr, emp_fp, atol=0.004) and np.allclose(fnr, emp_fn, atol=0.004)


def test_batched_choice_is_the_pilots_own_choice():
    rng = np.random.default_rng(5)
    splits = main_splits(5000, NULL_SHARES)
    for disc, claim in ((False, None), (True, 1.0)):
        for _ in range(6):
            if disc:
                pilots = [(rng.choice(3, 300, p=[0.2, 0.3, 0.5]).astype(float),
                           rng.choice(3, 300, p=[0.5, 0.3, 0.2]).astype(float), (0.0, 1.0, 2.0))]  # fmt: skip
            else:
                pilots = [(rng.normal(0, 1, 300), rng.normal(0.5, 1, 300), None)]
            one = pilot_choice(pilots, 5000, confidence=0.95, claim=claim, null_shares=NULL_SHARES)
            fam = batch_of_one(design_family(*pilots[0], 300), 300, 300, disc)
            two = choose_tests([fam], splits, alpha=(1 - 0.95) / 2, kind="mu", delta=0.0, claim=claim)[0]
            assert dataclasses.astuple(one) == dataclasses.astuple(two)


def test_batched_interpolated_sums_match_the_exact_sums():
    rng = np.random.default_rng(6)
    for i in range(12):
        n0, n1 = (int(10 ** rng.uniform(3, 6)) for _ in range(2))
        p, q, tg = 10 ** rng.uniform(-3, -0.3, 5), 10 ** rng.uniform(-3, -0.3, 5), rng.uniform(0, 1)
        kind, delta = ("mu", 0.0) if i % 2 else ("epsilon", 1e-6)
        allowed = _mu_allowed if kind == "mu" else _eps_allowed(delta)
        exact = [_prob_above(a, b, n0, n1, 0.025, allowed, tg) for a, b in zip(p, q, strict=True)]
        fast = conditional_detections(p, q, n0, n1, 0.025, kind=kind, delta=delta, target=tg)
        assert np.allclose(fast, exact, atol=1e-6), (n0, n1, tg)
    assert 0.05 < conditional_detections(np.array([0.3085]), np.array([0.3085]), 10_000, 10_000, 0.025,
                                         target=0.95)[0] < 0.95  # fmt: skip


def test_the_procedure_is_weaker_than_the_oracle_and_increasing():
    pr = Procedure(1000, 9000, 1, 0.95, "mu", 1e-5, 1.0)
    ref = GaussianReference()
    probs = [procedure_detection(ref, s, pr, reps=200)[0] for s in (0.03, 0.06, 0.12)]
    assert probs[0] < probs[1] < probs[2]
    assert probs[1] < detection_probability(0.06, 9000, 9000, 0.025)
    f = procedure_floor(ref, pr, reps=200)
    assert f.strength > detection_floor(9000, 9000, 0.025) and abs(f.probability - 0.5) < 0.05


def test_a_procedure_with_more_designs_has_a_higher_floor():
    one = procedure_floor(GaussianReference(), Procedure(500, 9000, 1, 0.95, "mu", 1e-5, None), reps=200)
    four = procedure_floor(GaussianReference(), Procedure(500, 9000, 4, 0.95, "mu", 1e-5, None), reps=200)
    assert four.strength > one.strength


def test_the_runner_reports_the_procedure_floor():
    rep = run_audit(gaussian_target(1.0), trials=20_000, seed=0)
    assert rep.floor is not None and "procedure" in rep.floor.definition
    assert rep.floor.mu > detection_floor(9000, 9000, 0.025)
    lap = run_audit(laplace_target(1.0), trials=20_000, seed=0)
    assert lap.floor is not None and "laplace reference pair" in lap.floor.definition


def test_laplace_loss_atoms_are_exact():
    mech = LaplaceMechanism(scale=1 / 0.7)
    out = mech.privacy_loss(np.array([-3.3, -0.1, 0.0, 0.4, 1.0, 1.7, 25.0]), 0.0, 1.0)
    eps = 1.0 / (1 / 0.7)
    assert out[0] == out[1] == out[2] == eps and out[4] == out[5] == out[6] == -eps
    assert -eps < out[3] < eps


@pytest.mark.parametrize("name", ["gaussian", "randomized-response"])
def test_a_mechanism_at_the_reported_floor_is_detected_about_half_of_the_time(name, monkeypatch):
    from benchmarks.bench_floor_check import check

    monkeypatch.delenv("DPAUDIT_FLOOR_REPS", raising=False)  # the floor as users get it

    row = check(name, 20_000, 60)
    # 60 seeds: standard error 6.5 points; the oracle floor promised 50 % and gave about 18 %
    assert 0.3 <= row["floor_detected"] / 60 <= 0.7
    assert 0.3 <= row["violation_detected"] / 60 <= 0.7


def test_floors_are_cached_on_disk_and_the_cache_can_be_switched_off(tmp_path, monkeypatch):
    from dpaudit.audit import floor_store
    from dpaudit.audit import procedure_floor as pf

    monkeypatch.setenv("DPAUDIT_CACHE_DIR", str(tmp_path))
    pr = Procedure(300, 3000, 1, 0.95, "mu", 1e-5, None)
    first = procedure_floor(GaussianReference(), pr, reps=16, seed=11)
    files = list((tmp_path / "floors").glob("*.json"))
    assert len(files) == 1
    pf._floor.cache_clear()
    calls = []
    monkeypatch.setattr(pf, "_floor", lambda *a: calls.append(a))
    assert procedure_floor(GaussianReference(), pr, reps=16, seed=11) == first and not calls  # from disk
    monkeypatch.setenv("DPAUDIT_CACHE_DIR", "off")
    assert floor_store.cache_dir() is None and floor_store.read(files[0].stem) is None


def test_the_shipped_floors_were_computed_by_this_code():
    """Regenerate with ``python benchmarks/ship_floors.py`` after changing a module of
    ``floor_store.CODE`` (two minutes): stale shipped floors are ignored, so defaults get slow."""
    import json

    from dpaudit.audit import floor_store

    data = json.loads(floor_store.SHIPPED.read_text())
    assert data["code"] == floor_store.code_hash(), "run: python benchmarks/ship_floors.py"
    assert len(data["floors"]) >= 10


def test_the_suite_reads_its_kept_floors_from_a_store_of_its_own():
    """The floors the suite simulated in its last recorded run (``tests/suite_floors.json``,
    ``tests/conftest.py``) were computed by this code, and this session's store holds them (it
    starts empty only when recording). After changing a module of ``floor_store.CODE``, record
    them again: stale kept floors are ignored, and a fresh machine then simulates every floor the
    suite needs again (about three minutes of its time)."""
    import json
    import os
    from pathlib import Path

    from dpaudit.audit import floor_store

    data = json.loads(Path(__file__).with_name("suite_floors.json").read_text())
    assert data["code"] == floor_store.code_hash(), "run: DPAUDIT_RECORD_SUITE_FLOORS=1 python -m pytest"
    assert len(data["floors"]) >= 100
    store = floor_store.cache_dir()
    assert store is not None and store.parent.name.startswith("dpaudit-suite-floors-")  # not the user's
    if not os.environ.get("DPAUDIT_RECORD_SUITE_FLOORS"):  # a recording starts from an empty store
        assert all(floor_store.read(name) == value for name, value in data["floors"].items())


def test_a_default_mechanism_audit_uses_the_shipped_floors(monkeypatch):
    from dpaudit.audit import procedure_floor as pf

    monkeypatch.delenv("DPAUDIT_FLOOR_REPS", raising=False)
    monkeypatch.setenv("DPAUDIT_CACHE_DIR", "off")
    pf._floor.cache_clear()
    monkeypatch.setattr(pf, "_floor", lambda *a: (_ for _ in ()).throw(AssertionError("computed")))
    from dpaudit.cli.main import main

    argv = ["audit", "rnm-laplace", "--scale", "1", "--epoch-length", "16", "--claim-published"]
    assert main(argv) in (0, 1)


def test_floor_reps_from_the_environment_are_validated(monkeypatch):
    from dpaudit.audit.procedure_floor import default_reps

    monkeypatch.setenv("DPAUDIT_FLOOR_REPS", "many")
    with pytest.raises(ValueError, match="DPAUDIT_FLOOR_REPS"):
        default_reps()
    monkeypatch.setenv("DPAUDIT_FLOOR_REPS", "100")
    assert default_reps() == 100


def test_an_inconclusive_audit_says_how_many_trials_would_see_the_certificate():
    rep = run_audit(gaussian_target(20.0), trials=20_000, seed=0)  # certified mu = 0.05
    assert rep.verdict == "inconclusive"
    need = rep.details["would_need_trials"]
    assert 20_000 < need < 200_000 and "to see it" in str(rep)
    assert "would_need_trials" not in run_audit(gaussian_target(1.0), trials=20_000, seed=0).details


@pytest.mark.parametrize("kind, delta", [("mu", 0.0), ("epsilon", 1e-6)])
def test_subsample_detections_average_to_the_exact_probability(kind, delta):
    """Averaged over the binomial law of the scored counts, the hypergeometric estimate is the
    exact detection probability of fresh runs (enumerated), unlike the plug-in of the rates."""
    from scipy.stats import binom

    m, n = 60, 40
    ks = np.arange(m + 1)
    seen = []
    for p, q in [(0.0, 0.85), (0.01, 0.8), (0.05, 0.7), (0.2, 0.2)]:
        exact = conditional_detections(np.array([p]), np.array([q]), n, n, 0.025, kind=kind, delta=delta)[0]
        k0, k1 = (a.ravel() for a in np.meshgrid(ks, ks, indexing="ij"))
        w = binom.pmf(k0, m, p) * binom.pmf(k1, m, q)
        est = subsample_detections(k0, k1, m, n, 0.025, kind=kind, delta=delta)
        plug = conditional_detections(k0 / m, k1 / m, n, n, 0.025, kind=kind, delta=delta)
        assert float(w @ est) == pytest.approx(exact, abs=1e-9)
        seen.append((exact, float(w @ plug)))
    assert any(0.05 < e < 0.95 for e, _ in seen)
    assert max(abs(e - pl) for e, pl in seen) > 0.02  # the plug-in is biased on these sizes
    full = subsample_detections(np.array([0, 30]), np.array([1, 30]), n, n, 0.025, kind=kind, delta=delta)
    assert full.tolist() == [1.0, 0.0]  # scored == trials: the indicator of the observed counts
    with pytest.raises(ValueError, match="scored must be at least trials"):
        subsample_detections(np.array([1]), np.array([1]), 10, 20, 0.025)
