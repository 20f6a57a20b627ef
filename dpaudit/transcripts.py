"""What each repetition's mechanisms released: the value of every release, under a key.

A ledger records *which* releases a run made (privacy events); a transcript records *what* they
released. An audit that sees the transcripts of runs on neighbouring inputs can test the
releases themselves — the grey-box view of auditing DP-SGD's intermediate updates (Nasr, Song,
Thakurta, Papernot & Carlini 2021, "Adversary instantiation: lower bounds for differentially
private machine learning") — and so catches a noise-scale or budget-split bug at the release
where it happens, not only through its effect on the final output.

A key names one release so that the same release can be found in every run, for example
``"epoch sum arm 2 epoch 0"``; a vector release of width w is stored under the w keys
``key[0] … key[w-1]``. Each key keeps the first value a repetition released under it (NaN
where it made no such release). Transcripts are kept only when asked for (an audit), never in
a plain run.

Example:
    >>> import numpy as np
    >>> tr = Transcripts(2)
    >>> tr.add([0, 1], "sum arm 0", [0.5, 1.5])
    >>> tr.add([1], ["report"], np.array([[1.0, -1.0]]))
    >>> tr.add([1], "sum arm 0", [9.0])  # a repeated key keeps the first value
    >>> {k: v.tolist() for k, v in tr.columns().items()}
    {'sum arm 0': [0.5, 1.5], 'report[0]': [nan, 1.0], 'report[1]': [nan, -1.0]}
    >>> merge([tr.columns(), {"other": np.array([2.0])}], [2, 1])["other"].tolist()
    [nan, nan, 2.0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from dpaudit.validation import check_integer

__all__ = ["Transcripts", "merge"]


class Transcripts:
    """The released values of ``repetitions`` runs: one column (repetitions,) per release key."""

    def __init__(self, repetitions: int) -> None:
        self.repetitions = check_integer("repetitions", repetitions)
        self._cols: dict[str, np.ndarray] = {}

    def add(self, rows: Sequence[int] | np.ndarray, key: str | Sequence[str], values: ArrayLike) -> None:
        """Runs ``rows`` released ``values`` (one scalar or one vector per row) under ``key``
        (one key for all rows, or one per row). A key a row already holds keeps its first value."""
        rr = np.asarray(rows, dtype=np.intp).reshape(-1)
        if rr.size == 0:
            return
        vals = np.asarray(values, dtype=float).reshape(rr.size, -1)
        if isinstance(key, str):
            self._put(key, rr, vals)
            return
        keys = list(key)
        if len(keys) != rr.size:
            raise ValueError(f"key must be one string or one per row ({rr.size}), got {len(keys)}")
        groups: dict[str, list[int]] = {}
        for i, k in enumerate(keys):
            groups.setdefault(k, []).append(i)
        for k, idx in groups.items():
            self._put(k, rr[idx], vals[idx])

    def _put(self, key: str, rows: np.ndarray, vals: np.ndarray) -> None:
        width = vals.shape[1]
        names = [key] if width == 1 else [f"{key}[{i}]" for i in range(width)]
        for j, name in enumerate(names):
            col = self._cols.get(name)
            if col is None:
                col = self._cols[name] = np.full(self.repetitions, np.nan)
            fresh = np.isnan(col[rows])
            col[rows[fresh]] = vals[fresh, j]

    def __len__(self) -> int:
        return self.repetitions

    def columns(self) -> dict[str, np.ndarray]:
        """Every release key and its column of first values (NaN: no such release)."""
        return dict(self._cols)


def merge(parts: Sequence[Mapping[str, np.ndarray]], sizes: Sequence[int]) -> dict[str, np.ndarray]:
    """The columns of consecutive blocks of ``sizes`` repetitions, stacked (NaN where a block
    lacks a key)."""
    keys = list(dict.fromkeys(k for p in parts for k in p))
    out = {}
    for k in keys:
        out[k] = np.concatenate(
            [p[k] if k in p else np.full(n, np.nan) for p, n in zip(parts, sizes)]
        )
    return out
