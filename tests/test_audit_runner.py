"""Runner: seeding, executors (dask), null/coverage checks, planted bugs, tightness."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pytest

from dpaudit.audit.claims import claim_epsilon
from dpaudit.audit.neighbours import identical
from dpaudit.audit.report import CONSISTENT, VIOLATED
from dpaudit.audit.runner import collect_statistics, plan_batches, run_audit, run_audit_with_rates
from mechanisms import GaussianMechanism, LaplaceMechanism
from mechanisms.auditing.targets import (
    gaussian_target,
    laplace_target,
    randomized_response_target,
    rnm_laplace_target,
)


@dataclass(frozen=True)
class NoisierClaimGaussian(GaussianMechanism):
    """Planted bug: certified for ``sigma`` but samples with ``actual_sigma``."""

    actual_sigma: float = 1.0

    def sample(self, x, rng, size=None):
        return GaussianMechanism(self.actual_sigma, self.sensitivity).sample(x, rng, size)


@dataclass(frozen=True)
class NoisierClaimLaplace(LaplaceMechanism):
    actual_scale: float = 1.0

    def sample(self, x, rng, size=None):
        return LaplaceMechanism(self.actual_scale, self.sensitivity).sample(x, rng, size)


def test_plan_batches_and_seeding_independent_of_batching_order():
    assert plan_batches(7, 3) == [3, 3, 1]
    t = gaussian_target(sigma=1.0)
    a = collect_statistics(t, 1000, seed=3, batch_size=128)
    b = collect_statistics(t, 1000, seed=3, batch_size=128)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    c = collect_statistics(t, 1000, seed=4, batch_size=128)
    assert not np.array_equal(a[0], c[0])


@pytest.mark.slow
def test_same_result_with_thread_pool_and_dask_executor():
    from dask.distributed import Client, LocalCluster

    target = rnm_laplace_target(1.0, 2, trials=40_000, epoch_length=16)
    plain = run_audit(target, trials=40_000, seed=11, batch_size=5_000)
    with ThreadPoolExecutor(2) as ex:
        threaded = run_audit(target, trials=40_000, seed=11, batch_size=5_000, executor=ex)
    with (
        LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        dasked = run_audit(target, trials=40_000, seed=11, batch_size=5_000, executor=client.get_executor())
        g = gaussian_target(sigma=1.0)
        g_dask = run_audit(g, trials=20_000, seed=2, batch_size=4_000, executor=client.get_executor())
    assert plain.empirical == threaded.empirical == dasked.empirical
    assert g_dask.empirical == run_audit(g, trials=20_000, seed=2, batch_size=4_000).empirical
    assert dasked.details["executor"] is not None


def test_progress_bar_runs(capsys):
    run_audit(gaussian_target(sigma=1.0), trials=2_000, seed=0, batch_size=500, progress=True)


def test_identical_inputs_give_zero():
    for t in (
        gaussian_target(sigma=1.0, pair=identical(0.0)),
        gaussian_target(sigma=1.0, pair=identical(0.0), statistic="identity"),
        laplace_target(scale=1.0, pair=identical(0.0)),
        randomized_response_target(1.0, pair=identical(0)),
    ):
        r = run_audit(t, trials=100_000, seed=5)
        assert r.empirical.epsilon_lower == 0.0 and r.empirical.mu_lower == 0.0, t.name
        assert r.verdict == CONSISTENT


@pytest.mark.slow
def test_correct_mechanisms_are_consistent_and_statistic_reported():
    for t, stat in (
        (gaussian_target(sigma=2.0), "privacy loss of GaussianMechanism"),
        (gaussian_target(sigma=2.0, statistic="identity"), "identity"),
        (laplace_target(scale=0.5), "privacy loss of LaplaceMechanism"),
        (randomized_response_target(1.5, 3), "privacy loss of RandomizedResponse"),
        (rnm_laplace_target(1.0, 3, trials=100_000), "privacy loss of LaplaceReportNoisyMax"),
    ):
        r = run_audit(t, trials=100_000, seed=1)
        assert r.verdict == CONSISTENT, (t.name, r.empirical)
        assert r.empirical.statistic == stat
        assert r.empirical.epsilon_lower > 0


@pytest.mark.slow
def test_coverage_end_to_end_over_seeds():
    """95 % bounds: the true value may be exceeded in at most ~5 % of 20 seeds (we allow 2)."""
    lap = laplace_target(scale=1.0)  # true eps = 1 exactly
    gau = gaussian_target(sigma=1.0)  # true mu = 1 exactly
    lap_over = gau_over = 0
    lap_lb, gau_lb = [], []
    for seed in range(20):
        r = run_audit(lap, trials=20_000, seed=seed)
        lap_over += r.empirical.epsilon_lower > 1.0
        lap_lb.append(r.empirical.epsilon_lower)
        g = run_audit(gau, trials=20_000, seed=100 + seed)
        gau_over += g.empirical.mu_lower > 1.0
        gau_lb.append(g.empirical.mu_lower)
    assert lap_over <= 2 and gau_over <= 2
    assert np.median(lap_lb) > 0.7 and np.median(gau_lb) > 0.8  # and the bounds are not vacuous


def test_planted_bug_gaussian_sigma_10_percent_low_is_violated():
    buggy = NoisierClaimGaussian(sigma=1.0, actual_sigma=0.9)
    r = run_audit(gaussian_target(sigma=1.0, mechanism=buggy), trials=200_000, seed=0)
    assert r.certified.mu == 1.0
    assert r.verdict == VIOLATED and r.empirical.mu_lower > 1.0
    assert r.details["curve_audit"]["violated"]


def test_planted_bug_laplace_scale_20_percent_low_is_violated():
    buggy = NoisierClaimLaplace(scale=1.0, actual_scale=0.8)
    r = run_audit(laplace_target(scale=1.0, mechanism=buggy), trials=200_000, seed=0)
    assert r.certified.epsilon == 1.0 and r.certified.delta == 0.0
    assert r.verdict == VIOLATED and 1.0 < r.empirical.epsilon_lower <= 1.25


@pytest.mark.slow
def test_tightness_gaussian_mu_one_million_trials():
    r, rates = run_audit_with_rates(gaussian_target(sigma=1.0), trials=1_000_000, seed=0)
    assert r.verdict == CONSISTENT
    assert 0.85 <= r.empirical.mu_lower <= 1.0
    assert r.fraction_recovered == pytest.approx(r.empirical.mu_lower)
    assert r.to_dict()["fraction_recovered"] >= 0.85
    assert rates.tests == 1 and r.details["selection"]["selection"] == "pilot"  # the default
    g, grates = run_audit_with_rates(gaussian_target(sigma=1.0), trials=1_000_000, seed=0, selection="grid")
    assert grates.tests == 600 and g.verdict == CONSISTENT
    # the pilot's single test is tighter than the 600-test Bonferroni grid on the same budget
    assert r.empirical.mu_lower > g.empirical.mu_lower


def test_user_claim_replaces_certified_value():
    r = run_audit(laplace_target(scale=1.0, claim=claim_epsilon(0.5)), trials=100_000, seed=0)
    assert r.certified.source == "claim" and r.verdict == VIOLATED


def test_bad_inputs():
    t = gaussian_target(sigma=1.0)
    with pytest.raises(ValueError, match="trials"):
        run_audit(t, trials=1)
    with pytest.raises(ValueError, match="confidence"):
        run_audit(t, trials=100, confidence=1.5)


@pytest.mark.slow
def test_inconclusive_when_the_certificate_is_below_the_detection_floor():
    """A tiny claimed mu (0.01) that 2000 trials cannot resolve: inconclusive, not consistent."""
    from dpaudit.audit.claims import claim_mu
    from dpaudit.audit.report import INCONCLUSIVE

    weak = gaussian_target(sigma=100.0, claim=claim_mu(0.01))
    r = run_audit(weak, trials=2_000, seed=0)
    assert r.floor.mu > 0.01 and r.verdict == INCONCLUSIVE
    assert r.to_dict()["verdict"] == "inconclusive"
    strong = run_audit(gaussian_target(sigma=1.0), trials=2_000, seed=0)
    assert strong.floor.mu < 1.0 and strong.verdict == CONSISTENT
    assert strong.estimate.lower <= strong.empirical.mu_lower + 1e-12 <= strong.estimate.upper


@pytest.mark.slow
def test_detection_floor_matches_simulation():
    """At the floor, the single-test bound is positive in about half of the simulated audits."""
    from scipy import stats

    from dpaudit.audit import mu_lower_bound_from_counts
    from dpaudit.audit.power import detection_floor

    n = 5000
    mu = detection_floor(n, n, 0.025)
    rng = np.random.default_rng(0)
    p = stats.norm.sf(mu / 2)
    fp, fn = rng.binomial(n, p, 2000), rng.binomial(n, p, 2000)
    hits = np.mean([mu_lower_bound_from_counts(int(a), n, int(b), n, confidence=0.95).mu > 0
                    for a, b in zip(fp, fn)])  # fmt: skip
    assert abs(hits - 0.5) < 0.04


def test_grid_selection_over_several_designs_is_one_bonferroni_family():
    t = rnm_laplace_target(1.0, 3, trials=60_000, epoch_length=16)
    assert len(t.family) == 3
    r, rates = run_audit_with_rates(t, trials=60_000, seed=3, selection="grid")
    assert rates.tests == sum(2 * (len(c.support) - 1) for c in t.family)
    assert rates.alpha_per_bound == pytest.approx(0.05 / (2 * rates.tests))
    assert r.verdict == CONSISTENT and r.details["selection"]["selection"] == "grid"


def test_unequal_sides_keep_the_even_split_seeding_and_sizes():
    t = gaussian_target(sigma=1.0)
    even = collect_statistics(t, 1000, seed=3, batch_size=128)
    same = collect_statistics(t, 1000, seed=3, batch_size=128, sides=(500, 500))
    assert all(np.array_equal(a, b) for a, b in zip(even, same))
    x, y = collect_statistics(t, 1000, seed=3, batch_size=128, sides=(700, 300))
    assert (x.size, y.size) == (700, 300)
    again = collect_statistics(t, 1000, seed=3, batch_size=128, sides=(700, 300))
    assert np.array_equal(x, again[0]) and np.array_equal(y, again[1])
    for bad in ((700, 200), (1000, 0), (-1, 1001)):
        with pytest.raises(ValueError, match="sides"):
            collect_statistics(t, 1000, seed=3, sides=bad)


def test_pilot_gives_the_rare_side_more_of_the_main_sample():
    from dpaudit.audit.pilot import NULL_SHARES, pilot_choice

    rng = np.random.default_rng(0)
    # one cut of a two-point support: FPR 1.2 % on the null side, TPR 15 % on the alternative
    null = (rng.random(2000) < 0.012).astype(float)
    alt = (rng.random(2000) < 0.15).astype(float)
    even = pilot_choice([(null, alt, (0.0, 1.0))], 3000, confidence=0.95, kind="epsilon", claim=2.0)
    free = pilot_choice([(null, alt, (0.0, 1.0))], 3000, confidence=0.95, kind="epsilon", claim=2.0,
                        null_shares=NULL_SHARES)  # fmt: skip
    assert even.null_share == 0.5 and even.sides(3000) == (3000, 3000)
    assert free.null_share > 0.5 and sum(free.sides(3000)) == 6000
    with pytest.raises(ValueError, match="null_shares"):
        pilot_choice([(null, alt, (0.0, 1.0))], 3000, confidence=0.95, null_shares=(1.0,))
    with pytest.raises(ValueError, match="null_shares"):
        pilot_choice([(null, alt, (0.0, 1.0))], 3000, confidence=0.95, null_shares=())


def test_audit_report_records_the_split_it_certified_with():
    r = run_audit(rnm_laplace_target(1.0, 3, trials=20_000, epoch_length=16), trials=20_000, seed=2)
    sel = r.details["selection"]
    assert sel["main_null_share"] != 0.5 and sel["main_null_trials"] != sel["main_alt_trials"]  # it moved
    assert sel["main_null_trials"] + sel["main_alt_trials"] == 2 * sel["main_trials_per_side"]
    assert r.estimate.null_trials == sel["main_null_trials"]
    assert r.estimate.alt_trials == sel["main_alt_trials"]
    # the floor is that of the procedure, whose split is chosen per pilot: stated per side
    assert (r.floor.null_trials, r.floor.alt_trials) == (sel["main_trials_per_side"],) * 2
