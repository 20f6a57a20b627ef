"""Neighbour pairs of specific mechanisms, for audits (:class:`dpaudit.audit.NeighbourPair`).

* :func:`randomized_response_pair` — value 0 vs value 1;
* :func:`laplace_rnm_pair` — report-noisy-max over counts, ``(g, 0, …) vs (g − 1, 1, 0, …)``
  under *replace* (one round's reward vector (1, 0) becomes (0, 1): two counts move in opposite
  directions, so Lap(1/ε) report-noisy-max is 2ε-DP, not ε-DP) or ``(g, 0, …) vs (g, 1, 0, …)``
  under add/remove; :func:`laplace_rnm_adversarial` picks the gap g;
* :func:`gaussian_rnm_pair` / :func:`gaussian_rnm_adversarial` — heterogeneous Gaussian RNM:
  f′ = f + s_k e_k, with f searched among the worst-case pairs of :mod:`dpaudit.analyses.rnm_gaussian`;
* :func:`cascade_pair` — the local randomizer of Wang et al. (2021): click at position C vs C′
  (``None`` = no click).

Adversarial pairs are chosen from exact output distributions and the planned number of trials
only (:func:`dpaudit.audit.neighbours.predicted_bound`), never from audit samples.

Example:
    >>> p = laplace_rnm_pair(arms=2, gap=16)
    >>> p.x, p.x_prime, p.relation
    ((16.0, 0.0), (15.0, 1.0), 'replace')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

from dpaudit.analyses.gaussian_argmax import argmax_log_distribution
from dpaudit.analyses.rnm_gaussian import worst_case_epsilon
from dpaudit.audit.neighbours import NeighbourPair, predicted_bound
from dpaudit.validation import check_integer
from mechanisms.base import check_neighbouring
from mechanisms.report_noisy_max import LaplaceReportNoisyMax

__all__ = [
    "randomized_response_pair",
    "laplace_rnm_pair",
    "laplace_rnm_adversarial",
    "gaussian_rnm_pair",
    "gaussian_rnm_adversarial",
    "cascade_pair",
]


def randomized_response_pair(epsilon: float | None = None) -> NeighbourPair:
    """Respondent's value 0 vs 1 (replace); exact loss ε when ``epsilon`` is given."""
    return NeighbourPair(0, 1, "replace (one respondent's value)", "value 0 vs value 1", epsilon)




# ---------------------------------------------------------------------------------------
# report-noisy-max


def laplace_rnm_pair(
    arms: int, gap: int, neighbouring: str = "replace", *, arm: int = 1, leader: int = 0
) -> NeighbourPair:
    """Count vectors ``(g, 0, …, 0)`` vs ``(g − 1, 1, 0, …, 0)`` (replace: one round's reward
    vector (1, 0, …) is replaced by (0, 1, …); feasible in any epoch of length ≥ g), or
    ``(g, 0, …)`` vs ``(g, 1, 0, …)`` (add/remove of a round with reward vector (0, 1, …)).
    ``leader`` (default 0) holds the count g, ``arm`` (default 1) is the one that gains.

    >>> laplace_rnm_pair(3, 4, "add-remove").x_prime
    (4.0, 1.0, 0.0)
    >>> laplace_rnm_pair(3, 4, arm=2).x_prime
    (3.0, 0.0, 1.0)
    """
    k, g = check_integer("arms", arms, 2), check_integer("gap", gap)
    j, lead = check_integer("arm", arm, 0), check_integer("leader", leader, 0)
    if j >= k or lead >= k or j == lead:
        raise ValueError(f"arm and leader must be different arms in [0, {k - 1}], got {arm!r} and {leader!r}")
    x = [0.0] * k
    x[lead] = float(g)
    xp = list(x)
    if neighbouring == "replace":
        xp[lead], xp[j] = float(g - 1), 1.0
        desc = (
            f"counts ({g}, 0{', …' if k > 2 else ''}) vs ({g - 1}, 1{', …' if k > 2 else ''}): one round's "
            "reward vector (1, 0) replaced by (0, 1)"
        )
    elif neighbouring == "add-remove":
        xp[j] = 1.0
        desc = f"counts ({g}, 0{', …' if k > 2 else ''}) vs ({g}, 1{', …' if k > 2 else ''}): one round added"
    else:
        raise ValueError(f"neighbouring must be 'replace' or 'add-remove', got {neighbouring!r}")
    if (j, lead) != (1, 0):
        fmt = lambda v: "(" + ", ".join(f"{c:g}" for c in v) + ")"  # noqa: E731
        desc = f"counts {fmt(x)} vs {fmt(xp)} (arm {lead} leads, arm {j} gains)"
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
    tolerance: float = 0.025,
) -> NeighbourPair:
    """The smallest gap g ∈ [1, epoch_length or max_gap] whose pair (:func:`laplace_rnm_pair`)
    has a predicted bound for ``trials_per_side`` samples within ``tolerance`` (relative) of the
    best gap's; ``exact_loss`` is that pair's exact loss. The correct mechanism's bound is flat
    near its best gap, but the smaller gap's distinguishing output (the trailing arm winning) is
    more frequent, so a bug that makes it rarer is seen sooner: 3-arm RNM with one arm's noise
    at half scale is caught at 19,117 trials (g = 3) instead of 33,438 (g = 4, the best gap
    from 15,000 trials on, 1.3–2.5 % above g = 3 up to 29,000 trials).

    >>> p = laplace_rnm_adversarial(1.0, 2, trials_per_side=10**5, epoch_length=16)
    >>> p.x, round(p.exact_loss, 3)     # g = 5 is best, g = 4 within 2.33 %
    ((4.0, 0.0), 1.595)
    >>> laplace_rnm_adversarial(1.0, 3, trials_per_side=13_474, epoch_length=16).x[0]
    3.0
    """
    mech = LaplaceReportNoisyMax(
        scale, arms, neighbouring=check_neighbouring(neighbouring), monotone=neighbouring == "add-remove"
    )
    top = check_integer("epoch_length", epoch_length) if epoch_length is not None else check_integer(
        "max_gap", max_gap
    )
    scored = []
    for g in range(1, top + 1):
        pair = laplace_rnm_pair(arms, g, neighbouring)
        lp, lq = mech.log_output_distribution(pair.x), mech.log_output_distribution(pair.x_prime)
        b = predicted_bound(lp, lq, trials_per_side, confidence=confidence, delta=delta, kind=kind)
        scored.append((b, pair, lp, lq))
    top_b = max(b for b, *_ in scored)
    best: tuple[float, NeighbourPair] | None = None
    for b, pair, lp, lq in scored:
        if best is None and b >= (1.0 - tolerance) * top_b:
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
    values: Sequence[float] | np.ndarray,
    sensitivities: Sequence[float] | np.ndarray | float,
    changed: int,
    direction: int = 1,
) -> NeighbourPair:
    """f vs f′ = f + direction·s_k e_k (one query changes by its sensitivity).

    >>> gaussian_rnm_pair([0.0, 1.0], [0.5, 0.5], changed=0).x_prime
    (0.5, 1.0)
    """
    f = np.asarray(values, dtype=float).reshape(-1)
    s = np.broadcast_to(np.asarray(sensitivities, dtype=float), f.shape)
    k = check_integer("changed", changed, 0)
    if k >= f.size:
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
    changed: int | None = None,
) -> NeighbourPair:
    """The most distinguishable neighbour pair for heterogeneous Gaussian RNM.

    With ``values``: the best of f ± s_k e_k over k. Without: candidates are the worst-case pair
    of :func:`dpaudit.analyses.rnm_gaussian.worst_case_epsilon` at ``delta`` (if ``delta > 0``) and, for
    every distinct (s_k, σ_k), all other queries at a common gap t on a grid of ``grid`` points
    over ±8·(√(σ_k² + max σ_j²) + s_k). The winner has the best predicted bound. ``changed``
    restricts the candidates to pairs that change query ``changed`` (one design per query).

    >>> p = gaussian_rnm_adversarial(0.5, [2 ** -0.5] * 2, trials_per_side=10**5, delta=0.01)
    >>> p.relation
    'replace: query 0 moves by s_0 = 0.5'
    """
    sig = np.asarray(sigmas, dtype=float).reshape(-1)
    s = np.broadcast_to(np.asarray(sensitivities, dtype=float), sig.shape).astype(float)
    n = int(trials_per_side)
    cands: list[NeighbourPair] = []
    if values is not None:
        f = np.asarray(values, dtype=float).reshape(-1)
        if f.size != sig.size:
            raise ValueError(f"values must have {sig.size} entries (one per sigma), got {f.size}")
        cands = [gaussian_rnm_pair(f, s, k, d) for k in range(f.size) for d in (1, -1)
                 if changed is None or k == changed]  # fmt: skip
    else:
        if delta > 0 and changed is None:
            wc = worst_case_epsilon(s, sig, delta, search="symmetric").pairs[0]
            cands.append(
                NeighbourPair(
                    tuple(wc.values.tolist()),
                    tuple(wc.values_prime.tolist()),
                    f"replace: query {wc.changed} moves by s_{wc.changed} = {s[wc.changed]:g}",
                    f"worst case of dpaudit.analyses.rnm_gaussian at delta={delta:g}",
                )
            )
        seen: set[tuple[float, float]] = set()
        for k in range(sig.size) if changed is None else [changed]:
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
# the local randomizer of Wang et al. (2021), Algorithms 2–3


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
    name: dict[int | None, str] = {None: "no click"}
    return NeighbourPair(
        click,
        click_prime,
        "replace (one user's click feedback)",
        f"click at {name.get(click, f'position {click}')} vs "
        f"{name.get(click_prime, f'position {click_prime}')}",
        loss,
    )
