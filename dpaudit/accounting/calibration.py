"""Calibration: the most private-cost-effective parameter whose *certified* ε at δ meets a target.

:func:`calibrate` takes any family of events indexed by one parameter (a noise multiplier, a
sampling rate, a number of steps, …) and returns the extreme parameter whose certified ε —
:func:`~dpaudit.accounting.account`'s ``best`` over the chosen methods — is at most the target:
the smallest parameter when ε shrinks as it grows (noise), the largest when ε grows with it
(sampling rate, steps). It brackets the answer by doubling or halving from ``start``
(:func:`~dpaudit.numerics.expand_bracket`) and bisects on the certified value
(:func:`~dpaudit.numerics.bisect`), which keeps an end that was *evaluated* feasible: the answer
is valid (its own certified ε is at most the target, whatever the shape of the certified curve)
and tight — the other end of the final bracket, evaluated infeasible, is within a relative
``rtol`` of it (an integer parameter: adjacent). A parameter whose evaluation is "not applicable"
for every method counts as infeasible.

:func:`calibrate_dpsgd` is the DP-SGD case: a Poisson-subsampled Gaussian (noise multiplier σ,
sampling rate q) repeated for k steps, solved for whichever of σ, q, k is not given.

Example (DP-SGD: q = 0.01, 1000 steps, ε ≤ 2 at δ = 1e-5):
    >>> c = calibrate_dpsgd(target_epsilon=2.0, delta=1e-5, sampling_rate=0.01, steps=1000)
    >>> c.parameter, round(c.value, 3), c.epsilon <= 2.0, c.value / c.infeasible - 1 <= 1e-3
    ('noise_multiplier', 0.959, True, True)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from dpaudit.events import GaussianEvent, PoissonSampledEvent, PrivacyEvent
from dpaudit.numerics import expand_bracket
from dpaudit.validation import check_integer, check_nonnegative, check_positive, check_probability

__all__ = ["Calibration", "calibrate", "calibrate_dpsgd", "dpsgd_event"]


@dataclass(frozen=True)
class Calibration:
    """The answer of :func:`calibrate`: ``value`` (feasible: its certified ``epsilon`` ≤
    ``target_epsilon``, by ``method``) and ``infeasible``, the nearest parameter evaluated above the
    target (the optimum lies between them), with the work it took."""

    parameter: str
    value: float
    epsilon: float
    method: str
    infeasible: float
    target_epsilon: float
    delta: float
    rtol: float
    evaluations: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{parameter: value}`` first, then every field."""
        return {self.parameter: self.value, **asdict(self)}


def dpsgd_event(sampling_rate: float, noise_multiplier: float, steps: int) -> PrivacyEvent:
    """k steps of the Poisson-subsampled Gaussian with noise multiplier σ (sensitivity 1).

    >>> dpsgd_event(0.01, 1.0, 1000).num_releases
    1000
    """
    steps = check_integer("steps", steps)
    inner = GaussianEvent(sigma=check_positive("noise_multiplier", noise_multiplier))
    return PoissonSampledEvent(check_probability("sampling_rate", sampling_rate, high_open=False),
                               inner).repeat(steps)


class _Certifier:
    """log(certified ε/target) of ``event_of(x)`` at δ (+inf where no method applies, −inf at
    ε = 0), cached by x."""

    def __init__(self, event_of: Callable[[float], PrivacyEvent], delta: float, target: float,
                 methods: list[str] | None) -> None:
        self.event_of, self.delta, self.target, self.methods = event_of, delta, target, methods
        self.cache: dict[float, tuple[float, float, str]] = {}

    def __call__(self, x: float) -> float:
        return self.evaluate(x)[0]

    def evaluate(self, x: float) -> tuple[float, float, str]:
        """(log ε/target, ε, method)."""
        from dpaudit.accounting import account

        if x not in self.cache:
            best = account(self.event_of(x), delta=self.delta, methods=self.methods).best
            if best.value is None:
                self.cache[x] = (math.inf, math.inf, "none")
            else:
                gap = math.log(best.value / self.target) if best.value > 0 else -math.inf
                self.cache[x] = (gap if self.target > 0 else (0.0 if best.value == 0 else math.inf),
                                 best.value, best.method)
        return self.cache[x]


def calibrate(
    event_of: Callable[[float], PrivacyEvent],
    *,
    target_epsilon: float,
    delta: float,
    epsilon_grows: bool,
    parameter: str = "parameter",
    start: float = 1.0,
    upper: float = math.inf,
    integer: bool = False,
    rtol: float = 1e-3,
    factor: float = 2.0,
    methods: Iterable[str] | None = None,
) -> Calibration:
    """The extreme parameter x ∈ (0, ``upper``] (an integer ≥ 1 if ``integer``) whose certified ε
    of ``event_of(x)`` at ``delta`` is at most ``target_epsilon``: the largest x if
    ``epsilon_grows`` (ε increases with x), else the smallest. A feasible ``upper`` is returned as
    is when ε grows; ``ValueError`` when no x is feasible.

    Bracketed by powers of ``factor`` from ``start`` (:func:`~dpaudit.numerics.expand_bracket`), then
    narrowed on log x by interpolating log ε linearly between the two ends (a regula falsi step,
    with a midpoint step when an end has not moved twice running) followed by a probe a little
    inside the far end, so that two evaluations usually close the bracket once the interpolation
    is accurate. The speed-up is over plain bisection; the guarantee is the same: both ends are
    evaluated, the returned one feasible.

    >>> from dpaudit.events import GaussianEvent
    >>> c = calibrate(lambda s: GaussianEvent(sigma=s).repeat(100), target_epsilon=1.0, delta=1e-5,
    ...               epsilon_grows=False, parameter="sigma", methods=["gdp"])
    >>> round(c.value, 2), c.epsilon <= 1.0, c.evaluations < 20
    (37.31, True, True)
    """
    t0 = time.perf_counter()
    target = check_nonnegative("target_epsilon", target_epsilon)
    delta = check_probability("delta", delta)
    rtol = check_positive("rtol", rtol)
    start = check_positive("start", start)
    if integer and not epsilon_grows:
        raise ValueError("an integer parameter is calibrated only when epsilon grows with it (steps)")
    cert = _Certifier((lambda x: event_of(int(x))) if integer else event_of, delta, target,
                      None if methods is None else list(methods))

    def gap(t: float) -> float:  # on log x; outside (0, upper] infeasible
        x = _point(t, integer)
        return cert(x) if 0 < x <= upper else math.inf

    refusal = (f"no {parameter} in (0, {upper:g}] certifies epsilon <= {target:g} at delta = {delta:g} "
               f"(searched {'below' if epsilon_grows else 'above'} {start:g} by factors of 2)")
    factor = check_positive("factor", factor)
    if not factor > 1:
        raise ValueError(f"factor must be in (1, inf), got {factor!r}")
    ends = _bracket(lambda t: gap(t) <= 0, math.log(min(start, upper)), upper, epsilon_grows, factor, refusal)
    if ends is None:  # ε grows and upper is feasible
        value, other = (float(math.floor(upper)) if integer else upper), math.inf
    else:
        feas, infeas = _narrow(gap, *ends, tol=math.log1p(rtol), integer=integer)
        value, other = _point(feas, integer), _point(infeas, integer)
    _, eps, method = cert.evaluate(value)
    assert eps <= target, "the returned end was evaluated feasible"
    return Calibration(parameter, value, eps, method, other, target, delta, rtol, len(cert.cache),
                       time.perf_counter() - t0)


def _point(t: float, integer: bool) -> float:
    """The parameter at log-scale t: e^t, or for an integer parameter the nearest integer ≥ 1."""
    x = math.exp(t)
    return float(max(1, round(x))) if integer else x


def _bracket(feasible: Callable[[float], bool], t0: float, upper: float, grows: bool, factor: float,
             refusal: str) -> tuple[float, float] | None:
    """(log of the feasible end, log of the infeasible end), each evaluated, by powers of ``factor``
    from e^t0 (:func:`~dpaudit.numerics.expand_bracket` on x or on 1/x); None when ε grows and a finite
    ``upper`` is feasible."""

    def first(pred: Callable[[float], bool], up: bool) -> float:
        """log of the first e^t0·2^(±k), k ≥ 0, where ``pred`` (on log x) is False."""
        if up:
            x = expand_bracket(lambda x: np.array(pred(math.log(float(x)))), math.exp(t0), factor=factor,
                               limit=1e300)
            return math.log(float(x))
        y = expand_bracket(lambda y: np.array(pred(-math.log(float(y)))), math.exp(-t0), factor=factor,
                           limit=1e300)
        return -math.log(float(y))

    try:
        if grows:  # feasible below the answer, infeasible above
            lo = first(lambda t: not feasible(t), up=False)
            hi = first(lambda t: feasible(t) and t < math.log(upper), up=True)
            if hi >= math.log(upper):
                if feasible(math.log(upper)):
                    return None
                hi = math.log(upper)
            return lo, hi
        return first(lambda t: not feasible(t), up=True), first(feasible, up=False)
    except ValueError:
        raise ValueError(refusal) from None


def _narrow(gap: Callable[[float], float], feas: float, infeas: float, *, tol: float,
            integer: bool) -> tuple[float, float]:
    """Shrink the log-scale bracket (gap(feas) ≤ 0 < gap(infeas)) until its ends are within
    ``tol`` (for an integer parameter, which grows: adjacent integers). Each round evaluates the
    secant point of the two latest evaluations (regula falsi on the ends if it falls outside the
    bracket, the midpoint if the last round did not halve the bracket), then a probe past the new
    secant root by twice its distance (at least 0.9·tol, or one integer), so that the root is
    bracketed from both sides."""
    history: list[tuple[float, float]] = [(feas, gap(feas)), (infeas, gap(infeas))]

    def done() -> bool:
        if integer:
            return _point(infeas, True) - _point(feas, True) <= 1
        return abs(feas - infeas) <= tol

    def evaluate(t: float) -> None:
        nonlocal feas, infeas
        lo, hi = min(feas, infeas), max(feas, infeas)
        if integer:  # an integer strictly between the ends
            lo_x, hi_x = _point(lo, True), _point(hi, True)
            t = math.log(min(hi_x - 1, max(lo_x + 1, round(math.exp(t)))))
        if not lo < t < hi:
            return
        g = gap(t)
        history.append((t, g))
        if g <= 0:
            feas = t
        else:
            infeas = t

    def inside(t: float | None) -> bool:
        lo, hi = min(feas, infeas), max(feas, infeas)
        return t is not None and lo + 0.02 * (hi - lo) < t < hi - 0.02 * (hi - lo)

    width = math.inf
    while not done():
        t = _secant(history)
        if not inside(t):
            t = _secant([(feas, gap(feas)), (infeas, gap(infeas))])
        if abs(infeas - feas) > 0.5 * width or not inside(t):
            t = 0.5 * (feas + infeas)
        width = abs(infeas - feas)
        assert t is not None
        evaluate(t)
        root = _secant(history)
        if done() or root is None:
            continue
        if integer:
            x = math.exp(t)
            probe = math.log(max(1.0, x + math.copysign(max(1.0, 2 * abs(math.exp(root) - x)), root - t)))
        else:
            probe = t + math.copysign(max(0.9 * tol, 2 * abs(root - t)), root - t)
        evaluate(probe)
    return feas, infeas


def _secant(points: list[tuple[float, float]]) -> float | None:
    """Where the line through the two latest points with finite, distinct values crosses 0."""
    finite = [(t, g) for t, g in points if math.isfinite(g)]
    if len(finite) < 2:
        return None
    (t1, g1), (t2, g2) = finite[-2], finite[-1]
    if g1 == g2 or t1 == t2:
        return None
    return t2 - g2 * (t2 - t1) / (g2 - g1)


def calibrate_dpsgd(
    *,
    target_epsilon: float,
    delta: float,
    sampling_rate: float | None = None,
    noise_multiplier: float | None = None,
    steps: int | None = None,
    rtol: float = 1e-3,
    methods: Iterable[str] | None = ("rdp", "pld"),
    step: Callable[[float, float], PrivacyEvent] | None = None,
) -> Calibration:
    """DP-SGD (:func:`dpsgd_event`) calibrated for the one of ``noise_multiplier`` (smallest),
    ``sampling_rate`` (largest, at most 1) or ``steps`` (most) that is not given. ``step(q, σ)``
    replaces the Poisson-subsampled Gaussian step (e.g. a fixed-size batch; ``sampling_rate`` is
    then its fraction B/N, used for the starting guess)."""
    given = {"sampling_rate": sampling_rate, "noise_multiplier": noise_multiplier, "steps": steps}
    missing = [k for k, v in given.items() if v is None]
    if len(missing) != 1:
        raise ValueError("give exactly two of sampling_rate, noise_multiplier and steps (the third is "
                         f"calibrated), got {sorted(k for k, v in given.items() if v is not None)}")
    one = step or (lambda q, s: dpsgd_event(q, s, 1))
    mu = _clt_mu(target_epsilon, delta)
    common: dict[str, Any] = {"target_epsilon": target_epsilon, "delta": delta, "rtol": rtol, "factor": 1.25,
                              "methods": methods, "parameter": missing[0]}
    if noise_multiplier is None:
        q = check_probability("sampling_rate", sampling_rate, high_open=False)
        k = check_integer("steps", steps)
        start = 1.0 / math.sqrt(math.log1p((mu / q) ** 2 / k)) if mu > 0 else 1.0
        return calibrate(lambda s: one(q, s).repeat(k), epsilon_grows=False, start=start, **common)
    s = check_positive("noise_multiplier", noise_multiplier)
    growth = math.expm1(min(1.0 / (s * s), 700.0))  # e^{1/σ²} − 1
    if sampling_rate is None:
        k = check_integer("steps", steps)
        start = min(1.0, mu / math.sqrt(k * growth)) if mu > 0 else 0.01
        return calibrate(lambda q: one(q, s).repeat(k), epsilon_grows=True, start=start, upper=1.0, **common)
    q = check_probability("sampling_rate", sampling_rate, high_open=False)
    start = max(1.0, min(1e9, (mu / q) ** 2 / growth)) if mu > 0 else 1000.0
    return calibrate(lambda k: one(q, s).repeat(int(k)), epsilon_grows=True, start=start, upper=1e9,
                     integer=True, **common)


def _clt_mu(target_epsilon: float, delta: float) -> float:
    """The GDP μ whose (ε, δ) profile meets the target: with the central-limit approximation of
    DP-SGD, μ ≈ q·sqrt(k(e^{1/σ²} − 1)) (Bu, Dong, Long & Su 2020, Thm 5), a starting point only."""
    from dpaudit.conversions import gdp_mu

    try:
        return float(gdp_mu(check_positive("target_epsilon", target_epsilon),
                            check_probability("delta", delta)))
    except ValueError:
        return 0.0
