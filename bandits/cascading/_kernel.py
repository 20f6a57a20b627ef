"""numba kernels of the cascading agents' round loop (used only when numba is installed and
enabled, :func:`bandits.engine.compiled.installed`; imported lazily by
:meth:`bandits.cascading.base.CascadeAgent.run_chunk`, so that numba is not imported with the
package).

Each plays a block of rounds one repetition at a time: the K items of largest index (ties to the
lower item, as :func:`~bandits.cascading.base.top_k`: :func:`_play`),
the click, and the agent's update, with exactly the floating-point operations of the NumPy step
loop, in the same order, so the results are bit-identical (tested in
``tests/test_cascade_kernel.py``). The step loop pays ≈ 15–40 array operations per round
(T = 10⁵, R = 10: 3.8–13 s); a kernel costs ≈ 0.1–1 µs per repetition and round.

* :func:`cascade_rounds` — index ``mean + c_t · isq`` (CascadeUCB1, Algorithms 2–3 and the
  Theorem 7 variant);
* :func:`fixed_rounds` — the fixed-length LDP variant;
* :func:`streams_rounds` — Algorithm 1 with its per-item hybrid counters (:func:`_hybrid_insert`);
* :func:`counts_rounds` — the sound central variant with its time-indexed counter
  (:func:`_sums_step`).

What the NumPy step loop draws (tie keys, noise) is drawn per chunk as before and passed in; the
coefficients that depend only on the round are computed per chunk with the step loop's formulas.
Without numba the module still imports (``NUMBA`` is False) and the functions are plain Python
(used only by the tests, on tiny inputs).

>>> isinstance(NUMBA, bool)
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from bandits.engine._numba_kernels import NUMBA, _jit  # the one jit helper (cache=True)

__all__ = ["NUMBA", "cascade_rounds", "fixed_rounds", "streams_rounds", "counts_rounds"]


@_jit
def _play(u: Any, outcomes: Any, a: Any) -> Any:  # pragma: no cover - compiled
    """The K = len(a) items of largest ``u`` into ``a``, in decreasing ``u``, ties to the lower
    item (K passes, each taking the first largest item not yet taken: the first K of the stable
    descending sort of :func:`~bandits.cascading.base.top_k`; ``u`` not NaN, overwritten: taken
    items are marked −∞, and when only −∞ items are left the first not taken is next), and the
    click: the first position whose item's outcome is ≥ 0.5, K if none."""
    L, K = u.shape[0], a.shape[0]
    for j in range(K):
        best = -1
        bv = -math.inf
        for e in range(L):
            if u[e] > bv:
                bv = u[e]
                best = e
        if best < 0:  # only -inf left: the first item not taken yet
            best = 0
            while _taken(a, j, best):
                best += 1
        a[j] = best
        u[best] = -math.inf
    for j in range(K):
        if outcomes[a[j]] >= 0.5:
            return j
    return K


@_jit
def _two_bonus_index(  # pragma: no cover - compiled
    u: Any, mean: Any, isq: Any, extra: Any, at: Any, c: Any, r: Any,
) -> None:
    """``u = (mean + a_t · isq) + c · extra`` on row ``r``: the index of :func:`fixed_rounds` and
    :func:`streams_rounds`, in the step loop's order of operations."""
    for e in range(u.size):
        u[e] = (mean[r, e] + at * isq[r, e]) + c * extra[r, e]


@_jit
def _taken(a: Any, j: Any, e: Any) -> Any:  # pragma: no cover - compiled
    """Whether item e is among the first j of ``a``."""
    for q in range(j):
        if a[q] == e:
            return True
    return False


@_jit
def cascade_rounds(  # pragma: no cover - compiled
    table: Any, start: Any, coef: Any, noise: Any, noisy: Any,
    S: Any, T: Any, mean: Any, isq: Any, acts: Any, clicks: Any,
) -> None:
    """Play the chunk's rounds ``start .. C−1`` of every repetition r (module docstring).

    ``table`` (R₀, C, L) the outcomes (attractive: ≥ 0.5) of the repetitions, row r reading
    repetition ``r mod R₀`` (R₀ = R, or the repetitions of P stacked configurations); ``coef``
    (R, C) the index coefficient c_t of each round; ``noise`` (R, C, K) the noise added to each
    position's report (``scale · standard draw``; read only when ``noisy``); ``S``, ``T``,
    ``mean``, ``isq`` (R, L) updated in place; ``acts`` (R, C, K) and ``clicks`` (R, C; K = none) written."""
    R0, C, L = table.shape
    R, K = S.shape[0], acts.shape[2]
    u = np.empty(L)
    a = np.empty(K, dtype=np.int64)
    for r in range(R):
        for i in range(start, C):
            c = coef[r, i]
            for e in range(L):
                u[e] = mean[r, e] + c * isq[r, e]
            click = _play(u, table[r % R0, i], a)
            clicks[r, i] = click
            for j in range(K):
                e = a[j]
                acts[r, i, j] = e
                y = 1.0 if j == click else 0.0
                if noisy:
                    y = y + noise[r, i, j]
                if j <= click:
                    S[r, e] += y
                    T[r, e] += 1.0
                else:
                    S[r, e] += 0.0
                    T[r, e] += 0.0
                t = T[r, e]
                tp = max(t, 1.0)
                mean[r, e] = S[r, e] / tp if t > 0 else math.inf
                isq[r, e] = 1.0 / math.sqrt(tp)


@_jit
def fixed_rounds(  # pragma: no cover - compiled
    table: Any, start: Any, a_t: Any, c2: Any, noise: Any,
    S: Any, E: Any, D: Any, P: Any, mean: Any, isq: Any, g2: Any, acts: Any,
) -> None:
    """The fixed-length LDP variant (:class:`~bandits.cascading.ldp.FixedReportsAgent`): index
    ``(mean + a_t · isq) + c2 · g2``; every position reports ``1{C = k} + noise``; per shown item
    ``S += y``, ``E += 1 − Σ_{j<k} y_j`` (the running sum of ``numpy.cumsum``), ``D += 1``,
    ``P += k + 1``, then ``mean = S/E⁺``, ``isq = 1/sqrt(E⁺)``, ``g2 = sqrt(P)/E⁺``, E⁺ = max(E, 1).
    Shapes as in :func:`cascade_rounds`; ``a_t`` (C,), ``c2`` (R, C)."""
    R0, C, L = table.shape
    R, K = S.shape[0], acts.shape[2]
    u = np.empty(L)
    a = np.empty(K, dtype=np.int64)
    for r in range(R):
        for i in range(start, C):
            _two_bonus_index(u, mean, isq, g2, a_t[i], c2[r, i], r)
            click = _play(u, table[r % R0, i], a)
            above = 0.0
            for j in range(K):
                e = a[j]
                acts[r, i, j] = e
                y = (1.0 if j == click else 0.0) + noise[r, i, j]
                S[r, e] += y
                E[r, e] += 1.0 - above
                above = y if j == 0 else above + y
                D[r, e] += 1.0
                P[r, e] += j + 1.0
                ep = max(E[r, e], 1.0)
                mean[r, e] = S[r, e] / ep
                isq[r, e] = 1.0 / math.sqrt(ep)
                g2[r, e] = math.sqrt(P[r, e]) / ep


@_jit
def _hybrid_insert(  # pragma: no cover - compiled
    c: Any, r: Any, e: Any, x: Any, z: Any, log_scale: Any, sens: Any, eps: Any, factor: Any
) -> None:
    """Insert ``x`` into stream e of repetition r of a
    :class:`~mechanisms.continual.hybrid_batch.BatchHybridStreams` (its state arrays ``c`` =
    (n, beta, pending, alpha, alpha_hat, out)) with the standard draw ``z``, by the operations of
    its ``insert``: a log block at powers of two, else the binary-block node of the lowest set bit
    of j = n − 2^k (scale ``(k Δ/(ε/2))·factor``), the output β + Σ of the noisy nodes of j's set
    bits (summed lowest level first, 0.0 for the others, as its cumulative sums do)."""
    n, beta, pending, alpha, alpha_hat, out = c
    V = alpha.shape[2]
    m = n[r, e] + 1
    n[r, e] = m
    pending[r, e] = pending[r, e] + x
    if (m & (m - 1)) == 0:
        beta[r, e] = beta[r, e] + (pending[r, e] + log_scale * z)
        pending[r, e] = 0.0
        alpha[r, e, :] = 0.0
        alpha_hat[r, e, :] = 0.0
        out[r, e] = beta[r, e]
        return
    k = 0
    while (m >> (k + 1)) > 0:
        k += 1
    j = m - (1 << k)
    i = 0
    while ((j >> i) & 1) == 0:
        i += 1
    acc = x
    for v in range(V):
        acc = acc + (alpha[r, e, v] if v < i else 0.0)
    for v in range(i):
        alpha[r, e, v] = 0.0
        alpha_hat[r, e, v] = 0.0
    alpha[r, e, i] = acc
    alpha_hat[r, e, i] = acc + ((k * sens / (eps / 2)) * factor) * z
    prefix = alpha_hat[r, e, 0] if (j & 1) == 1 else 0.0
    for v in range(1, V):
        prefix = prefix + (alpha_hat[r, e, v] if ((j >> v) & 1) == 1 else 0.0)
    out[r, e] = beta[r, e] + prefix


@_jit
def streams_rounds(  # pragma: no cover - compiled
    table: Any, start: Any, a_t: Any, cl: Any, noise: Any, counter: Any, scales: Any,
    w0: Any, T: Any, mean: Any, isq: Any, inv: Any, acts: Any, clicks: Any,
) -> None:
    """Algorithm 1 (:class:`~bandits.cascading.dp.HybridStreamsAgent`): index
    ``(mean + a_t · isq) + cl · inv``; each examined item's attraction goes into its hybrid
    counter (:func:`_hybrid_insert`, ``counter`` its state arrays, ``scales`` = (log scale (R,),
    Δ, ε (R,), factor (R,))), then ``T += 1``, ``mean = (w0 + out)/T``, ``isq = 1/sqrt(T)``,
    ``inv = 1/T``. Shapes as in :func:`cascade_rounds`; ``a_t`` (C,), ``cl`` (R, C)."""
    R0, C, L = table.shape
    R, K = T.shape[0], acts.shape[2]
    log_scale, sens, eps, factor = scales
    out = counter[5]
    u = np.empty(L)
    a = np.empty(K, dtype=np.int64)
    for r in range(R):
        for i in range(start, C):
            _two_bonus_index(u, mean, isq, inv, a_t[i], cl[r, i], r)
            click = _play(u, table[r % R0, i], a)
            clicks[r, i] = click
            for j in range(K):
                e = a[j]
                acts[r, i, j] = e
                if j > click:
                    continue
                x = 1.0 if j == click else 0.0
                _hybrid_insert(counter, r, e, x, noise[r, i, j], log_scale[r], sens, eps[r], factor[r])
                T[r, e] += 1.0
                tp = T[r, e]
                mean[r, e] = (w0[r, e] + out[r, e]) / tp
                isq[r, e] = 1.0 / math.sqrt(tp)
                inv[r, e] = 1.0 / tp


@_jit
def _sums_step(  # pragma: no cover - compiled
    c: Any, r: Any, x: Any, z: Any, t: Any, log_scale: Any, block_scale: Any
) -> None:
    """Step ``t`` (1-based) of repetition r of a
    :class:`~mechanisms.continual.hybrid_batch.BatchHybridSums` (state ``c`` = (beta, pending,
    alpha, alpha_hat, out)) with the leaf ``x`` and the standard draws ``z`` (d,), by the
    operations of its ``step``; ``block_scale`` is the scale of block k = floor(log2 t)."""
    beta, pending, alpha, alpha_hat, out = c
    d = x.shape[0]
    k = 0
    while (t >> (k + 1)) > 0:
        k += 1
    for q in range(d):
        pending[r, q] = pending[r, q] + x[q]
    if t == 1 << k:
        for q in range(d):
            beta[r, q] = beta[r, q] + (pending[r, q] + log_scale * z[q])
            pending[r, q] = 0.0
            out[r, q] = beta[r, q]
        alpha[r] = 0.0
        alpha_hat[r] = 0.0
        return
    j = t - (1 << k)
    i = 0
    while ((j >> i) & 1) == 0:
        i += 1
    for q in range(d):
        acc = x[q]
        for v in range(i):
            acc = acc + alpha[r, v, q]
        for v in range(i):
            alpha[r, v, q] = 0.0
            alpha_hat[r, v, q] = 0.0
        alpha[r, i, q] = acc
        alpha_hat[r, i, q] = acc + block_scale * z[q]
        prefix = 0.0
        v = 0
        while (j >> v) > 0:
            if ((j >> v) & 1) == 1:
                prefix = prefix + alpha_hat[r, v, q]
            v += 1
        out[r, q] = beta[r, q] + prefix


@_jit
def counts_rounds(  # pragma: no cover - compiled
    table: Any, start: Any, t0: Any, c15: Any, lam2: Any, noise: Any, counter: Any,
    log_scale: Any, block_scale: Any, D: Any, acts: Any,
) -> None:
    """The sound central variant (:class:`~bandits.cascading.dp.HybridCountsAgent`): index
    ``(S̃/N⁺ + sqrt(c15/N⁺)) + lam2/N⁺`` (N⁺ = max(Ñ, 1); ∞ for items never shown) from the
    counter's output (clicks, examinations), then one counter step (:func:`_sums_step`) with the
    leaf (clicks of the shown items, their examinations) and ``D += 1``. Round i is the counter's
    step ``t0 + i + 1``; ``c15`` (C,) = 1.5 log t, ``lam2`` (R, C) = 2λ_t; ``noise`` (R, C, 2L);
    ``block_scale`` (R, levels) the scale of each block k."""
    R0, C, L = table.shape
    R, K = D.shape[0], acts.shape[2]
    out = counter[4]
    u = np.empty(L)
    a = np.empty(K, dtype=np.int64)
    x = np.zeros(2 * L)
    for r in range(R):
        for i in range(start, C):
            c, lam = c15[i], lam2[r, i]
            for e in range(L):
                npos = max(out[r, L + e], 1.0)
                v = (out[r, e] / npos + math.sqrt(c / npos)) + lam / npos
                u[e] = v if D[r, e] > 0 else math.inf
            click = _play(u, table[r % R0, i], a)
            x[:] = 0.0
            for j in range(K):
                e = a[j]
                acts[r, i, j] = e
                x[e] = 1.0 if j == click else 0.0
                x[L + e] = 1.0 if j <= click else 0.0
            t = t0 + i + 1
            k = 0
            while (t >> (k + 1)) > 0:
                k += 1
            _sums_step(counter, r, x, noise[r, i], t, log_scale[r], block_scale[r, k])
            for j in range(K):
                D[r, a[j]] += 1.0
