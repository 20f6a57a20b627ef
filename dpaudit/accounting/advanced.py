"""Advanced composition (Dwork, Rothblum & Vadhan 2010, Thm III.3), heterogeneous form.

For steps that are (ε_i, δ_i)-DP and any δ' > 0, the composition is (ε, δ' + Σ δ_i)-DP with

    ε = sqrt(2 ln(1/δ') Σ ε_i²) + Σ ε_i (e^{ε_i} − 1)

(Dwork & Roth 2014, Thm 3.20; its proof — Azuma's inequality on privacy losses bounded by ε_i
with mean at most ε_i(e^{ε_i} − 1) — holds step by step, so heterogeneous ε_i are allowed;
Kairouz, Oh & Viswanath 2015, Thm 3.5, state a tighter heterogeneous form). Pure and (ε, δ)
leaves enter with their own parameters. Gaussian-type steps have a curve of valid (ε_i, δ_i):
for ε(δ) the δ left after the (ε, δ) leaves is split into the slack δ' and an equal per-step
δ_i, for δ(ε) the per-step δ_i is chosen and δ' solved in closed form; the free parameter is
searched on a 33-point grid zoomed in five times using Newton estimates of the per-step ε
(:func:`~dpaudit.conversions.gdp_epsilon_estimate`), and the bound is then computed with the
certified ε at the chosen split. Any split is valid, so the search only affects tightness: it
runs on at most 65 coarser μ bins, and the certified value on the ≤ 1025 bins of
:func:`~dpaudit.accounting.basic.binned_mus`. The formula can exceed basic composition (e.g.
ε₀ = 1, k = 10, or one Gaussian release, whose ε_i(e^{ε_i} − 1) term dominates); both bounds
hold for the same events at the same total δ, so the method reports the smaller (basic
composition is what the theorem gives for free: never more than Σ ε_i at Σ δ_i).

Soundness and domain. Σ ε_i² is summed with scaling (no underflow for ε_i down to 5e-324),
every sum is rounded up and every log δ down. Not applicable where the bound exceeds the
largest double (e^{ε_i} overflows for ε_i ≳ 709.8) or the (ε, δ) leaves leave no slack.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from dpaudit.accounting import basic
from dpaudit.accounting.basic import split
from dpaudit.accounting.binning import binned_up
from dpaudit.accounting.composition import Composition, NotApplicable, check_private, no_bound
from dpaudit.conversions import gdp_epsilon_estimate, gdp_epsilon_log
from dpaudit.numerics import minimise_zoom, norm_up, sum_up, sum_up_arrays

NAME = "advanced"
SEARCH_BINS = 64
_TINY = 5e-324


def _fixed_steps(comp: Composition) -> tuple[np.ndarray, np.ndarray]:
    """(ε_i, counts) of the pure and (ε, δ) leaves."""
    st = comp.steps()
    if st.other:
        raise no_bound(st.other[0][0], "(epsilon, delta)")
    eps, _, counts = st.fixed_arrays()
    return eps, counts


def _linear_terms(eps: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """count·ε(e^ε − 1) per step, inflated by a relative 1e-15 for its own rounding (inf where
    it overflows)."""
    with np.errstate(over="ignore"):
        return counts * eps * np.expm1(eps) * (1.0 + 1e-15)


def _parts(comp: Composition) -> tuple[float, float, float, np.ndarray, np.ndarray]:
    """(‖ε‖₂ of the fixed steps, their Σ ε(e^ε − 1), remaining δ, Gaussian μ bins, counts)."""
    _, delta_used, rep, mult = split(comp)
    eps, counts = _fixed_steps(comp)
    norm = norm_up(eps, counts)
    lin = sum_up_arrays(np.ones(eps.size), _linear_terms(eps, counts))
    if math.isinf(norm) or math.isinf(lin):
        raise NotApplicable("the Dwork-Rothblum-Vadhan bound exceeds the largest double "
                            "(a per-step epsilon is too large: e^eps overflows)")
    return norm, lin, delta_used, rep, mult


def _drv(norm: np.ndarray, lin: np.ndarray, log_slack: np.ndarray) -> np.ndarray:
    """sqrt(2 ln(1/δ'))·‖ε‖₂ + Σ ε(e^ε − 1), rounded up (relative 1e-13)."""
    with np.errstate(over="ignore", invalid="ignore"):
        v = np.sqrt(2.0 * -log_slack) * norm + lin
        return np.nextafter(v * (1.0 + 1e-13), np.inf)


def _gauss_terms(
    rep: np.ndarray, mult: np.ndarray, log_step: np.ndarray, certified: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """For per-step log δ_i on a grid: (‖ε_i‖₂ contribution, Σ ε_i(e^{ε_i}−1)) arrays. With
    ``certified=False`` the per-step ε are Newton estimates on at most :data:`SEARCH_BINS` + 1
    coarser bins (for the search only: any split is valid)."""
    conv = gdp_epsilon_log if certified else gdp_epsilon_estimate
    if not certified:
        rep, mult = binned_up(rep, mult, SEARCH_BINS, SEARCH_BINS // 4)
    try:
        e = np.asarray(conv(rep[:, None], log_step[None, :]), dtype=float)
    except ValueError as exc:
        raise NotApplicable(f"a Gaussian step's epsilon exceeds the largest double: {exc}") from None
    with np.errstate(over="ignore", invalid="ignore"):
        top = e.max(axis=0)
        scaled = np.where(top > 0, e / np.where(top > 0, top, 1.0), 0.0)
        norm = top * np.sqrt((mult[:, None] * scaled * scaled).sum(axis=0) * (1 + 1e-12))
        lin = (mult[:, None] * e * np.expm1(e)).sum(axis=0) * (1 + 1e-12)
    return np.nextafter(norm, np.inf), np.nextafter(lin, np.inf)


def _search(fun: Callable[[np.ndarray, bool], np.ndarray], lo: float, hi: float) -> float:
    """The minimiser of ``fun(x, certified)`` over [lo, hi]: searched on estimates
    (``certified=False``; 33 points, then five zooms of 17), then the certified value at the
    chosen x. Any x gives a valid bound, so the estimates affect tightness only."""
    x, _ = minimise_zoom(lambda v: fun(v, False), np.linspace(lo, hi, 33), points=17, rounds=5)
    return float(fun(np.array([x]), True)[0])


def epsilon(comp: Composition, delta: float) -> float:
    """The DRV bound at ``delta``, or basic composition's where that is smaller."""
    try:
        base = basic.epsilon(comp, delta)
    except NotApplicable:
        base = math.inf
    return min(_drv_epsilon(comp, delta, beat=base), base)


def delta(comp: Composition, eps: float) -> float:
    """The DRV δ at ``eps``, or basic composition's where that is smaller."""
    drv = _drv_delta(comp, eps)
    try:
        return min(drv, basic.delta(comp, eps))
    except NotApplicable:
        return drv


def _drv_floor(rep: np.ndarray, mult: np.ndarray, norm_f: float, lin_f: float, log_rem: float) -> float:
    """A value the DRV bound exceeds at every split, up to its rounding (relative < 1e-10): each
    Gaussian step's δ_i and the slack δ' are below the remaining δ, and the bound decreases in
    each of them — so it is the bound with all of them at the remaining δ."""
    g_norm, g_lin = _gauss_terms(rep, mult, np.array([log_rem]))
    norm = math.hypot(float(g_norm[0]), norm_f)
    return float(_drv(np.array(norm), np.array(float(g_lin[0]) + lin_f), np.array(log_rem)))


def _drv_epsilon(comp: Composition, delta: float, beat: float = math.inf) -> float:
    """The DRV bound at ``delta``, searched over the split of the remaining δ — or ``beat`` where
    :func:`_drv_floor` shows no split reaches below it (then the search, ~20 ms for one Gaussian
    mechanism, is skipped: ``min(DRV, beat)`` is ``beat`` either way, bit for bit)."""
    check_private(comp)
    if comp.is_empty:
        return 0.0
    norm_f, lin_f, delta_used, rep, mult = _parts(comp)
    remaining = math.nextafter(delta - delta_used, 0.0)
    if remaining <= 0:
        raise NotApplicable("the (epsilon, delta) events leave no delta for advanced composition's slack")
    log_rem = math.log(remaining)
    if rep.size == 0:
        if norm_f == 0 and lin_f == 0:
            return 0.0
        return float(_drv(np.array(norm_f), np.array(lin_f), np.array(log_rem - 1e-14 * (1 - log_rem))))
    n = math.fsum(mult.tolist())
    if math.isfinite(beat) and _drv_floor(rep, mult, norm_f, lin_f, log_rem) > beat * (1.0 + 1e-8):
        return beat

    def value(z: np.ndarray, certified: bool) -> np.ndarray:
        # slack fraction expit(z): log δ' = log rem − softplus(−z); per step log rem − softplus(z) − log n
        log_slack = log_rem - np.logaddexp(0.0, -z)
        log_step = log_rem - np.logaddexp(0.0, z) - math.log(n)
        log_slack = log_slack - 1e-14 * (1.0 + np.abs(log_slack))
        log_step = log_step - 1e-14 * (1.0 + np.abs(log_step))
        g_norm, g_lin = _gauss_terms(rep, mult, log_step, certified)
        with np.errstate(over="ignore", invalid="ignore"):
            top = np.maximum(g_norm, norm_f)
            safe = np.where(top > 0, top, 1.0)
            norm = top * np.sqrt((g_norm / safe) ** 2 + (norm_f / safe) ** 2) * (1 + 1e-15)
        return _drv(norm, g_lin + lin_f, log_slack)

    out = _search(value, -30.0, 30.0)
    if not math.isfinite(out):
        raise NotApplicable("the Dwork-Rothblum-Vadhan bound exceeds the largest double")
    return out


def _slack_needed(norm: np.ndarray, lin: np.ndarray, eps: float) -> np.ndarray:
    """The smallest δ' with sqrt(2 ln(1/δ'))·norm + lin ≤ ε, rounded up (inf if none)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        room = np.nextafter(eps / (1.0 + 1e-13) - lin, -np.inf)
        log_d = -(room * room) / (2.0 * np.nextafter(norm * norm, np.inf))
        log_d = np.where(norm == 0, -np.inf, log_d)
        margin = np.where(np.isfinite(log_d), 1e-13 * (1.0 + np.abs(log_d)), 0.0)
        out = np.nextafter(np.exp(log_d + margin), np.inf)  # ≥ 5e-324 where it underflows
        out = np.where(norm == 0, 0.0, out)
        return np.where(room > 0, out, np.inf)


def _drv_delta(comp: Composition, eps: float) -> float:
    check_private(comp)
    if comp.is_empty:
        return 0.0
    norm_f, lin_f, delta_used, rep, mult = _parts(comp)
    if rep.size == 0:
        if norm_f == 0 and lin_f == 0:
            return min(1.0, delta_used)
        slack = float(_slack_needed(np.array(norm_f), np.array(lin_f), eps))
        return min(1.0, sum_up([(1.0, delta_used), (1.0, slack)]))
    n = math.fsum(mult.tolist())
    top = math.log((1.0 - delta_used) / n) if delta_used < 1 else -math.inf
    if not math.isfinite(top):
        return 1.0

    def total(log_step: np.ndarray, certified: bool) -> np.ndarray:
        g_norm, g_lin = _gauss_terms(rep, mult, log_step, certified)
        with np.errstate(over="ignore", invalid="ignore"):
            big = np.maximum(g_norm, norm_f)
            safe = np.where(big > 0, big, 1.0)
            norm = big * np.sqrt((g_norm / safe) ** 2 + (norm_f / safe) ** 2) * (1 + 1e-15)
            slack = _slack_needed(norm, g_lin + lin_f, eps)
            return (delta_used + n * np.exp(log_step) + slack) * (1 + 1e-15)

    lo = max(math.log(_TINY) - math.log(n), -1e4)
    best = _search(total, lo, min(top, -1e-12))
    return min(1.0, math.nextafter(best, math.inf)) if math.isfinite(best) else 1.0
