"""The incremental accountant (issue 23): the same certified numbers as ``account()`` on the whole
history, repeated events folded into counts, answers kept until the next compose, JSON round trip."""

from __future__ import annotations

import json

import pytest

from dpaudit.accounting import Accountant, NotApplicable, account
from dpaudit.accounting.calibration import dpsgd_event
from dpaudit.events import ComposedEvent, GaussianEvent, LaplaceEvent, NonPrivateEvent, PoissonSampledEvent


def test_step_by_step_equals_the_whole_history():
    acc = Accountant()
    g, lap = GaussianEvent(sigma=4.0), LaplaceEvent(scale=20.0)
    for i in range(300):
        acc.compose(g)
        if i % 3 == 0:
            acc.compose(lap)
    acc.compose(g.repeat(50))
    whole = ComposedEvent((g.repeat(350), lap.repeat(100)))
    assert acc.get_epsilon(1e-6) == account(whole, delta=1e-6).best.value
    assert acc.get_delta(1.0) == account(whole, epsilon=1.0).best.value
    assert acc.history == {g: 350, lap: 100} and acc.num_releases == 450
    assert acc.method == account(whole, epsilon=1.0).best.method


def test_equal_events_fold_and_queries_are_kept_until_the_next_compose():
    acc = Accountant(methods=["rdp"])
    for _ in range(10**4):  # a new (equal) object every step, as a training loop would build it
        acc.compose(PoissonSampledEvent(0.01, GaussianEvent(sigma=1.0)))
    assert len(acc.history) == 1
    first = acc.get_epsilon(1e-5)
    report = acc.report(delta=1e-5)
    assert acc.get_epsilon(1e-5) == first and acc.report(delta=1e-5) is report  # kept, not recomputed
    acc.compose(dpsgd_event(0.01, 1.0, 1), count=0)
    assert acc.get_epsilon(1e-5) == first  # nothing was added
    acc.compose(dpsgd_event(0.01, 1.0, 1))
    assert acc.get_epsilon(1e-5) > first


def test_json_round_trip_and_refusals():
    acc = Accountant(methods=["gdp", "rdp"]).compose(GaussianEvent(2.0), 7).compose(LaplaceEvent(5.0))
    again = Accountant.from_dict(json.loads(json.dumps(acc.to_dict())))
    assert again.history == acc.history and again.get_epsilon(1e-6) == acc.get_epsilon(1e-6)
    with pytest.raises(ValueError, match="methods must be among"):
        Accountant(methods=["prv"])
    with pytest.raises(ValueError, match="count must be"):
        acc.compose(GaussianEvent(1.0), -1)
    with pytest.raises(ValueError, match="event must be a PrivacyEvent"):
        acc.compose("gaussian")  # type: ignore[arg-type]
    with pytest.raises(NotApplicable, match="not differentially private"):
        Accountant().compose(NonPrivateEvent("raw data")).get_epsilon(1e-6)
    assert Accountant().get_epsilon(1e-6) == 0.0
