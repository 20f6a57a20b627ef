"""One run of private Thompson sampling, reported end to end: regret, certified privacy, audit.

:func:`run_thompson` simulates ``GaussianTS(b, c)`` (seed 004, Algorithm 2) on an environment,
certifies its privacy with :func:`dpaudit.thompson.thompson_report` (the toolkit's tight count
μ = sqrt((T − bN)/(c(b+1))), or sqrt((T − 1)/(2c)) at b = 0, plus every composition method and
the paper's published bounds for comparison), and optionally audits the same (b, c)
empirically with :func:`bandits.audit.audit_thompson` — possibly at a shorter horizon than the
run, which the report states explicitly (``audit["horizon"]`` and the certified μ *at that
horizon* in ``audit["certified"]``).

Example:
    >>> from bandits.report import run_thompson
    >>> rep = run_thompson("bernoulli:0.75,0.25", 2000, reps=3, prepulls=10, variance_scale=4.0,
    ...                    audit_trials=0, progress=False)
    >>> round(rep.privacy["mu"], 4), rep.audit is None
    (6.7082, True)
    >>> sorted(rep.to_dict())
    ['audit', 'config', 'privacy', 'regret', 'timing']
    >>> rep.regret["checkpoints"]["t"][-1], rep.regret["mean"] > 0
    (2000, True)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bandits.environments import Environment, parse_env
from bandits.policies import GaussianTS
from bandits.simulator import SimulationResult, simulate
from dpaudit.thompson import ThompsonConfig, thompson_report

__all__ = ["RunReport", "run_thompson", "plot_run"]

Auditor = Callable[..., Any]


def _check_int(name: str, value: object, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _default_auditor() -> Auditor:
    try:
        from bandits.audit import audit_thompson
    except ImportError as exc:  # pragma: no cover - only before bandits/audit.py exists
        raise ValueError(f"the audit is not available ({exc}); use audit_trials=0") from None
    return audit_thompson


@dataclass(frozen=True, eq=False)
class RunReport:
    """Regret, certified privacy and (optionally) the audit of one Thompson-sampling run.

    ``regret``: ``kind`` ("pseudo"), ``mean``/``stderr`` (pseudo-regret at T over the
    repetitions), ``empirical_mean``/``empirical_stderr`` (μ*T − Σ r_t at T) and
    ``checkpoints`` (``t`` and the four curves ``pseudo_mean``, ``pseudo_stderr``,
    ``empirical_mean``, ``empirical_stderr`` at those rounds).
    ``privacy``: ``mu`` (certified), ``mu_paper`` (Theorem 4, not certified), ``delta``,
    ``epsilon`` (best certified ε at δ) with ``epsilon_method``, ``bounds`` (every method,
    paper extras marked by name), ``private_rounds``.
    ``audit``: the :class:`dpaudit.audit.report.AuditReport` dict (``certified``,
    ``empirical``, ``verdict``, …) plus ``horizon``, ``trials`` and ``note``; None if skipped.
    """

    config: dict[str, Any]
    regret: dict[str, Any]
    privacy: dict[str, Any]
    audit: dict[str, Any] | None
    timing: dict[str, float]
    simulation: SimulationResult = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with keys ``regret``, ``privacy``, ``audit``, ``config``, ``timing``."""
        return {
            "regret": self.regret,
            "privacy": self.privacy,
            "audit": self.audit,
            "config": self.config,
            "timing": self.timing,
        }

    def summary(self) -> str:
        """A human-readable summary (what ``dpaudit run ts`` prints)."""
        c, r, p = self.config, self.regret, self.privacy
        lines = [
            f"Gaussian Thompson sampling (b = {c['prepulls']}, c = {c['variance_scale']:.6g}) on {c['env']}",
            f"  T = {c['horizon']}, N = {c['arms']}, {c['reps']} repetitions, seed {c['seed']}",
        ]
        if c.get("choice"):
            lines.append(f"  (b, c) chosen by: {c['choice']}")
        lines += [
            "regret at T (mean ± s.e. over repetitions)",
            f"  pseudo-regret    {r['mean']:10.1f} ± {r['stderr']:.1f}",
            f"  empirical regret {r['empirical_mean']:10.1f} ± {r['empirical_stderr']:.1f}",
            "privacy (certified; neighbours differ in one reward, output = the action sequence)",
            f"  mu = {p['mu']:.6f}-GDP over {p['private_rounds']} private rounds "
            f"(paper's Theorem 4: {p['mu_paper']:.6f}, not certified)",
            f"  epsilon = {p['epsilon']:.6f} at delta = {p['delta']:g} (by {p['epsilon_method']})",
        ]
        a = self.audit
        if a is None:
            lines.append("audit: skipped (audit trials = 0)")
        else:
            emp, cert = a["empirical"], a["certified"]
            lines.append(
                f"audit: {a['verdict'].upper()} "
                f"({a['trials']} trials per neighbouring stream at T = {a['horizon']})"
            )
            if a.get("note"):
                lines.append(f"  {a['note']}")
            mu_l = emp.get("mu_lower")
            mu_c = cert.get("mu")
            lines.append(
                f"  empirical lower bounds at {100 * emp['confidence']:g}% confidence: "
                f"mu >= {mu_l if mu_l is None else f'{mu_l:.4f}'} "
                f"(certified {mu_c if mu_c is None else f'{mu_c:.4f}'}), "
                f"epsilon >= {emp['epsilon_lower']:.4f} at delta = {emp['delta']:g}"
            )
            lines.append(
                "  (consistent = no lower bound above the certified value; it does not prove the claim"
                + ("; a zero bound means no leakage was detected at this sample size)" if not mu_l else ")")
            )
        t = self.timing
        lines.append(
            f"time: simulation {t['simulation']:.1f} s, accounting {t['accounting']:.1f} s, "
            f"audit {t['audit']:.1f} s"
        )
        return "\n".join(lines)


def run_thompson(
    env: Environment | str,
    horizon: int,
    *,
    reps: int = 10,
    prepulls: int = 0,
    variance_scale: float = 1.0,
    audit_trials: int = 0,
    seed: int = 0,
    delta: float = 1e-6,
    executor: Executor | None = None,
    progress: bool = True,
    audit_horizon: int | None = None,
    confidence: float = 0.95,
    auditor: Auditor | None = None,
    choice: str | None = None,
) -> RunReport:
    """Simulate, certify and (if ``audit_trials`` > 0) audit ``GaussianTS(prepulls, variance_scale)``.

    Args:
        env: an environment or a spec such as ``"bernoulli:0.75,0.5"``.
        audit_trials: pairs of neighbouring runs for the audit (0: skip the audit).
        audit_horizon: horizon of the audited runs (default ``horizon``); the same (b, c) is
            audited, and the report's audit section gives the certified μ at that horizon.
        auditor: the audit function (default :func:`bandits.audit.audit_thompson`), called as
            ``auditor(policy, audit_horizon, arms, trials=, seed=, confidence=, delta=,
            executor=, progress=)`` and returning an ``AuditReport``.
        choice: free text recorded in ``config["choice"]`` (how (b, c) was chosen).
    """
    if isinstance(env, str):
        env = parse_env(env)
    if not isinstance(env, Environment):
        raise ValueError(f"env must be an Environment or a spec string, got {type(env).__name__}")
    T = _check_int("horizon", horizon, 2)
    reps = _check_int("reps", reps, 1)
    audit_trials = _check_int("audit_trials", audit_trials, 0)
    seed = _check_int("seed", seed, 0)
    N = env.n_arms
    cfg = ThompsonConfig(T, N, prepulls, variance_scale)  # validates b, c, b·N < T
    policy = GaussianTS(b=cfg.prepulls, c=cfg.variance_scale)
    Ta = T if audit_horizon is None else _check_int("audit_horizon", audit_horizon, 2)
    if audit_trials:
        ThompsonConfig(Ta, N, cfg.prepulls, cfg.variance_scale)  # the audited config must be valid

    t0 = time.perf_counter()
    sim = simulate(policy, env, T, reps, seed, executor=executor, progress=progress)
    t1 = time.perf_counter()
    acc = thompson_report(cfg, delta=delta)
    t2 = time.perf_counter()
    audit: dict[str, Any] | None = None
    if audit_trials:
        fn = auditor if auditor is not None else _default_auditor()
        rep = fn(
            policy,
            Ta,
            N,
            trials=audit_trials,
            seed=seed,
            confidence=confidence,
            delta=delta,
            executor=executor,
            progress=progress,
        )
        audit = dict(rep.to_dict())
        audit["horizon"] = Ta
        audit["trials"] = audit_trials
        if Ta != T:
            mu_a = ThompsonConfig(Ta, N, cfg.prepulls, cfg.variance_scale).mu_tight
            audit["note"] = (
                f"audited the same (b, c) at the reduced horizon T = {Ta} (certified mu there "
                f"{mu_a:.4f}), not the run's T = {T} (certified mu {cfg.mu_tight:.4f})"
            )
        else:
            audit["note"] = f"audited the run's configuration at T = {T}"
    t3 = time.perf_counter()

    ck = sim.checkpoints
    regret = {
        "kind": "pseudo",
        "mean": sim.final("pseudo"),
        "stderr": float(sim.stderr("pseudo")[-1]),
        "empirical_mean": sim.final("empirical"),
        "empirical_stderr": float(sim.stderr("empirical")[-1]),
        "checkpoints": {
            "t": [int(x) for x in ck],
            "pseudo_mean": sim.mean("pseudo").tolist(),
            "pseudo_stderr": sim.stderr("pseudo").tolist(),
            "empirical_mean": sim.mean("empirical").tolist(),
            "empirical_stderr": sim.stderr("empirical").tolist(),
        },
    }
    acc_d = acc.to_dict()
    privacy = {
        "mu": cfg.mu_tight,
        "mu_paper": cfg.mu_paper,
        "delta": float(delta),
        "epsilon": float(acc.best.value),
        "epsilon_method": acc.best.method,
        "bounds": acc_d["bounds"],
        "private_rounds": cfg.private_rounds,
        "note": "bounds named paper* are the published values, reported for comparison and not certified",
    }
    config = {
        "env": env.spec,
        "horizon": T,
        "arms": N,
        "reps": reps,
        "prepulls": cfg.prepulls,
        "variance_scale": cfg.variance_scale,
        "seed": seed,
        "delta": float(delta),
        "audit_trials": audit_trials,
        "audit_horizon": Ta if audit_trials else None,
        "choice": choice,
    }
    timing = {"simulation": t1 - t0, "accounting": t2 - t1, "audit": t3 - t2}
    if not all(math.isfinite(v) for v in (regret["mean"], privacy["mu"])):  # pragma: no cover
        raise ValueError("non-finite result")
    return RunReport(
        config=config, regret=regret, privacy=privacy, audit=audit, timing=timing, simulation=sim
    )


def plot_run(report: RunReport, path: str | None = None) -> Any:
    """Pseudo- and empirical regret curves with 95% bands; saves to ``path`` if given.

    >>> rep = run_thompson("bernoulli:0.75,0.25", 500, reps=2, progress=False)
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
        lo, hi = sim.band(kind)
        (ln,) = ax.plot(sim.checkpoints, sim.mean(kind), label=label)
        ax.fill_between(sim.checkpoints, lo, hi, alpha=0.2, color=ln.get_color())
    c, p = report.config, report.privacy
    ax.set_xscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel("regret")
    ax.set_title(
        f"{c['env']}\nb = {c['prepulls']}, c = {c['variance_scale']:.4g}: "
        f"{p['mu']:.3f}-GDP, eps = {p['epsilon']:.3f} at delta = {p['delta']:g}",
        fontsize=9,
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
        plt.close(fig)
    return fig
