"""The machinery of the planted bugs of :mod:`benchmarks.planted_bugs`: a bug is a context manager
that patches the running code and restores it on exit.

* :class:`~mechanisms.randomness.ScaledRandom` — per-repetition generators whose noise draws are
  too small by a factor (re-exported);
* :class:`Bug` — one planted bug (its kind, what it does, how it is planted, its leak factor);
* :func:`scaled_stream`, :func:`agent_edit`, :func:`method_edit` — patch a policy's noise stream,
  an agent right after it is built, or a method (a mechanism's release, an agent's noise draw);
* :func:`scale_bugs`, :func:`split_bug` — the bugs every algorithm shares (noise × 1/2, × 1/10,
  and a budget not split over the pieces a unit enters).

Example:
    >>> import numpy as np
    >>> g = ScaledRandom([np.random.SeedSequence(0)], 0.5)
    >>> full = np.random.Generator(np.random.PCG64(np.random.SeedSequence(0))).standard_normal(3)
    >>> bool(np.allclose(g.standard_normal((3,))[0], full / 2))
    True
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from bandits.policy import Policy, RunContext
from mechanisms.randomness import ScaledRandom

__all__ = ["Bug", "ScaledRandom", "agent_edit", "method_edit", "patched", "scale_bugs", "scaled_stream",
           "split_bug"]  # fmt: skip


@dataclass(frozen=True)
class Bug:
    """One planted bug: ``kind`` (one of :data:`BUG_TYPES`), what it does (``what``), and how it
    is planted (``plant``: a context manager factory); ``leak`` is the factor by which it
    multiplies the privacy loss of the affected releases (``inf`` for a noiseless release)."""

    kind: str
    what: str
    plant: Callable[[], contextlib.AbstractContextManager[None]]
    leak: float


@contextlib.contextmanager
def patched(owner: type, name: str, new: Any) -> Iterator[None]:
    had = name in owner.__dict__
    old = owner.__dict__.get(name)
    setattr(owner, name, new)
    try:
        yield
    finally:
        if had:
            setattr(owner, name, old)
        else:
            delattr(owner, name)


def scaled_stream(policy_cls: type, factor: float, stream: str = "noise") -> Callable[[], Any]:
    """Every draw of the run's ``stream`` (privacy ``noise``, or ``random`` for posterior
    sampling) at ``factor`` times its scale."""

    def plant() -> contextlib.AbstractContextManager[None]:
        original = policy_cls.agent

        def agent(self: Policy, run: RunContext) -> Any:
            src = getattr(run, stream)
            return original(self, replace(run, **{stream: ScaledRandom(src.seeds, factor)}))

        return patched(policy_cls, "agent", agent)

    return plant


def agent_edit(policy_cls: type, edit: Callable[[Any], None]) -> Callable[[], Any]:
    """``edit(agent)`` right after the agent is built (its up-front noise table)."""

    def plant() -> contextlib.AbstractContextManager[None]:
        original = policy_cls.agent

        def agent(self: Policy, run: RunContext) -> Any:
            a = original(self, run)
            edit(a)
            return a

        return patched(policy_cls, "agent", agent)

    return plant


def method_edit(
    owner: type, name: str, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]
) -> Callable[[], Any]:
    """``owner.name`` replaced by ``wrap(original)`` (a mechanism's release method)."""

    def plant() -> contextlib.AbstractContextManager[None]:
        return patched(owner, name, wrap(getattr(owner, name)))

    return plant


def scale_bugs(cls: type, stream: str = "noise") -> list[Bug]:
    return [
        Bug("noise x1/2", "every noise draw at half its scale", scaled_stream(cls, 0.5, stream), 2.0),
        Bug(
            "noise x1/10", "every noise draw at a tenth of its scale", scaled_stream(cls, 0.1, stream), 10.0
        ),
    ]


def split_bug(cls: type, pieces: float, what: str) -> Bug:
    return Bug(
        "epsilon not split",
        f"noise calibrated to epsilon, not epsilon/{pieces} ({what})",
        scaled_stream(cls, 1.0 / pieces),
        float(pieces),
    )
