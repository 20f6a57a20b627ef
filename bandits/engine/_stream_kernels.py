"""numba kernels that read an outcome stream lazily (:mod:`bandits.engine.bernoulli_stream`).

PCG64 (O'Neill 2014, "PCG: a family of simple fast space-efficient statistically good
algorithms for random number generation"; NumPy's default bit generator) is a linear
congruential generator on 128 bits with the XSL-RR output. numba has no 128-bit integers, so a
state is a pair of 64-bit words (high, low) and a product is put together from 32-bit halves.
Every function here returns what NumPy's PCG64 returns, bit for bit (tested against
``Generator.random``).

Module-level functions, so that numba's on-disk cache (``cache=True``) is reused across processes.
Without numba the module still imports (``NUMBA`` is False) and nothing here runs.

>>> isinstance(NUMBA, bool)
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from bandits.engine._numba_kernels import NUMBA, _jit, njit
from bandits.engine.bernoulli_stream import MULTIPLIER

__all__ = ["NUMBA", "pcg_uniforms_kernel", "gaussian_ts_stream_kernel"]

_LOW32 = np.uint64(0xFFFFFFFF)
_32 = np.uint64(32)
_11 = np.uint64(11)
_58 = np.uint64(58)
_63 = np.uint64(63)
_64 = np.uint64(64)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_TO_DOUBLE = 1.0 / 9007199254740992.0  # 2**-53: NumPy's next_double
MULT_HIGH, MULT_LOW = np.uint64(MULTIPLIER >> 64), np.uint64(MULTIPLIER & 0xFFFFFFFFFFFFFFFF)
"""PCG64's multiplier, high and low words."""


def _inline(f: Callable[..., Any]) -> Callable[..., Any]:
    return f if njit is None else njit(inline="always", cache=True)(f)


@_inline
def mulhi(a: Any, b: Any) -> Any:  # pragma: no cover - compiled
    """The high word of the 128-bit product of two 64-bit words."""
    a_lo, a_hi = a & _LOW32, a >> _32
    b_lo, b_hi = b & _LOW32, b >> _32
    lolo, lohi, hilo = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo
    cross = (lolo >> _32) + (lohi & _LOW32) + hilo
    return a_hi * b_hi + (lohi >> _32) + (cross >> _32)


@_inline
def mul_add(s_hi: Any, s_lo: Any, m_hi: Any, m_lo: Any, a_hi: Any, a_lo: Any) -> Any:  # pragma: no cover
    """s·m + a modulo 2^128, each a (high, low) pair of words."""
    lo = s_lo * m_lo
    hi = mulhi(s_lo, m_lo) + s_hi * m_lo + s_lo * m_hi
    out_lo = lo + a_lo
    carry = _ONE if out_lo < lo else _ZERO
    return hi + a_hi + carry, out_lo


@_inline
def uniform(s_hi: Any, s_lo: Any) -> Any:  # pragma: no cover - compiled
    """The double in [0, 1) that NumPy's ``random()`` makes of the state (XSL-RR output, top 53 bits)."""
    x = s_hi ^ s_lo
    rot = s_hi >> _58
    out = (x >> rot) | (x << ((_64 - rot) & _63))
    return (out >> _11) * _TO_DOUBLE


@_jit
def pcg_uniforms_kernel(state: Any, inc: Any, out: Any) -> None:  # pragma: no cover - compiled
    """Fill ``out`` with the next uniforms of the PCG64 state ``state`` ((high, low), advanced in
    place) and increment ``inc`` ((high, low)): ``Generator.random(out.size)``."""
    s_hi, s_lo = state[0], state[1]
    for k in range(out.size):
        s_hi, s_lo = mul_add(s_hi, s_lo, MULT_HIGH, MULT_LOW, inc[0], inc[1])
        out[k] = uniform(s_hi, s_lo)
    state[0], state[1] = s_hi, s_lo


@_jit
def gaussian_ts_stream_kernel(  # pragma: no cover - compiled; a flat kernel signature
    gen: Any, state: Any, jump_mul: Any, jump_add: Any, probs: Any, S: Any, n: Any, scale: Any,
    actions: Any, observed: Any,
) -> None:
    """Sampling rounds of one repetition of Gaussian Thompson sampling on a Bernoulli stream.

    Per round: the N posterior draws from ``gen`` (in the order of ``Generator.standard_normal``
    filling a (C, N) array), θ = Z·(scale[0]/√(n+1)) then θ += S/(n+1) (two roundings), the first argmax
    a, and the reward 1{U < p_a}, where U is the uniform the outcome table holds for arm a in this
    round: the stream ``state`` jumps d numbers with one multiply-add by ``jump_mul[d]``,
    ``jump_add[d]`` ((2N, 2) words each) from the arm read in one round to the arm read in the
    next, and at the end to the end of the chunk's last row — exactly where drawing the table
    leaves it. The arithmetic of :func:`bandits.engine._numba_kernels.gaussian_ts_kernel`."""
    N = probs.size
    mu = np.empty(N)
    sc = np.empty(N)
    for i in range(N):
        mu[i] = S[i] / (n[i] + 1.0)
        sc[i] = scale[0] / math.sqrt(n[i] + 1.0)
    s_hi, s_lo = state[0], state[1]
    pending = 0  # numbers of the table left before the current row (the last row's tail)
    for k in range(actions.size):
        best = 0
        bv = gen.standard_normal() * sc[0]
        bv = bv + mu[0]
        for i in range(1, N):
            v = gen.standard_normal() * sc[i]
            v = v + mu[i]
            if v > bv:  # the first maximum, as numpy.argmax
                bv = v
                best = i
        d = pending + best + 1
        s_hi, s_lo = mul_add(s_hi, s_lo, jump_mul[d, 0], jump_mul[d, 1], jump_add[d, 0], jump_add[d, 1])
        x = 1.0 if uniform(s_hi, s_lo) < probs[best] else 0.0
        pending = N - best - 1
        actions[k] = best
        observed[k] = x
        s = S[best] + x
        m = n[best] + 1.0
        S[best] = s
        n[best] = m
        mu[best] = s / (m + 1.0)
        sc[best] = scale[0] / math.sqrt(m + 1.0)
    d = pending
    s_hi, s_lo = mul_add(s_hi, s_lo, jump_mul[d, 0], jump_mul[d, 1], jump_add[d, 0], jump_add[d, 1])
    state[0], state[1] = s_hi, s_lo
