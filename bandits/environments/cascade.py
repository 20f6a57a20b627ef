"""Cascading bandit environments (Wang et al. 2021, §3.1; Kveton et al. 2015): L items with independent
Bernoulli attractions, an ordered list of K items per round, the click at the first attractive
position.

Every round the environment draws the whole attraction vector ``w_t ∈ {0, 1}^L`` (common random
numbers; a neighbouring input replaces one round's vector — one user). The problem's structure is
:class:`~bandits.actions.Ranking` ``(K)``: expected reward ``f(A, w̄) = 1 − Π_k (1 − w̄(a_k))``
(pseudo-regret ``f(A*, w̄) − f(A_t, w̄)``), realised reward ``1{some shown item attracts}``; the
feedback model :data:`~bandits.actions.Feedback.CASCADE` gives the click position ``C_t`` (0-based
here; ``K`` = no click), which reveals ``w_t(a_k) = 1{C_t = k}`` for the examined positions
``k ≤ min(C_t, K − 1)``.

The ``--env`` kind ``cascade`` (registered in :mod:`bandits.environments.grammar`):

* ``cascade:l=20,k=4,p=0.2,gap=0.15`` — the lower-bound instance of App. G/H (Theorem 10):
  ``w̄(e) = p`` for the first K items and ``p − Δ`` for the others. The paper does not say which
  attraction probabilities its experiments use (§7); this instance with p = 0.2, Δ = 0.15 is an
  **assumption** (ours: the paper's own lower-bound instance), used for every figure.
* ``cascade:k=4,means=0.2x4/0.05x16`` — any attraction probabilities.

Example:
    >>> env = parse_cascade_env("cascade:l=20,k=4,p=0.2,gap=0.15")
    >>> env.n_arms, env.structure, round(env.optimum, 4)        # 1 − 0.8⁴
    (20, Ranking(k=4), 0.5904)
    >>> env.means[[0, 3, 4]].tolist()
    [0.2, 0.2, 0.05]
    >>> parse_cascade_env(env.spec).means.tolist() == env.means.tolist()
    True
"""

from __future__ import annotations

import math

from bandits.actions import Ranking
from bandits.environments import Environment
from bandits.environments.grammar import _floats, _int, _need, parse_combinatorial_env, register_kind
from bandits.environments.semibandit import SemiBanditEnv
from bandits.environments.stochastic import MAX_ARMS

__all__ = ["PAPER_ENV", "cascade_instance", "parse_cascade_env", "paper_spec"]

PAPER_ENV = "cascade:l=20,k=4,p=0.2,gap=0.15"
"""The L = 20, K = 4 of Wang et al. (2021), §7, on the assumed instance p = 0.2, Δ = 0.15."""


def paper_spec(n_items: int = 20, k: int = 4, p: float = 0.2, gap: float = 0.15) -> str:
    """The ``cascade:`` spec of the two-level instance.

    >>> paper_spec(8)
    'cascade:l=8,k=4,p=0.2,gap=0.15'
    """
    return f"cascade:l={int(n_items)},k={int(k)},p={p:g},gap={gap:g}"


def cascade_instance(n_items: int = 20, k: int = 4, p: float = 0.2, gap: float = 0.15) -> SemiBanditEnv:
    """The two-level instance: ``p`` for items 0..K−1, ``p − gap`` for the rest."""
    L, K = int(n_items), int(k)
    if not (1 <= K < L):
        raise ValueError(f"k must be in [1, l - 1] = [1, {L - 1}], got {k!r}")
    if not (0.0 < gap < p <= 1.0):
        raise ValueError(f"need 0 < gap < p <= 1, got p = {p!r}, gap = {gap!r}")
    low = round(float(p) - float(gap), 12)  # 0.2 − 0.15 = 0.05, not 0.05000000000000002
    means = (float(p),) * K + (low,) * (L - K)
    return SemiBanditEnv(means, Ranking(K), "independent", name=paper_spec(L, K, p, gap))


def _number(params: dict[str, str], key: str, default: float | None = None) -> float:
    if key not in params:
        if default is None:
            raise ValueError(f"cascade spec needs {key}=")
        return default
    text = params.pop(key)
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"cascade {key} must be a number, got {text!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"cascade {key} must be a finite number, got {text!r}")
    return v


def _count(params: dict[str, str], key: str, default: int | None = None) -> int:
    """An integer field (``l``, ``k``), bounded by the number of arms the grammars allow."""
    text = params.get(key)
    if text is None and default is not None:
        return default
    return _int(_need(params, key, "cascade"), f"cascade {key}", 1, MAX_ARMS)


def _cascade(params: dict[str, str], spec: str) -> Environment:
    params = dict(params)
    if "means" in params:
        means = _floats(params.pop("means"), "cascade means")
        k = _count(params, "k")
        if params:
            raise ValueError(f"cascade spec has unknown parameter(s) {sorted(params)} (in {spec!r})")
        return SemiBanditEnv(means, Ranking(k), "independent", name=spec)
    L = _count(params, "l", 20)
    k = _count(params, "k", 4)
    p = _number(params, "p", 0.2)
    gap = _number(params, "gap", 0.15)
    if params:
        raise ValueError(f"cascade spec has unknown parameter(s) {sorted(params)} (in {spec!r})")
    return cascade_instance(L, k, p, gap)


register_kind("cascade", _cascade)


def parse_cascade_env(spec: str) -> Environment:
    """Parse ``--env`` for the cascade algorithms: the ``cascade`` kind above, or any kind of
    :func:`bandits.environments.grammar.parse_combinatorial_env` whose structure is a ``Ranking``."""
    env = parse_combinatorial_env(spec)
    if not isinstance(env.structure, Ranking):
        raise ValueError(
            f"the cascade algorithms play ordered lists: use cascade:... or ranking:..., got {spec!r}"
        )
    return env
