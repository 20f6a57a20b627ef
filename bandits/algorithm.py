"""What an algorithm is for a user: :class:`AlgorithmSpec`, its :class:`Option` s, and :class:`Configured`.

An :class:`AlgorithmSpec` says what an algorithm is for a user (key, title, the paper it comes
from, feedback model, privacy model, unit of privacy), which paper instance it runs with no
``--env`` (``default_env``, ``default_horizon``), which options it takes (:class:`Option`:
turned into command-line flags with their range, default and help), how to build the policy
from those options (:meth:`AlgorithmSpec.configure` → :class:`Configured`), and optionally a
dedicated auditor and the paper's published bounds for the accountant's table.

Each family declares its algorithms in its ``spec`` module with these types; declaring them
loads no policy code (NumPy, SciPy): the environment grammars below import on first use.
:mod:`bandits.registry` collects the families' specs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bandits.actions import Feedback
from dpaudit.papers import Citation

if TYPE_CHECKING:  # annotations only: declaring a spec loads no policy code (numpy, SciPy)
    from bandits.auditing.contract import PolicyAuditor
    from bandits.environments import Environment
    from bandits.policy import Policy

__all__ = [
    "Option",
    "Configured",
    "AlgorithmSpec",
    "PRIVACY_MODELS",
    "TIE_RULES",
    "parse_combinatorial_env",
    "parse_cascade_env",
]

PRIVACY_MODELS = (
    "central GDP",
    "central pure DP",
    "central approximate DP",
    "local pure DP",
    "local approximate DP",
    "not private (as specified)",
    "none",
)


@dataclass(frozen=True)
class Option:
    """One algorithm option, as a command-line flag ``--name`` (stored as ``name`` with dashes
    turned into underscores). ``kind`` is ``int``, ``float``, ``str`` or ``bool`` (a switch);
    ``low``/``high`` bound numbers (``None``: unbounded; ``*_open``: strict); ``choices`` lists
    the allowed strings. ``default=None`` means "chosen by the algorithm" (say how in ``help``)."""

    name: str
    kind: type
    default: Any
    help: str
    short: str | None = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] | None = None

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")


@dataclass(frozen=True)
class Configured:
    """A policy built from options, with what the run report says about the choice."""

    policy: Policy
    title: str
    lines: tuple[str, ...] = ()
    config: Mapping[str, Any] = field(default_factory=dict)
    audit_horizon: int | None = None


Builder = Callable[[Mapping[str, Any], "Environment", int], Configured]


@dataclass(frozen=True)
class AlgorithmSpec:
    """An algorithm as ``dpaudit list`` shows it and ``dpaudit run`` runs it (module docstring).

    Attributes:
        key: the command-line name (``dpaudit run KEY``).
        title: a one-line name.
        paper: the paper the algorithm comes from (:mod:`dpaudit.papers`); None only for an
            algorithm without one.
        feedback: what the algorithm observes.
        privacy: the privacy model (one of :data:`PRIVACY_MODELS`).
        unit: the unit of privacy in words (None for non-private algorithms).
        default_env: the paper's headline instance (an environment spec).
        default_horizon: its horizon.
        options: the algorithm's own options.
        build: ``build(options, env, horizon) -> Configured``.
        auditor: the algorithm's :class:`~bandits.auditing.contract.PolicyAuditor`
            (``auditor(policy, horizon, env, settings) -> PolicyAudit``), or None for the generic
            black-box audit.
        published_bounds: ``f(policy, horizon, n_arms, delta) -> {name: epsilon}``: the paper's
            own bounds at δ, shown beside the certified ones (never certified).
        privacy_extras: ``f(policy, horizon, n_arms) -> dict`` of extra facts for the report.
        default_audit_horizon: ``f(policy, horizon, n_arms) -> int``: the audited horizon.
        env_parser: parses ``--env`` (default :func:`bandits.environments.parse_env`); problems
            with sets or lists of arms bring their own grammar.
        default_audit_trials: audit pairs when ``--audit-trials`` is not given.
        floor_runs_per_trial: the most runs per audit trial ``--audit-floor algorithm`` makes
            (default: that of the generic audits, :data:`bandits.auditing.leak_floor.FLOOR_RUNS_PER_TRIAL`),
            so that ``dpaudit run`` refuses work that would not fit before starting it.
    """

    key: str
    title: str
    paper: Citation | None
    feedback: Feedback
    privacy: str
    unit: str | None
    default_env: str
    default_horizon: int
    options: tuple[Option, ...]
    build: Builder
    auditor: PolicyAuditor | None = None
    published_bounds: Callable[..., dict[str, float]] | None = None
    privacy_extras: Callable[..., dict[str, Any]] | None = None
    default_audit_horizon: Callable[..., int] | None = None
    env_parser: Callable[[str], Environment] | None = None
    default_audit_trials: int = 2000
    floor_runs_per_trial: int | None = None

    def __post_init__(self) -> None:
        if self.paper is not None and not isinstance(self.paper, Citation):
            raise ValueError(f"{self.key}: paper must be a dpaudit.papers.Citation, got {self.paper!r}")
        if self.privacy not in PRIVACY_MODELS:
            raise ValueError(f"privacy must be one of {PRIVACY_MODELS}, got {self.privacy!r}")

    def configure(self, options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
        """Build the policy; every option not given takes its default."""
        full = {o.dest: o.default for o in self.options}
        unknown = set(options) - set(full)
        if unknown:
            raise ValueError(f"{self.key} has no option(s) {sorted(unknown)}; it takes {sorted(full)}")
        full.update(options)
        return self.build(full, env, horizon)

    def summary(self) -> dict[str, Any]:
        """What ``dpaudit list`` prints for this algorithm: ``paper`` is the short citation,
        ``citation`` the full one (both None for an algorithm without a paper)."""
        return {
            "key": self.key,
            "title": self.title,
            "paper": self.paper.short if self.paper else None,
            "citation": str(self.paper) if self.paper else None,
            "feedback": self.feedback.value,
            "privacy": self.privacy,
            "unit": self.unit,
            "default_env": self.default_env,
            "default_horizon": self.default_horizon,
        }


TIE_RULES = ("index", "random")
"""The oracles' tie rules (:data:`bandits.structures.combinatorial.TIE_RULES`; repeated here so that
declaring a spec imports no NumPy, checked by ``tests/test_registry.py``)."""


def parse_combinatorial_env(text: str) -> Environment:
    """:func:`bandits.environments.grammar.parse_combinatorial_env`, imported when called (declaring
    a spec must stay cheap: ``dpaudit run ALG --bad-option`` imports every spec module)."""
    from bandits.environments.grammar import parse_combinatorial_env as parse

    return parse(text)


def parse_cascade_env(text: str) -> Environment:
    """:func:`bandits.environments.cascade.parse_cascade_env`, imported when called."""
    from bandits.environments.cascade import parse_cascade_env as parse

    return parse(text)
