"""Property tests of the accountant (hypothesis): monotonicity, ε ↔ δ round trips, best ≤
every method, parallel composition = max, and soundness against exact answers.

Example counts are kept small because a PLD evaluation costs ~0.3 s; PLD therefore has its
own, smaller, example budget (``PLD_EXAMPLES``).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dpaudit.accounting import METHODS, account, delta_under, epsilon_under, normal_form
from dpaudit.accounting.composition import NotApplicable
from dpaudit.events import (
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    ParallelEvent,
    RandomizedResponseEvent,
)
from dpaudit.ledger import Ledger
from tests.mp_reference import epsilon_mp, log_delta_mp

CHEAP = ["basic", "advanced", "rdp", "gdp"]
ALL = [*CHEAP, "pld"]
assert set(ALL) == set(METHODS)
CHEAP_EXAMPLES = 15
PLD_EXAMPLES = 4


def _examples(method: str) -> int:
    return PLD_EXAMPLES if method == "pld" else CHEAP_EXAMPLES


def _slack(method: str, value: float) -> float:
    """Numerical slack for comparisons that hold exactly in exact arithmetic.

    Closed forms (basic, gdp): rounding only. rdp / advanced: their order / δ-split are found
    by a numerical optimiser, whose optimum can move by ~1e-9 relative between nearby inputs.
    pld: dp-accounting's grid (Δ = 1e-4) is rebuilt for every input, so two nearby inputs can
    land on differently rounded grids: one interval.
    """
    if method == "pld":
        return 1e-4 * max(1.0, value)
    return 1e-9 * max(1.0, value)


def _run(method: str, fn) -> None:
    """Run a hypothesis property with the method's example budget."""
    settings(max_examples=_examples(method), deadline=None, suppress_health_check=[HealthCheck.too_slow])(
        fn
    )()


# strategies --------------------------------------------------------------------------------

sigmas = st.floats(min_value=0.5, max_value=30.0)
step_counts = st.integers(min_value=1, max_value=300)
deltas = st.floats(min_value=-12.0, max_value=-3.0).map(lambda x: 10.0**x)
eps0s = st.floats(min_value=0.01, max_value=2.0)


@st.composite
def events(draw, gaussian: bool = True):
    kind = draw(st.sampled_from(["gauss", "laplace", "rr", "mixed"] if gaussian else ["laplace", "rr"]))
    if kind == "gauss":
        return GaussianEvent(sigma=draw(sigmas)).repeat(draw(step_counts))
    if kind == "laplace":
        return LaplaceEvent.from_epsilon(draw(eps0s)).repeat(draw(st.integers(1, 100)))
    if kind == "rr":
        return RandomizedResponseEvent(draw(eps0s), draw(st.integers(2, 5))).repeat(draw(st.integers(1, 30)))
    return ComposedEvent(
        (
            GaussianEvent(sigma=draw(st.floats(2.0, 30.0))).repeat(draw(st.integers(1, 50))),
            LaplaceEvent.from_epsilon(draw(st.floats(0.01, 0.5))).repeat(draw(st.integers(1, 10))),
        )
    )


# monotonicity ------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("method", ALL)
def test_gaussian_monotone_in_steps_sigma_delta(method):
    @given(
        sigma=sigmas,
        steps=step_counts,
        more=st.integers(1, 300),
        shrink=st.floats(1.01, 3.0),
        delta=deltas,
        grow=st.floats(1.5, 1000.0),
    )
    def prop(sigma, steps, more, shrink, delta, grow):
        def eps(s, k, d):
            return epsilon_under(method, GaussianEvent(sigma=s).repeat(k), d)

        e0 = eps(sigma, steps, delta)
        tol = _slack(method, e0)
        assert eps(sigma, steps + more, delta) >= e0 - tol  # more steps
        assert eps(sigma / shrink, steps, delta) >= e0 - tol  # smaller σ
        assert eps(sigma, steps, min(0.5, delta * grow)) <= e0 + tol  # larger δ

    _run(method, prop)


@pytest.mark.slow
@pytest.mark.parametrize("method", ALL)
def test_laplace_monotone_in_steps_epsilon_delta(method):
    @given(
        eps0=eps0s,
        steps=st.integers(1, 100),
        more=st.integers(1, 100),
        grow_eps=st.floats(1.01, 3.0),
        delta=deltas,
        grow=st.floats(1.5, 1000.0),
    )
    def prop(eps0, steps, more, grow_eps, delta, grow):
        def eps(e, k, d):
            return epsilon_under(method, LaplaceEvent.from_epsilon(e).repeat(k), d)

        e0 = eps(eps0, steps, delta)
        tol = _slack(method, e0)
        assert eps(eps0, steps + more, delta) >= e0 - tol
        assert eps(eps0 * grow_eps, steps, delta) >= e0 - tol
        assert eps(eps0, steps, min(0.5, delta * grow)) <= e0 + tol

    _run(method, prop)


# ε(δ(ε)) round trips --------------------------------------------------------------------


def _drv(fn: str, event, arg: float) -> float:
    """The Dwork-Rothblum-Vadhan bound itself, before advanced caps it at basic composition's
    (whose δ(ε) is a step for pure events: 0 or 1)."""
    from dpaudit.accounting import advanced

    return max(getattr(advanced, fn)(c, arg) for c in normal_form(event))


@pytest.mark.slow
@pytest.mark.parametrize("method", ALL)
def test_epsilon_delta_round_trip(method):
    # advanced's δ(ε) bisects over its own golden-section ε(δ): ~15 s for a Gaussian event,
    # so it is round-tripped on pure events only, and on the DRV bound before the cap at basic
    def eps_at(event, d):
        return _drv("_drv_epsilon", event, d) if method == "advanced" else epsilon_under(method, event, d)

    def delta_at(event, e):
        return _drv("_drv_delta", event, e) if method == "advanced" else delta_under(method, event, e)

    @given(event=events(gaussian=method != "advanced"), delta0=deltas)
    def prop(event, delta0):
        # ε in the method's own range: the ε it certifies at some δ₀ (a drawn ε would mostly
        # give δ(ε) = 1 for the looser methods)
        eps = eps_at(event, delta0)
        assume(eps > 0.0)
        d = delta_at(event, eps)
        # (+1e-15: the rounding of ε to a double moves δ by |dδ/dε|·ulp(ε))
        assert d <= delta0 * (1 + 1e-6) + 1e-15
        assume(1e-14 < d < 0.5)  # away from the clamps (δ = 1, floors, flat tails of the PLD)
        e2 = eps_at(event, d)
        # δ(ε) is the smallest certified δ at ε, so ε(δ(ε)) ≤ ε up to the conservative
        # rounding in each direction; and it cannot be much smaller, or δ(ε) was not the
        # smallest δ
        tol = 1e-7 * max(1.0, eps)
        assert e2 <= eps + tol
        assert e2 >= eps - tol

    _run(method, prop)


# advanced ≤ basic ---------------------------------------------------------------------------


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event=events(), delta=deltas)
def test_advanced_never_reports_more_than_basic(event, delta):
    """Both bound the same events at the same δ, so advanced reports the smaller (one Gaussian
    release at δ = 1e-5: 4.38 by both, where the DRV formula alone gives 369.9)."""
    try:
        basic_eps = epsilon_under("basic", event, delta)
        advanced_eps = epsilon_under("advanced", event, delta)
    except NotApplicable:
        return
    assert advanced_eps <= basic_eps


# best ≤ every method -------------------------------------------------------------------------


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(event=events(), delta=deltas)
def test_best_is_the_minimum_of_every_applicable_method(event, delta):
    report = account(event, delta=delta)
    values = [b.value for b in report.bounds.values() if b.applicable]
    assert values
    assert all(report.best.value <= v for v in values)
    assert report.best.value == min(values)
    assert report.bounds[report.best.method].value == report.best.value


# parallel composition = max ------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("method", ALL)
def test_parallel_composition_is_the_max(method):
    @given(a=events(), b=events(), delta=deltas)
    def prop(a, b, delta):
        ea = epsilon_under(method, a, delta)
        eb = epsilon_under(method, b, delta)
        both = epsilon_under(method, ParallelEvent((a, b)), delta)
        assert both == pytest.approx(max(ea, eb), rel=1e-12, abs=1e-15)
        # the ledger: a touched units 0 and 1, b touched unit 2 → parallel across units
        ledger = Ledger()
        ledger.record(a, units=[0, 1], label="a")
        ledger.record(b, units=[2], label="b")
        via_ledger = account(ledger.event(), delta=delta, methods=[method]).bounds[method].value
        assert via_ledger == pytest.approx(max(ea, eb), rel=1e-12, abs=1e-15)

    _run(method, prop)


def test_parallel_with_a_shared_release_is_not_the_max():
    # guard against the ledger treating everything as parallel: a release on all units
    # composes with each branch
    shared = GaussianEvent(sigma=2.0)
    ledger = Ledger()
    ledger.record(GaussianEvent(sigma=2.0), units=[0])
    ledger.record(GaussianEvent(sigma=4.0), units=[1])
    ledger.record(shared)
    mu = math.sqrt(0.25 + 0.25)
    assert account(ledger.event(), delta=1e-6, methods=["gdp"]).mu == pytest.approx(mu, rel=1e-14)


# soundness: never below the exact value -------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("method", ALL)
def test_gaussian_never_below_exact(method):
    @given(sigma=sigmas, steps=step_counts, delta=deltas, eps=st.floats(0.0, 20.0))
    def prop(sigma, steps, delta, eps):
        event = GaussianEvent(sigma=sigma).repeat(steps)
        mu = math.sqrt(steps) / sigma
        assert epsilon_under(method, event, delta) >= float(epsilon_mp(mu, delta)) - 1e-12
        if method != "advanced":  # advanced's δ(ε) is slow on Gaussians (see round trip)
            d = delta_under(method, event, eps)
            exact_log = float(log_delta_mp(mu, eps))
            assert d > 0.0
            # (5e-324, the smallest double, stands for an underflowed δ)
            assert math.log(d) >= exact_log - 1e-12 or (d == 5e-324 and exact_log < math.log(5e-324))

    _run(method, prop)


def _laplace_exact_delta(eps0: float, eps: float) -> float:
    # Lap(0, b) vs Lap(1, b), ε₀ = 1/b: H_{e^ε} = 1 − e^{(ε − ε₀)/2} for 0 ≤ ε ≤ ε₀
    return max(0.0, -math.expm1((eps - eps0) / 2))


def _laplace_exact_epsilon(eps0: float, delta: float) -> float:
    return max(0.0, eps0 + 2 * math.log1p(-delta))


def _rr_exact_delta(eps0: float, k: int, eps: float) -> float:
    # the only positive term of Σ_y (P(y) − e^ε Q(y))_+ is the true answer y = x
    return max(0.0, (math.exp(eps0) - math.exp(eps)) / (math.exp(eps0) + k - 1))


def _rr_exact_epsilon(eps0: float, k: int, delta: float) -> float:
    inner = math.exp(eps0) - delta * (math.exp(eps0) + k - 1)
    return max(0.0, math.log(inner)) if inner > 0 else 0.0


@pytest.mark.parametrize("method", ALL)
def test_single_laplace_and_rr_never_below_exact(method):
    @given(
        eps0=st.floats(0.01, 5.0),
        k=st.integers(2, 6),
        delta=st.floats(-12.0, -0.5).map(lambda x: 10.0**x),
        frac=st.floats(0.0, 1.5),
    )
    def prop(eps0, k, delta, frac):
        lap, rr = LaplaceEvent.from_epsilon(eps0), RandomizedResponseEvent(eps0, k)
        # ε at δ: never below the exact hockey-stick inversion
        assert epsilon_under(method, lap, delta) >= _laplace_exact_epsilon(eps0, delta) - 1e-12
        assert epsilon_under(method, rr, delta) >= _rr_exact_epsilon(eps0, k, delta) - 1e-12
        # δ at ε (including ε beyond ε₀, where the exact δ is 0)
        eps = frac * eps0
        assert delta_under(method, lap, eps) >= _laplace_exact_delta(eps0, eps) * (1 - 1e-12)
        assert delta_under(method, rr, eps) >= _rr_exact_delta(eps0, k, eps) * (1 - 1e-12)

    _run(method, prop)


def test_exact_closed_forms_match_pld_tightly():
    # the closed forms above are themselves checked: dp-accounting's PLD of one Laplace / RR is
    # within its discretisation interval of them
    for eps0, k, delta in [(1.0, 2, 1e-3), (0.3, 4, 1e-6), (2.0, 3, 0.05)]:
        assert epsilon_under("pld", LaplaceEvent.from_epsilon(eps0), delta) == pytest.approx(
            _laplace_exact_epsilon(eps0, delta), abs=2e-4
        )
        assert epsilon_under("pld", RandomizedResponseEvent(eps0, k), delta) == pytest.approx(
            _rr_exact_epsilon(eps0, k, delta), abs=2e-4
        )
