"""Realistic privacy bugs, planted in the code that runs, for every registered private algorithm.

A bug changes what an algorithm's mechanisms *do* and leaves what it *declares* untouched, so the
certificate still describes the intended algorithm — exactly the situation an audit must catch.
Each bug is a context manager that patches the running code (the privacy noise generators of the
run, an agent's up-front noise table, or a mechanism class's release method) and restores it on
exit. Five bug types per algorithm (:func:`bugs_for`):

1. ``noise x1/2`` — every noise draw of the run at half its scale (all units);
2. ``noise x1/10`` — the same at a tenth;
3. ``unit 2 noiseless`` — the noise of one unit that is not the first (arm, item or coordinate
   2) dropped in every release;
4. ``one raw release`` — one release (arm 1's first, or the report of the user of round 1) made
   without noise;
5. ``epsilon not split`` — where the declaration composes s pieces per unit (K coordinates of a
   report, L levels of a tree), the noise calibrated to ε instead of ε/s (factor 1/s); where each
   unit enters one release only (parallel composition: nothing to split), ``first releases raw``
   instead — the initial release of every arm made without noise.

For Gaussian Thompson sampling, whose privacy is its posterior sampling, the bugs scale the
posterior draws (``run.random``'s normal draws) or drop the noise of some of them (arm 2's, arm 1's
first); ``epsilon not split`` is replaced by the draws at a fifth of their scale (there is no split).

Used by ``benchmarks/bench_planted_bugs.py`` (the detection table) and ``tests/test_planted_bugs.py``.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from bandits.policy import Policy
from benchmarks.planted_bug_tools import Bug, ScaledRandom
from benchmarks.planted_bug_tools import agent_edit as _agent_edit
from benchmarks.planted_bug_tools import method_edit as _method_edit
from benchmarks.planted_bug_tools import patched as _patched
from benchmarks.planted_bug_tools import scale_bugs as _scale_bugs
from benchmarks.planted_bug_tools import scaled_stream as _scaled_stream
from benchmarks.planted_bug_tools import split_bug as _split_bug

__all__ = ["Bug", "ScaledRandom", "bugs_for", "BUG_TYPES"]

BUG_TYPES = ("noise x1/2", "noise x1/10", "unit 2 noiseless", "one raw release", "epsilon not split")


def _zeros(index: tuple[Any, ...]) -> Callable[[Any], None]:
    def edit(agent: Any) -> None:
        agent.Z[(slice(None),) + index] = 0.0

    return edit


def _table_bugs(cls: type, unit_axis: int, first_axis: int, shape_rank: int) -> list[Bug]:
    """Bugs 3-5 of an agent with an up-front noise table ``Z`` (R, …): ``unit_axis`` indexes the
    arm, ``first_axis`` the epoch/episode (0-based position of the first release along it)."""

    def index(arm: Any, first: Any) -> tuple[Any, ...]:
        idx: list[Any] = [slice(None)] * shape_rank
        idx[unit_axis] = arm
        idx[first_axis] = first
        return tuple(idx)

    return [
        Bug(
            "unit 2 noiseless",
            "arm 2's noise dropped in every release",
            _agent_edit(cls, _zeros(index(2, slice(None)))),
            math.inf,
        ),
        Bug(
            "one raw release",
            "arm 1's first release made without noise",
            _agent_edit(cls, _zeros(index(1, 0))),
            math.inf,
        ),
        Bug(
            "epsilon not split",
            "n/a (each reward enters one release: nothing to split); instead every arm's first "
            "release made without noise",
            _agent_edit(cls, _zeros(index(slice(None), 0))),
            math.inf,
        ),
    ]


def bugs_for(key: str, policy: Policy, n_arms: int, k: int | None = None) -> list[Bug]:
    """The five planted bugs of registered algorithm ``key`` (module docstring) for ``policy`` on
    ``n_arms`` arms (``k``: the size of a played set or list, where there is one)."""
    cls = type(policy)
    if key in ("lazy-ucb", "lazy-dp-ts"):  # Z[r, arm, epoch]
        return _scale_bugs(cls) + _table_bugs(cls, 0, 1, 2)
    if key in ("adap-ucb", "adap-klucb"):  # Z[r, arm, episode]
        return _scale_bugs(cls) + _table_bugs(cls, 0, 1, 2)
    if key == "dp-se":  # Z[r, epoch, arm]; epoch 1 is the first
        bugs = _table_bugs(cls, 1, 0, 2)
        edit = [_zeros((slice(None), 2)), _zeros((1, 1)), _zeros((1, slice(None)))]
        bugs = [replace(b, plant=_agent_edit(cls, e)) for b, e in zip(bugs, edit)]
        return _scale_bugs(cls) + bugs
    if key == "dp-ts-ucb":  # per chunk Z[r, round, arm] from run.noise, one draw per arm and round
        return _dp_ts_ucb_bugs(cls, policy)
    if key in ("rnm-ftnl", "naive-ftnl"):  # Z[r, epoch, arm]
        edit = [_zeros((slice(None), 2)), _zeros((2, 1))]
        out = _scale_bugs(cls) + [
            Bug(
                "unit 2 noiseless",
                "arm 2's noise dropped in every epoch",
                _agent_edit(cls, edit[0]),
                math.inf,
            ),
            Bug("one raw release", "arm 1's noise dropped in epoch 2", _agent_edit(cls, edit[1]), math.inf),
        ]
        if key == "naive-ftnl":
            return out + [_split_bug(cls, n_arms, f"the {n_arms} noisy sums of an epoch")]
        return out + [
            Bug(
                "epsilon not split",
                "n/a (one report-noisy-max per epoch); instead the noise of every arm but 0 dropped",
                _agent_edit(cls, _zeros((slice(None), slice(1, None)))),
                math.inf,
            )
        ]
    return _mechanism_bugs(key, cls, n_arms, k)


def _chunk_noise_edit(edit: Callable[[Any, int], None]) -> Callable[[], Any]:
    """``edit(agent, t0)`` on a DP-TS-UCB agent's chunk of noise right after it is drawn."""
    from bandits.dp_ts_ucb.policy import DPTSUCBAgent

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def prepare(self: Any, t0: int, t1: int) -> None:
            original(self, t0, t1)
            self._Z = self._Z.copy()
            edit(self, t0)

        return prepare

    return _method_edit(DPTSUCBAgent, "prepare", wrap)


def _dp_ts_ucb_bugs(cls: type, policy: Any) -> list[Bug]:
    """Arm 2's samples noiseless; arm 1's first sample noiseless; the phi samples of a mean each
    calibrated to the whole budget (noise x 1/sqrt(phi))."""

    def arm2(agent: Any, t0: int) -> None:
        agent._Z[:, :, 2] = 0.0

    def first_of_arm1(agent: Any, t0: int) -> None:
        if agent._Z.shape[1] and agent._zoff == agent.init_end:  # the chunk of the first sampling round
            agent._Z[:, 0, 1] = 0.0

    phi = policy.privacy(policy.design_horizon or 2).samples
    return _scale_bugs(cls) + [
        Bug("unit 2 noiseless", "arm 2's samples drawn without noise", _chunk_noise_edit(arm2), math.inf),
        Bug("one raw release", "arm 1's first sample drawn without noise", _chunk_noise_edit(first_of_arm1),
            math.inf),
        Bug("epsilon not split", f"each of the {phi} samples of an epoch mean calibrated to the whole budget "
            f"(noise x 1/sqrt({phi}))", _scaled_stream(cls, 1 / math.sqrt(phi)), math.sqrt(phi)),
    ]  # fmt: skip


def _ts_draws_zeroed(where: Callable[[Any], Any]) -> Callable[[], Any]:
    """Gaussian Thompson sampling's standard normals at ``where(agent)`` (an index into the
    chunk's noise Z[r, round, arm], or None) set to 0 after every draw: those posterior draws are
    their means."""
    from bandits.thompson.agent import GaussianTSAgent

    def plant() -> contextlib.AbstractContextManager[None]:
        original = GaussianTSAgent.prepare

        def prepare(self: Any, t0: int, t1: int) -> None:
            original(self, t0, t1)
            index = where(self)
            if index is not None and self._Z.shape[1]:
                self._Z[index] = 0.0

        stack = contextlib.ExitStack()
        stack.enter_context(_patched(GaussianTSAgent, "prepare", prepare))
        # the bug lives in the noise buffer: an audit block's compiled loop would otherwise draw
        # its noise itself (the same numbers) and never fill the buffer
        stack.enter_context(_patched(GaussianTSAgent, "_generator_list", property(lambda self: None)))
        return stack

    return plant


def _mechanism_bugs(key: str, cls: type, n_arms: int, k: int | None) -> list[Bug]:
    """Bugs 3-5 planted in the shared mechanism classes the algorithm releases through."""
    from mechanisms.additive import AdditiveNoiseMechanism
    from mechanisms.row_reports import RowReports

    if key == "ts":
        return _scale_bugs(cls, "random") + [
            Bug("unit 2 noiseless", "arm 2's posterior draws without noise (its posterior mean)",
                _ts_draws_zeroed(lambda agent: (slice(None), slice(None), 2)), math.inf),
            Bug("one raw release", "arm 1's first posterior draw without noise",
                _ts_draws_zeroed(lambda a: (slice(None), 0, 1) if a._zoff == a._prepull_end else None),
                math.inf),
            Bug(
                "epsilon not split",
                "n/a (no split); instead the posterior draws x 0.2",
                _scaled_stream(cls, 0.2, "random"),
                5.0,
            ),
        ]
    if key in ("dpucb-mat", "dpts-mat"):
        return (
            _scale_bugs(cls) + _epoch_sum_bugs() + [_split_bug(cls, k or 1, f"the {k} releases of a basis")]
        )
    if key == "cucb-dp":
        levels = _tree_levels(cls)
        return _scale_bugs(cls) + _tree_bugs() + [_split_bug(cls, levels, f"the {levels} levels of the tree")]
    if key in ("cascade-dp", "cascade-dp-sound"):
        return _scale_bugs(cls) + _hybrid_bugs(key) + [_split_bug(cls, k or 1, f"the {k} items of a list")]
    release = (
        (RowReports, "release", "standard")
        if key.startswith("cascade-ldp")
        else (AdditiveNoiseMechanism, "release_batch", "standard")
    )
    bugs = _scale_bugs(cls) + _report_bugs(*release)
    gaussian = "gaussian" in key
    if key == "cucb-ldp2":  # one coordinate per report: no split
        return bugs + [
            Bug(
                "epsilon not split",
                "n/a (one coordinate per report); instead the reports of rounds 1-4 made without noise",
                _method_edit(*release[:2], _zero_rounds(release[2], 1, 5)),
                math.inf,
            )
        ]
    pieces = math.sqrt(k or 1) if gaussian else (k or 1)
    what = f"the sqrt({k}) l2 sensitivity of a report" if gaussian else f"the {k} coordinates of a report"
    return bugs + [_split_bug(cls, pieces, what)]


def _zero_rounds(
    arg: str, first: int, stop: int, column: int | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Wrap a release method ``f(self, ..., arg, ..., round=...)`` so that its standard noise
    ``arg`` is 0 in rounds [first, stop) (in column ``column`` only, when given)."""

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        import inspect

        params = list(inspect.signature(original).parameters)
        pos, rpos = params.index(arg), params.index("round")

        def release(*args: Any, **kw: Any) -> Any:
            args_l = list(args)
            rnd = kw["round"] if "round" in kw else args_l[rpos]
            if first <= rnd < stop:
                z = np.array(kw[arg] if arg in kw else args_l[pos], dtype=float)
                if column is None or z.ndim < 2:
                    z[...] = 0.0
                else:
                    z[..., column] = 0.0
                if arg in kw:
                    kw[arg] = z
                else:
                    args_l[pos] = z
            return original(*args_l, **kw)

        return release

    return wrap


def _report_bugs(owner: type, name: str, arg: str) -> list[Bug]:
    big = 1 << 62
    return [
        Bug(
            "unit 2 noiseless",
            "coordinate 2 of every report sent without noise (the whole report where it has one coordinate)",
            _method_edit(owner, name, _zero_rounds(arg, 0, big, 2)),
            math.inf,
        ),
        Bug(
            "one raw release",
            "the report of the user of round 1 sent without noise",
            _method_edit(owner, name, _zero_rounds(arg, 1, 2)),
            math.inf,
        ),
    ]


def _tree_levels(cls: type) -> int:
    from mechanisms.continual.tree import tree_levels

    return int(tree_levels(32))


def _tree_bugs() -> list[Bug]:
    from mechanisms.continual.tree_batch import BatchTreeSums

    def column(original: Callable[..., Any]) -> Callable[..., Any]:
        def noise(self: Any) -> Any:
            out = np.array(original(self))
            out[:, 2] = 0.0
            return out

        return noise

    def first(original: Callable[..., Any]) -> Callable[..., Any]:
        def noise(self: Any) -> Any:
            out = np.array(original(self))
            if self.released == 1:  # the first node of the run
                out[...] = 0.0
            return out

        return noise

    return [
        Bug(
            "unit 2 noiseless",
            "arm 2's coordinate of every tree node without noise",
            _method_edit(BatchTreeSums, "_noise", column),
            math.inf,
        ),
        Bug(
            "one raw release",
            "the first tree node released without noise",
            _method_edit(BatchTreeSums, "_noise", first),
            math.inf,
        ),
    ]


def _hybrid_bugs(key: str) -> list[Bug]:
    from mechanisms.continual.hybrid_batch import BatchHybridStreams, BatchHybridSums

    if key == "cascade-dp-sound":  # step(x, z) with z (R, dim)

        def column(original: Callable[..., Any]) -> Callable[..., Any]:
            def step(self: Any, x: Any, z: Any) -> Any:
                z = np.array(z, dtype=float)
                z[:, 2] = 0.0
                return original(self, x, z)

            return step

        def first(original: Callable[..., Any]) -> Callable[..., Any]:
            def step(self: Any, x: Any, z: Any) -> Any:
                z = np.array(z, dtype=float)
                if int(self.t) == 0:
                    z[...] = 0.0
                return original(self, x, z)

            return step

        return [
            Bug(
                "unit 2 noiseless",
                "coordinate 2 of every node without noise",
                _method_edit(BatchHybridSums, "step", column),
                math.inf,
            ),
            Bug(
                "one raw release",
                "the first node released without noise",
                _method_edit(BatchHybridSums, "step", first),
                math.inf,
            ),
        ]

    def stream(original: Callable[..., Any]) -> Callable[..., Any]:
        def insert(self: Any, rows: Any, streams: Any, x: Any, z: Any, *, unit: int) -> Any:
            z = np.where(np.asarray(streams) == 2, 0.0, np.asarray(z, dtype=float))
            return original(self, rows, streams, x, z, unit=unit)

        return insert

    def first(original: Callable[..., Any]) -> Callable[..., Any]:
        def insert(self: Any, rows: Any, streams: Any, x: Any, z: Any, *, unit: int) -> Any:
            z = np.asarray(z, dtype=float) * (0.0 if unit == 1 else 1.0)
            return original(self, rows, streams, x, z, unit=unit)

        return insert

    return [
        Bug(
            "unit 2 noiseless",
            "item 2's counter without noise",
            _method_edit(BatchHybridStreams, "insert", stream),
            math.inf,
        ),
        Bug(
            "one raw release",
            "the elements of round 1 inserted without noise",
            _method_edit(BatchHybridStreams, "insert", first),
            math.inf,
        ),
    ]


def _epoch_sum_bugs() -> list[Bug]:
    from mechanisms.continual.epoch_sums_batch import BatchLazyEpochs

    def masked(original: Callable[..., Any], mask_of: Callable[..., Any]) -> Callable[..., Any]:
        def release(self: Any, *args: Any, **kw: Any) -> Any:
            tape, take = self.noise, self.noise.take
            mask = mask_of(self, *args)

            def zeroed(rows: Any, width: int = 1) -> Any:
                return take(rows, width) * mask

            tape.take = zeroed
            try:
                return original(self, *args, **kw)
            finally:
                del tape.take

        return release

    def arm2(original: Callable[..., Any]) -> Callable[..., Any]:
        return masked(original, lambda self, rows, arms: (np.asarray(arms) != 2)[:, None].astype(float))

    def arm2_all(original: Callable[..., Any]) -> Callable[..., Any]:
        return masked(original, lambda self, *a: (np.arange(self.n_arms) != 2).astype(float)[None, :])

    def arm1_first(original: Callable[..., Any]) -> Callable[..., Any]:
        return masked(original, lambda self, *a: (np.arange(self.n_arms) != 1).astype(float)[None, :])

    @contextlib.contextmanager
    def both() -> Iterator[None]:
        with (
            _patched(BatchLazyEpochs, "_release", arm2(BatchLazyEpochs._release)),
            _patched(BatchLazyEpochs, "release_all", arm2_all(BatchLazyEpochs.release_all)),
        ):
            yield

    return [
        Bug("unit 2 noiseless", "arm 2's epoch sums released without noise", both, math.inf),
        Bug(
            "one raw release",
            "arm 1's initial release without noise",
            _method_edit(BatchLazyEpochs, "release_all", arm1_first),
            math.inf,
        ),
    ]
