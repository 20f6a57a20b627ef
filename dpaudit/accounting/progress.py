"""Progress bars for accounting work that can take more than a second.

Accounting is usually milliseconds; what can take longer is a PLD composition of many distinct
non-Gaussian leaves, or a ledger that expands into thousands of per-unit alternatives. The
bar is off unless a caller switches it on — the command line does so only when stderr is a
terminal and ``--json`` is not given — and even then it is drawn only once the work has run for
one second (tqdm's ``delay``), on stderr, and removed when done.

The methods report through :func:`advance` / :func:`expect` without knowing whether a bar is
shown (a context variable holds the current bar), so the
:class:`~dpaudit.accounting.protocol.AccountingMethod` signatures stay unchanged.

Example (nothing is drawn unless enabled):
    >>> with task(3, "accounting") as bar:
    ...     advance(3)
    >>> bar is None
    True
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["enabled", "task", "advance", "expect", "label", "DELAY_SECONDS"]

DELAY_SECONDS = 1.0
"""A bar appears only after the work has taken this long."""

_ENABLED: ContextVar[bool] = ContextVar("dpaudit_accounting_progress", default=False)
_BAR: ContextVar[Any] = ContextVar("dpaudit_accounting_bar", default=None)


@contextmanager
def enabled(on: bool = True) -> Iterator[None]:
    """Within the block, accounting work longer than a second shows a bar on stderr."""
    token = _ENABLED.set(bool(on))
    try:
        yield
    finally:
        _ENABLED.reset(token)


@contextmanager
def task(total: int, desc: str) -> Iterator[Any]:
    """A bar of ``total`` steps for the block (None when bars are off or one is already open:
    nested work reports to the outer bar)."""
    if not _ENABLED.get() or _BAR.get() is not None:
        yield None
        return
    from dpaudit.tasks import progress_bar

    bar = progress_bar(total, desc, unit="step", delay=DELAY_SECONDS)
    token = _BAR.set(bar)
    try:
        yield bar
    finally:
        _BAR.reset(token)
        bar.close()


def advance(n: int = 1) -> None:
    """``n`` steps of the current task are done."""
    bar = _BAR.get()
    if bar is not None:
        bar.update(n)


def expect(n: int) -> None:
    """The current task has ``n`` more steps than announced (e.g. a PLD's leaves)."""
    bar = _BAR.get()
    if bar is not None:
        bar.total = (bar.total or 0) + n
        bar.refresh()


def label(text: str) -> None:
    """Show what is being computed now (e.g. the method's name)."""
    bar = _BAR.get()
    if bar is not None:
        bar.set_postfix_str(text, refresh=False)
