"""Where the command line runs its parallel work: in this process, a local process pool
(``--workers N``), or an existing Dask cluster (``--scheduler ADDRESS``, or the environment
variable ``DPAUDIT_SCHEDULER``).

Every simulation, audit and tuning grid submits independent blocks (repetition chunks, audit
batches, candidates) to one ``concurrent.futures``-style executor and reassembles them in order,
so the numbers are the same wherever they ran. A Dask scheduler is reached through
``dask.distributed.Client(address).get_executor()`` (the ``dask`` extra: ``pip install
"dpaudit[dask]"``); its workers need the toolkit installed, in the same version.

>>> from argparse import Namespace
>>> parallel(Namespace(workers=1, scheduler=None)).executor is None
True
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpaudit.cli.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover (annotations only: concurrent.futures loads logging and threads)
    from concurrent.futures import Executor

__all__ = ["Parallel", "parallel", "SCHEDULER_VARIABLE", "add_parallel_options"]

SCHEDULER_VARIABLE = "DPAUDIT_SCHEDULER"


@dataclass
class Parallel:
    """An executor (None: in this process) and what to close when the command is done."""

    executor: Executor | None
    client: Any = None

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown()
        if self.client is not None:
            self.client.close()

    def __enter__(self) -> Parallel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def add_parallel_options(p: Any, workers_help: str) -> None:
    """``--workers N`` and ``--scheduler ADDRESS`` on a parser."""
    from dpaudit.cli.common import integer

    p.add_argument("--workers", type=integer("--workers", 1, 64), default=1,
                   help=f"{workers_help} (default 1)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run the parallel work on an existing Dask cluster (e.g. tcp://10.0.0.5:8786; "
                        f"default: the environment variable {SCHEDULER_VARIABLE}, else this machine)")


def parallel(args: Any) -> Parallel:
    """The executor the options (or ``DPAUDIT_SCHEDULER``) ask for."""
    workers = getattr(args, "workers", 1) or 1
    address = getattr(args, "scheduler", None)
    if address is None and workers <= 1:
        address = os.environ.get(SCHEDULER_VARIABLE) or None
    if address is not None and workers > 1:
        raise UsageError("give either --workers (a local process pool) or --scheduler (a Dask cluster), "
                         "not both")
    if address is not None:
        return _dask(address)
    if workers <= 1:
        return Parallel(None)
    from concurrent.futures import ProcessPoolExecutor

    return Parallel(ProcessPoolExecutor(workers))


def _dask(address: str) -> Parallel:
    try:
        from dask.distributed import Client
    except ImportError:
        raise UsageError(f"--scheduler {address}: dask.distributed is not installed "
                         '(pip install "dpaudit[dask]")') from None
    try:
        client = Client(address, timeout="10s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"--scheduler {address}: cannot reach the Dask scheduler ({exc})") from None
    return Parallel(client.get_executor(), client)
