"""Rényi differential privacy (Mironov 2017) with a continuous search over orders.

Per-leaf RDP curves ρ(α) (Rényi divergence of order α between the output distributions on two
neighbours), all computed as log ρ — no under- or overflow, and no cancellation near α = 1 or
for tiny ε, where the textbook forms subtract two nearly equal logarithms:

* Gaussian (μ = s/σ): α μ²/2 (Mironov 2017, Prop. 7); a Gaussian sequence: α Σμ_i²/2;
  heterogeneous-Gaussian report-noisy-max: α μ²/2 with μ = max_i s_i/σ_i (post-processing).
* k-ary randomized response with p = e^ε/(e^ε + k − 1), q = 1/(e^ε + k − 1) (exact: the pair of
  inputs is unique up to symmetry): ρ = log(1 + E)/(α − 1) with
  E = p^α q^{1−α} + q^α p^{1−α} + (k − 2)q − 1 = 4 e^{ε/2} sinh(αε/2) sinh((α−1)ε/2)/(e^ε + k − 1),
  a product of positive factors (from cosh(x + h) − cosh(x) = 2 sinh(x + h/2) sinh(h/2)),
  whose logarithm is summed with its large terms cancelled analytically.
* any other pure ε-DP release: the RDP of binary randomized response (k = 2) with the same ε,
  which dominates every ε-DP mechanism (its trade-off function is the lowest one allowed;
  Dong, Roth & Su 2022, Prop. 2.5, and the data-processing inequality of Rényi divergence).
* Laplace with ε = s/b (Mironov 2017, Table II): ρ = log(1 + E)/(α − 1) with
  E = [α(e^{(α−1)ε} − 1) + (α − 1)(e^{−αε} − 1)]/(2α − 1); for αε ≤ ½ its Taylor series
  E = α(α−1) Σ_{n≥2} s_{n−1} εⁿ/n!, s_m = ((α−1)^m − (−α)^m)/(2α − 1), whose terms shrink by
  ≤ αε/n (no cancellation), otherwise the two terms directly (they differ by ≥ 21 %).
* Poisson-subsampled Gaussian with sampling probability q and noise multiplier σ = 1/μ (add/remove
  relation): ρ(α) = log A_α/(α − 1) (Mironov, Talwar & Zhang 2019), certified by
  :mod:`dpaudit.accounting.sampled_rdp` — the exact finite binomial sum at integer orders up to
  2¹⁵ and the signed two-sided series, cut before a negative term, at fractional orders — once per
  distinct (q, σ) (0.05–0.15 s, cached); between those orders the lower convex hull of the
  certified values (log A_α is convex in α and log A_1 = 0, so every chord between upper bounds
  is an upper bound, also on (1, 1.001]). Everywhere the curve is capped by the Gaussian's αμ²/2
  (Rényi divergence is jointly quasi-convex, van Erven & Harremoës 2014, Thm 13, so mixing with
  the identical no-sample branch never increases it); the cap alone is used only above α = 2¹⁵.
* a Gaussian on a batch sampled without replacement (replace-one; Wang, Balle & Kasiviswanathan
  2019, Thm 9 at integer orders, the convex hull between them, the Gaussian's αμ²/2 as a cap);
* a (ξ, ρ)-zCDP release: ξ + ρα (Bun & Steinke 2016).
* a Gaussian on a batch drawn with replacement (replace-one): joint convexity over the number of
  copies of the record (:mod:`dpaudit.accounting.with_replacement`; sound, loose).
* a mixture of Gaussians and a Gaussian on a truncated Poisson sample (add/remove): joint
  convexity over parts that are Poisson-subsampled Gaussians (:mod:`dpaudit.accounting.mixtures`).
* repeat-and-select (Papernot & Steinke 2022, Thms 2 and 6) over the inner event's curve
  (:mod:`dpaudit.accounting.repeat_select`).
* every pure curve is capped at ε (Rényi divergences of ε-DP mechanisms are at most ε);
  (ε, δ) releases with δ > 0 have no RDP curve: not applicable.

Conversion to (ε, δ): Balle et al. 2020, Thm 21 (= Canonne, Kamath & Steinke 2020, Prop. 12),
ε = ρ(α) + log((α−1)/α) − (log δ + log α)/(α − 1), and for δ(ε) its inverse
log δ = (α−1)(ρ − ε + log(1 − 1/α)) − log α together with the KL bound δ ≤ δ(0) = TV ≤
sqrt(1 − e^{−KL}) (Bretagnolle & Huber 1979) with KL ≤ ρ(1 + 1e-9) (Rényi divergence increases
with the order; van Erven & Harremoës 2014, Thm 3). Orders are searched on a fine logarithmic
grid α − 1 ∈ [1e-5, 1e5] (2,000 points) and refined by zooming in on the best one; every α gives a
valid bound, so the search affects only tightness, never soundness.

Soundness and domain. log ρ carries a relative margin of 2e-13, ρ is rounded up, and both
conversions add a margin of 1e-14 times the magnitude of their terms. Every finite input gets
an answer; ε is not applicable only when the RDP curve exceeds the largest double. Tight (the
optimal order inside the grid) when the optimum lies in α − 1 ∈ (1e-5, 1e5); outside it (a
single pure step at tiny δ, or a total ρ far below 1e-5) the bound is valid but loose.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from dpaudit.accounting.binning import binned_up
from dpaudit.accounting.composition import (
    Composition,
    NotApplicable,
    PureGroup,
    check_private,
    leaf_mu,
    normal_form,
    sampled_noise_multiplier,
)
from dpaudit.events import GaussianEvent, PoissonSampledEvent, PrivacyEvent, loaded_ml_events
from dpaudit.numerics import div_up, minimise_zoom, sum_up_arrays

if TYPE_CHECKING:
    from dpaudit.events_ml import (
        MixtureOfGaussiansEvent,
        SampledWithoutReplacementEvent,
        TruncatedSubsampledGaussianEvent,
    )

NAME = "rdp"

ORDERS = 1.0 + np.logspace(-5, 5, 2000)
KL_ORDER = 1.0 + 1e-9
_LOG2 = math.log(2.0)
_LOG4 = math.log(4.0)
_MARGIN = 2e-13  # relative margin on ρ (absolute on log ρ)


def _log1m_exp2(log_y: np.ndarray) -> np.ndarray:
    """r(y) = log(1 − e^{−2y}) from log y (y > 0), an upper bound for every y from 5e-324 to
    inf (for y < 1e-150 it is log(2y) ≥ r(y), since 1 − e^{−x} ≤ x)."""
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        y = np.exp(log_y)
        exact = np.log(-np.expm1(-2.0 * np.maximum(y, 1e-150)))
    return np.where(y < 1e-150, _LOG2 + log_y, exact)


def _log_log1p_exp(x: np.ndarray) -> np.ndarray:
    """log(log(1 + e^x)), an upper bound (exact to 1e-16 relative) for every x."""
    with np.errstate(over="ignore", divide="ignore"):
        return np.where(x < -36.0, x, np.log(np.logaddexp(0.0, np.maximum(x, -36.0))))


def log_randomized_response_rdp(eps: float | np.ndarray, k: int, alphas: np.ndarray) -> np.ndarray:
    """log ρ(α) of k-ary randomized response at ε (capped at log ε); ``eps`` may be an array
    broadcasting against ``alphas`` (e.g. a column of per-leaf ε).

    log E = log 4 + ε/2 + log sinh(αε/2) + log sinh((α−1)ε/2) − log(e^ε + k − 1); writing
    log sinh(y) = y − log 2 + log(1 − e^{−2y}) and log(e^ε + k − 1) = ε + log(1 + (k−1)e^{−ε}),
    the large terms cancel exactly and log E = (α−1)ε + r(αε/2) + r((α−1)ε/2) −
    log(1 + (k−1)e^{−ε}) with r(y) = log(1 − e^{−2y}) ≤ 0 — accurate to a few ulps of (α−1)ε
    even at ε = 1e300 (summing the four large terms lost 10 digits there).
    """
    a = np.asarray(alphas, dtype=float)
    e = np.asarray(eps, dtype=float)
    ok = (e > 0) & np.isfinite(e)
    es = np.where(ok, e, 1.0)
    le = np.log(es)
    with np.errstate(over="ignore"):
        x = ((a - 1.0) * es + _log1m_exp2(np.log(a) + le - _LOG2)
             + _log1m_exp2(np.log(a - 1.0) + le - _LOG2)
             - np.logaddexp(0.0, math.log(k - 1) - es))
    out = np.minimum(_log_log1p_exp(x) - np.log(a - 1.0), le)
    return np.where(ok, out, np.where(e == 0, -np.inf, np.inf))


def _laplace_series(eps: np.ndarray, a: np.ndarray) -> np.ndarray:
    """log E for αε ≤ ½: log[α(α−1)ε²/2] + log(1 + Σ_{n≥3} s_{n−1} ε^{n−2}·2/n!)."""
    r = (a - 1.0) / a
    lr = np.log1p(-1.0 / a)
    x = a * eps  # ≤ ½
    bracket = np.ones_like(x)
    for n in range(3, 25):
        m = n - 1
        if m % 2:
            s_hat = a * (1.0 + r**m) / (2.0 * a - 1.0)
        else:
            s_hat = -a * (-np.expm1(m * lr)) / (2.0 * a - 1.0)
        bracket = bracket + s_hat * x ** (n - 2) * 2.0 / math.factorial(n)
    return np.log(a) + np.log(a - 1.0) + 2.0 * np.log(eps) - _LOG2 + np.log(bracket)


def log_laplace_rdp(eps: float | np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """log ρ(α) of the Laplace mechanism with ε = sensitivity/scale (capped at log ε); ``eps``
    may be an array broadcasting against ``alphas``."""
    a = np.asarray(alphas, dtype=float)
    e = np.asarray(eps, dtype=float)
    ok = (e > 0) & np.isfinite(e)
    es = np.where(ok, e, 1.0)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        small = a * es <= 0.5
        series = _laplace_series(es, np.where(small, a, 1.0 + 1e-5))
        big_a = (a - 1.0) * es
        direct = np.log(a * np.expm1(np.minimum(big_a, 700.0)) + (a - 1.0) * np.expm1(-a * es)) - np.log(
            2.0 * a - 1.0)
        huge = np.log(a) + big_a - np.log(2.0 * a - 1.0)  # drops a negative log1p term: an upper bound
        x = np.where(small, series, np.where(big_a > 700.0, huge, direct))
    out = np.minimum(_log_log1p_exp(x) - np.log(a - 1.0), np.log(es))
    return np.where(ok, out, np.where(e == 0, -np.inf, np.inf))


MAX_BINS = 256  # per family; see :func:`log_rdp_curve`
EXACT_TOP = 64
_CHUNK = 2**18  # elements per vectorised block (leaves × orders)


def _binned(comp: Composition) -> list[tuple[PureGroup, np.ndarray, np.ndarray]]:
    """(family, ε bins, multiplicities) of every pure family of ``comp`` with ε > 0, binned once
    per composition (the order search evaluates the curve many times)."""
    out = comp.memo.get(NAME)
    if out is None:
        out = []
        for g in comp.steps().pure:
            eps, counts = binned_up(g.eps, g.counts, MAX_BINS, EXACT_TOP)
            keep = eps > 0
            out.append((g, eps[keep], counts[keep]))
        comp.memo[NAME] = out
    return out


def _family_curve(group: PureGroup, eps: np.ndarray, counts: np.ndarray, a: np.ndarray) -> np.ndarray:
    """log Σ_leaf count·ρ_leaf(α) over one family's bins, vectorised over leaves in blocks."""
    if eps.size == 0:
        return np.full(a.shape, -np.inf)
    rows = max(1, _CHUNK // max(a.size, 1))
    parts = []
    for i in range(0, eps.size, rows):
        col = eps[i:i + rows, None]
        if group.family == "laplace":
            lr = log_laplace_rdp(col, a[None, :])
        else:
            lr = log_randomized_response_rdp(col, group.k if group.family == "rr" else 2, a[None, :])
        parts.append(_logsumexp_rows(lr + np.log(counts[i:i + rows, None])))
    return _logsumexp_rows(np.stack(parts))


def _logsumexp_rows(stack: np.ndarray) -> np.ndarray:
    """log Σ_rows e^{stack}, with ±inf handled (an inf row gives inf, all −inf gives −inf)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        top = stack.max(axis=0)
        safe = np.where(np.isfinite(top), top, 0.0)
        out = safe + np.log(np.exp(stack - safe).sum(axis=0))
    return np.where(np.isfinite(top), out, top)


def log_sampled_gaussian_rdp(leaf: PoissonSampledEvent, alphas: np.ndarray) -> np.ndarray:
    """log ρ(α) of a Poisson-subsampled Gaussian (see the module docstring), an upper bound: the
    lower convex hull of the certified log A_α on the grid, capped by the Gaussian's αμ²/2."""
    a = np.asarray(alphas, dtype=float)
    mu = leaf_mu(leaf.event)
    with np.errstate(over="ignore", divide="ignore"):
        log_cap = np.log(a) + 2.0 * math.log(mu) - _LOG2 if math.isfinite(mu) else np.full(a.shape, np.inf)
    q, nm = leaf.sampling_probability, sampled_noise_multiplier(leaf)
    if q == 1.0 or not 1e-150 < nm < math.inf:  # σ² would underflow: the cap alone (valid everywhere)
        return log_cap
    from dpaudit.accounting.sampled_rdp import sampled_gaussian_log_a

    xs, la = sampled_gaussian_log_a(q, nm)
    if xs.size < 2:
        return log_cap
    x = a - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        chord = np.interp(x, xs, la, right=np.inf) * (1.0 + 1e-12)
        log_chord = np.log(chord) - np.log(x)
    return np.minimum(log_chord, log_cap)


def log_without_replacement_rdp(leaf: SampledWithoutReplacementEvent, alphas: np.ndarray) -> np.ndarray:
    """log ρ(α) of a Gaussian on a batch sampled without replacement (replace-one): the hull of
    :func:`~dpaudit.accounting.sampled_rdp.without_replacement_log_a` over (α − 1), capped by the
    Gaussian's αμ²/2."""
    a = np.asarray(alphas, dtype=float)
    inner = leaf.event
    assert isinstance(inner, GaussianEvent)
    mu = div_up(inner.sensitivity, inner.sigma)
    with np.errstate(over="ignore", divide="ignore"):
        log_cap = np.log(a) + 2.0 * math.log(mu) - _LOG2 if math.isfinite(mu) else np.full(a.shape, np.inf)
    if leaf.sample_size == leaf.dataset_size or not 0 < mu < 1e150:
        return log_cap
    from dpaudit.accounting.sampled_rdp import without_replacement_log_a

    xs, la = without_replacement_log_a(div_up(float(leaf.sample_size), float(leaf.dataset_size)), mu)
    x = a - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        log_chord = np.log(np.interp(x, xs, la, right=np.inf) * (1.0 + 1e-12)) - np.log(x)
    return np.minimum(log_chord, log_cap)


def log_rdp_curve(comp: Composition, alphas: np.ndarray) -> np.ndarray:
    """log Σ over leaves of count·ρ_leaf(α), vectorised over ``alphas`` and over the leaves of
    each family, rounded up (−inf if 0). A family with more than 128 distinct ε is charged in at
    most 257 bins, each at its largest ε (:func:`~dpaudit.accounting.binning.binned_up`: the
    64 largest exact, geometric bins below), which can only increase ρ (RDP is a divergence,
    monotone under the family's order), so the cost is bounded whatever the number of leaves."""
    check_private(comp)
    a = np.asarray(alphas, dtype=float)
    st = comp.steps()
    if st.approx_eps.size:
        raise NotApplicable("an (epsilon, delta) event with delta > 0 has no RDP curve")
    terms = []
    for leaf, count in st.other:
        curve = _other_leaf_curve(leaf, a)
        if curve is not None:
            terms.append(curve + math.log(count))
    m = comp.gaussian_mu()
    if m > 0:
        terms.append(np.log(a) + 2.0 * math.log(m) - _LOG2 if math.isfinite(m) else np.full(a.shape, np.inf))
    terms.extend(_family_curve(g, eps, counts, a) for g, eps, counts in _binned(comp))
    if not terms:
        return np.full(a.shape, -np.inf)
    return _logsumexp_rows(np.stack(terms)) + _MARGIN


def _other_leaf_curve(leaf: PrivacyEvent, a: np.ndarray) -> np.ndarray | None:
    """log ρ(α) of one leaf outside the Gaussian and pure families (None: a zCDP release of
    ρ = ξ = 0, no term); the curves of :mod:`dpaudit.events_ml`'s events load their modules
    only when such an event exists."""
    if isinstance(leaf, PoissonSampledEvent):
        return log_sampled_gaussian_rdp(leaf, a)
    ml = loaded_ml_events()  # None: no event of dpaudit.events_ml exists
    if ml is not None and isinstance(leaf, ml.SampledWithoutReplacementEvent):
        return log_without_replacement_rdp(leaf, a)
    if ml is not None and isinstance(leaf, ml.SampledWithReplacementEvent):
        from dpaudit.accounting.with_replacement import log_with_replacement_rdp

        return log_with_replacement_rdp(leaf, a)
    if ml is not None and isinstance(leaf, (ml.MixtureOfGaussiansEvent, ml.TruncatedSubsampledGaussianEvent)):
        return _log_mixture_curve(leaf, a)
    if ml is not None and isinstance(leaf, ml.RepeatAndSelectEvent):
        from dpaudit.accounting.repeat_select import repeat_select_rdp

        with np.errstate(divide="ignore"):
            return np.log(repeat_select_rdp(leaf, a, ORDERS, _event_rdp(leaf.event)))
    if ml is not None and isinstance(leaf, ml.ZCdpEvent):
        if leaf.rho > 0 or leaf.xi > 0:
            with np.errstate(divide="ignore"):
                return np.log(leaf.xi + leaf.rho * a) + 1e-15
        return None
    raise NotApplicable(f"no RDP curve is known for {type(leaf).__name__}")


def _log_mixture_curve(leaf: MixtureOfGaussiansEvent | TruncatedSubsampledGaussianEvent,
                       a: np.ndarray) -> np.ndarray:
    """log ρ(α) of a mixture of Poisson-subsampled Gaussians (a mixture of Gaussians, a truncated
    Poisson sample): joint convexity over its parts (:mod:`dpaudit.accounting.mixtures`), each
    part's curve :func:`log_sampled_gaussian_rdp`."""
    from dpaudit.accounting.mixtures import log_rdp_of_parts, mixture_parts

    parts = mixture_parts(leaf)
    return log_rdp_of_parts([w for w, _ in parts], [log_sampled_gaussian_rdp(e, a) for _, e in parts], a)


def _event_rdp(event: PrivacyEvent) -> Callable[[np.ndarray], np.ndarray]:
    """The RDP curve of a whole event (rounded up): the largest over its parallel alternatives
    (each neighbouring pair of data units sees one of them)."""
    comps = normal_form(event)

    def curve(alphas: np.ndarray) -> np.ndarray:
        out = np.zeros(np.shape(alphas))
        for comp in comps:
            out = np.maximum(out, rdp_curve(comp, alphas))
        return out

    return curve


def rdp_curve(comp: Composition, alphas: np.ndarray) -> np.ndarray:
    """Σ over leaves of count·ρ_leaf(α), rounded up (≥ 5e-324 where it is positive)."""
    lr = log_rdp_curve(comp, alphas)
    with np.errstate(over="ignore", under="ignore"):
        return np.where(np.isneginf(lr), 0.0, np.nextafter(np.exp(lr), np.inf))


def randomized_response_rdp(eps: float, k: int, alphas: np.ndarray) -> np.ndarray:
    """ρ(α) of k-ary randomized response (rounded up)."""
    with np.errstate(over="ignore", under="ignore"):
        return np.nextafter(np.exp(log_randomized_response_rdp(eps, k, alphas) + _MARGIN), np.inf)


def _eps_at(comp: Composition, alphas: np.ndarray, log_delta: float) -> np.ndarray:
    """Balle et al. 2020, Thm 21 at each order, with a margin for its own rounding."""
    a = np.asarray(alphas, dtype=float)
    rho = rdp_curve(comp, a)
    t2 = np.log1p(-1.0 / a)
    t3 = -(log_delta + np.log(a)) / (a - 1.0)
    with np.errstate(invalid="ignore", over="ignore"):
        return rho + t2 + t3 + 1e-14 * (rho + np.abs(t2) + np.abs(t3))


def _minimise(fun: Callable[[np.ndarray], np.ndarray], grid: np.ndarray) -> tuple[float, float]:
    """The best order on ``grid`` refined by zooming (:func:`dpaudit.numerics.minimise_zoom`); the
    value is the certified one at the returned order."""
    return minimise_zoom(fun, grid)


def epsilon_and_order(comp: Composition, delta: float) -> tuple[float, float]:
    """(ε, the optimal order α) for the composition at δ."""
    check_private(comp)
    if comp.is_empty:
        return 0.0, math.inf
    log_delta = math.log(delta)
    alpha, eps = _minimise(lambda a: _eps_at(comp, a, log_delta), ORDERS)
    if math.isnan(eps):
        raise NotApplicable("numerical failure: the RDP conversion gave NaN")
    if math.isinf(eps):
        raise NotApplicable("the RDP curve exceeds the largest double at every order")
    return max(0.0, eps), alpha


def epsilon(comp: Composition, delta: float) -> float:
    return epsilon_and_order(comp, delta)[0]


def _pure_total(comp: Composition) -> float | None:
    """Σ count·ε over the leaves (rounded up) if they are all pure, else None."""
    st = comp.steps()
    if comp.gaussian_mu() > 0 or st.approx_eps.size or st.other:
        return None
    eps, counts = st.pure_arrays()
    return sum_up_arrays(counts, eps)


def delta(comp: Composition, eps: float) -> float:
    check_private(comp)
    if comp.is_empty:
        return 0.0
    log_rdp_curve(comp, ORDERS[:1])  # raises NotApplicable for unsupported leaves
    pure = _pure_total(comp)
    if pure is not None and pure <= eps:
        return 0.0  # (Σε_i, 0)-DP by basic composition, which RDP's α → ∞ limit reproduces

    def log_delta(a: np.ndarray) -> np.ndarray:
        rho = rdp_curve(comp, a)
        t = np.log1p(-1.0 / a)
        with np.errstate(invalid="ignore", over="ignore"):
            conv = (a - 1.0) * (rho - eps + t) - np.log(a)
            err = 1e-14 * ((a - 1.0) * (rho + eps + np.abs(t)) + np.log(a)) + 1e-15
            return conv + err

    _, best = _minimise(log_delta, ORDERS)
    lr_kl = float(log_rdp_curve(comp, np.array([KL_ORDER]))[0])
    rho_kl = math.exp(lr_kl) if lr_kl < 700 else math.inf
    kl = 0.5 * (lr_kl if rho_kl < 1e-5 else math.log(-math.expm1(-rho_kl))) + 1e-14
    out = min(best, kl)
    if math.isnan(out):
        raise NotApplicable("numerical failure: the RDP conversion gave NaN")
    with np.errstate(under="ignore", over="ignore"):
        value = float(np.nextafter(np.exp(out), np.inf))
    return min(1.0, value)
