"""Optional compiled kernels (numba) for per-round loops that do not vectorise across time.

Lazy-DP-TS (seed 002, Alg. 3) draws K Beta variates every round from parameters that depend on
the round, so no engine can jump ahead without drawing them. Its per-repetition loop is compiled
with numba when numba is installed (``pip install dpaudit[fast]``); numba's
``numpy.random.Generator.beta`` runs NumPy's own algorithm on the same bit generator (the state
is shared and advances), so the kernel gives **bit-identical** actions to the pure-NumPy step
loop of :class:`bandits.lazy.LazyDPTS` (tested). Without numba the step loop runs instead.

:data:`HAVE_NUMBA` says which is available; ``DPAUDIT_NO_NUMBA=1`` disables the kernels.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["HAVE_NUMBA", "lazy_ts_chunk"]

HAVE_NUMBA = False
lazy_ts_chunk = None

if os.environ.get("DPAUDIT_NO_NUMBA", "") not in ("1", "true", "yes"):
    try:  # pragma: no cover - exercised when numba is installed
        from numba import njit

        HAVE_NUMBA = True
    except ImportError:  # pragma: no cover
        HAVE_NUMBA = False

if HAVE_NUMBA:  # pragma: no branch

    @njit(cache=True)
    def lazy_ts_chunk(  # noqa: PLR0913 - a flat kernel signature
        gen, t0, C, table, logt, mu, O, ep, N, Phi, Z, b, eps, shift, perm, actions, rel_round, rel_arm
    ):
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
