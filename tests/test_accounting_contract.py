"""The contract every accounting method follows (dpaudit.accounting.protocol), run against each
method in ``METHODS``: nothing released → exactly 0; a non-private release → "not applicable"
with its reason; nesting and order of sequential composition do not matter; ε(δ) and δ(ε) are
non-increasing; ``best`` is at most every method that applies.

On the code before issue 15, ``rdp`` failed the first test (ε = 1.3e-5 for ``NoOpEvent``) and
``advanced`` gave δ = 1e-300 at ε = 0 for it.
"""

from __future__ import annotations

import pytest

from dpaudit.accounting import (
    METHODS,
    AccountingMethod,
    NotApplicable,
    account,
    delta_under,
    epsilon_under,
    normal_form,
)
from dpaudit.accounting import _register as register_methods
from dpaudit.events import (
    ApproxDpEvent,
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    NonPrivateEvent,
    NoOpEvent,
    ParallelEvent,
    PoissonSampledEvent,
    PureDpEvent,
    RandomizedResponseEvent,
)

NAMES = sorted(METHODS)

NOTHING = [
    NoOpEvent(),
    NoOpEvent().repeat(7),
    ComposedEvent(()),
    PureDpEvent(0.0).repeat(3),
    ComposedEvent((NoOpEvent(), ApproxDpEvent(0.0, 0.0), ParallelEvent((NoOpEvent(), PureDpEvent(0.0))))),
]


def _slack(value: float) -> float:
    """Order searches (rdp's Brent step, advanced's grids) are exact only to ~1e-9 relative."""
    return 1e-9 * max(1.0, abs(value))


def test_every_method_follows_the_protocol():
    for name, m in METHODS.items():
        assert isinstance(m, AccountingMethod)
        assert m.NAME == name
    with pytest.raises(TypeError, match="protocol"):
        register_methods(object())


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("event", NOTHING, ids=lambda e: type(e).__name__)
def test_nothing_released_is_exactly_zero(name, event):
    method = METHODS[name]
    for comp in normal_form(event):
        for delta in (5e-324, 1e-300, 1e-6, 0.5):
            assert method.epsilon(comp, delta) == 0.0
        for eps in (0.0, 1e-300, 1.0):
            assert method.delta(comp, eps) == 0.0
    assert epsilon_under(name, event, 1e-6) == 0.0
    assert delta_under(name, event, 0.0) == 0.0


@pytest.mark.parametrize("name", NAMES)
def test_non_private_release_is_not_applicable_with_its_reason(name):
    method = METHODS[name]
    leak = NonPrivateEvent("the report's length is the click position")
    for event in (leak, ComposedEvent((GaussianEvent(2.0), leak)), ParallelEvent((LaplaceEvent(1.0), leak))):
        comps = [c for c in normal_form(event) if any(isinstance(x, NonPrivateEvent) for x, _ in c)]
        for comp in comps:
            with pytest.raises(NotApplicable, match="not differentially private.*click position"):
                method.epsilon(comp, 1e-6)
            with pytest.raises(NotApplicable, match="not differentially private.*click position"):
                method.delta(comp, 1.0)
        bound = account(event, delta=1e-6, methods=[name]).bounds[name]
        assert not bound.applicable and "click position" in bound.reason
        bound = account(event, epsilon=1.0, methods=[name]).bounds[name]
        assert not bound.applicable and "click position" in bound.reason


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_nesting_and_order_do_not_matter(name):
    a, b, c = GaussianEvent(sigma=3.0), LaplaceEvent(scale=4.0), RandomizedResponseEvent(0.3, 3)
    if name in ("rdp", "pld"):  # the methods that bound a Poisson-subsampled Gaussian
        b = ComposedEvent((b, PoissonSampledEvent(0.1, GaussianEvent(sigma=2.0))))
    flat = ComposedEvent((a, b, c))
    variants = [
        ComposedEvent((a, ComposedEvent((b, c)))),
        ComposedEvent((ComposedEvent((c, a)), b)),
        ComposedEvent((c, b, a)),
        ComposedEvent((NoOpEvent(), b, ComposedEvent((a, NoOpEvent(), c)))),
    ]
    e0, d0 = epsilon_under(name, flat, 1e-6), delta_under(name, flat, 1.0)
    for v in variants:
        assert epsilon_under(name, v, 1e-6) == e0
        assert delta_under(name, v, 1.0) == d0
    # k-fold composition of a composition = the composition of the k-fold parts
    assert epsilon_under(name, ComposedEvent((a, b)).repeat(3), 1e-6) == epsilon_under(
        name, ComposedEvent((b.repeat(3), a.repeat(3))), 1e-6)


MONOTONE_EVENTS = [
    GaussianEvent(sigma=2.0).repeat(10),
    LaplaceEvent.from_epsilon(0.3).repeat(5),
    ComposedEvent((GaussianEvent(sigma=5.0).repeat(4), RandomizedResponseEvent(0.5).repeat(3))),
    PoissonSampledEvent(0.05, GaussianEvent(sigma=1.2)).repeat(40),
]


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("event", MONOTONE_EVENTS, ids=["gauss", "laplace", "mixed", "sampled"])
def test_monotone_in_delta_and_in_epsilon(name, event):
    sampled = isinstance(normal_form(event)[0].items[0][0], PoissonSampledEvent)
    if sampled and name in ("basic", "advanced", "gdp"):
        with pytest.raises(NotApplicable, match="rdp and pld"):
            epsilon_under(name, event, 1e-6)
        return
    eps = [epsilon_under(name, event, d) for d in (1e-10, 1e-7, 1e-5, 1e-3, 0.1, 0.4)]
    for hi, lo in zip(eps, eps[1:]):
        assert lo <= hi + _slack(hi)
    dels = [delta_under(name, event, e) for e in (0.0, 0.1, 0.5, 1.0, 2.0, 5.0)]
    for hi, lo in zip(dels, dels[1:]):
        assert lo <= hi + _slack(hi)
    assert all(0.0 <= d <= 1.0 for d in dels)


@pytest.mark.parametrize("name", NAMES)
def test_best_is_at_most_every_method_that_applies(name):
    for event in MONOTONE_EVENTS + [ComposedEvent((ApproxDpEvent(0.2, 1e-8), LaplaceEvent(3.0)))]:
        for report in (account(event, delta=1e-6), account(event, epsilon=1.0)):
            bound = report.bounds[name]
            if bound.applicable:
                assert report.best.value <= bound.value
            else:
                assert bound.reason
