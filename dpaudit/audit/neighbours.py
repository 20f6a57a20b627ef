"""Neighbouring input pairs for audits, with the neighbouring relation stated explicitly.

An audit distinguishes a mechanism's outputs on two inputs x (the *null*) and x′ (the
*alternative*). :class:`NeighbourPair` carries both inputs, the relation under which they are
neighbours (e.g. ``"replace: |x − x′| ≤ Δ"``) and a one-line description that goes into the
report. Constructors:

* :func:`identical` — x = x′ (a sanity check: every valid audit must give 0);
* :func:`scalar_pair` — 0 vs Δ for additive-noise mechanisms (Gaussian, Laplace);
* :func:`randomized_response_pair` — value 0 vs value 1;
* :func:`laplace_rnm_pair` — report-noisy-max over counts, ``(g, 0, …) vs (g − 1, 1, 0, …)``
  under *replace* (one round's reward vector (1, 0) becomes (0, 1): two counts move in opposite
  directions, seed 002 §5 item 1) or ``(g, 0, …) vs (g, 1, 0, …)`` under add/remove;
  :func:`laplace_rnm_adversarial` picks the gap g;
* :func:`gaussian_rnm_pair` / :func:`gaussian_rnm_adversarial` — heterogeneous Gaussian RNM:
  f′ = f + s_k e_k, with f searched among the worst-case pairs of :mod:`dpaudit.rnm_gaussian`;
* :func:`cascade_pair` — seed 001 local randomizer: click at position C vs C′ (``None`` = no click).

Adversarial choices are made from *exact* output distributions and the planned number of
trials only (never from audit samples), so they do not affect the validity of the bounds:
:func:`predicted_bound` plugs the expected counts into the same Clopper–Pearson family the
runner uses and the pair with the best predicted bound wins. The most extreme pair (largest
exact privacy loss) is often useless for sampling, because its distinguishing event has
probability ~1e-7; the predicted bound trades loss against detectability.

:meth:`NeighbourPair.bind` turns a mechanism with ``privacy_loss(output, x, x′)`` into the
one-argument white-box statistic that :class:`dpaudit.audit.statistics.PrivacyLoss` expects.

Example:
    >>> from dpaudit.audit.neighbours import laplace_rnm_pair, scalar_pair
    >>> p = laplace_rnm_pair(arms=2, gap=16)
    >>> p.x, p.x_prime, p.relation
    ((16.0, 0.0), (15.0, 1.0), 'replace')
    >>> scalar_pair(2.0).x_prime
    2.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats

__all__ = [
    "NeighbourPair",
    "PairLoss",
    "identical",
    "scalar_pair",
    "randomized_response_pair",
    "laplace_rnm_pair",
    "laplace_rnm_adversarial",
    "gaussian_rnm_pair",
    "gaussian_rnm_adversarial",
    "cascade_pair",
    "predicted_bound",
    "discrete_cut_counts",
]


@dataclass(frozen=True)
class NeighbourPair:
    """Two inputs of a mechanism and the relation that makes them neighbours.

    ``x``/``x_prime`` are plain Python values (floats, tuples of floats, ints or ``None``) so the
    pair is hashable, picklable and JSON-ready. ``exact_loss`` is the largest absolute privacy
    loss of the pair when it is known exactly (``inf`` for disjoint supports), else ``None``.
    """

    x: Any
    x_prime: Any
    relation: str
    description: str
    exact_loss: float | None = None

    def swapped(self) -> NeighbourPair:
        """The same pair with the roles of x and x′ exchanged."""
        return NeighbourPair(
            self.x_prime, self.x, self.relation, f"{self.description} (swapped)", self.exact_loss
        )

    def bind(self, mechanism: Any) -> PairLoss:
        """The white-box statistic ``o ↦ log p(o | x) − log p(o | x′)`` of ``mechanism``."""
        if not callable(getattr(mechanism, "privacy_loss", None)):
            raise ValueError(f"{type(mechanism).__name__} has no privacy_loss(output, x, x_prime)")
        return PairLoss(mechanism, self.x, self.x_prime)

    def to_dict(self) -> dict[str, Any]:
        return {
            "x": _jsonable(self.x),
            "x_prime": _jsonable(self.x_prime),
            "relation": self.relation,
            "description": self.description,
            "exact_loss": self.exact_loss,
        }


def _jsonable(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_jsonable(e) for e in v]
    return v


@dataclass(frozen=True)
class PairLoss:
    """``privacy_loss(outputs)`` of ``mechanism`` for the fixed pair (x, x′) (picklable)."""

    mechanism: Any
    x: Any
    x_prime: Any

    def privacy_loss(self, outputs: Any) -> np.ndarray:
        return np.asarray(self.mechanism.privacy_loss(outputs, _arg(self.x), _arg(self.x_prime)), dtype=float)


def _arg(v: Any) -> Any:
    return np.asarray(v, dtype=float) if isinstance(v, tuple) else v


def identical(x: Any, relation: str = "identical inputs") -> NeighbourPair:
    """x = x′: nothing can be distinguished, so every audit must report 0.

    >>> identical(0.0).exact_loss
    0.0
    """
    return NeighbourPair(x, x, relation, "identical inputs (null check)", 0.0)


def scalar_pair(sensitivity: float = 1.0, relation: str = "replace") -> NeighbourPair:
    """0 vs Δ: the worst case of every additive-noise mechanism with sensitivity Δ.

    >>> scalar_pair(0.5).description
    'f(x) = 0 vs f(x′) = 0.5 (|f(x) − f(x′)| = sensitivity)'
    """
    s = float(sensitivity)
    if not (s > 0 and math.isfinite(s)):
        raise ValueError(f"sensitivity must be in (0, inf), got {sensitivity!r}")
    return NeighbourPair(0.0, s, relation, f"f(x) = 0 vs f(x′) = {s:g} (|f(x) − f(x′)| = sensitivity)")


def randomized_response_pair(epsilon: float | None = None) -> NeighbourPair:
    """Respondent's value 0 vs 1 (replace); exact loss ε when ``epsilon`` is given."""
    return NeighbourPair(0, 1, "replace (one respondent's value)", "value 0 vs value 1", epsilon)


# ---------------------------------------------------------------------------------------
# predicted bounds from exact distributions (used to pick adversarial pairs)


def discrete_cut_counts(
    null_counts: np.ndarray, alt_counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """FP/FN of the cut family on a finite ordered support.

    ``null_counts[j]``/``alt_counts[j]`` count the samples at the j-th smallest support value.
    For every cut j (between values j and j + 1): orientation +1 ("x′ when s > v_j") and −1
    ("x′ when s < v_{j+1}"). Returns (orientations, cut index, FP, FN); with one support value
    a single trivial test (FP = 0, FN = all) keeps the family non-empty.

    >>> o, j, fp, fn = discrete_cut_counts(np.array([5, 1]), np.array([2, 4]))
    >>> o.tolist(), fp.tolist(), fn.tolist()
    ([1, -1], [1, 5], [2, 4])
    """
    c0 = np.asarray(null_counts, dtype=np.int64)
    c1 = np.asarray(alt_counts, dtype=np.int64)
    m = c0.size
    if m == 1:
        return np.array([1]), np.array([0]), np.array([0]), c1.copy()
    cum0, cum1 = np.cumsum(c0)[:-1], np.cumsum(c1)[:-1]  # counts at values <= v_j
    n0, n1 = int(c0.sum()), int(c1.sum())
    cuts = np.arange(m - 1)
    orient = np.concatenate([np.ones(m - 1, np.int64), -np.ones(m - 1, np.int64)])
    fp = np.concatenate([n0 - cum0, cum0])
    fn = np.concatenate([cum1, n1 - cum1])
    return orient, np.concatenate([cuts, cuts]), fp, fn


def _cp_upper(k: np.ndarray, n: int, alpha: float) -> np.ndarray:
    k = np.asarray(k, dtype=float)
    out = np.ones(k.shape)
    zero = k == 0
    mid = (k > 0) & (k < n)
    out[zero] = -math.expm1(math.log(alpha) / n)
    out[mid] = stats.beta.isf(alpha, k[mid] + 1.0, n - k[mid])
    return out


def predicted_bound(
    log_p: Sequence[float] | np.ndarray,
    log_q: Sequence[float] | np.ndarray,
    trials_per_side: int,
    *,
    confidence: float = 0.95,
    delta: float = 0.0,
    kind: Literal["epsilon", "mu"] = "epsilon",
) -> float:
    """The bound an audit of a discrete-output pair would report if every count equalled its
    expectation: the privacy-loss cut family with Bonferroni, as in the runner.

    >>> import math
    >>> b = predicted_bound([math.log(0.9), math.log(0.1)], [math.log(0.1), math.log(0.9)], 10**6)
    >>> 2.1 < b < math.log(81) / 2 + 0.05   # exact loss log 9 = 2.197
    True
    """
    from dpaudit.audit.bounds import epsilon_from_rates, mu_from_rates

    lp = np.asarray(log_p, dtype=float)
    lq = np.asarray(log_q, dtype=float)
    with np.errstate(invalid="ignore"):
        loss = lp - lq
    loss = np.where(np.isnan(loss), 0.0, loss)  # both impossible
    order = np.argsort(loss, kind="stable")
    vals, inv = np.unique(loss[order], return_inverse=True)
    n = int(trials_per_side)
    c0 = np.bincount(inv, weights=np.exp(lp[order]), minlength=vals.size) * n
    c1 = np.bincount(inv, weights=np.exp(lq[order]), minlength=vals.size) * n
    o, _, fp, fn = discrete_cut_counts(np.round(c0).astype(np.int64), np.round(c1).astype(np.int64))
    n0, n1 = int(np.round(c0).sum()), int(np.round(c1).sum())
    alpha = (1.0 - confidence) / (2.0 * o.size)
    p, q = _cp_upper(fp, n0, alpha), _cp_upper(fn, n1, alpha)
    if kind == "mu":
        return float(np.max(mu_from_rates(p, q)))
    return float(np.max(epsilon_from_rates(p, q, delta)))


# ---------------------------------------------------------------------------------------
# report-noisy-max


def laplace_rnm_pair(arms: int, gap: int, neighbouring: str = "replace") -> NeighbourPair:
    """Count vectors ``(g, 0, …, 0)`` vs ``(g − 1, 1, 0, …, 0)`` (replace: one round's reward
    vector (1, 0, …) is replaced by (0, 1, …); feasible in any epoch of length ≥ g), or
    ``(g, 0, …)`` vs ``(g, 1, 0, …)`` (add/remove of a round with reward vector (0, 1, …)).

    >>> laplace_rnm_pair(3, 4, "add-remove").x_prime
    (4.0, 1.0, 0.0)
    """
    k, g = int(arms), int(gap)
    if k < 2:
        raise ValueError(f"arms must be an integer >= 2, got {arms!r}")
    if g < 1:
        raise ValueError(f"gap must be an integer >= 1, got {gap!r}")
    x = [0.0] * k
    x[0] = float(g)
    xp = list(x)
    if neighbouring == "replace":
        xp[0], xp[1] = float(g - 1), 1.0
        desc = (
            f"counts ({g}, 0{', …' if k > 2 else ''}) vs ({g - 1}, 1{', …' if k > 2 else ''}): one round's "
            "reward vector (1, 0) replaced by (0, 1)"
        )
    elif neighbouring == "add-remove":
        xp[1] = 1.0
        desc = f"counts ({g}, 0{', …' if k > 2 else ''}) vs ({g}, 1{', …' if k > 2 else ''}): one round added"
    else:
        raise ValueError(f"neighbouring must be 'replace' or 'add-remove', got {neighbouring!r}")
    return NeighbourPair(tuple(x), tuple(xp), neighbouring, desc)


def laplace_rnm_adversarial(
    scale: float,
    arms: int,
    neighbouring: str = "replace",
    *,
    trials_per_side: int,
    epoch_length: int | None = None,
    max_gap: int = 64,
    confidence: float = 0.95,
    kind: Literal["epsilon", "mu"] = "epsilon",
    delta: float = 0.0,
) -> NeighbourPair:
    """The gap g ∈ [1, epoch_length or max_gap] whose pair (:func:`laplace_rnm_pair`) has the
    best predicted bound for ``trials_per_side`` samples; ``exact_loss`` is that pair's exact loss.

    >>> p = laplace_rnm_adversarial(1.0, 2, trials_per_side=10**5, epoch_length=16)
    >>> p.x, round(p.exact_loss, 3)
    ((5.0, 0.0), 1.664)
    """
    from mechanisms.report_noisy_max import LaplaceReportNoisyMax

    mech = LaplaceReportNoisyMax(
        scale, arms, neighbouring=neighbouring, monotone=neighbouring == "add-remove"
    )
    top = int(epoch_length) if epoch_length is not None else int(max_gap)
    if top < 1:
        raise ValueError(f"epoch_length must be an integer >= 1, got {epoch_length!r}")
    best: tuple[float, NeighbourPair] | None = None
    for g in range(1, top + 1):
        pair = laplace_rnm_pair(arms, g, neighbouring)
        lp, lq = mech.log_output_distribution(pair.x), mech.log_output_distribution(pair.x_prime)
        b = predicted_bound(lp, lq, trials_per_side, confidence=confidence, delta=delta, kind=kind)
        if best is None or b > best[0] + 1e-12:
            loss = float(np.max(np.abs(lp - lq)))
            best = (
                b,
                NeighbourPair(
                    pair.x,
                    pair.x_prime,
                    pair.relation,
                    pair.description + f" (gap chosen for {trials_per_side:,} trials/side)",
                    loss,
                ),
            )
    assert best is not None
    return best[1]


def gaussian_rnm_pair(
    values: Sequence[float], sensitivities: Sequence[float] | float, changed: int, direction: int = 1
) -> NeighbourPair:
    """f vs f′ = f + direction·s_k e_k (one query changes by its sensitivity).

    >>> gaussian_rnm_pair([0.0, 1.0], [0.5, 0.5], changed=0).x_prime
    (0.5, 1.0)
    """
    f = np.asarray(values, dtype=float).reshape(-1)
    s = np.broadcast_to(np.asarray(sensitivities, dtype=float), f.shape)
    k = int(changed)
    if not 0 <= k < f.size:
        raise ValueError(f"changed must be in [0, {f.size - 1}], got {changed!r}")
    fp = f.copy()
    fp[k] += (1 if direction >= 0 else -1) * s[k]
    return NeighbourPair(
        tuple(f.tolist()),
        tuple(fp.tolist()),
        f"replace: query {k} moves by s_{k} = {s[k]:g}",
        f"query values {tuple(np.round(f, 6).tolist())}, query {k} {'+' if direction >= 0 else '−'}{s[k]:g}",
    )


def _gaussian_pair_score(
    pair: NeighbourPair,
    sigmas: np.ndarray,
    n: int,
    confidence: float,
    delta: float,
    kind: Literal["epsilon", "mu"],
) -> tuple[float, float]:
    from dpaudit.rnm_gaussian import argmax_log_distribution

    lp = argmax_log_distribution(pair.x, sigmas)
    lq = argmax_log_distribution(pair.x_prime, sigmas)
    return (
        predicted_bound(lp, lq, n, confidence=confidence, delta=delta, kind=kind),
        float(np.max(np.abs(lp - lq))),
    )


def gaussian_rnm_adversarial(
    sensitivities: Sequence[float] | float,
    sigmas: Sequence[float],
    *,
    trials_per_side: int,
    values: Sequence[float] | None = None,
    confidence: float = 0.95,
    delta: float = 0.0,
    kind: Literal["epsilon", "mu"] = "epsilon",
    grid: int = 33,
) -> NeighbourPair:
    """The most distinguishable neighbour pair for heterogeneous Gaussian RNM.

    With ``values``: the best of f ± s_k e_k over k. Without: candidates are the worst-case pair
    of :func:`dpaudit.rnm_gaussian.worst_case_epsilon` at ``delta`` (if ``delta > 0``) and, for
    every distinct (s_k, σ_k), all other queries at a common gap t on a grid of ``grid`` points
    over ±8·(√(σ_k² + max σ_j²) + s_k). The winner has the best predicted bound.

    >>> p = gaussian_rnm_adversarial(0.5, [2 ** -0.5] * 2, trials_per_side=10**5, delta=0.01)
    >>> p.relation
    'replace: query 0 moves by s_0 = 0.5'
    """
    from dpaudit.rnm_gaussian import worst_case_epsilon

    sig = np.asarray(sigmas, dtype=float).reshape(-1)
    s = np.broadcast_to(np.asarray(sensitivities, dtype=float), sig.shape).astype(float)
    n = int(trials_per_side)
    cands: list[NeighbourPair] = []
    if values is not None:
        f = np.asarray(values, dtype=float).reshape(-1)
        if f.size != sig.size:
            raise ValueError(f"values must have {sig.size} entries (one per sigma), got {f.size}")
        cands = [gaussian_rnm_pair(f, s, k, d) for k in range(f.size) for d in (1, -1)]
    else:
        if delta > 0:
            wc = worst_case_epsilon(s, sig, delta, search="symmetric").pairs[0]
            cands.append(
                NeighbourPair(
                    tuple(wc.values.tolist()),
                    tuple(wc.values_prime.tolist()),
                    f"replace: query {wc.changed} moves by s_{wc.changed} = {s[wc.changed]:g}",
                    f"worst case of dpaudit.rnm_gaussian at delta={delta:g}",
                )
            )
        seen: set[tuple[float, float]] = set()
        for k in range(sig.size):
            if (s[k], sig[k]) in seen:
                continue
            seen.add((s[k], sig[k]))
            scale = math.sqrt(sig[k] ** 2 + float(np.max(np.delete(sig, k))) ** 2) + s[k]
            for t in np.linspace(-8.0, 8.0, grid) * scale:
                f = np.full(sig.size, float(t))
                f[k] = 0.0
                cands.append(gaussian_rnm_pair(f, s, k, 1))
    best: tuple[float, float, NeighbourPair] | None = None
    for c in cands:
        b, loss = _gaussian_pair_score(c, sig, n, confidence, delta, kind)
        if best is None or b > best[0] + 1e-12:
            best = (b, loss, c)
    assert best is not None
    c = best[2]
    return NeighbourPair(
        c.x, c.x_prime, c.relation, c.description + f" (most distinguishable for {n:,} trials/side)", best[1]
    )


# ---------------------------------------------------------------------------------------
# seed 001 local randomizer


def cascade_pair(
    click: int | None = 1,
    click_prime: int | None = None,
    num_positions: int | None = None,
    report: str = "observed",
) -> NeighbourPair:
    """One user's click at position ``click`` vs ``click_prime`` (``None`` = no click).

    Under the paper's ``"observed"`` reporting the user sends min(C, K) values, so the two
    outputs have different lengths whenever min(C, K) ≠ min(C′, K): disjoint supports, exact
    loss ``inf``.

    >>> cascade_pair(1, None, num_positions=4).exact_loss
    inf
    """

    def length(c: int | None) -> int | None:
        if num_positions is None:
            return None
        return num_positions if (c is None or c > num_positions or report != "observed") else c

    la, lb = length(click), length(click_prime)
    loss = math.inf if (la is not None and lb is not None and la != lb) else None
    name = {None: "no click"}
    return NeighbourPair(
        click,
        click_prime,
        "replace (one user's click feedback)",
        f"click at {name.get(click, f'position {click}')} vs "
        f"{name.get(click_prime, f'position {click_prime}')}",
        loss,
    )
