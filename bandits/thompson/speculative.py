"""The speculative engine of Gaussian Thompson sampling: many rounds per NumPy call, exactly.

Per repetition, guess that the arm with the highest posterior mean (the "leader") is played for
the next K rounds; compute the samples θ of that hypothetical path for all K rounds at once
(only the leader's statistics move: a running sum of its rewards), and accept the rounds before
the first one in which another arm's θ reaches the leader's, plus that round itself (its state
is exact, so its argmax is too). Repetitions advance at their own pace. The arithmetic is the
one of :meth:`bandits.thompson.agent.GaussianTSAgent.select`/``update``, so the actions are
bit-identical to the step loop (tested); the gain is that Python overhead is paid per deviation,
not per round.

The functions work on the agent's arrays: reward sums ``S`` and counts ``n`` (R, N), the
chunk's noise ``Z`` (R, ·, N) starting at local round ``off``, the chunk's outcome ``table``
(R, C, N), and ``actions`` (R, C), all updated in place.

Example (one repetition, a clear leader: speculation plays the whole chunk):
    >>> import numpy as np
    >>> S, n = np.array([[9.0, 0.0]]), np.array([[9.0, 9.0]])
    >>> Z, table = np.zeros((1, 8, 2)), np.ones((1, 8, 2))
    >>> actions = np.empty((1, 8), dtype=np.intp)
    >>> p, K, aborted = speculate(S, n, Z, 0, table, 1.0, 0, 64, actions)
    >>> actions.tolist(), p.tolist(), aborted, n.tolist()
    ([[0, 0, 0, 0, 0, 0, 0, 0]], [8], False, [[17.0, 9.0]])
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["LENGTHS", "MIN_ADVANCE", "speculate", "catch_up", "write_runs"]

LENGTHS = (16, 32, 64, 128, 256, 512)
"""Speculation lengths K (powers of two: their strided windows are cached)."""
MIN_ADVANCE = 6
"""Speculation is abandoned when it advances fewer rounds than this per repetition and iteration."""


def write_runs(actions: np.ndarray, C: int, reps: list, starts: list, lens: list, arms: list) -> None:
    """Write runs of one arm into ``actions`` (R, C): run i is ``lens[i]`` rounds of ``arms[i]`` from
    local round ``starts[i]`` in repetition ``reps[i]`` (lists of arrays, concatenated)."""
    rep = np.concatenate(reps)
    ln = np.concatenate(lens)
    first = np.concatenate(starts) + rep * C
    ends = np.cumsum(ln)
    pos = np.repeat(first - (ends - ln), ln) + np.arange(int(ends[-1]) if ends.size else 0)
    actions.reshape(-1)[pos] = np.repeat(np.concatenate(arms), ln)


def _padded(Z: np.ndarray, off: int, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Arm-major, time-padded copies of the noise and the table (R, N, C + max K), so that K
    consecutive rounds are one strided window (the noise starts at local round ``off``)."""
    R, C, N = table.shape
    Zp = np.zeros((R, N, C + LENGTHS[-1]))
    Zp[:, :, off : off + Z.shape[1]] = Z.transpose(0, 2, 1)
    Tp = np.zeros((R, N, C + LENGTHS[-1]))
    Tp[:, :, :C] = table.transpose(0, 2, 1)
    return Zp, Tp


def speculate(
    S: np.ndarray, n: np.ndarray, Z: np.ndarray, off: int, table: np.ndarray, sqrtc: float,
    k0: int, K: int, actions: np.ndarray,
) -> tuple[np.ndarray, int, bool]:  # fmt: skip
    """Speculate from local round ``k0`` with first window length ``K``; return each
    repetition's local round from which the round loop must continue, the window length to
    start the next chunk with, and whether speculation was abandoned (when it was not, every
    repetition has reached the chunk end C)."""
    R, C, N = table.shape
    Zp, Tp = _padded(Z, off, table)
    win: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    p = np.full(R, k0)
    runs: tuple[list, list, list, list] = ([], [], [], [])
    devs: tuple[list, list, list] = ([], [], [])
    o = np.arange(N - 1)[None, :]
    aranges = np.arange(max(R, LENGTHS[-1]) + 1)
    act = np.arange(R)
    it, last = 0, int(p.sum())
    aborted = False
    while True:
        if act.size < R or p.max() >= C:
            act = np.flatnonzero(p < C)
        A = act.size
        if A == 0:
            break
        if K not in win:
            win[K] = (sliding_window_view(Zp, K, axis=2), sliding_window_view(Tp, K, axis=2))
        ar, pa = aranges[:A], p[act]
        lead, cs, m = leader_run(S, n, sqrtc, act, pa, K, C, win[K], o, ar, aranges[:K])
        S[act, lead] = cs[ar, m]  # accept m pulls of the leader
        n[act, lead] += m
        for lst, x in zip(runs, (act, pa, m, lead)):
            lst.append(x)
        _deviate(S, n, Zp, Tp, sqrtc, act, pa + m, (m < K) & (pa + m < C), p, devs)
        p[act] += m
        typical = 2 * int(m.sum()) // A  # adapt the window to the typical run between deviations
        K = next((k for k in LENGTHS if k >= typical), LENGTHS[-1])
        it += 1
        if it % 32 == 0:
            now = int(np.minimum(p, C).sum())
            if now - last < MIN_ADVANCE * 32 * A:
                aborted = True
                break
            last = now
    ones = [np.ones(len(x), dtype=np.intp) for x in devs[0]]
    write_runs(actions, C, runs[0] + devs[0], runs[1] + devs[1], runs[2] + ones, runs[3] + devs[2])
    return (p if aborted else np.full(R, C)), K, aborted


def _deviate(
    S: np.ndarray, n: np.ndarray, Zp: np.ndarray, Tp: np.ndarray, sqrtc: float, act: np.ndarray,
    td: np.ndarray, stopped: np.ndarray, p: np.ndarray, devs: tuple[list, list, list],
) -> None:  # fmt: skip
    """Play the stopping round of the repetitions that stopped inside the chunk: its state is
    exact, so its argmax is the one :meth:`select` would take."""
    d = np.flatnonzero(stopped)
    if not d.size:
        return
    rd, td = act[d], td[d]
    n1 = n[rd] + 1.0
    armd = (Zp[rd, :, td] * (sqrtc / np.sqrt(n1)) + S[rd] / n1).argmax(axis=1)
    S[rd, armd] += Tp[rd, armd, td]
    n[rd, armd] += 1.0
    for lst, x in zip(devs, (rd, td, armd)):
        lst.append(x)
    p[rd] += 1


def leader_run(
    S: np.ndarray, n: np.ndarray, sqrtc: float, act: np.ndarray, pa: np.ndarray, K: int, C: int,
    windows: tuple[np.ndarray, np.ndarray], o: np.ndarray, ar: np.ndarray, kk: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """For repetitions ``act`` at local rounds ``pa``: the leader (highest posterior mean), its
    running sums ``cs`` if pulled at every round of the K-round window, and ``m``, the number of
    rounds before another arm's θ reaches the leader's (K if none; the chunk end stops too)."""
    Zw, Tw = windows
    Sa, na = S[act], n[act]
    na1 = na + 1.0
    mu = Sa / na1
    sc = sqrtc / np.sqrt(na1)
    lead = mu.argmax(axis=1)
    others = o + (o >= lead[:, None])  # (A, N-1)
    # the other arms' samples over the window, and their maximum
    th = Zw[act[:, None], others, pa[:, None]]  # (A, N-1, K)
    arc = ar[:, None]
    th *= sc[arc, others][:, :, None]
    th += mu[arc, others][:, :, None]
    mx = th.max(axis=1)
    # the leader's samples if it is pulled at every round of the window
    cs = np.empty((act.size, K + 1))
    cs[:, 0] = Sa[ar, lead]
    cs[:, 1:] = Tw[act, lead, pa]
    np.cumsum(cs, axis=1, out=cs)  # cs[:, k] = leader's sum before the k-th round
    nl1 = na[ar, lead][:, None] + kk + 1.0
    thl = Zw[act, lead, pa] * (sqrtc / np.sqrt(nl1))
    thl += cs[:, :K] / nl1
    stop = mx >= thl
    if pa.max() + K > C:
        stop |= (pa[:, None] + kk) >= C
    return lead, cs, np.where(stop.any(axis=1), stop.argmax(axis=1), K)


def catch_up(
    S: np.ndarray, n: np.ndarray, mu: np.ndarray, scale: np.ndarray, Z: np.ndarray, off: int,
    sqrtc: float, p: np.ndarray, table: np.ndarray, actions: np.ndarray,
) -> int:  # fmt: skip
    """Bring the repetitions that lag behind (local round ``p``) up to the leader, one masked
    round at a time, with the arithmetic of ``select``/``update`` (``mu`` = S/(n+1) and
    ``scale`` = sqrt(c)/sqrt(n+1) must be current); return the round from which the
    synchronised step loop continues."""
    N = S.shape[1]
    kmax = int(p.max())
    muf, scf = mu.reshape(-1), scale.reshape(-1)
    Sf, nf = S.reshape(-1), n.reshape(-1)
    for k in range(int(p.min()), kmax):
        live = np.flatnonzero(p <= k)
        th = Z[live, k - off] * scale[live]
        th += mu[live]
        arm = th.argmax(axis=1)
        idx = live * N + arm
        Sf[idx] += table[live, k, arm]
        nf[idx] += 1.0
        n1 = nf[idx] + 1.0
        muf[idx] = Sf[idx] / n1
        scf[idx] = sqrtc / np.sqrt(n1)
        actions[live, k] = arm
    return kmax
