"""Optional compiled kernels (numba; the ``fast`` extra). Pure-NumPy code paths give the same
results bit for bit (tested both ways); these only make them faster.

:func:`greedy_linear_exact` is the greedy basis of an integer linear matroid for R score orders
(the movie instance of Chandak, Hu & Hegde 2023: 100 items, rank 17), computed row by row with exact modular
elimination. Measured on this machine (``benchmarks/bench_combinatorial.py``): the NumPy
state engine needs one vectorised step per scanned position (≈ 25–55 positions, ≈ 10 ms per
round for R = 20); the kernel does the whole round in well under a millisecond.

:func:`csb_chunk` plays a whole chunk of rounds of CUCB, CUCB-LDP1 or CUCB-LDP2 on a top-k
problem (Chen et al. 2020): the NumPy step loop pays ≈ 40 array operations per round (≈ 100 µs for
R = 4 here), the kernel ≈ 2 µs.

:func:`gaussian_ts_rounds` plays the sampling rounds of Gaussian Thompson sampling
(:class:`bandits.thompson.agent.GaussianTSAgent`) one repetition at a time: where the arms are
close the speculative engine fails and the NumPy step loop pays ≈ 10 array operations per round
for all repetitions at once; the kernel does a round of one repetition in a few nanoseconds.

Lazy-DP-TS draws K Beta variates every round from parameters that depend on the round, so no
engine can jump ahead without drawing them: :func:`lazy_ts_chunk` runs its per-repetition loop;
numba's ``Generator.beta`` runs NumPy's own algorithm on the same bit generator, so its actions
are bit-identical to the NumPy step loop of :class:`bandits.lazy.policies.LazyDPTS` (tested).

:func:`dp_ts_ucb_chunk` plays a chunk of DP-TS-UCB (:mod:`bandits.dp_ts_ucb.policy`) one repetition
at a time: its NumPy step loop pays ≈ 20 array operations per round for all repetitions.

:func:`gaussian_ts_stream_rounds` plays them on a Bernoulli instance reading the outcome table
lazily, one generator step a round (:mod:`bandits.engine.bernoulli_stream`) and the posterior draws
straight from the generator: no table, no noise buffer, the same actions and outcomes.

:func:`gaussian_ts_drawing_rounds` is :func:`gaussian_ts_rounds` with the posterior draws taken in the
loop from the repetitions' generators, passed once as a numba typed list (:func:`generator_list`):
no noise buffer and no per-repetition generator call per chunk, which the audit's 8192-repetition
blocks paid in full.

:func:`fill_standard_normal` fills a buffer with a generator's standard normals, the same values
as ``Generator.standard_normal(out=...)`` (numba runs NumPy's ziggurat on the same bit
generator) in about a quarter of the time: Gaussian Thompson sampling draws N normals per round
and repetition, most of a long run's or an audit's cost.

Set the environment variable ``DPAUDIT_NUMBA=0`` to disable the kernels (the NumPy paths run;
the older ``DPAUDIT_NO_NUMBA=1`` too). :data:`HAVE_NUMBA` says whether they may run.

>>> available() in (True, False), isinstance(HAVE_NUMBA, bool)
(True, True)
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

__all__ = ["HAVE_NUMBA", "installed", "available", "greedy_linear_exact", "csb_chunk", "gaussian_ts_rounds",
           "lazy_ts_chunk", "beta_ts_chunk", "fill_standard_normal", "dp_ts_ucb_chunk", "KERNEL_MIN_ROUNDS",
           "worth_compiling", "cucb_dp_chunk", "ucb1_chunk", "stream_uniforms", "gaussian_ts_stream_rounds",
           "running_sums", "single_arm_tally", "generator_list", "GENERATOR_LIST_MIN_REPS",
           "gaussian_ts_drawing_rounds"]

_KERNEL: Any = None
_CSB: Any = None
_GTS: Any = None
_LAZY: Any = None
_BETA: Any = None
_FILL: Any = None
_DPTS: Any = None
_CUCBDP: Any = None
_UCB1: Any = None
_UNIF: Any = None
_GTS_STREAM: Any = None
_RSUM: Any = None
_TALLY: Any = None
_GTS_DRAW: Any = None
_FILL_MIN = 2048  # numba's call costs ~8 µs (unboxing the Generator), NumPy's ~1 µs; ~8 ns saved a draw
_TRIED = False


def installed() -> bool:
    """Whether numba is installed and not disabled (``DPAUDIT_NUMBA=0`` or ``DPAUDIT_NO_NUMBA=1``),
    decided without importing it."""
    import importlib.util

    if os.environ.get("DPAUDIT_NUMBA", "1") == "0":
        return False
    if os.environ.get("DPAUDIT_NO_NUMBA", "") in ("1", "true", "yes"):
        return False
    return importlib.util.find_spec("numba") is not None


KERNEL_MIN_ROUNDS = 200_000
"""Rounds (over all repetitions) from which an agent loads its compiled kernel: below, numba's
import and the kernel's load (about 0.3 s) cost more than they save (the NumPy paths give the
same results)."""


def worth_compiling(rounds: int) -> bool:
    """Whether a run of ``rounds`` rounds over all repetitions should use a compiled kernel."""
    return rounds >= KERNEL_MIN_ROUNDS and available()


HAVE_NUMBA = installed()
"""Whether numba is installed and enabled, decided without importing numba (0.4 s and about
90 MB), which happens only when a kernel first runs."""


def available() -> bool:
    """Whether the compiled kernels can run: numba :func:`installed`, and it imports."""
    if not installed():
        return False
    return _kernel() is not None


def _kernel() -> Any:
    global _KERNEL, _CSB, _GTS, _LAZY, _BETA, _FILL, _DPTS, _CUCBDP, _UCB1, _TRIED
    global _UNIF, _GTS_STREAM, _RSUM, _TALLY, _GTS_DRAW
    if _TRIED:
        return _KERNEL
    _TRIED = True
    from bandits.engine import _drawing_kernels as dk
    from bandits.engine import _numba_kernels as nk
    from bandits.engine import _stream_kernels as sk

    if not nk.NUMBA:  # pragma: no cover - the 'fast' extra is not installed
        return None
    _KERNEL, _CSB, _GTS, _LAZY = nk.greedy_kernel, nk.csb_kernel, nk.gaussian_ts_kernel, nk.lazy_ts_kernel
    _BETA, _FILL, _DPTS = nk.beta_ts_kernel, nk.normal_fill_kernel, nk.dp_ts_ucb_kernel
    _CUCBDP, _UCB1 = nk.cucb_dp_kernel, nk.ucb1_kernel
    _UNIF, _GTS_STREAM, _RSUM = sk.pcg_uniforms_kernel, sk.gaussian_ts_stream_kernel, nk.running_sums_kernel
    _TALLY, _GTS_DRAW = nk.single_arm_tally_kernel, dk.gaussian_ts_drawing_kernel
    return _KERNEL


def greedy_linear_exact(
    order: np.ndarray, residues: np.ndarray, primes: tuple[int, ...], rank: int
) -> np.ndarray:
    """Greedy bases (R, rank) for the orders (R, n) of integer vectors given by their residues
    ``residues[j] = vectors mod primes[j]`` (shape (P, n, d); Π p > the Hadamard bound, each
    p < 2³¹ so products fit in int64). Raises ``RuntimeError`` if numba is unavailable."""
    k = _kernel()
    if k is None or not available():
        raise RuntimeError("numba is not available (pip install 'dpaudit[fast]'; DPAUDIT_NUMBA != 0)")
    pr = np.asarray(primes, dtype=np.int64)
    return k(np.ascontiguousarray(order, dtype=np.int64), residues, pr, int(rank))


def csb_chunk(
    mode: int,
    mu: np.ndarray,
    n: np.ndarray,
    table: np.ndarray,
    keys: np.ndarray | None,
    z: np.ndarray | None,
    coef: np.ndarray,
    scale: float,
    k: int,
) -> np.ndarray:
    """One chunk of CUCB (mode 0), CUCB-LDP1 (1) or CUCB-LDP2 (2) on a top-k problem, updating
    ``mu`` and ``n`` (R, m) in place; returns the actions (R, C, k). ``coef[c]`` is round c's
    bonus coefficient (bonus = coef/sqrt(n)); ``keys`` (R, C, m) the tie keys (None: lower index);
    ``z`` (R, C, ·) the standard Laplace draws of the reports; ``scale`` their scale. Identical,
    bit for bit, to :meth:`bandits.semibandits.policies._CSBAgent.select`/``update`` (tested)."""
    _kernel()
    if _CSB is None or not available():
        raise RuntimeError("numba is not available (pip install 'dpaudit[fast]'; DPAUDIT_NUMBA != 0)")
    R, C, m = table.shape
    out = np.empty((R, C, k), dtype=np.int64)
    kk = np.zeros((1, 1, 1)) if keys is None else np.ascontiguousarray(keys, dtype=float)
    zz = np.zeros((1, 1, 1)) if z is None else np.ascontiguousarray(z, dtype=float).reshape(R, C, -1)
    _CSB(int(mode), mu, n, np.ascontiguousarray(table, dtype=float), kk, keys is not None, zz,
         np.ascontiguousarray(coef, dtype=float), float(scale), int(k), out)  # fmt: skip
    return out


def gaussian_ts_rounds(
    S: np.ndarray,
    n: np.ndarray,
    Z: np.ndarray,
    zoff: int,
    table: np.ndarray,
    start: np.ndarray,
    scale: np.ndarray,
    actions: np.ndarray,
    watch: np.ndarray | None = None,
    drawn: np.ndarray | None = None,
) -> None:
    """Play local rounds ``start[r] .. C−1`` of every repetition r of Gaussian Thompson sampling
    (sampling rounds only), updating the reward sums ``S`` and counts ``n`` (R, N) in place and
    writing ``actions`` (R, C). Round k reads the noise ``Z[r, k − zoff]`` (R, ·, N) and the
    reward ``table[r, k, arm]`` (R, C, N); ``scale`` holds √c, its one entry. Per round: θ = Z·σ
    with σ = √c/√(n+1) kept per arm and computed again for the played arm only, then θ += S/(n+1)
    (two roundings), the first argmax, then S += reward, n += 1 — the arithmetic of
    :meth:`bandits.thompson.agent.GaussianTSAgent.select`/``update``, so the actions and the state
    are identical bit for bit (tested). With ``watch`` (R,) and ``drawn`` (R, C), repetition r's
    posterior draw θ of arm ``watch[r]`` in round k is written to ``drawn[r, k]`` (what an audit of
    the draws reads). Raises ``RuntimeError`` if numba is unavailable.

    >>> import numpy as np
    >>> S, n, act = np.zeros((1, 2)), np.ones((1, 2)), np.zeros((1, 3), dtype=np.intp)
    >>> Z = np.array([[[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]]])  # round 2 is a tie: the first arm
    >>> ok = available()
    >>> if ok:
    ...     gaussian_ts_rounds(S, n, Z, 0, np.ones((1, 3, 2)), np.zeros(1, np.intp), np.ones(1), act)
    >>> (act.tolist(), n.tolist()) if ok else ([[1, 0, 0]], [[3.0, 2.0]])
    ([[1, 0, 0]], [[3.0, 2.0]])
    """
    _kernel()
    if _GTS is None or not available():
        raise RuntimeError("numba is not available (pip install 'dpaudit[fast]'; DPAUDIT_NUMBA != 0)")
    if scale.shape != (1,):
        raise ValueError(f"scale must hold sqrt(c) in one entry, got shape {scale.shape}")
    if watch is None or drawn is None:
        watch, drawn = np.empty(0, dtype=np.intp), np.empty((1, 1))
    _GTS(S, n, Z, int(zoff), table, np.ascontiguousarray(start, dtype=np.intp), scale, actions,
         np.ascontiguousarray(watch, dtype=np.intp), drawn)  # fmt: skip


GENERATOR_LIST_MIN_REPS = 512
"""Repetitions from which an agent draws its noise in the compiled loop through a
:func:`generator_list`: building the first list in a process compiles numba's list code (about
0.8 s here) and each generator costs ~9 µs to add; a buffer filled per repetition and chunk costs
~2 µs more per repetition and chunk than drawing in the loop, which pays only for audit-sized
blocks (the audit's 8192 repetitions in 51-round chunks: ~0.7 s a block), not for a run's ten."""


def generator_list(generators: Any) -> Any:
    """The repetitions' generators as one compiled-code argument
    (:func:`bandits.engine._drawing_kernels.generator_list`: unboxed once, not at every call),
    or None where the kernels are unavailable or a generator is not a plain
    ``numpy.random.Generator`` (a wrapped one, e.g. a planted bug's, must draw through its own
    methods)."""
    gens = list(generators)
    if not gens or not available() or any(type(g) is not np.random.Generator for g in gens):
        return None
    from bandits.engine._drawing_kernels import generator_list as typed_list

    return typed_list(gens)


def gaussian_ts_drawing_rounds(
    generators: Any, S: np.ndarray, n: np.ndarray, table: np.ndarray, start: int, scale: np.ndarray,
    actions: np.ndarray, watch: np.ndarray | None = None, drawn: np.ndarray | None = None,
    factor: float = 1.0,
) -> None:
    """:func:`gaussian_ts_rounds` from local round ``start`` for every repetition, the noise drawn
    in the loop from ``generators`` (a :func:`generator_list`) instead of read from a buffer:
    repetition r's N draws a round come from its generator in the order a (C, N) buffer filled by
    ``standard_normal`` holds them, so actions, state, watched draws and the generators' states
    afterwards are those of filling the buffer and calling :func:`gaussian_ts_rounds`, bit for bit
    (tested), without the buffer; ``factor`` multiplies every draw first (the buffer of a
    noise-scaled stream, ``mechanisms.randomness.ScaledRandom``). Raises ``RuntimeError`` if numba
    is unavailable."""
    _kernel()
    if _GTS_DRAW is None or not available():
        raise RuntimeError("numba is not available (pip install 'dpaudit[fast]'; DPAUDIT_NUMBA != 0)")
    if scale.shape != (1,):
        raise ValueError(f"scale must hold sqrt(c) in one entry, got shape {scale.shape}")
    if len(generators) != S.shape[0]:
        raise ValueError(f"{len(generators)} generators for {S.shape[0]} repetitions")
    if watch is None or drawn is None:
        watch, drawn = np.empty(0, dtype=np.intp), np.empty((1, 1))
    _GTS_DRAW(generators, S, n, table, int(start), scale, actions, np.ascontiguousarray(watch, dtype=np.intp),
              drawn, float(factor))  # fmt: skip


def lazy_ts_chunk(*args: Any) -> int:
    """Rounds ``t0 .. t0+C-1`` of one repetition of Lazy-DP-TS, compiled
    (:func:`bandits.engine._numba_kernels.lazy_ts_kernel`; its arguments). Raises ``RuntimeError`` if
    numba is unavailable."""
    _kernel()
    if _LAZY is None or not available():
        raise RuntimeError("numba is not available (pip install 'dpaudit[fast]'; DPAUDIT_NUMBA != 0)")
    return int(_LAZY(*args))


def beta_ts_chunk(
    gen: np.random.Generator, U: np.ndarray, table: np.ndarray, alpha: np.ndarray, beta: np.ndarray,
    actions: np.ndarray,
) -> None:
    """Rounds of one repetition of Beta-Bernoulli Thompson sampling, compiled
    (:func:`bandits.engine._numba_kernels.beta_ts_kernel`): posterior draws from ``gen``, trial
    uniforms ``U`` (C,), outcomes ``table`` (C, N); ``alpha``, ``beta`` (N,) and ``actions`` (C,)
    written in place. Raises ``RuntimeError`` if numba is unavailable."""
    _kernel()
    if _BETA is None or not available():
        raise RuntimeError("numba is not available (pip install 'dpaudit[fast]'; DPAUDIT_NUMBA != 0)")
    _BETA(gen, U, table, alpha, beta, actions)


def fill_standard_normal(gen: np.random.Generator, out: np.ndarray) -> None:
    """``gen.standard_normal(out=out)`` (``out`` C-contiguous float64), compiled where numba is
    available: the same values and the same generator state afterwards, bit for bit (tested).

    >>> a, b = np.empty((3, 2)), np.empty((3, 2))
    >>> fill_standard_normal(np.random.default_rng(1), a)
    >>> bool((a == np.random.default_rng(1).standard_normal(out=b)).all())
    True
    """
    if out.size >= _FILL_MIN and HAVE_NUMBA and not _TRIED:
        _kernel()
    # anything but a plain Generator (a wrapped one, e.g. a planted bug's) draws through its own method
    if (_FILL is None or out.size < _FILL_MIN or type(gen) is not np.random.Generator
            or not out.flags.c_contiguous or out.dtype != np.float64):
        gen.standard_normal(out=out)
        return
    _FILL(gen, out)


def dp_ts_ucb_chunk(t0: int, init_end: int, zoff: int, table: np.ndarray, Z: np.ndarray,
                    perm: np.ndarray, max_index: bool, phi: int, sqrtL: float, f: int,
                    state: dict[str, np.ndarray], actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rounds ``t0 ..`` of DP-TS-UCB for every repetition, compiled
    (:func:`bandits.engine._numba_kernels.dp_ts_ucb_kernel`: the step loop's arithmetic, bit for
    bit, tested). ``state`` holds the agent's (R, K) arrays mean, sd, n, h, drawn, mx, ep, N, Phi
    (updated in place); returns the epoch closings as an int64 (E, 6) array (repetition, arm,
    round, samples drawn from the retired mean, its observations, whether it existed) and the
    retired means' scales (E,). Raises ``RuntimeError`` if numba is unavailable."""
    _kernel()
    if _DPTS is None or not available():
        raise RuntimeError("numba is not available (pip install 'dpaudit[fast]'; DPAUDIT_NUMBA != 0)")
    R, C = actions.shape
    ev = np.empty((R * C, 6), dtype=np.int64)
    ev_sd = np.empty(R * C)
    k = _DPTS(int(t0), int(init_end), int(zoff), np.ascontiguousarray(table, dtype=float),
              np.ascontiguousarray(Z, dtype=float), np.ascontiguousarray(perm, dtype=np.int64),
              bool(max_index), int(phi), float(sqrtL), int(f),
              *(state[key] for key in ("mean", "sd", "n", "h", "drawn", "mx", "ep", "N", "Phi")),
              actions, ev, ev_sd)  # fmt: skip
    return ev[:k], ev_sd[:k]


def cucb_dp_chunk(*args: Any) -> int:
    """A chunk of CUCB-DP's rounds on a top-k problem, compiled
    (:func:`bandits.engine._numba_kernels.cucb_dp_kernel`; its arguments; the NumPy step loop's
    float operations in the same order: :mod:`bandits.semibandits.tree_engine`). Returns the
    number of tree nodes drawn, −1 on a NaN score. Raises ``RuntimeError`` if numba is unavailable."""
    _kernel()
    if _CUCBDP is None or not available():
        raise RuntimeError("numba is not available (pip install 'dpaudit[fast]'; DPAUDIT_NUMBA != 0)")
    return int(_CUCBDP(*args))


def ucb1_chunk(t0: int, alpha: float, S: np.ndarray, n: np.ndarray, table: np.ndarray,
               actions: np.ndarray) -> None:
    """Rounds ``t0 ..`` of UCB1 for every repetition, compiled
    (:func:`bandits.engine._numba_kernels.ucb1_kernel`: the step loop's arithmetic, bit for bit,
    tested); ``S``, ``n`` updated and ``actions`` (R, C) written in place. Raises
    ``RuntimeError`` if numba is unavailable."""
    _kernel()
    if _UCB1 is None or not available():
        raise RuntimeError("numba is not available (pip install 'dpaudit[fast]'; DPAUDIT_NUMBA != 0)")
    _UCB1(int(t0), float(alpha), S, n, np.ascontiguousarray(table, dtype=float), actions)


def stream_uniforms(state: np.ndarray, inc: np.ndarray, count: int) -> np.ndarray | None:
    """The next ``count`` uniforms of the PCG64 state ``state`` ((high, low) uint64 words, advanced
    in place) with increment ``inc``: ``Generator.random(count)`` of a generator in that state,
    bit for bit. None without numba."""
    if not available() or _UNIF is None:
        return None
    out = np.empty(int(count))
    _UNIF(state, inc, out)
    return out


def gaussian_ts_stream_rounds(
    generators: Any, stream: Any, S: np.ndarray, n: np.ndarray, scale: np.ndarray, actions: np.ndarray,
    observed: np.ndarray,
) -> None:
    """Play a whole chunk of sampling rounds of Gaussian Thompson sampling for every repetition r,
    the posterior draws from ``generators[r]`` and the outcomes read from the
    :class:`~bandits.engine.bernoulli_stream.BernoulliStream` ``stream``
    (:func:`bandits.engine._stream_kernels.gaussian_ts_stream_kernel`): the actions, the state
    ``S``, ``n`` and both streams end exactly as :func:`gaussian_ts_rounds` on the drawn noise
    and table leaves them (tested). ``observed`` (R, C) receives the outcomes of the played arms.
    ``scale`` as in :func:`gaussian_ts_rounds`. Raises ``RuntimeError`` if numba is unavailable."""
    _kernel()
    if _GTS_STREAM is None or not available():
        raise RuntimeError("numba is not available (pip install 'dpaudit[fast]'; DPAUDIT_NUMBA != 0)")
    if scale.shape != (1,):
        raise ValueError(f"scale must hold sqrt(c) in one entry, got shape {scale.shape}")
    for r, g in enumerate(generators):
        _GTS_STREAM(g, stream.state[r], stream.jump_mul, stream.jump_add[r], stream.probs, S[r], n[r], scale,
                    actions[r], observed[r])  # fmt: skip


def running_sums(carry: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Row r: carry[r] + x[r, 0], then + x[r, 1], … (R, C): ``numpy.cumsum`` continued from a carry,
    the same floats (both add left to right); compiled when the kernels are loaded already (an
    agent loaded them), about three times faster than NumPy's accumulate here.

    >>> running_sums(np.array([1.0]), np.array([[0.5, 0.25]])).tolist()
    [[1.5, 1.75]]
    """
    if _RSUM is not None and x.size >= 4096 and x.dtype == np.float64 and available():
        out = np.empty(x.shape)
        _RSUM(np.ascontiguousarray(carry, dtype=float), np.ascontiguousarray(x), out)
        return out
    return np.cumsum(np.concatenate([carry[:, None], x], axis=1), axis=1)[:, 1:]


def single_arm_tally(
    a: np.ndarray, gaps: np.ndarray, obs: np.ndarray, cum_gap: np.ndarray, cum_rew: np.ndarray,
    loc: np.ndarray, g_at: np.ndarray, w_at: np.ndarray, pulls: np.ndarray,
) -> bool:
    """A chunk's regret sums and pull counts in one pass
    (:func:`bandits.engine._numba_kernels.single_arm_tally_kernel`), when the kernels are loaded
    already and the chunk is large; False (nothing done) otherwise."""
    if _TALLY is None or a.size < 4096 or not available():
        return False
    _TALLY(np.ascontiguousarray(a), gaps, np.ascontiguousarray(obs, dtype=float), cum_gap, cum_rew,
           np.ascontiguousarray(loc, dtype=np.int64), g_at, w_at, pulls)  # fmt: skip
    return True
