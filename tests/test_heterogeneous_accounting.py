"""Long heterogeneous compositions: vectorised exact divisions, and the per-family binning of
RDP and PLD (every step charged its bin's largest ε) is never below the exact composition and
close to it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.accounting import account, normal_form, pld, rdp
from dpaudit.accounting.composition import binned_up, div_up, div_up_array
from dpaudit.events import ComposedEvent, GaussianEvent, LaplaceEvent, RandomizedResponseEvent

positive = st.floats(min_value=5e-324, max_value=1.7e308, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(positive, positive), min_size=1, max_size=20))
def test_div_up_array_is_the_exact_rounded_up_quotient(pairs):
    num, den = (np.array(x) for x in zip(*pairs))
    assert np.array_equal(div_up_array(num, den), [div_up(float(a), float(b)) for a, b in pairs])


def test_binned_up_charges_each_step_at_least_its_value():
    rng = np.random.default_rng(3)
    v = rng.uniform(1e-4, 1e-3, 5000)
    c = rng.integers(1, 5, 5000).astype(float)
    rep, mult = binned_up(v, c, 64, 8)
    assert rep.size <= 65 and mult.sum() == c.sum()
    # every value is charged a representative at least as large: sorted cumulative counts dominate
    order = np.argsort(v)[::-1]
    charged = np.repeat(rep, mult.astype(int))
    original = np.repeat(v[order], c[order].astype(int))
    assert np.all(np.sort(charged)[::-1] >= original)


def _mixed(n, seed=0):
    rng = np.random.default_rng(seed)
    lap = [LaplaceEvent.from_epsilon(float(e)) for e in rng.uniform(1e-3, 1e-2, n)]
    rr = [RandomizedResponseEvent(float(e), 3) for e in rng.uniform(1e-3, 1e-2, n // 2)]
    gauss = [GaussianEvent(sigma=float(s)) for s in rng.uniform(30, 100, n)]
    return ComposedEvent(tuple(lap + rr + gauss))


@pytest.mark.parametrize(("module", "knob", "loose"), [(rdp, "MAX_BINS", 2e-3), (pld, "MAX_LEAVES", 1e-2)])
def test_binning_is_sound_and_close(monkeypatch, module, knob, loose):
    event = _mixed(300)
    binned = account(event, delta=1e-6, methods=[module.NAME]).bounds[module.NAME].value
    monkeypatch.setattr(module, knob, 10**6)  # every distinct leaf on its own
    if module is pld:
        pld._composed.cache_clear()
    exact = account(event, delta=1e-6, methods=[module.NAME]).bounds[module.NAME].value
    assert exact <= binned <= exact * (1 + loose)


def test_order_of_a_long_composition_does_not_matter():
    event = _mixed(200, seed=1)
    leaves = np.array(event.events, dtype=object)
    shuffled = ComposedEvent(tuple(np.random.default_rng(2).permutation(leaves)))
    a, b = account(event, delta=1e-6), account(shuffled, delta=1e-6)
    for name in a.bounds:
        assert a.bounds[name].value == b.bounds[name].value, name


def test_ten_thousand_distinct_steps_every_method_applicable():
    report = account(_mixed(4000, seed=4), delta=1e-6)
    assert all(b.applicable for b in report.bounds.values()), report
    comp = normal_form(_mixed(4000, seed=4))[0]
    assert comp.num_releases == 10_000
