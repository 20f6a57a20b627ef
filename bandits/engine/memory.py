"""How many rounds a chunk of the simulation holds: the chunk is sized to a memory budget.

A chunk holds its outcome table and the engine's buffers for R repetitions × N arms; about
:data:`BYTES_PER_CELL` bytes per round × repetition × arm for Gaussian TS's engine. Chunking
never changes the results, only the memory.

>>> chunk_rounds(10, 5, 2**20) > 0
True
"""

from __future__ import annotations

from dataclasses import dataclass

from dpaudit.validation import check_integer

__all__ = [
    "DEFAULT_CHUNK",
    "DEFAULT_MEMORY",
    "BYTES_PER_CELL",
    "chunk_rounds",
    "ChunkPlan",
    "memory_limit",
    "estimated_bytes",
]


DEFAULT_CHUNK = 8192
"""Most rounds per chunk."""
DEFAULT_MEMORY = 64 * 2**20  # 128 MiB peaked at 324 MB on the memory benchmark (R = 100, N = 50), 64 at 269
"""Default memory budget of a chunk, in bytes."""
BYTES_PER_CELL = 32
"""Bytes held per round × repetition × arm of a chunk (reward table, noise, the speculative
engine's padded copies), measured for Gaussian TS: 1.3 GB at 8192 × 100 × 50."""


def chunk_rounds(reps: int, n_arms: int, memory: int = DEFAULT_MEMORY) -> int:
    """Rounds per chunk so that a block of ``reps`` repetitions holds about ``memory`` bytes
    (at least 1, at most :data:`DEFAULT_CHUNK`).

    >>> chunk_rounds(10, 5), chunk_rounds(100, 50), chunk_rounds(10, 10**6)
    (8192, 419, 1)
    """
    per_round = BYTES_PER_CELL * max(1, reps) * max(1, n_arms)
    return int(min(DEFAULT_CHUNK, max(1, check_integer("memory", memory) // per_round)))


@dataclass(frozen=True)
class ChunkPlan:
    """Rounds per chunk: ``rounds`` where a chunk draws its outcome table (and an engine may keep
    (R, C, N) buffers), ``stream_rounds`` where the agent reads the outcome stream and holds
    O(R·C) arrays only (:attr:`bandits.policy.Agent.reads_outcome_stream`); chunking never changes
    the results.

    >>> ChunkPlan(4, 10).bounds(25, 6)
    [0, 4, 6, 16, 25]
    >>> ChunkPlan(4, 10).bounds(9, 20), ChunkPlan(4, 10).bounds(12, 0), ChunkPlan(4, 4).bounds(9, 3)
    ([0, 4, 8, 9], [0, 10, 12], [0, 4, 8, 9])
    """

    rounds: int
    stream_rounds: int

    @classmethod
    def budget(cls, reps: int, n_arms: int, memory: int = DEFAULT_MEMORY) -> ChunkPlan:
        """Both sized to ``memory``: :func:`chunk_rounds` of the arms, and of one arm's worth of
        cells for the streamed rounds."""
        return cls(chunk_rounds(reps, n_arms, memory), chunk_rounds(reps, 1, memory))

    def bounds(self, horizon: int, stream_from: int | None = None) -> list[int]:
        """Chunk boundaries 0 = t_0 < … < horizon: ``rounds`` apart before ``stream_from`` (None: no
        stream), ``stream_rounds`` apart from it on (one size: ``rounds`` apart throughout)."""
        same = stream_from is None or self.stream_rounds == self.rounds
        cut = horizon if same else min(max(stream_from or 0, 0), horizon)
        return list(range(0, cut, self.rounds)) + list(range(cut, horizon, self.stream_rounds)) + [horizon]


def memory_limit() -> int:
    """The most a simulation may hold: 3/4 of this machine's physical memory (8 GiB if unknown)."""
    import os

    try:
        return int(0.75 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - non-POSIX
        return 8 * 2**30


def estimated_bytes(
    repetitions: int,
    rep_block: int,
    n_arms: int,
    horizon: int,
    checkpoints: int,
    chunk: int,
    policies: int,
    action_size: int,
    record_actions: bool,
) -> int:
    """Peak bytes of a simulation, estimated before it starts: each block's chunk of outcomes and
    noise (:data:`BYTES_PER_CELL` per round × repetition × arm) and every policy's per-arm state
    (about 10 arrays of 8 bytes per repetition × arm), plus the results of all repetitions
    (two regret curves, pull counts and, if recorded, the actions).

    >>> round(estimated_bytes(100, 100, 50, 10**5, 50, 419, 1, 1, False) / 2**20)
    64
    """
    block = rep_block * n_arms * (BYTES_PER_CELL * chunk + 80 * policies)
    results = policies * repetitions * (16 * checkpoints + 8 * n_arms)
    actions = (
        policies * repetitions * horizon * action_size * (1 if n_arms <= 127 else 4) if record_actions else 0
    )
    return int(block + results + actions)
