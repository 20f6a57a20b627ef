"""One run of any policy, end to end: regret, certified privacy, the ledger check, an audit.

:func:`run_policy` is the pipeline every algorithm goes through (``dpaudit run ALG`` calls it):

1. **declare** — ``policy.declare(T, N, structure)``: the worst-case releases per unit of
   privacy (None for a non-private reference);
2. **simulate** — :func:`bandits.engine.simulator.simulate`, which hands every repetition's agent its
   own generators and ledger; mechanisms record what each run really released;
3. **certify** — :func:`dpaudit.accounting.account` of the declared event under every method,
   the best one, GDP μ where the guarantee is GDP, the paper's claim beside it;
4. **check** — :func:`dpaudit.declaration.check_ledgers`: every unit of every repetition must be
   covered by the declaration, else :class:`~dpaudit.declaration.LedgerCheckError` (the run
   fails loudly: the implementation released more than it certifies);
5. **audit** — optional: the algorithm's own auditor or the generic black-box audit of
   :mod:`bandits.auditing.black_box`, at the run's horizon or a shorter one (the report says which).

Example:
    >>> from bandits.thompson.policy import GaussianTS
    >>> rep = run_policy(GaussianTS(b=10, c=4.0), "bernoulli:0.75,0.25", 2000, reps=3, progress=False)
    >>> round(rep.privacy["mu"], 4), rep.ledger_check["ok"], rep.audit is None
    (6.7082, True, True)
    >>> sorted(rep.to_dict())
    ['audit', 'config', 'ledger_check', 'privacy', 'regret', 'timing']
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from bandits.engine.simulator import SimulationResult, simulate
from bandits.environments import Environment, parse_env
from bandits.policy import Policy
from dpaudit.accounting import account
from dpaudit.accounting.composition import normal_form, pure_epsilon
from dpaudit.declaration import Declaration, check_ledgers
from dpaudit.validation import check_integer, check_probability

__all__ = ["RunReport", "run_policy", "run_algorithm", "plot_run", "privacy_section", "regret_section"]

Auditor = Callable[..., Any]


@dataclass(frozen=True, eq=False)
class RunReport:
    """Regret, certified privacy, the ledger check and (optionally) the audit of one run.

    ``regret``: ``kind`` ("pseudo"), ``mean``/``stderr`` (pseudo-regret at T over the
    repetitions), ``empirical_mean``/``empirical_stderr`` and ``checkpoints`` (``t`` and the
    four curves). ``privacy``: ``private``, ``unit``, ``neighbouring``, ``model``, ``mu`` (GDP,
    else None), ``delta``, ``epsilon`` (best certified ε at δ) with ``epsilon_method``,
    ``epsilon_pure`` (Σε per unit when every release is pure ε-DP), ``bounds`` (every method,
    and the paper's own bounds by name), ``reasons``, ``published`` (the paper's claim and
    whether the toolkit certifies it). ``ledger_check``: the
    :class:`~dpaudit.declaration.LedgerCheck` dict. ``audit``: the audit report dict plus
    ``horizon``, ``trials`` and ``note``; None if skipped.
    """

    config: dict[str, Any]
    regret: dict[str, Any]
    privacy: dict[str, Any]
    ledger_check: dict[str, Any]
    audit: dict[str, Any] | None
    timing: dict[str, float]
    simulation: SimulationResult = field(repr=False)
    title: str = ""
    lines: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``regret``, ``privacy``, ``ledger_check``, ``audit``, ``config``, ``timing``."""
        return {
            "regret": self.regret,
            "privacy": self.privacy,
            "ledger_check": self.ledger_check,
            "audit": self.audit,
            "config": self.config,
            "timing": self.timing,
        }

    def summary(self) -> str:
        """The human-readable report ``dpaudit run`` prints."""
        from bandits.run_text import summary_lines

        return "\n".join(summary_lines(self))


def regret_section(sim: SimulationResult) -> dict[str, Any]:
    """The ``regret`` section of a report."""
    return {
        "kind": "pseudo",
        "mean": sim.final("pseudo"),
        "stderr": float(sim.stderr("pseudo")[-1]),
        "empirical_mean": sim.final("empirical"),
        "empirical_stderr": float(sim.stderr("empirical")[-1]),
        "checkpoints": {
            "t": [int(x) for x in sim.checkpoints],
            "pseudo_mean": sim.mean("pseudo").tolist(),
            "pseudo_stderr": sim.stderr("pseudo").tolist(),
            "empirical_mean": sim.mean("empirical").tolist(),
            "empirical_stderr": sim.stderr("empirical").tolist(),
        },
    }


def _pure_sum(decl: Declaration) -> float | None:
    """Σε of the worst unit when every declared release is pure ε-DP (basic composition)."""
    worst = 0.0
    for comp in normal_form(decl.event):
        total = 0.0
        for leaf, count in comp:
            e = pure_epsilon(leaf)
            if e is None:
                return None
            total += count * e
        worst = max(worst, total)
    return worst


def _published(decl: Declaration, delta: float, certified: float | None) -> dict[str, Any] | None:
    claim = decl.published
    if claim is None:
        return None
    out = claim.to_dict(delta)
    claimed = out.get("epsilon_at_delta")
    if certified is None and decl.guarantee == "none":
        out["status"] = "NOT CERTIFIED: the toolkit certifies no epsilon (a release is not private)"
    elif claimed is None or certified is None:
        out["status"] = "not comparable at this delta"
    elif claimed >= certified * (1 - 1e-12):
        out["status"] = "covered: the certified epsilon is at most the published one"
    else:
        out["status"] = (
            f"NOT CERTIFIED: the published epsilon {claimed:.6g} is below the certified "
            f"{certified:.6g} at delta = {delta:g}"
        )
    return out


def privacy_section(
    decl: Declaration | None, delta: float, extras: Mapping[str, float] | None = None
) -> dict[str, Any]:
    """The ``privacy`` section: certified bounds of the declaration (or "none")."""
    if decl is None:
        return {
            "private": False,
            "guarantee": "none",
            "mu": None,
            "delta": None,
            "epsilon": None,
            "epsilon_method": None,
            "epsilon_pure": None,
            "bounds": {},
            "reasons": {},
            "published": None,
            "unit": None,
            "note": "not private: the algorithm declares no privacy guarantee (a reference)",
        }
    acc = account(decl.event, delta=delta, extras=dict(extras or {}))
    d = acc.to_dict()
    best = acc.best
    kind = decl.guarantee
    return {
        "private": True,
        "guarantee": kind,
        "unit": decl.unit,
        "neighbouring": decl.neighbouring.value,
        "model": decl.model,
        "mu": acc.mu if kind == "gdp" else None,
        "delta": float(delta),
        "epsilon": best.value,
        "epsilon_method": best.method,
        "epsilon_pure": _pure_sum(decl),
        "bounds": d["bounds"],
        "reasons": d["reasons"],
        "releases": decl.event.num_releases,
        "published": _published(decl, delta, best.value),
        "declaration": decl.note,
        "note": "bounds named paper* are the published values, reported for comparison and not certified",
    }


def _audit_section(
    auditor: Auditor,
    policy: Policy,
    env: Environment,
    horizon: int,
    audit_horizon: int,
    trials: int,
    seed: int,
    confidence: float,
    delta: float,
    executor: Executor | None,
    progress: bool,
) -> dict[str, Any]:
    rep = auditor(
        policy,
        audit_horizon,
        env,
        trials=trials,
        seed=seed,
        confidence=confidence,
        delta=delta,
        executor=executor,
        progress=progress,
    )
    audit = dict(rep.to_dict())
    audit["horizon"] = audit_horizon
    per_side = (audit.get("empirical") or {}).get("trials")
    audit["trials"] = int(per_side) // 2 if per_side else trials  # what the auditor really ran
    if audit_horizon != horizon:
        at_a = _certified_text(policy.declare(audit_horizon, env.n_arms, env.structure), delta)
        at_t = _certified_text(policy.declare(horizon, env.n_arms, env.structure), delta)
        what = (
            f"({at_a} there), not the run's T = {horizon} ({at_t})"
            if at_a and at_t
            else (f"not the run's T = {horizon}")
        )
        audit["note"] = f"audited the same configuration at the reduced horizon T = {audit_horizon} {what}"
    else:
        audit["note"] = f"audited the run's configuration at T = {horizon}"
    return audit


def _certified_text(decl: Declaration | None, delta: float) -> str | None:
    """ "certified mu 0.1486" for a GDP declaration, "certified epsilon 1 at delta = 1e-06" else."""
    if decl is None:
        return None
    acc = account(decl.event, delta=delta)
    if decl.guarantee == "gdp" and acc.mu is not None:
        return f"certified mu {acc.mu:.4f}"
    return None if acc.best.value is None else f"certified epsilon {acc.best.value:.4g} at delta = {delta:g}"


def _default_auditor() -> Auditor:
    from bandits.auditing.black_box import audit_policy

    return audit_policy


def run_policy(
    policy: Policy,
    env: Environment | str,
    horizon: int,
    *,
    reps: int = 10,
    seed: int = 0,
    delta: float = 1e-6,
    audit_trials: int = 0,
    audit_horizon: int | None = None,
    auditor: Auditor | None = None,
    confidence: float = 0.95,
    executor: Executor | None = None,
    progress: bool = True,
    published_bounds: Mapping[str, float] | None = None,
    privacy_extras: Mapping[str, Any] | None = None,
    title: str | None = None,
    lines: tuple[str, ...] = (),
    config: Mapping[str, Any] | None = None,
) -> RunReport:
    """Declare, simulate, certify, check and (if ``audit_trials`` > 0) audit ``policy``.

    Args:
        env: an environment or a spec such as ``"bernoulli:0.75,0.5"``.
        audit_trials: neighbouring-run pairs for the audit (0: skip it).
        audit_horizon: horizon of the audited runs (default ``horizon``).
        auditor: ``auditor(policy, horizon, env, *, trials, seed, confidence, delta, executor,
            progress)`` returning an audit report (default: the generic black-box audit).
        published_bounds: the paper's own ε values at ``delta`` for the bounds table.
        privacy_extras: extra facts added to the ``privacy`` section.
        title, lines, config: what the report says about the configuration.

    Raises:
        LedgerCheckError: some repetition recorded releases its declaration does not cover.
    """
    env = _environment(env)
    if not isinstance(policy, Policy):
        raise ValueError(f"policy must be a bandits.policy.Policy, got {type(policy).__name__}")
    T = check_integer("horizon", horizon, 2)
    reps, seed = check_integer("reps", reps, 1), check_integer("seed", seed, 0)
    trials = check_integer("audit_trials", audit_trials, 0)
    delta = check_probability("delta", delta)
    Ta = T if audit_horizon is None else check_integer("audit_horizon", audit_horizon, 2)
    decl = policy.declare(T, env.n_arms, env.structure)
    if trials and Ta != T:
        policy.declare(Ta, env.n_arms, env.structure)  # the audited configuration must be valid

    t0 = time.perf_counter()
    sim = simulate(policy, env, T, reps, seed, executor=executor, progress=progress)
    t1 = time.perf_counter()
    privacy = {**privacy_section(decl, delta, published_bounds), **dict(privacy_extras or {})}
    t2 = time.perf_counter()
    check = _ledger_section(sim, decl)
    t3 = time.perf_counter()
    audit = None
    if trials:
        audit = _audit_section(
            auditor or _default_auditor(),
            policy,
            env,
            T,
            Ta,
            trials,
            seed,
            confidence,
            delta,
            executor,
            progress,
        )
    t4 = time.perf_counter()
    cfg = {
        "env": env.spec,
        "horizon": T,
        "arms": env.n_arms,
        "reps": reps,
        **dict(config or {}),
        "seed": seed,
        "delta": float(delta),
        "audit_trials": trials,
        "audit_horizon": Ta if trials else None,
    }
    timing = {"simulation": t1 - t0, "accounting": t2 - t1, "ledger_check": t3 - t2, "audit": t4 - t3}
    return RunReport(
        config=cfg,
        regret=regret_section(sim),
        privacy=privacy,
        ledger_check=check,
        audit=audit,
        timing=timing,
        simulation=sim,
        title=title or policy.name,
        lines=tuple(lines),
    )


def _environment(env: Environment | str) -> Environment:
    env = parse_env(env) if isinstance(env, str) else env
    if not isinstance(env, Environment):
        raise ValueError(f"env must be an Environment or a spec string, got {type(env).__name__}")
    return env


def _ledger_section(sim: SimulationResult, decl: Declaration | None) -> dict[str, Any]:
    """Check every repetition's ledger against the declaration (raises LedgerCheckError)."""
    if decl is None:
        return {
            "ok": True,
            "message": "nothing to check: the algorithm declares no privacy",
            "repetitions": sim.repetitions,
        }
    result = check_ledgers(sim.ledgers, decl)
    result.raise_if_failed()
    return result.to_dict()


def run_algorithm(
    key: str,
    env: Environment | str | None = None,
    horizon: int | None = None,
    *,
    reps: int = 10,
    seed: int = 0,
    delta: float = 1e-6,
    audit_trials: int | None = None,
    audit_horizon: int | None = None,
    executor: Executor | None = None,
    progress: bool = True,
    **options: Any,
) -> RunReport:
    """Run a registered algorithm (:mod:`bandits.registry`) as ``dpaudit run KEY`` does: its
    options by name (``prepulls=``, ``epsilon=``, ...), its paper's instance when ``env`` and
    ``horizon`` are None, its own auditor and default audit horizon, the paper's bounds.

    >>> rep = run_algorithm("ts", "bernoulli:0.75,0.25", 2000, reps=2, prepulls=10, variance_scale=4.0,
    ...                     audit_trials=0, progress=False)
    >>> round(rep.privacy["mu"], 4), rep.config["algorithm"]
    (6.7082, 'ts')
    """
    from bandits.registry import get

    spec = get(key)
    if env is None or isinstance(env, str):
        text = spec.default_env if env is None else env
        env = spec.env_parser(text) if spec.env_parser is not None else parse_env(text)
    T = spec.default_horizon if horizon is None else check_integer("horizon", horizon, 2)
    configured = spec.configure(options, env, T)
    policy = configured.policy
    trials = spec.default_audit_trials if audit_trials is None else audit_trials
    if audit_horizon is None and spec.default_audit_horizon is not None:
        audit_horizon = spec.default_audit_horizon(policy, T, env.n_arms)
    if trials and policy.declare(T, env.n_arms, env.structure) is None:
        trials = 0  # nothing certified, nothing to audit
    delta = check_probability("delta", delta)
    return run_policy(
        policy,
        env,
        T,
        reps=reps,
        seed=seed,
        delta=delta,
        audit_trials=trials,
        audit_horizon=audit_horizon,
        auditor=spec.auditor,
        executor=executor,
        progress=progress,
        published_bounds=spec.published_bounds(policy, T, env.n_arms, delta)
        if spec.published_bounds
        else None,
        privacy_extras=spec.privacy_extras(policy, T, env.n_arms) if spec.privacy_extras else None,
        title=configured.title,
        lines=configured.lines,
        config={"algorithm": spec.key, **configured.config},
    )


def draw_regret(ax: Any, sim: SimulationResult, kind: str, label: str) -> None:
    """The mean ``kind`` regret of ``sim`` against t with its t-quantile band, on ``ax``."""
    lo, hi = sim.band(kind)
    (ln,) = ax.plot(sim.checkpoints, sim.mean(kind), label=label)
    ax.fill_between(sim.checkpoints, lo, hi, alpha=0.2, color=ln.get_color())


def style_regret_axes(ax: Any, ylabel: str, title: str) -> None:
    """Log-scale rounds, grid, legend and a small title: the look of every regret plot."""
    ax.set_xscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def plot_run(report: RunReport, path: str | None = None) -> Any:
    """Pseudo- and empirical regret curves with 95% bands; saves to ``path`` if given.

    >>> from bandits.references.policies import UCB1
    >>> rep = run_policy(UCB1(), "bernoulli:0.75,0.25", 500, reps=2, progress=False)
    >>> fig = plot_run(rep)
    >>> [ln.get_label() for ln in fig.axes[0].get_lines()]
    ['pseudo-regret', 'empirical regret']
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    import matplotlib

    if path is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sim = report.simulation
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for kind, label in (("pseudo", "pseudo-regret"), ("empirical", "empirical regret")):
        draw_regret(ax, sim, kind, label)
    p = report.privacy
    if not p["private"]:
        spend = "not private"
    elif p["mu"] is not None:
        spend = f"{p['mu']:.3f}-GDP, eps = {p['epsilon']:.3f} at delta = {p['delta']:g}"
    else:
        spend = f"eps = {p['epsilon']:.3f} at delta = {p['delta']:g}"
    style_regret_axes(ax, "regret", f"{report.title} on {report.config['env']}\n{spend}")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
        plt.close(fig)
    return fig
