"""The task runner (dpaudit.tasks): order, executor independence, progress totals, failures."""

from __future__ import annotations

import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

import pytest

import dpaudit.tasks as tasks
from dpaudit.tasks import run_tasks


def _slow_square(x: int, delay: float) -> int:
    time.sleep(delay)
    return x * x


def _square(x: int) -> int:
    return x * x


class _Bar:
    """Records what run_tasks does with its progress bar."""

    made: list[_Bar] = []

    def __init__(self, total: int, desc: str, **options: Any) -> None:
        self.total, self.desc, self.options = total, desc, options
        self.updates: list[int] = []
        self.closed = False
        _Bar.made.append(self)

    def update(self, n: int) -> None:
        self.updates.append(n)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def bars(monkeypatch: pytest.MonkeyPatch) -> list[_Bar]:
    _Bar.made = []
    monkeypatch.setattr(tasks, "progress_bar", _Bar)
    return _Bar.made


def test_results_keep_the_order_of_the_arguments_when_tasks_finish_out_of_order() -> None:
    args = [(i, 0.02 * (5 - i)) for i in range(6)]  # the first task finishes last
    with ThreadPoolExecutor(6) as pool:
        assert run_tasks(_slow_square, args, executor=pool) == [i * i for i in range(6)]


def test_executor_and_in_process_give_the_same_results() -> None:
    args = [(i,) for i in range(20)]
    here = run_tasks(_square, args)
    with ThreadPoolExecutor(3) as threads:
        threaded = run_tasks(_square, args, executor=threads)
    with ProcessPoolExecutor(2) as procs:
        processed = run_tasks(_square, args, executor=procs)
    assert here == threaded == processed == [i * i for i in range(20)]
    assert run_tasks(_square, []) == []


@pytest.mark.parametrize("use_executor", [False, True])
def test_progress_counts_units_of_work_per_task(bars: list[_Bar], use_executor: bool) -> None:
    args, sizes = [(1,), (2,), (3,)], [10, 20, 30]
    with ThreadPoolExecutor(2) as pool:
        out = run_tasks(_square, args, executor=pool if use_executor else None, progress=True, desc="demo",
                        unit="traj", sizes=sizes)  # fmt: skip
    assert out == [1, 4, 9]
    (bar,) = bars
    assert (bar.total, bar.desc, bar.options["unit"]) == (60, "demo", "traj")
    assert bar.updates == sizes and bar.closed


def test_progress_defaults_to_one_unit_per_task_and_no_bar_when_off(bars: list[_Bar]) -> None:
    run_tasks(_square, [(1,), (2,)], progress=True)
    assert bars[0].total == 2 and bars[0].updates == [1, 1]
    run_tasks(_square, [(1,), (2,)], progress=False)
    assert len(bars) == 1


def test_tasks_that_report_their_own_progress(bars: list[_Bar]) -> None:
    def work(steps: int, advance: Any) -> int:
        for _ in range(steps):
            advance(2)
        return steps

    assert run_tasks(work, [(3,), (1,)], progress=True, sizes=[6, 2], report_progress=True) == [3, 1]
    assert bars[0].total == 8 and bars[0].updates == [2, 2, 2, 2]
    with ThreadPoolExecutor(2) as pool:  # on an executor: no callback, sizes counted on arrival
        assert run_tasks(_square, [(3,), (1,)], executor=pool, progress=True, sizes=[6, 2],
                         report_progress=True) == [9, 1]  # fmt: skip
    assert bars[1].updates == [6, 2]
    assert run_tasks(work, [(2,)], report_progress=True) == [2]  # no bar: a no-op callback


def test_a_failing_task_raises_and_closes_the_bar(bars: list[_Bar]) -> None:
    with ThreadPoolExecutor(2) as pool, pytest.raises(ZeroDivisionError):
        run_tasks(divmod, [(1, 1), (1, 0), (2, 1)], executor=pool, progress=True)
    assert bars[0].closed and bars[0].updates == [1]
    with pytest.raises(ValueError, match="one size per task"):
        run_tasks(_square, [(1,)], sizes=[1, 2])
