"""Long heterogeneous compositions: vectorised exact divisions, and the per-family binning of
RDP and PLD (every step charged its bin's largest ε) is never below the exact composition and
close to it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.accounting import account, normal_form, pld, pld_plan, rdp
from dpaudit.accounting.binning import binned_up
from dpaudit.events import ComposedEvent, GaussianEvent, LaplaceEvent, RandomizedResponseEvent
from dpaudit.numerics import div_up, div_up_array

positive = st.floats(min_value=5e-324, max_value=1.7e308, allow_nan=False, allow_infinity=False)


@pytest.mark.slow
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


@pytest.mark.slow
@pytest.mark.parametrize(("module", "knob", "loose"), [(rdp, "MAX_BINS", 2e-3), (pld, "MAX_LEAVES", 1e-2)])
def test_binning_is_sound_and_close(monkeypatch, module, knob, loose):
    event = _mixed(300)
    binned = account(event, delta=1e-6, methods=[module.NAME]).bounds[module.NAME].value
    # every distinct leaf on its own (the PLD's knob lives with its grid plan)
    monkeypatch.setattr(pld_plan if module is pld else module, knob, 10**6)
    if module is pld:
        pld._by_value.cache_clear()
    exact = account(event, delta=1e-6, methods=[module.NAME]).bounds[module.NAME].value
    assert exact <= binned <= exact * (1 + loose)


@pytest.mark.slow
def test_order_of_a_long_composition_does_not_matter():
    event = _mixed(200, seed=1)
    leaves = np.array(event.events, dtype=object)
    shuffled = ComposedEvent(tuple(np.random.default_rng(2).permutation(leaves)))
    a, b = account(event, delta=1e-6), account(shuffled, delta=1e-6)
    for name in a.bounds:
        assert a.bounds[name].value == b.bounds[name].value, name


@pytest.mark.slow
def test_ten_thousand_distinct_steps_every_method_applicable():
    report = account(_mixed(4000, seed=4), delta=1e-6)
    assert all(b.applicable for b in report.bounds.values()), report
    comp = normal_form(_mixed(4000, seed=4))[0]
    assert comp.num_releases == 10_000


def _classified_one_by_one(items):
    """The classification the vectorised pass replaces: each leaf on its own."""
    from dpaudit.accounting.composition import is_full_sample, leaf_mu, pure_epsilon
    from dpaudit.events import GaussianReportNoisyMaxEvent, GaussianSequenceEvent

    mus, rest, pure = [], [], []
    for leaf, c in items:
        if isinstance(leaf, (GaussianEvent, GaussianReportNoisyMaxEvent)) or is_full_sample(leaf):
            mus += [leaf_mu(leaf)] * c
        elif isinstance(leaf, GaussianSequenceEvent):
            mus += list(leaf.mus) * c
        else:
            rest.append((leaf, c))
            pure += [pure_epsilon(leaf)] * c
    return sorted(mus), rest, sorted(pure)


def test_vectorised_classification_agrees_with_leaf_by_leaf():
    from dpaudit.events import GaussianSequenceEvent, PureDpEvent

    rng = np.random.default_rng(5)
    leaves = ([LaplaceEvent(float(b), float(s)) for b, s in rng.uniform(0.1, 10, (50, 2))]
              + [GaussianEvent(float(g), float(s)) for g, s in rng.uniform(0.1, 10, (50, 2))]
              + [RandomizedResponseEvent(float(e), 3) for e in rng.uniform(0.01, 1, 10)]
              + [PureDpEvent(0.5), GaussianSequenceEvent(np.array([0.1, 0.2]))])
    order = rng.permutation(len(leaves))
    items = tuple((leaves[i], int(rng.integers(1, 4))) for i in order)
    from dpaudit.accounting.composition import Composition

    comp = Composition(items)
    mus, rest, pure = _classified_one_by_one(items)
    m, c = comp.gaussian_steps()
    assert np.array_equal(np.sort(np.repeat(m, c.astype(int))), mus)
    assert comp.gaussian_part()[2] == rest  # the other leaves, in their order
    e, k = comp.steps().pure_arrays()
    assert np.array_equal(np.sort(np.repeat(e, k.astype(int))), pure)
    only_laplace = Composition(tuple((leaf, 1) for leaf in leaves[:50]))  # one type: no selection
    assert only_laplace.steps().pure[0].eps.size == 50
    assert only_laplace.gaussian_part()[2] == list(only_laplace)


def test_normal_form_of_plain_leaves_equals_the_general_path():
    from dpaudit.events import NoOpEvent

    event = _mixed(50, seed=6)
    fast = normal_form(event)[0]
    general = normal_form(ComposedEvent((*event.events, NoOpEvent())))[0]  # a compound child
    assert fast.items == general.items


@pytest.mark.slow
def test_pld_composes_parts_in_an_order_fixed_by_their_sizes():
    comp = normal_form(_mixed(300, seed=7))[0]
    reversed_comp = normal_form(ComposedEvent(tuple(reversed(_mixed(300, seed=7).events))))[0]
    assert pld.epsilon(comp, 1e-6) == pld.epsilon(reversed_comp, 1e-6)


def test_classification_of_a_single_leaf_of_a_bulk_type_among_others():
    from dpaudit.accounting.composition import Composition

    items = ((GaussianEvent(2.0), 3), (LaplaceEvent(4.0), 1), (RandomizedResponseEvent(0.5, 3), 2))
    comp = Composition(items)
    m, c = comp.gaussian_steps()
    assert m.tolist() == [0.5] and c.tolist() == [3.0]
    assert [g.family for g in comp.steps().pure] == ["laplace", "rr"]
    assert comp.steps().pure[0].eps.tolist() == [0.25] and comp.gaussian_part()[2] == list(items[1:])
    only = Composition(((LaplaceEvent(2.0), 1),))
    assert only.steps().pure[0].eps.tolist() == [0.5]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(positive, positive), min_size=1, max_size=10))
def test_gaussian_sequence_from_arrays_never_rounds_mu_down(pairs):
    from fractions import Fraction

    from dpaudit.events import GaussianSequenceEvent

    sens, sig = (np.array(x) for x in zip(*pairs))
    with np.errstate(over="ignore", under="ignore"):
        overflow = not np.all(np.isfinite(sens / sig))
    if overflow:  # an underflowing quotient is rounded up to 5e-324 instead
        with pytest.raises(ValueError, match="mus"):
            GaussianSequenceEvent.from_arrays(sens, sig)
        return
    mus = GaussianSequenceEvent.from_arrays(sens, sig).mus
    exact = [Fraction(float(s)) / Fraction(float(g)) for s, g in zip(sens, sig)]
    assert all(Fraction(float(m)) >= q for m, q in zip(mus, exact))
    with np.errstate(under="ignore"):
        assert np.all(mus <= np.nextafter(sens / sig, np.inf))  # and at most one ulp above
