"""A ledger serialises to strict JSON and back (issue 14, item 5): every event type, nested
compositions, every kind of units, floats exact; ``account`` numbers preserved exactly;
unknown types refused by name."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpaudit.accounting import account
from dpaudit.data_units import UnitRuns
from dpaudit.events import (
    ApproxDpEvent,
    ComposedEvent,
    GaussianEvent,
    GaussianReportNoisyMaxEvent,
    GaussianSequenceEvent,
    LaplaceEvent,
    LaplaceReportNoisyMaxEvent,
    Neighbouring,
    NonPrivateEvent,
    NoOpEvent,
    ParallelEvent,
    PoissonSampledEvent,
    PureDpEvent,
    RandomizedResponseEvent,
    SelfComposedEvent,
)
from dpaudit.events_ml import (
    DiscreteLaplaceEvent,
    MixtureOfGaussiansEvent,
    RepeatAndSelectEvent,
    SampledWithoutReplacementEvent,
    SampledWithReplacementEvent,
    TreeAggregationEvent,
    TruncatedSubsampledGaussianEvent,
    ZCdpEvent,
)
from dpaudit.ledger import Ledger
from dpaudit.serialization import encode_value, event_from_dict, event_to_dict, event_types

ONE_OF_EACH = [
    NoOpEvent(),
    GaussianEvent(sigma=0.1, sensitivity=0.3),
    GaussianSequenceEvent(np.array([0.1, 1 / 3, 2.5e-7])),
    LaplaceEvent(scale=1 / 3, sensitivity=2.0),
    RandomizedResponseEvent(0.7, 5),
    GaussianReportNoisyMaxEvent((1.0, 0.5), (2.0, 3.0)),
    LaplaceReportNoisyMaxEvent(scale=2.0, num_candidates=4, neighbouring=Neighbouring.ADD_REMOVE,
                               monotone=True),
    PureDpEvent(0.1),
    ApproxDpEvent(0.5, 1e-300),
    NonPrivateEvent("the report's length is the click position"),
    PoissonSampledEvent(0.01, GaussianEvent(sigma=1.1)),
    ComposedEvent((PoissonSampledEvent(0.1, LaplaceEvent(2.0)),
                   PoissonSampledEvent(0.2, DiscreteLaplaceEvent(0.5, 2)))),
    ComposedEvent(()),
    SelfComposedEvent(LaplaceEvent(2.0), 7),
    ParallelEvent((GaussianEvent(1.0), ComposedEvent((LaplaceEvent(1.0), PureDpEvent(0.2).repeat(3))))),
    SampledWithoutReplacementEvent(1000, 32, GaussianEvent(sigma=1.0, sensitivity=2.0)),
    TreeAggregationEvent(1.5, (7, 3)),
    ZCdpEvent(0.5, 1e-3),
    DiscreteLaplaceEvent(0.25, 3),
    SampledWithReplacementEvent(10, 32, GaussianEvent(sigma=1.0, sensitivity=2.0)),
    MixtureOfGaussiansEvent(1.5, (0.0, 1.0, 2.0), (0.81, 0.18, 0.01)),
    TruncatedSubsampledGaussianEvent(60000, 0.004, 300, 1.1),
    RepeatAndSelectEvent(ParallelEvent((GaussianEvent(1.0), ZCdpEvent(0.1))), 7.5, float("inf")),
]


def test_every_event_type_is_covered():
    assert {type(e).__name__ for e in ONE_OF_EACH} == set(event_types())


@pytest.mark.parametrize("event", ONE_OF_EACH, ids=lambda e: type(e).__name__)
def test_event_round_trip_is_exact(event):
    text = json.dumps(event_to_dict(event), allow_nan=False)
    back = event_from_dict(json.loads(text))
    assert back == event and type(back) is type(event)
    assert repr(back) == repr(event)


def _ledger() -> Ledger:
    led = Ledger()
    for i, e in enumerate(ONE_OF_EACH):
        if isinstance(e, NonPrivateEvent):
            continue
        led.record(e, units=range(i, i + 3), label=f"entry {i}", round=i, arm=i % 2)
    led.record(GaussianEvent(sigma=4.0), units=None, label="global")
    led.record(LaplaceEvent(scale=8.0), units=np.array([1, 2, 3, 7, 9]))
    led.record(RandomizedResponseEvent(0.2, 3), units=["alice", "bob", ("carol", 1)])
    led.record(PureDpEvent(0.05), units=[0.5, 2])
    return led


def test_ledger_round_trip_preserves_entries_and_numbers_exactly():
    led = _ledger()
    text = led.to_json(indent=1)
    json.loads(text)  # strict JSON
    back = Ledger.from_json(text)
    assert back.entries == led.entries
    assert isinstance(back.entries[-3].units, UnitRuns)
    assert ("carol", 1) in back.entries[-2].units
    for kw in ({"delta": 1e-6}, {"epsilon": 1.0}):
        a = account(led.event(), methods=["basic", "advanced", "rdp", "gdp"], **kw)
        b = account(back.event(), methods=["basic", "advanced", "rdp", "gdp"], **kw)
        assert {k: (v.value, v.reason) for k, v in a.bounds.items()} == {
            k: (v.value, v.reason) for k, v in b.bounds.items()}


@pytest.mark.slow
def test_pld_and_sampled_numbers_survive_the_round_trip():
    led = Ledger()
    led.record(PoissonSampledEvent(0.02, GaussianEvent(sigma=1.3)).repeat(50))
    led.record(LaplaceEvent(scale=10.0), units=range(5))
    back = Ledger.from_json(led.to_json())
    a, b = led.report(delta=1e-6), back.report(delta=1e-6)
    assert {k: v.value for k, v in a.bounds.items()} == {k: v.value for k, v in b.bounds.items()}


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(st.floats(min_value=5e-324, max_value=1.7e308, allow_subnormal=True), min_size=1,
                       max_size=5))
def test_floats_are_exact(values):
    led = Ledger()
    for v in values:
        led.record(GaussianEvent(sigma=v, sensitivity=v), units=range(2))
        led.record(PureDpEvent(v))
    led.record(GaussianSequenceEvent(np.array(values)))
    assert Ledger.from_json(led.to_json()).entries == led.entries


def test_non_finite_values_are_strings_and_json_is_strict():
    assert encode_value(float("inf")) == {"float": "inf"}
    assert encode_value(float("-inf")) == {"float": "-inf"}
    assert encode_value(float("nan")) == {"float": "nan"}
    json.dumps(encode_value([float("inf"), 1.0]), allow_nan=False)
    # an event built from a non-finite value is refused by its constructor, naming the field
    with pytest.raises(ValueError, match=r"sigma must be in \(0, inf\)"):
        event_from_dict({"type": "GaussianEvent", "sigma": {"float": "inf"}, "sensitivity": 1.0})


def test_unknown_and_malformed_input_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown event type: MysteryEvent"):
        event_from_dict({"type": "MysteryEvent"})
    with pytest.raises(ValueError, match=r"unknown fields for GaussianEvent: \['mu'\]"):
        event_from_dict({"type": "GaussianEvent", "sigma": 1.0, "mu": 2.0})
    with pytest.raises(ValueError, match="unknown event type: FakeEvent"):
        event_from_dict({"type": "ComposedEvent", "events": [{"type": "FakeEvent"}]})
    with pytest.raises(ValueError, match="format 'dpaudit-ledger'"):
        Ledger.from_json('{"entries": []}')
    with pytest.raises(ValueError, match="version must be 1"):
        Ledger.from_json('{"format": "dpaudit-ledger", "version": 2, "entries": []}')
    led = Ledger()
    led.record(PureDpEvent(0.1), units=[object()])
    with pytest.raises(ValueError, match="cannot serialise a unit label of type object"):
        led.to_json()

    class Custom(GaussianEvent):
        pass

    with pytest.raises(ValueError, match="unknown type: Custom"):
        event_to_dict(Custom(1.0))


_FRESH = """
import json, sys
from dpaudit.accounting import epsilon_under
from dpaudit.serialization import event_from_dict, event_to_dict
assert "dpaudit.events_ml" not in sys.modules
event = event_from_dict({"type": "ZCdpEvent", "rho": 0.5, "xi": 0.001})
assert "dpaudit.events_ml" in sys.modules
print(json.dumps([event_to_dict(event), epsilon_under("rdp", event, 1e-5)]))
"""


def test_an_event_of_model_training_reads_back_before_its_module_is_loaded() -> None:
    """In a fresh interpreter the model-training events are not loaded until one is needed
    (:func:`dpaudit.events.loaded_ml_events`): reading one back loads them, and it is then
    written and accounted for like in a process that imported them first."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _FRESH], capture_output=True, text=True, check=True)
    written, eps = json.loads(proc.stdout)
    event = ZCdpEvent(0.5, 1e-3)
    assert written == event_to_dict(event)
    from dpaudit.accounting import epsilon_under

    assert eps == epsilon_under("rdp", event, 1e-5)
