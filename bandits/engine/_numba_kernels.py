"""numba kernels of :mod:`bandits.engine.compiled` (used only when numba is installed and enabled).

Module-level functions, so that numba's on-disk cache (``cache=True``) is reused across processes.
Without numba the module still imports (``NUMBA`` is False) and :mod:`bandits.engine.compiled` reports the
kernels unavailable, so the NumPy paths run.

>>> isinstance(NUMBA, bool)
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

njit: Any
try:
    from numba import njit
except ImportError:  # pragma: no cover - the 'fast' extra is not installed
    njit = None

__all__ = [
    "NUMBA", "modinv", "greedy_kernel", "csb_kernel", "gaussian_ts_kernel", "lazy_ts_kernel",
    "beta_ts_kernel", "normal_fill_kernel", "dp_ts_ucb_kernel", "cucb_dp_kernel", "ucb1_kernel",
    "running_sums_kernel", "single_arm_tally_kernel",
]

NUMBA = njit is not None


def _jit(f: Callable[..., Any]) -> Callable[..., Any]:
    return f if njit is None else njit(cache=True)(f)


@_jit
def modinv(a: int, p: int) -> int:  # pragma: no cover - compiled
    r = 1
    b = a % p
    e = p - 2
    while e > 0:
        if e & 1:
            r = r * b % p
        b = b * b % p
        e >>= 1
    return r


@_jit
def greedy_kernel(order: Any, vecs: Any, primes: Any, K: Any) -> Any:  # pragma: no cover - compiled
    R, n = order.shape
    P, _, d = vecs.shape
    out = np.empty((R, K), dtype=np.int64)
    basis = np.zeros((P, K, d), dtype=np.int64)
    pivot = np.zeros((P, K), dtype=np.int64)
    size = np.zeros(P, dtype=np.int64)
    v = np.zeros((P, d), dtype=np.int64)
    nz = np.zeros(P, dtype=np.int64)
    for r in range(R):
        for j in range(P):
            size[j] = 0
        count = 0
        for pos in range(n):
            if count == K:
                break
            e = order[r, pos]
            ok = False
            for j in range(P):
                p = primes[j]
                for c in range(d):
                    v[j, c] = vecs[j, e, c]
                for i in range(size[j]):
                    coef = v[j, pivot[j, i]]
                    if coef != 0:
                        for c in range(d):
                            v[j, c] = (v[j, c] - coef * basis[j, i, c]) % p
                nz[j] = -1
                for c in range(d):
                    if v[j, c] != 0:
                        nz[j] = c
                        break
                if size[j] == count and nz[j] >= 0:
                    ok = True
            if not ok:
                continue
            for j in range(P):
                c0 = nz[j]
                if c0 < 0:
                    continue
                p = primes[j]
                inv = modinv(v[j, c0], p)
                for c in range(d):
                    v[j, c] = v[j, c] * inv % p
                for i in range(size[j]):
                    f = basis[j, i, c0]
                    if f != 0:
                        for c in range(d):
                            basis[j, i, c] = (basis[j, i, c] - f * v[j, c]) % p
                s = size[j]
                for c in range(d):
                    basis[j, s, c] = v[j, c]
                pivot[j, s] = c0
                size[j] = s + 1
            out[r, count] = e
            count += 1
    return out


@_jit
def csb_kernel(  # pragma: no cover - compiled
    mode: Any, mu: Any, n: Any, table: Any, keys: Any, use_keys: Any, z: Any, coef: Any, scale: Any, k: Any,
    out: Any,
) -> None:
    R, C, m = table.shape
    score = np.empty(m)
    taken = np.zeros(m, dtype=np.bool_)
    for r in range(R):
        for c in range(C):
            cc = coef[c]
            for i in range(m):  # μ̄ = clip(μ̃ + c/sqrt(n), 0, 1), +inf bonus at n = 0
                if n[r, i] > 0:
                    v = mu[r, i] + cc / math.sqrt(n[r, i])
                else:
                    v = np.inf
                if v < 0.0:
                    v = 0.0
                if v > 1.0:
                    v = 1.0
                score[i] = v
                taken[i] = False
            for s in range(k):  # top-k: score desc, then tie key asc, then lower index
                best = -1
                for i in range(m):
                    if taken[i]:
                        continue
                    if best < 0:
                        best = i
                    elif score[i] > score[best]:
                        best = i
                    elif use_keys and score[i] == score[best] and keys[r, c, i] < keys[r, c, best]:
                        best = i
                taken[best] = True
                out[r, c, s] = best
            if mode == 2:  # CUCB-LDP2: the least updated arm of S_t, ties to the lower index
                j = 0
                kbest = n[r, out[r, c, 0]] * m + out[r, c, 0]
                for s in range(1, k):
                    key = n[r, out[r, c, s]] * m + out[r, c, s]
                    if key < kbest:
                        kbest = key
                        j = s
                a = out[r, c, j]
                x = min(max(table[r, c, a], 0.0), 1.0)
                y = x + scale * z[r, c, 0]
                nn = n[r, a] + 1
                mu[r, a] = mu[r, a] + (y - mu[r, a]) / nn
                n[r, a] = nn
            else:  # CUCB (mode 0) and CUCB-LDP1 (mode 1): every arm of S_t
                for s in range(k):
                    a = out[r, c, s]
                    x = min(max(table[r, c, a], 0.0), 1.0)
                    if mode == 1:
                        x = x + scale * z[r, c, s]
                    nn = n[r, a] + 1
                    n[r, a] = nn
                    mu[r, a] = mu[r, a] + (x - mu[r, a]) / nn


@_jit
def gaussian_ts_kernel(  # pragma: no cover - compiled
    S: Any, n: Any, Z: Any, zoff: Any, table: Any, start: Any, scale: Any, actions: Any, watch: Any,
    drawn: Any,
) -> None:
    R, N = S.shape
    C = actions.shape[1]
    mu = np.empty(N)
    sc = np.empty(N)
    for r in range(R):
        for i in range(N):  # the step loop's caches: mu = S/(n+1), sc = sqrt(c)/sqrt(n+1)
            mu[i] = S[r, i] / (n[r, i] + 1.0)
            sc[i] = scale[0] / math.sqrt(n[r, i] + 1.0)
        w = watch[r] if watch.size else -1
        for k in range(start[r], C):
            kz = k - zoff
            # theta = Z*scale, then += mu: two roundings, as NumPy (no fused multiply-add)
            best = 0
            bv = Z[r, kz, 0] * sc[0]
            bv = bv + mu[0]
            if w == 0:
                drawn[r, k] = bv
            for i in range(1, N):
                v = Z[r, kz, i] * sc[i]
                v = v + mu[i]
                if i == w:
                    drawn[r, k] = v
                if v > bv:  # the first maximum, as numpy.argmax
                    bv = v
                    best = i
            actions[r, k] = best
            s = S[r, best] + table[r, k, best]
            m = n[r, best] + 1.0
            S[r, best] = s
            n[r, best] = m
            mu[best] = s / (m + 1.0)
            sc[best] = scale[0] / math.sqrt(m + 1.0)


@_jit
def lazy_ts_kernel(  # pragma: no cover - compiled; a flat kernel signature
    gen: Any, t0: Any, C: Any, table: Any, logt: Any, mu: Any, O: Any, ep: Any, N: Any, Phi: Any, Z: Any,
    b: Any, eps: Any, shift: Any, perm: Any, actions: Any, rel_round: Any, rel_arm: Any,
) -> int:
    """Rounds ``t0 .. t0+C-1`` of one repetition of Lazy-DP-TS (arrays modified in place).

    The arithmetic is the step loop's, operation for operation: μ̄ = clip(μ̃ + (shift·L)/(ε·O)),
    θ_j ~ Beta(μ̄O + 1, (1 − μ̄)O + 1) drawn for j = 0..K−1 in order, the argmax taken in the
    priority order ``perm`` (first maximum), then the epoch bookkeeping of Alg. 1 lines 5–8.
    Returns the number of epoch releases written to ``rel_round``/``rel_arm``.
    """
    K = mu.size
    theta = np.empty(K)
    nrel = 0
    for k in range(C):
        t = t0 + k
        if t < K:
            j = t
        else:
            L = shift * logt[t]
            for i in range(K):
                mb = mu[i] + L / (eps * O[i])
                if mb < 0.0:
                    mb = 0.0
                elif mb > 1.0:
                    mb = 1.0
                theta[i] = gen.beta(mb * O[i] + 1.0, (1.0 - mb) * O[i] + 1.0)
            j = perm[0]
            best = theta[j]
            for q in range(1, K):
                i = perm[q]
                if theta[i] > best:
                    best = theta[i]
                    j = i
        actions[k] = j
        N[j] += 1
        Phi[j] += table[k, j]
        e = ep[j] + 1
        if N[j] == (1 << e):
            On = float(1 << e)
            mu[j] = (Phi[j] + b * Z[j, e]) / On
            O[j] = On
            ep[j] = e
            N[j] = 0
            Phi[j] = 0.0
            rel_round[nrel] = t
            rel_arm[nrel] = j
            nrel += 1
    return nrel


@_jit
def beta_ts_kernel(  # pragma: no cover - compiled
    gen: Any, U: Any, table: Any, alpha: Any, beta: Any, actions: Any,
) -> None:
    """Rounds of one repetition of Beta-Bernoulli Thompson sampling (arrays modified in place).

    The step loop's arithmetic, operation for operation: θ_i ~ Beta(α_i, β_i) drawn for i = 0..N−1
    in order, the first maximum played, the reward r of the played arm a success when U < r.
    """
    K = alpha.size
    theta = np.empty(K)
    for k in range(U.size):
        for i in range(K):
            theta[i] = gen.beta(alpha[i], beta[i])
        j = 0
        best = theta[0]
        for i in range(1, K):
            if theta[i] > best:
                best = theta[i]
                j = i
        actions[k] = j
        win = 1.0 if U[k] < table[k, j] else 0.0
        alpha[j] += win
        beta[j] += 1.0 - win


@_jit
def normal_fill_kernel(gen: Any, out: Any) -> None:  # pragma: no cover - compiled
    """``gen.standard_normal(out=out)`` for a C-contiguous ``out``: numba's ``Generator`` runs
    NumPy's own ziggurat on the same bit generator, so the values and the generator's state
    afterwards are the same bit for bit, without NumPy's per-call path."""
    flat = out.reshape(-1)
    for i in range(flat.size):
        flat[i] = gen.standard_normal()


@_jit
def dp_ts_ucb_kernel(  # pragma: no cover - compiled; a flat kernel signature
    t0: Any, init_end: Any, zoff: Any, table: Any, Z: Any, perm: Any, max_index: Any, phi: Any, sqrtL: Any,
    f: Any, mean: Any, sd: Any, n: Any, h: Any, drawn: Any, mx: Any, ep: Any, N: Any, Phi: Any,
    actions: Any, ev: Any, ev_sd: Any,
) -> int:
    """Rounds ``t0 .. t0+C−1`` of DP-TS-UCB for every repetition (state arrays (R, K) in place).

    The arithmetic of the step loop (:meth:`bandits.dp_ts_ucb.policy.DPTSUCBAgent.select` and
    ``update``), operation for operation: an arm with samples left draws θ = mean + sd·Z, keeps the
    maximum M and counts the sample; its index is M (``max_index``) or θ, an exhausted arm's M; the
    first maximum in the priority order ``perm`` is played; its observation joins the epoch in
    progress, which closes at f·2^(e+1) observations. Each closing is written to ``ev`` (rows:
    repetition, arm, round, samples drawn from the retired mean, its observations, whether there
    was one) with the retired mean's scale in ``ev_sd``; returns the number of closings.
    """
    R, K = mean.shape
    C = actions.shape[1]
    index = np.empty(K)
    nev = 0
    for r in range(R):
        for k in range(C):
            t = t0 + k
            if t < init_end:
                j = t % K
            else:
                zk = t - zoff
                for i in range(K):
                    if h[r, i] > 0:
                        theta = mean[r, i] + sd[r, i] * Z[r, zk, i]
                        if theta > mx[r, i]:
                            mx[r, i] = theta
                        index[i] = mx[r, i] if max_index else theta
                        h[r, i] -= 1
                        drawn[r, i] += 1
                    else:
                        index[i] = mx[r, i]
                j = perm[r, 0]
                best = index[j]
                for q in range(1, K):
                    i = perm[r, q]
                    if index[i] > best:
                        best = index[i]
                        j = i
            actions[r, k] = j
            N[r, j] += 1
            Phi[r, j] += table[r, k, j]
            if N[r, j] == f << (ep[r, j] + 1):
                ev[nev, 0], ev[nev, 1], ev[nev, 2] = r, j, t
                ev[nev, 3], ev[nev, 4], ev[nev, 5] = drawn[r, j], n[r, j], 1 if ep[r, j] >= 0 else 0
                ev_sd[nev] = sd[r, j]
                nev += 1
                n[r, j] = N[r, j]
                mean[r, j] = Phi[r, j] / N[r, j]
                sd[r, j] = sqrtL / np.sqrt(N[r, j])
                h[r, j] = phi
                drawn[r, j] = 0
                mx[r, j] = -np.inf
                ep[r, j] += 1
                N[r, j] = 0
                Phi[r, j] = 0.0
    return nev


@_jit
def cucb_dp_kernel(  # pragma: no cover - compiled
    mu: Any, n: Any, table: Any, keys: Any, use_keys: Any, z: Any, z0: Any, scale: Any,
    c_root: Any, c_lin: Any, k: Any, t0: Any, alpha: Any, alpha_hat: Any, prefix: Any,
    covered: Any, ucb: Any, out: Any,
) -> int:
    """Rounds t0 .. t0+C−1 of CUCB-DP (:mod:`bandits.semibandits.tree_engine`), updating ``mu``,
    ``n``, the tree's ``alpha``, ``alpha_hat``, ``prefix`` and ``covered`` and the last round's
    ``ucb`` in place;
    ``z`` (R, nodes, m) the standard Laplace draws of the chunk's nodes from index ``z0``.
    Returns the number of nodes drawn, or −1 if a UCB is NaN (the caller raises)."""
    R, C, m = table.shape
    taken = np.zeros(m, dtype=np.bool_)
    acc = np.empty(m)
    zi = z0
    for c in range(C):
        s = t0 + c + 1  # the tree's 1-based step
        i = 0
        while (s >> i) & 1 == 0:
            i += 1
        for r in range(R):
            for a in range(m):  # μ̄ = clip(μ̃ + (a/sqrt(n) + p/n), 0, 1); +inf bonus at n = 0
                if n[r, a] > 0:
                    v = mu[r, a] + (c_root / math.sqrt(n[r, a]) + c_lin / (n[r, a] * 1.0))
                else:
                    v = mu[r, a] + np.inf
                if v != v:
                    return -1
                v = v if v > 0.0 else 0.0
                ucb[r, a] = v if v < 1.0 else 1.0
                taken[a] = False
                acc[a] = 0.0
            for q in range(k):  # top-k: score desc, then tie key asc, then lower index
                best = -1
                for a in range(m):
                    if taken[a]:
                        continue
                    if best < 0 or ucb[r, a] > ucb[r, best]:
                        best = a
                    elif use_keys and ucb[r, a] == ucb[r, best] and keys[r, c, a] < keys[r, c, best]:
                        best = a
                taken[best] = True
                out[r, c, q] = best
                x = table[r, c, best]  # the leaf X_t ⊙ 1[S_t], rewards clipped to [0, 1]
                if x == x:
                    x = x if x > 0.0 else 0.0
                    x = x if x < 1.0 else 1.0
                acc[best] = x
                n[r, best] += 1
            for a in range(m):  # the node completed at level i: leaf + the nodes below it
                for j in range(i):
                    acc[a] += alpha[r, j, a]
                hat = acc[a] + scale * z[r, zi + i, a]  # z[zi .. zi+i-1]: right children, unused
                below = 0.0
                if i > 0:
                    below = alpha_hat[r, 0, a]
                    for j in range(1, i):
                        below += alpha_hat[r, j, a]
                prefix[r, a] += hat - below
                for j in range(i):
                    alpha[r, j, a] = 0.0
                    alpha_hat[r, j, a] = 0.0
                alpha[r, i, a] = acc[a]
                alpha_hat[r, i, a] = hat
            for q in range(k):
                a = out[r, c, q]
                mu[r, a] = prefix[r, a] / n[r, a]
        for j in range(i + 1):
            covered[j] = s
        zi += i + 1
    return zi - z0


@_jit
def ucb1_kernel(t0: Any, alpha: Any, S: Any, n: Any, table: Any, actions: Any) -> None:  # pragma: no cover
    """Rounds ``t0 .. t0+C−1`` of UCB1 for every repetition (``S``, ``n`` (R, K) in place): arm t
    in round t < K, then the first maximum of S/n + sqrt((α·ln t)/n) — the step loop's
    operations (:class:`bandits.references.policies.UCB1`), bit for bit — and its reward from
    ``table`` (R, C, K)."""
    R, K = S.shape
    C = actions.shape[1]
    for r in range(R):
        for k in range(C):
            t = t0 + k
            if t < K:
                j = t
            else:
                c = alpha * math.log(t)
                j = 0
                best = S[r, 0] / n[r, 0] + math.sqrt(c / n[r, 0])
                for i in range(1, K):
                    v = S[r, i] / n[r, i] + math.sqrt(c / n[r, i])
                    if v > best:
                        best = v
                        j = i
            actions[r, k] = j
            S[r, j] += table[r, k, j]
            n[r, j] += 1.0


@_jit
def running_sums_kernel(carry: Any, x: Any, out: Any) -> None:  # pragma: no cover - compiled
    """out[r, k] = carry[r] + x[r, 0] + … + x[r, k], added left to right (as ``numpy.cumsum``)."""
    R, C = x.shape
    for r in range(R):
        acc = carry[r]
        for k in range(C):
            acc = acc + x[r, k]
            out[r, k] = acc


@_jit
def single_arm_tally_kernel(  # pragma: no cover - compiled
    a: Any, gaps: Any, obs: Any, cum_gap: Any, cum_rew: Any, loc: Any, g_at: Any, w_at: Any, pulls: Any
) -> None:
    """One chunk of single-arm actions ``a`` (R, C) into the running sums of the gaps and of the
    outcomes ``obs`` (R, C), continued from ``cum_gap``, ``cum_rew`` (R,; updated in place) left to
    right, their values after the local rounds ``loc`` (ascending) into ``g_at``, ``w_at``
    (R, len(loc)), and the pull counts into ``pulls`` (R, N; added to) — what
    :class:`bandits.engine.results.RegretTally` computes with NumPy, the same floats."""
    R, C = a.shape
    J = loc.size
    for r in range(R):
        g = cum_gap[r]
        w = cum_rew[r]
        j = 0
        for k in range(C):
            i = a[r, k]
            g = g + gaps[i]
            w = w + obs[r, k]
            pulls[r, i] += 1
            while j < J and loc[j] == k:
                g_at[r, j] = g
                w_at[r, j] = w
                j += 1
        cum_gap[r] = g
        cum_rew[r] = w
