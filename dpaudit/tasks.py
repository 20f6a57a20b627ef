"""Run one function over a list of argument tuples: in order, on an optional executor, with a bar.

:func:`run_tasks` is the one task runner of the toolkit: ``[fn(*a) for a in args]``, either
in-process or on any ``concurrent.futures.Executor`` (a process or thread pool,
``dask.distributed``'s ``client.get_executor()``, …). Results always come back in the order of
``args``, so a caller that seeds task ``i`` from its position gets the same numbers with or
without an executor. With ``progress=True`` a tqdm bar on stderr counts the work done, in units
of work per task (``sizes``: e.g. trajectories or simulated steps; one per task by default), and
is removed when done. :func:`progress_bar` is the bar itself, shared with
:mod:`dpaudit.accounting.progress`.

Example:
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> args = [(2, 3), (4, 5), (6, 7)]
    >>> run_tasks(pow, args)
    [8, 1024, 279936]
    >>> with ThreadPoolExecutor(2) as pool:
    ...     run_tasks(pow, args, executor=pool, sizes=[1, 10, 100])
    [8, 1024, 279936]
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # pragma: no cover (annotations only: concurrent.futures loads logging and threads)
    from concurrent.futures import Executor, Future

__all__ = ["run_tasks", "progress_bar"]

R = TypeVar("R")


def progress_bar(
    total: int, desc: str, *, unit: str = "task", unit_scale: bool = False, delay: float = 0.0
) -> Any:
    """A tqdm bar of ``total`` units on stderr, removed when closed (``leave=False``); drawn only
    after ``delay`` seconds (tqdm is imported here, not when the toolkit is).

    >>> bar = progress_bar(3, "demo", delay=60.0)   # nothing is drawn within a minute
    >>> _ = bar.update(3)
    >>> bar.n, bar.total
    (3, 3)
    >>> bar.close()
    """
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, unit_scale=unit_scale, delay=delay, leave=False,
                file=sys.stderr)  # fmt: skip


def _no_progress(n: int) -> None:
    """The progress callback when no bar is shown."""


def run_tasks(
    fn: Callable[..., R],
    args: Sequence[tuple[Any, ...]],
    *,
    executor: Executor | None = None,
    progress: bool = False,
    desc: str = "",
    unit: str = "task",
    sizes: Sequence[int] | None = None,
    unit_scale: bool = False,
    report_progress: bool = False,
) -> list[R]:
    """``[fn(*a) for a in args]``, in the order of ``args``.

    Without ``executor`` the tasks run one after another in this process. With one, every task
    is submitted first (``executor.submit(fn, *a)``) and the results are collected in order; an
    exception of a task is raised when its result is collected, after the tasks not yet started
    are cancelled. ``fn`` and the arguments must then be picklable for a process pool.

    Progress: with ``progress=True`` a :func:`progress_bar` of ``sum(sizes)`` units (``sizes[i]``
    is the work of task ``i``; 1 per task by default), labelled ``desc`` in ``unit``, advances by
    ``sizes[i]`` when result ``i`` is collected. With ``report_progress=True`` a task that runs
    in this process reports its own progress instead: it is called as ``fn(*a, advance)`` and
    calls ``advance(n)`` for every ``n`` units done (a no-op callable when no bar is shown); on an
    executor (the bar cannot be sent to another process) it is called as ``fn(*a)`` and its size
    is counted when its result arrives.

    >>> seen = []
    >>> def work(x, advance):
    ...     advance(x)
    ...     seen.append(x)
    ...     return -x
    >>> run_tasks(work, [(1,), (2,)], report_progress=True), seen
    ([-1, -2], [1, 2])
    """
    tasks = [tuple(a) for a in args]
    weights = [1] * len(tasks) if sizes is None else [int(s) for s in sizes]
    if len(weights) != len(tasks):
        raise ValueError(f"sizes must give one size per task ({len(tasks)}), got {len(weights)}")
    bar = progress_bar(sum(weights), desc, unit=unit, unit_scale=unit_scale) if progress else None
    try:
        if executor is None:
            return _in_process(fn, tasks, weights, bar, report_progress)
        return _on_executor(fn, tasks, weights, bar, executor)
    finally:
        if bar is not None:
            bar.close()


def _in_process(
    fn: Callable[..., R], tasks: list[tuple[Any, ...]], weights: list[int], bar: Any, report_progress: bool
) -> list[R]:
    """The tasks one after another in this process."""
    out: list[R] = []
    if report_progress:
        advance = _no_progress if bar is None else bar.update
        for a in tasks:
            out.append(fn(*a, advance))
        return out
    for a, w in zip(tasks, weights):
        out.append(fn(*a))
        if bar is not None:
            bar.update(w)
    return out


def _on_executor(
    fn: Callable[..., R], tasks: list[tuple[Any, ...]], weights: list[int], bar: Any, executor: Executor
) -> list[R]:
    """Every task submitted to ``executor``, the results collected in order."""
    futures: list[Future[R]] = [executor.submit(fn, *a) for a in tasks]
    out: list[R] = []
    try:
        for f, w in zip(futures, weights):
            out.append(f.result())
            if bar is not None:
                bar.update(w)
    except BaseException:
        for f in futures:
            f.cancel()
        raise
    return out
