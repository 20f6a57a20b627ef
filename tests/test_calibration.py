"""Calibration (issue 23): the answer is valid (its own certified ε is at most the target), tight (the
other end of the final bracket, evaluated above the target, is within rtol — or the adjacent
integer), and agrees with closed forms where they exist."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpaudit.accounting import account
from dpaudit.accounting.calibration import calibrate, calibrate_dpsgd, dpsgd_event
from dpaudit.conversions import gdp_mu
from dpaudit.events import GaussianEvent, LaplaceEvent


def _certified(event, delta, methods):
    return account(event, delta=delta, methods=methods).best.value


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(target=st.floats(0.05, 20.0), log_q=st.floats(-3.0, -0.5), steps=st.sampled_from([10, 100, 1000]),
       log_delta=st.floats(-12.0, -3.0))
def test_calibrated_noise_never_certifies_above_the_target(target, log_q, steps, log_delta):
    q, delta = 10.0**log_q, 10.0**log_delta
    c = calibrate_dpsgd(target_epsilon=target, delta=delta, sampling_rate=q, steps=steps, methods=["rdp"])
    assert c.parameter == "noise_multiplier"
    assert _certified(dpsgd_event(q, c.value, steps), delta, ["rdp"]) == c.epsilon <= target
    assert _certified(dpsgd_event(q, c.infeasible, steps), delta, ["rdp"]) > target
    assert c.infeasible < c.value <= c.infeasible * (1 + c.rtol)


def test_dpsgd_calibration_of_each_parameter_with_pld():
    """σ (by pld), q and k (by rdp) for ε ≤ 2 at δ = 1e-5, each certified at most 2 and tight."""
    c = calibrate_dpsgd(target_epsilon=2.0, delta=1e-5, sampling_rate=0.01, steps=1000)
    assert c.method == "pld" and c.epsilon <= 2.0 and c.value == pytest.approx(0.9591, rel=2e-3)
    assert c.to_dict()["noise_multiplier"] == c.value
    q = calibrate_dpsgd(target_epsilon=2.0, delta=1e-5, noise_multiplier=1.0, steps=1000, methods=["rdp"])
    assert q.parameter == "sampling_rate" and q.epsilon <= 2.0 and q.value < q.infeasible <= q.value * 1.001
    k = calibrate_dpsgd(target_epsilon=2.0, delta=1e-5, noise_multiplier=1.0, sampling_rate=0.01,
                        methods=["rdp"])
    assert k.parameter == "steps" and k.infeasible == k.value + 1 and k.epsilon <= 2.0
    assert _certified(dpsgd_event(0.01, 1.0, int(k.infeasible)), 1e-5, ["rdp"]) > 2.0


def test_gaussian_noise_matches_the_closed_form():
    """k Gaussian steps under gdp: the smallest σ is sqrt(k)/μ(ε, δ), within rtol, never below."""
    mu = gdp_mu(1.0, 1e-6)
    c = calibrate(lambda s: GaussianEvent(sigma=s).repeat(100), target_epsilon=1.0, delta=1e-6,
                  epsilon_grows=False, methods=["gdp"], rtol=1e-6)
    assert 10 / mu <= c.value <= 10 / mu * (1 + 1e-6)


def test_upper_end_and_refusals():
    # q = 1 already meets the target: returned as is
    c = calibrate_dpsgd(target_epsilon=50.0, delta=1e-5, noise_multiplier=5.0, steps=10, methods=["rdp"])
    assert c.value == 1.0 and math.isinf(c.infeasible)
    with pytest.raises(ValueError, match="no steps .* certifies epsilon <= 0.001"):
        calibrate_dpsgd(target_epsilon=1e-3, delta=1e-5, noise_multiplier=0.5, sampling_rate=0.5,
                        methods=["rdp"])
    with pytest.raises(ValueError, match="give exactly two of"):
        calibrate_dpsgd(target_epsilon=1.0, delta=1e-5, sampling_rate=0.1)
    with pytest.raises(ValueError, match="target_epsilon must be"):
        calibrate(lambda b: LaplaceEvent(b), target_epsilon=-1.0, delta=1e-5, epsilon_grows=False)
    with pytest.raises(ValueError, match="factor must be in"):
        calibrate(lambda b: LaplaceEvent(b), target_epsilon=1.0, delta=1e-5, epsilon_grows=False, factor=1.0)
