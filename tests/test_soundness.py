"""Standing cross-check: no certified value is below an independent reference, anywhere a float
can reach (issue 15).

Parameters are drawn by hypothesis over the whole double range — ε₀ and μ from 1e-300 to 1e300
(and subnormal μ), δ down to the smallest subnormal 5e-324, 1 to 10⁹ steps, mixtures of
Gaussian and pure steps, parallel composition — and every certified value of every method is
compared with a reference that is exact or errs only on the *safe* side (a lower bound on the
true δ; so a flagged value is a real under-report):

* Gaussian compositions: the exact μ = sqrt(Σ k_i s_i²/σ_i²) as a rational, and the GDP profile
  evaluated by mpmath at a precision chosen from the digits it cancels (``tests.mp_reference``);
* pure ε and binary randomized response: the optimal composition theorem (Kairouz, Oh &
  Viswanath 2015) — exact, since binary randomized response is the worst ε-DP mechanism —
  summed in log space over the binomial (Loader's saddle point), deflated by its rounding bound;
* k-ary randomized response: exact, as a binomial mixture of binary compositions; Laplace: the
  larger of one step's exact δ and the exact δ of the steps post-processed to three outputs;
* a mixture or a parallel composition: the largest reference of its parts (dropping a part is
  post-processing; parallel composition is the worst part).

An ε at δ is checked as δ_ref(ε) ≤ δ, a δ at ε as δ ≥ δ_ref(ε). Independently, ``account()``
must answer every finite input with a finite number or "not applicable" with a reason — never
an exception, a NaN or a "numerical failure".

Size: the default run checks ≥ 10⁴ certified values in well under a minute (measured on the
shared 2-core machine: 10,414 values, 24 s CPU / 38 s wall; ``test_case_count`` prints the
tally); ``pytest --slow`` multiplies every example count by 20 (207,977 values, ≈ 19 min).
The last section turns every reproducer of issue 15 into an explicit regression test.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpaudit.accounting import NotApplicable, account, delta_under, epsilon_under
from dpaudit.conversions import gdp_delta, gdp_epsilon, gdp_mu, pure_dp_to_gdp
from dpaudit.events import (
    ApproxDpEvent,
    ComposedEvent,
    GaussianEvent,
    GaussianReportNoisyMaxEvent,
    GaussianSequenceEvent,
    LaplaceEvent,
    LaplaceReportNoisyMaxEvent,
    NoOpEvent,
    ParallelEvent,
    PoissonSampledEvent,
    PureDpEvent,
    RandomizedResponseEvent,
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
from tests.mixture_reference import certified_curve, mixture_delta, mixture_renyi
from tests.mp_reference import (
    hockey_stick_mp,
    kov_delta,
    laplace_delta,
    log_delta_mp,
    pure_dp_to_gdp_mp,
    renyi_mp,
    repeat_select_rr,
    rr_delta,
    with_replacement_delta,
    with_replacement_renyi,
)

SCALE = int(os.environ.get("DPAUDIT_SOUNDNESS_SCALE", "1"))
CASES: Counter = Counter()  # certified values checked, per test


def _settings(examples: int):
    return settings(max_examples=examples * SCALE, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---------------------------------------------------------------------------------------
# strategies

LOG_TINY = math.log(5e-324)
log10_wide = st.floats(min_value=-300.0, max_value=300.0)
deltas = st.one_of(
    st.floats(min_value=LOG_TINY, max_value=math.log(0.9)).map(math.exp),
    st.sampled_from([5e-324, 1e-318, 1e-300, 1e-12, 1e-6, 0.5]),
)
step_counts = st.one_of(st.floats(min_value=0.0, max_value=9.0).map(lambda x: int(10.0**x)),
                        st.sampled_from([1, 2, 10**9]))
fractions_ = st.one_of(st.floats(min_value=0.0, max_value=1.3), st.just(0.0))


def _pow10(x: float) -> float:
    return 10.0**x


@st.composite
def gaussian_parts(draw):
    """(event, exact μ² as a Fraction)."""
    kind = draw(st.sampled_from(["sigma", "mu", "sequence", "rnm"]))
    count = draw(step_counts)
    if kind == "sigma":
        sigma, sens = _pow10(draw(log10_wide)), _pow10(draw(log10_wide))
        leaf = GaussianEvent(sigma=sigma, sensitivity=sens)
        mu2 = (Fraction(sens) / Fraction(sigma)) ** 2
    elif kind == "mu":
        leaf = GaussianEvent.from_mu(_pow10(draw(st.floats(-300.0, 300.0))))
        mu2 = (Fraction(leaf.sensitivity) / Fraction(leaf.sigma)) ** 2
    elif kind == "sequence":
        mus = [_pow10(x) for x in draw(st.lists(st.floats(-300.0, 150.0), min_size=1, max_size=4))]
        leaf = GaussianSequenceEvent(np.array(mus))
        mu2 = sum((Fraction(m) ** 2 for m in leaf.mus.tolist()), Fraction(0))
    else:
        s = [_pow10(x) for x in draw(st.lists(st.floats(-100.0, 100.0), min_size=2, max_size=3))]
        g = [_pow10(x) for x in draw(st.lists(st.floats(-100.0, 100.0), min_size=len(s), max_size=len(s)))]
        leaf = GaussianReportNoisyMaxEvent(tuple(s), tuple(g))
        mu2 = max((Fraction(a) / Fraction(b)) ** 2 for a, b in zip(s, g))
    event = leaf.repeat(count) if count > 1 else leaf
    return event, mu2 * count


@st.composite
def pure_parts(draw):
    """(event, reference δ(ε) function — a lower bound on the true δ)."""
    kind = draw(st.sampled_from(["pure", "rr2", "rrk", "laplace"]))
    count = draw(step_counts)
    if kind == "laplace":
        scale, sens = _pow10(draw(log10_wide)), _pow10(draw(log10_wide))
        leaf = LaplaceEvent(scale=scale, sensitivity=sens)
        e0 = float(Fraction(sens) / Fraction(scale)) if sens / scale < 1e308 else math.inf
        e0 = math.nextafter(e0, 0.0) if math.isfinite(e0) else e0  # ≤ the exact s/b

        def ref(eps, e0=e0, count=count):
            return laplace_delta(e0, count, eps) if math.isfinite(e0) else 0.0
    else:
        e0 = _pow10(draw(log10_wide))
        k = 2 if kind != "rrk" else draw(st.integers(3, 1000))
        leaf = PureDpEvent(e0) if kind == "pure" else RandomizedResponseEvent(e0, k)

        def ref(eps, e0=e0, k=k, count=count):
            return rr_delta(e0, k, count, eps)
    event = leaf.repeat(count) if count > 1 else leaf
    return event, ref


def _gauss_ref(mu2: Fraction):
    mu = mp.sqrt(mp.mpf(mu2.numerator) / mp.mpf(mu2.denominator))

    def log_ref(eps: float) -> float:
        return float(log_delta_mp(mu, eps)) if mu > 0 else -math.inf
    return log_ref, float(mu)


def _log(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


# ---------------------------------------------------------------------------------------
# the checks


def _check_epsilon(method: str, event, delta: float, log_ref, label: str) -> None:
    try:
        eps = epsilon_under(method, event, delta)
    except NotApplicable as exc:
        assert str(exc) and not str(exc).startswith("numerical failure"), (method, event, delta, exc)
        return
    assert math.isfinite(eps) and eps >= 0, (method, event, delta, eps)
    assert log_ref(eps) <= math.log(delta) + 1e-300, (method, event, delta, eps, log_ref(eps))
    CASES[label] += 1


def _check_delta(method: str, event, eps: float, log_ref, label: str) -> None:
    try:
        d = delta_under(method, event, eps)
    except NotApplicable as exc:
        assert str(exc) and not str(exc).startswith("numerical failure"), (method, event, eps, exc)
        return
    assert 0.0 <= d <= 1.0, (method, event, eps, d)
    assert _log(d) >= log_ref(eps), (method, event, eps, d, log_ref(eps))
    CASES[label] += 1


FAST = ["gdp", "basic", "rdp", "advanced"]


# 1. the GDP conversions, vectorised ------------------------------------------------------


@pytest.mark.slow
@_settings(40)
@given(
    data=st.lists(st.tuples(st.floats(-320.0, 154.0), st.floats(LOG_TINY, math.log(0.9)), st.floats(0, 1.3)),
                  min_size=96, max_size=96),
    extra=st.lists(st.floats(-320.0, 300.0), min_size=8, max_size=8),
)
def test_gdp_conversions_never_below_exact(data, extra):
    mu = np.array([10.0**a for a, _, _ in data])
    mu = np.where(mu > 0, mu, 5e-324)
    log_d = np.array([b for _, b, _ in data])
    eps = gdp_epsilon(mu, np.exp(log_d).clip(5e-324, 0.9))
    for m, ld, e in zip(mu, np.log(np.exp(log_d).clip(5e-324, 0.9)), eps):
        assert float(log_delta_mp(float(m), float(e))) <= ld
    CASES["conversions"] += len(data)
    # δ at ε, on both sides of the root: ε = f·(μ²/2 + 3μ)
    queries = np.array([f * (m * m / 2 + 3 * m) for (_, _, f), m in zip(data, mu)])
    d = gdp_delta(mu, queries)
    for m, q, dd in zip(mu, queries, d):
        assert mp.log(mp.mpf(float(dd))) >= log_delta_mp(float(m), float(q))
    CASES["conversions"] += len(data)
    # pure ε → GDP μ, and μ from (ε, δ)
    e0 = np.array([10.0**x for x in extra])
    for e, m in zip(e0, pure_dp_to_gdp(e0)):
        assert m >= pure_dp_to_gdp_mp(float(e))
    CASES["conversions"] += len(extra)
    for (_, b, _), e in zip(data[:1], e0[:1]):
        target_eps, delta = min(float(e), 1e6), max(math.exp(b), 5e-324)
        try:
            m = gdp_mu(target_eps, delta)
        except ValueError:
            continue
        assert float(log_delta_mp(m, target_eps)) <= math.log(delta)
        CASES["conversions"] += 1


# 2. Gaussian compositions ----------------------------------------------------------------


@pytest.mark.slow
@_settings(60)
@given(parts=st.lists(gaussian_parts(), min_size=1, max_size=3), delta=deltas, frac=fractions_)
def test_gaussian_compositions_never_below_exact(parts, delta, frac):
    event = parts[0][0] if len(parts) == 1 else ComposedEvent(tuple(p for p, _ in parts))
    log_ref, mu = _gauss_ref(sum((m for _, m in parts), Fraction(0)))
    for method in FAST:
        _check_epsilon(method, event, delta, log_ref, "gaussian")
    eps = frac * min(mu * mu / 2 + 3 * mu, 1e300)
    for method in ("gdp", "rdp", "basic"):
        _check_delta(method, event, eps, log_ref, "gaussian")


# 3. pure ε compositions ------------------------------------------------------------------


@pytest.mark.slow
@_settings(80)
@given(part=pure_parts(), delta=deltas, frac=fractions_)
def test_pure_compositions_never_below_optimal_composition(part, delta, frac):
    event, ref = part
    cache: dict[float, float] = {}

    def log_ref(eps):
        if eps not in cache:
            cache[eps] = _log(ref(eps))
        return cache[eps]

    for method in FAST:
        _check_epsilon(method, event, delta, log_ref, "pure")
    total = sum(leaf.epsilon for leaf in [event.event if hasattr(event, "event") else event]) * (
        event.count if hasattr(event, "count") else 1)
    eps = frac * min(total, 1e300)
    for method in FAST:
        _check_delta(method, event, eps, log_ref, "pure")


# 4. mixtures and parallel composition ----------------------------------------------------


@pytest.mark.slow
@_settings(40)
@given(g=gaussian_parts(), p=pure_parts(), q=pure_parts(), delta=deltas, frac=fractions_,
       shape=st.sampled_from(["mix", "parallel", "mix-parallel"]))
def test_mixtures_and_parallel_never_below_their_parts(g, p, q, delta, frac, shape):
    g_log, mu = _gauss_ref(g[1])

    def p_log(eps):
        return _log(p[1](eps))

    def q_log(eps):
        return _log(q[1](eps))

    if shape == "mix":
        event = ComposedEvent((g[0], p[0]))
        refs = [g_log, p_log]
    elif shape == "parallel":
        event = ParallelEvent((g[0], p[0], q[0]))
        refs = [g_log, p_log, q_log]
    else:
        event = ParallelEvent((ComposedEvent((g[0], p[0])), q[0]))
        refs = [g_log, p_log, q_log]

    def log_ref(eps):
        return max(r(eps) for r in refs)

    for method in FAST:
        _check_epsilon(method, event, delta, log_ref, "mixture")
    eps = frac * min(mu * mu / 2 + 3 * mu, 1e300)
    for method in ("gdp", "rdp", "basic"):
        _check_delta(method, event, eps, log_ref, "mixture")


# 5. PLD (slow per call: few examples) ----------------------------------------------------


@pytest.mark.slow
@_settings(6)
@given(
    mu_log=st.floats(-3.0, 1.3),
    e0_log=st.floats(-4.0, 0.5),
    count=st.integers(1, 300),
    kind=st.sampled_from(["gauss", "pure", "rr3", "laplace", "mix"]),
    delta=st.floats(-25.0, -1.0).map(math.exp),
    frac=fractions_,
)
def test_pld_never_below_exact(mu_log, e0_log, count, kind, delta, frac):
    mu, e0 = 10.0**mu_log, 10.0**e0_log
    if kind == "gauss":
        event = GaussianEvent.from_mu(mu).repeat(count)
        g_log, _ = _gauss_ref((Fraction(event.event.sensitivity) / Fraction(event.event.sigma)) ** 2 * count
                              if count > 1 else Fraction(1) / Fraction(event.sigma) ** 2)
        log_ref, scale = g_log, math.sqrt(count) * mu * (math.sqrt(count) * mu / 2 + 3)
    elif kind == "laplace":
        event = LaplaceEvent.from_epsilon(e0).repeat(count)
        b = event.event.scale if count > 1 else event.scale
        e_true = math.nextafter(float(Fraction(1) / Fraction(b)), 0.0)

        def log_ref(eps):
            return _log(laplace_delta(e_true, count, eps))
        scale = count * e0
    elif kind in ("pure", "rr3"):
        k = 2 if kind == "pure" else 3
        event = (PureDpEvent(e0) if k == 2 else RandomizedResponseEvent(e0, 3)).repeat(count)

        def log_ref(eps):
            return _log(rr_delta(e0, k, count, eps))
        scale = count * e0
    else:
        event = ComposedEvent((GaussianEvent.from_mu(mu), PureDpEvent(e0).repeat(count)))
        g_log, _ = _gauss_ref(Fraction(1) / Fraction(1.0 / mu) ** 2)

        def log_ref(eps):
            return max(g_log(eps), _log(kov_delta(e0, count, eps)))
        scale = count * e0 + mu * (mu / 2 + 3)
    _check_epsilon("pld", event, delta, log_ref, "pld")
    _check_delta("pld", event, frac * scale, log_ref, "pld")


# 6. every finite input gets an answer ----------------------------------------------------


@st.composite
def any_leaf(draw):
    kinds = ["gauss", "seq", "laplace", "rr", "pure", "approx", "rnm-g", "rnm-l", "noop", "sampled",
             "sampled-pure"]
    kind = draw(st.sampled_from(kinds))
    w = lambda: _pow10(draw(log10_wide))  # noqa: E731
    if kind == "gauss":
        return GaussianEvent(sigma=w(), sensitivity=w())
    if kind == "seq":
        return GaussianSequenceEvent(np.array([w() for _ in range(draw(st.integers(1, 3)))]))
    if kind == "laplace":
        return LaplaceEvent(scale=w(), sensitivity=w())
    if kind == "rr":
        return RandomizedResponseEvent(w(), draw(st.integers(2, 10**6)))
    if kind == "pure":
        return PureDpEvent(draw(st.one_of(st.just(0.0), st.just(5e-324), log10_wide.map(_pow10))))
    if kind == "approx":
        return ApproxDpEvent(w(), draw(st.one_of(st.just(0.0), deltas)))
    if kind == "rnm-g":
        return GaussianReportNoisyMaxEvent((w(),), (w(), w()))
    if kind == "rnm-l":
        n = draw(st.integers(2, 100))
        return LaplaceReportNoisyMaxEvent(scale=w(), num_candidates=n, sensitivity=w())
    if kind == "sampled":  # σ/s near the DP-SGD range, or anywhere
        q = draw(st.one_of(st.floats(-300.0, 0.0).map(_pow10), st.just(1.0)))
        nm = draw(st.one_of(st.floats(-1.0, 1.5).map(_pow10), log10_wide.map(_pow10)))
        return PoissonSampledEvent(q, GaussianEvent(sigma=nm))
    if kind == "sampled-pure":
        q = draw(st.one_of(st.floats(-300.0, 0.0).map(_pow10), st.just(1.0)))
        return PoissonSampledEvent(q, draw(st.sampled_from([LaplaceEvent(scale=w(), sensitivity=w()),
                                                            PureDpEvent(w()), RandomizedResponseEvent(w())])))
    return NoOpEvent()


@st.composite
def any_event(draw, depth: int = 2):
    leaf = draw(any_leaf())
    if depth == 0 or draw(st.booleans()):
        count = draw(step_counts)
        return leaf.repeat(count) if count > 1 else leaf
    children = tuple(draw(any_event(depth=depth - 1)) for _ in range(draw(st.integers(1, 3))))
    return ComposedEvent(children) if draw(st.booleans()) else ParallelEvent(children)


@pytest.mark.slow
@_settings(150)
@given(event=any_event(), delta=deltas, eps=st.one_of(st.just(0.0), log10_wide.map(_pow10)))
def test_account_answers_every_finite_input(event, delta, eps):
    for report in (account(event, delta=delta, methods=FAST), account(event, epsilon=eps, methods=FAST)):
        for name, b in report.bounds.items():
            if b.applicable:
                assert math.isfinite(b.value) and b.value >= 0, (name, event, b)
                if report.quantity == "delta":
                    assert b.value <= 1.0
            else:
                assert b.reason and not b.reason.startswith("numerical failure"), (name, event, b.reason)
        CASES["answers"] += len(report.bounds)


@_settings(15)
@given(event=any_event(depth=1), delta=deltas, eps=st.one_of(st.just(0.0), log10_wide.map(_pow10)))
def test_pld_answers_every_finite_input(event, delta, eps):
    reports = (account(event, delta=delta, methods=["pld"]), account(event, epsilon=eps, methods=["pld"]))
    for report in reports:
        b = report.bounds["pld"]
        if b.applicable:
            assert math.isfinite(b.value) and b.value >= 0
        else:
            assert b.reason and not b.reason.startswith("numerical failure"), (event, b.reason)
        CASES["answers"] += 1


# ---------------------------------------------------------------------------------------
# issue 15's reproducers, one regression test each (old value → new value vs the truth)


def test_issue15_rdp_near_alpha_one_pure_steps():
    # old: rdp δ(0) = 5e-324 (best!); truth (optimal composition) 1.2613e-5
    truth = kov_delta(1e-6, 1000, 0.0)
    assert truth == pytest.approx(1.2613e-5, rel=1e-4)
    report = account(PureDpEvent(1e-6).repeat(1000), epsilon=0.0)
    for b in report.bounds.values():
        assert b.value >= truth
    # old: `dpaudit epsilon laplace --epsilon0 3.1622776601683795e-06 --epsilon 0` best = rdp 7.37e-7
    e0 = 3.1622776601683795e-06
    exact = -math.expm1(-e0 / 2)  # one Laplace step: δ(0) = 1 − e^{−ε₀/2} = 1.58114e-6
    report = account(LaplaceEvent.from_epsilon(e0), epsilon=0.0)
    assert report.bounds["rdp"].value >= exact and report.best.value >= exact
    # old: `--epsilon0 3e-6 --steps 1000 --epsilon 0` best = rdp 6.56e-6 < a lower bound 3.78e-5
    lower = laplace_delta(3e-6, 1000, 0.0)
    report = account(LaplaceEvent.from_epsilon(3e-6).repeat(1000), epsilon=0.0)
    assert all(b.value >= lower for b in report.bounds.values())


def test_issue15_pure_to_gdp_small_epsilon():
    # old: −2·ndtri(expit(−ε)) was 6e-9 low at 1e-8, 2.3 % low at 1e-14 and −0.0 below 1.1e-16
    for e in (1e-8, 1e-14, 1e-17, 1e-300):
        assert pure_dp_to_gdp(e) >= pure_dp_to_gdp_mp(e) > 0
    # randomized response: δ(0) = tanh(ε/2); old gdp was low in the 9th digit / exactly 0
    for e in (3.0189e-8, 1e-17):
        truth = math.tanh(e / 2)
        for m in ("gdp", "rdp", "pld"):
            assert delta_under(m, RandomizedResponseEvent(e), 0.0) >= truth
        assert delta_under("gdp", PureDpEvent(e), 0.0) >= truth


def test_issue15_small_mu_margin():
    # old: GaussianEvent(sigma=1e10) at δ = 1e-12 gave ε whose true δ is 1.0000025e-12 (gdp, basic)
    event = GaussianEvent(sigma=1e10)
    for m in ("gdp", "basic", "rdp", "advanced"):
        assert float(log_delta_mp(1e-10, epsilon_under(m, event, 1e-12))) <= math.log(1e-12)
    # old: gdp_mu returned too large a μ below 1.1e-4
    for eps, delta in [(1e-5, 0.3), (2e-5, 1e-4), (1e-6, 1e-7)]:
        assert float(log_delta_mp(gdp_mu(eps, delta), eps)) <= math.log(delta)


def test_issue15_underflow_to_zero():
    # old: σ = 1e170 gave ε = 0 at δ = 1e-300 under gdp, advanced and pld (truth 2.4e-169)
    event = GaussianEvent(sigma=1e170)
    for m in ("gdp", "advanced", "basic", "rdp"):
        assert float(log_delta_mp(1e-170, epsilon_under(m, event, 1e-300))) <= math.log(1e-300)
    report = account(event, epsilon=0.0)  # old: δ = 0, best = 0, μ = 0
    truth = float(mp.exp(log_delta_mp(1e-170, 0.0)))  # 2Φ(μ/2) − 1 = 3.99e-171
    assert report.best.value >= truth > 0 and report.mu >= 1e-170
    # old: 10⁹ steps of σ = 1e200 summed μ² = 1e-400 to 0, so δ(0) = 0 (truth 1.26e-196)
    mu = mp.sqrt(mp.mpf(10) ** 9) * mp.mpf(1e-200)
    report = account(GaussianEvent(sigma=1e200).repeat(10**9), epsilon=0.0)
    assert report.best.value >= float(mp.exp(log_delta_mp(mu, 0.0))) > 0
    # old: PureDpEvent(1e-300).repeat(10**6) gave ε = 0 under gdp and advanced
    event = PureDpEvent(1e-300).repeat(10**6)
    for m in ("gdp", "advanced", "basic"):
        assert kov_delta(1e-300, 10**6, epsilon_under(m, event, 1e-300)) <= 1e-300
    assert delta_under("gdp", event, 0.0) >= kov_delta(1e-300, 10**6, 0.0) > 0
    # old: rdp ε = 0 through max(0, nan); the event's ε = 2e310 overflows: not applicable
    report = account(LaplaceReportNoisyMaxEvent(scale=1e-10, num_candidates=3, sensitivity=1e300), delta=1e-6)
    assert not report.best.applicable
    assert all(b.reason and "numerical failure" not in b.reason for b in report.bounds.values())


@pytest.mark.slow
def test_issue15_rounding_margins():
    # old: basic used the rounded 1/scale, below the exact quotient for about half the scales
    rng = np.random.default_rng(15)
    for scale in 10.0 ** rng.uniform(-3, 3, 50):
        assert Fraction(epsilon_under("basic", LaplaceEvent(scale), 1e-300)) >= 1 / Fraction(scale)
    # old: pld Laplace ε₀ = 200 at δ = 1e-10 returned 199.9999999998 (true δ 1.0000178e-10)
    eps = epsilon_under("pld", LaplaceEvent.from_epsilon(200.0), 1e-10)
    assert laplace_delta(200.0, 1, eps) <= 1e-10
    # old: gdp_delta was low when δ is subnormal
    for mu, eps in [(1.0, 37.8), (1.0, 38.5), (0.5, 19.0), (3.0, 60.0)]:
        assert mp.log(gdp_delta(mu, eps)) >= log_delta_mp(mu, eps)


@pytest.mark.parametrize(
    "event",
    [
        LaplaceEvent.from_epsilon(709.8),
        PureDpEvent(710.0),
        RandomizedResponseEvent(1e300),
        LaplaceReportNoisyMaxEvent(scale=1e-3, num_candidates=3),
        GaussianEvent(sigma=1e160),
        GaussianEvent(sigma=1e200).repeat(10**9),
    ],
    ids=["laplace-709.8", "pure-710", "rr-1e300", "rnm-laplace-2000", "sigma-1e160", "sigma-1e200-x1e9"],
)
def test_issue15_no_crash_for_large_parameters(event):
    # old: account() raised (advanced: expm1 overflow; gdp: mu = inf; pld: OverflowError or
    # "deltas are not in non-increasing order"; sigma >= 1e160: pld OverflowError)
    for report in (account(event, delta=1e-6), account(event, epsilon=1.0)):
        assert report.best.applicable
        for b in report.bounds.values():
            assert b.applicable or (b.reason and "numerical failure" not in b.reason)


def test_issue15_tiny_delta_over_a_million_steps():
    # old: 10^6 steps at δ = 1e-318 made basic and advanced raise (per-step δ underflowed to 0)
    event = GaussianEvent.from_mu(0.1).repeat(10**6)
    report = account(event, delta=1e-318, methods=["basic", "advanced", "gdp", "rdp"])
    for b in report.bounds.values():
        assert b.applicable
        assert float(log_delta_mp(100.0, b.value)) <= math.log(1e-318)


def test_issue15_pld_memory_is_bounded():
    # old: 0.70 / 1.65 / 3.15 GB at μ = 300 / 1000 / 2000 and out of memory at 10^5: the grid is
    # now at most 3·10⁵ points for the Gaussian (0.16 GB peak measured at μ = 1000 and 5000) and
    # μ above ≈ 5.5e3 is outside the PLD's domain (gdp is exact there)
    from dpaudit.accounting import normal_form, pld

    for mu in (300.0, 2000.0, 5000.0):
        assert pld.plan(normal_form(GaussianEvent.from_mu(mu))[0])["points"] <= 2_000_100
    mixed = ComposedEvent((GaussianEvent.from_mu(1e5), LaplaceEvent.from_epsilon(1.0)))
    bound = account(mixed, delta=1e-6, methods=["pld"]).bounds["pld"]
    assert not bound.applicable and "domain" in bound.reason
    # issue 14: a Gaussian-only composition has the closed-form (Gaussian) PLD, at any μ, no grid
    report = account(GaussianEvent.from_mu(1e5), delta=1e-6, methods=["pld", "gdp"])
    assert report.bounds["pld"].value == report.bounds["gdp"].value


# ---------------------------------------------------------------------------------------
# issue 23: the new events, and calibration


@st.composite
def new_leaf(draw):
    """A leaf of one of issue 23's events, with its exact μ² (Fraction) when it is Gaussian-type."""
    kind = draw(st.sampled_from(["tree", "wor", "wr", "zcdp", "dlap", "rs", "mog", "trunc"]))
    if kind == "tree":
        sigma = _pow10(draw(st.floats(-2.0, 3.0)))
        counts = tuple(draw(st.lists(st.integers(0, 10**6), min_size=1, max_size=3)))
        leaf = TreeAggregationEvent(sigma, counts)
        return leaf, Fraction(max(c.bit_length() for c in counts)) / Fraction(sigma) ** 2
    if kind == "wor":
        n = draw(st.integers(2, 10**6))
        return SampledWithoutReplacementEvent(n, draw(st.integers(1, n)),
                                              GaussianEvent(sigma=_pow10(draw(st.floats(-0.5, 1.5))))), None
    if kind == "wr":
        return SampledWithReplacementEvent(draw(st.integers(1, 10**6)), draw(st.integers(1, 10**4)),
                                           GaussianEvent(sigma=_pow10(draw(st.floats(-0.5, 1.5))))), None
    if kind == "mog":
        cs, ps = draw(mixtures)
        return MixtureOfGaussiansEvent(_pow10(draw(st.floats(-0.5, 1.5))), cs, ps), None
    if kind == "trunc":
        n = draw(st.integers(1, 10**7))
        q, cut = _pow10(draw(st.floats(-6.0, 0.0))), draw(st.integers(1, n + 1))
        return TruncatedSubsampledGaussianEvent(n, q, cut, _pow10(draw(st.floats(-0.5, 1.5)))), None
    if kind == "zcdp":
        return ZCdpEvent(_pow10(draw(st.floats(-6.0, 1.0))), draw(st.sampled_from([0.0, 1e-3]))), None
    if kind == "rs":
        inner = draw(st.sampled_from([GaussianEvent(sigma=_pow10(draw(st.floats(-0.5, 2.0)))),
                                      ZCdpEvent(_pow10(draw(st.floats(-6.0, 0.0)))),
                                      LaplaceEvent.from_epsilon(_pow10(draw(st.floats(-3.0, 1.0))))]))
        return RepeatAndSelectEvent(inner, _pow10(draw(st.floats(0.0, 6.0))), draw(shapes)), None
    return DiscreteLaplaceEvent(_pow10(draw(st.floats(-4.0, 1.0))), draw(st.integers(1, 5))), None


@pytest.mark.slow
@_settings(8)
@given(n=st.integers(1, 60), m=st.integers(1, 4), log_sigma=st.floats(-0.3, 0.7),
       log_delta=st.floats(-9.0, -2.0))
def test_with_replacement_never_below_the_exact_divergence(n, m, log_sigma, log_delta):
    """A Gaussian on m draws with replacement from n records: for one record contributing 1 (the
    others 0) against 0, the exact Rényi divergences (mpmath quadrature) are at most the certified
    curve, and the exact δ at the certified ε at most δ (one neighbouring pair, so a necessary
    check, not the worst case)."""
    from dpaudit.accounting import normal_form, rdp

    sigma, delta = 10.0**log_sigma, 10.0**log_delta
    leaf = SampledWithReplacementEvent(n, m, GaussianEvent(sigma=sigma))
    orders = np.array([1.05, 2.0, 8.0])
    curve = rdp.rdp_curve(normal_form(leaf)[0], orders)
    for a, c in zip(orders, curve):
        assert mp.mpf(float(c)) >= with_replacement_renyi(n, m, sigma, a), (a, c)
    certified = epsilon_under("rdp", leaf, delta)
    assert with_replacement_delta(n, m, sigma, certified) <= delta
    CASES["new events"] += orders.size + 1


@st.composite
def _mixtures(draw):
    """(sensitivities, probabilities) of a mixture of up to 3 components, one of them often 0
    (dp-accounting's sensitivities are non-negative)."""
    k = draw(st.integers(1, 3))
    cs = [draw(st.sampled_from([0.0, 1.0, 2.0, 0.3, 1.5])) for _ in range(k)]
    raw = [draw(st.floats(0.01, 1.0)) for _ in range(k)]
    return tuple(cs), tuple(r / math.fsum(raw) for r in raw)


mixtures = _mixtures()
ORDERS3 = np.array([1.05, 2.0, 8.0])


@pytest.mark.slow
@_settings(8)
@given(mix=mixtures, log_sigma=st.floats(-0.3, 0.7), log_delta=st.floats(-9.0, -2.0))
def test_mixture_of_gaussians_never_below_the_exact_divergence(mix, log_sigma, log_delta):
    """N(0, σ²) against Σ p_i N(c_i, σ²): the certified RDP curve is at least the exact Rényi
    divergence in both orders (mpmath quadrature) at every order tried, and the exact δ at the
    certified ε at most δ."""
    cs, ps = mix
    sigma, delta = 10.0**log_sigma, 10.0**log_delta
    leaf = MixtureOfGaussiansEvent(sigma, cs, ps)
    for a, c in zip(ORDERS3, certified_curve(leaf, ORDERS3)):
        assert mp.mpf(float(c)) >= mixture_renyi(sigma, cs, ps, a) - mp.mpf(10) ** -40, (a, c)
    if any(c > 0 and p > 0 for c, p in zip(cs, ps)):
        assert mixture_delta(ps, cs, sigma, epsilon_under("rdp", leaf, delta)) <= delta
    CASES["new events"] += ORDERS3.size + 1


shapes = st.one_of(st.sampled_from([0.0, 1.0, math.inf]), st.floats(0.0, 20.0))


@_settings(12)
@given(log_eps=st.floats(-2.0, 0.7), log_mean=st.floats(0.0, 3.0), shape=shapes,
       count=st.sampled_from([1, 2, 4]), log_delta=st.floats(-12.0, -1.0))
def test_repeat_and_select_never_below_the_exact_divergence(log_eps, log_mean, shape, count, log_delta):
    """Repeat-and-select of binary randomized response (the largest bit of K runs, ⊥ if K = 0)
    has exact output distributions (mpmath, :func:`tests.mp_reference.repeat_select_rr`): the
    certified RDP curve is at least their Rényi divergence in both directions at every order
    tried, and the certified ε at δ has an exact δ(ε) of the count-fold product at most δ, and
    the certified δ at ε at least it."""
    from dpaudit.accounting import normal_form, rdp

    eps, mean, delta = 10.0**log_eps, 10.0**log_mean, 10.0**log_delta
    leaf = RepeatAndSelectEvent(RandomizedResponseEvent(eps, 2), mean, shape)
    p, q = repeat_select_rr(eps, mean, shape)
    orders = np.array([1.01, 1.5, 2.0, 4.0, 16.0, 128.0])
    curve = rdp.rdp_curve(normal_form(leaf)[0], orders)
    for a, c in zip(orders, curve):
        assert mp.mpf(float(c)) >= max(renyi_mp(p, q, a), renyi_mp(q, p, a)), (a, c)
    event = leaf.repeat(count) if count > 1 else leaf
    certified = epsilon_under("rdp", event, delta)
    exact = max(hockey_stick_mp(p, q, certified, count), hockey_stick_mp(q, p, certified, count))
    assert exact <= delta, (certified, exact, delta)
    at = certified * 0.5
    exact_half = max(hockey_stick_mp(p, q, at, count), hockey_stick_mp(q, p, at, count))
    assert mp.mpf(delta_under("rdp", event, at)) >= exact_half
    CASES["new events"] += orders.size + 2


@pytest.mark.slow
@_settings(25)
@given(part=new_leaf(), count=st.sampled_from([1, 10, 1000]), delta=deltas, frac=fractions_)
def test_new_events_never_below_their_reference(part, count, delta, frac):
    """Tree aggregation is exactly Gaussian: every method against the exact GDP profile of its
    nodes (mpmath). The others have no independent exact reference here: every method must answer
    with a finite value (δ ≤ 1) or "not applicable: why" — never an exception or a numerical
    failure — and discrete Laplace's basic composition must be exactly k·aΔ, rounded up."""
    leaf, mu2 = part
    event = leaf.repeat(count) if count > 1 else leaf
    if mu2 is not None:  # tree aggregation: exactly Gaussian
        log_ref, mu = _gauss_ref(mu2 * count)
        for method in FAST:
            _check_epsilon(method, event, delta, log_ref, "new events")
        for method in ("gdp", "rdp", "basic"):
            _check_delta(method, event, frac * min(mu * mu / 2 + 3 * mu, 1e300), log_ref, "new events")
        return
    for report in (account(event, delta=delta), account(event, epsilon=frac * 10.0)):
        for name, b in report.bounds.items():
            if b.applicable:
                assert math.isfinite(b.value) and b.value >= 0
                assert report.quantity == "epsilon" or b.value <= 1
            else:
                assert b.reason and "numerical failure" not in b.reason, (name, event, b.reason)
        CASES["new events"] += len(report.bounds)
    if isinstance(leaf, DiscreteLaplaceEvent):
        exact = Fraction(leaf.parameter) * leaf.sensitivity * count
        assert Fraction(epsilon_under("basic", event, delta)) >= exact
        assert epsilon_under("basic", event, delta) == pytest.approx(float(exact), rel=1e-12)


@_settings(6)
@given(target=st.floats(0.1, 10.0), log_q=st.floats(-3.0, -1.0), steps=st.sampled_from([10, 300]),
       log_delta=st.floats(-10.0, -4.0))
def test_calibrated_noise_never_certifies_above_the_target(target, log_q, steps, log_delta):
    """A calibrated σ's certified ε, recomputed from scratch, is at most the target (the contract of
    calibration; the certified value itself is checked by the sweeps above and by the
    subsampled-Gaussian tests against mpmath in tests/test_interop.py)."""
    from dpaudit.accounting.calibration import calibrate_dpsgd, dpsgd_event

    q, delta = 10.0**log_q, 10.0**log_delta
    c = calibrate_dpsgd(target_epsilon=target, delta=delta, sampling_rate=q, steps=steps, methods=["rdp"])
    assert epsilon_under("rdp", dpsgd_event(q, c.value, steps), delta) <= target
    CASES["calibration"] += 1


@pytest.mark.slow  # it counts the slow sweeps too: the quick subset deselects it rather than skip it
def test_case_count():
    """The default run checks ≥ 10⁴ certified values (only when the whole module ran)."""
    sweeps = {"conversions", "gaussian", "pure", "mixture", "pld", "answers", "new events", "calibration"}
    if not sweeps <= set(CASES):
        pytest.skip("only part of the sweep ran")
    total = sum(CASES.values())
    print(f"\nsoundness sweep: {total} certified values checked: {dict(CASES)}")
    assert total >= 10_000
