"""DP-TS-UCB (Hu, Huang, Zhang, Lécuyer & Hegde 2025) as ``dpaudit run dp-ts-ucb``.

With no options it runs Ou, Avella Medina & Cummings's §5.1 instance (five Bernoulli arms
0.75…0.25, T = 10⁵ — the instance of ``dpaudit run ts``, its closest peer) at α = 1, c₀ = 1: φ =
⌈ln T⌉ = 12 samples per arm and epoch, certified 1.0210-GDP (Theorem 4.4 claims √2).
``--target-mu M`` instead picks the smallest α (the best regret bound) whose certified μ is at most
M (:func:`alpha_for_target`; the certified μ falls as α grows).

Every reconstruction assumption is a flag with its default (``docs/dp-ts-ucb.md``): ``--alpha``,
``--c0``, ``--first-epoch``, ``--rounding``, ``--index``, ``--ties``, ``--design-horizon``.

The audit (:mod:`bandits.dp_ts_ucb.audit`) is the generic black-box audit of the action
sequences and the releases view of the samples, both with a pair pre-registered from the
reconstruction (arm 0's first reward changed while the other arms lead, so that arm 0 keeps
sampling its first mean), at a horizon long enough for arm 0 to spend its whole first budget.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bandits.actions import Feedback
from bandits.algorithm import AlgorithmSpec, Configured, Option
from dpaudit.papers import HU_2025

if TYPE_CHECKING:  # the policy and its analysis load when a run needs them, not to declare the spec
    from bandits.auditing.contract import AuditSettings, PolicyAudit
    from bandits.dp_ts_ucb.policy import DPTSUCB
    from bandits.environments import Environment
    from bandits.policy import Policy

__all__ = ["DEFAULT_ENV", "SPECS", "UNIT", "alpha_for_target"]

DEFAULT_ENV = "bernoulli:0.75,0.625,0.5,0.375,0.25"
DEFAULT_ALPHA = 1.0
UNIT = "one round's reward vector"
"""The unit of privacy (:data:`bandits.lazy.policies.UNIT`, checked by ``tests/test_registry.py``)."""


def alpha_for_target(target_mu: float, horizon: int, c0: float, first_epoch: int, rounding: str) -> float:
    """The smallest α ∈ [0, 1] whose certified μ is at most ``target_mu`` (bisection to 1e-9 on
    the monotone μ(α) of :class:`dpaudit.analyses.dp_ts_ucb.DPTSUCBPrivacy`); ``ValueError`` when
    even α = 1 certifies more.

    >>> a = alpha_for_target(2.0, 100_000, 1.0, 1, "ceil")
    >>> from dpaudit.analyses.dp_ts_ucb import DPTSUCBPrivacy
    >>> round(a, 4), DPTSUCBPrivacy(100_000, a).mu <= 2.0
    (0.8535, True)
    """
    from dpaudit.analyses.dp_ts_ucb import DPTSUCBPrivacy
    from dpaudit.formatting import fmt_up

    def mu(a: float) -> float:
        return DPTSUCBPrivacy(horizon, a, c0, first_epoch, rounding).mu

    if mu(1.0) > target_mu:
        raise ValueError(
            f"--target-mu must be at least {fmt_up(mu(1.0))} (the certified mu at alpha = 1 with "
            f"c0 = {c0:g}, T = {horizon}), got {target_mu:g}"
        )
    if mu(0.0) <= target_mu:
        return 0.0
    lo, hi = 0.0, 1.0  # mu(lo) > target >= mu(hi)
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if mu(mid) <= target_mu else (mid, hi)
    return hi


def _build(options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
    from bandits.dp_ts_ucb.policy import DPTSUCB

    T = options["design_horizon"] or horizon
    alpha, target = options["alpha"], options["target_mu"]
    why = "given" if alpha is not None else f"default {DEFAULT_ALPHA:g}"
    if target is not None:
        if alpha is not None:
            raise ValueError("give --alpha or --target-mu, not both")
        alpha = alpha_for_target(target, T, options["c0"], options["first_epoch"], options["rounding"])
        why = f"the smallest alpha certified at most {target:g}-GDP"
    alpha = DEFAULT_ALPHA if alpha is None else alpha
    pol = DPTSUCB(
        alpha=alpha, c0=options["c0"], first_epoch=options["first_epoch"], rounding=options["rounding"],
        index=options["index"], ties=options["ties"], design_horizon=T,
    )  # fmt: skip
    p = pol.privacy(horizon)
    lines = (
        f"alpha chosen: {why}; phi = {p.samples} samples per arm and epoch (c0 = {pol.c0:g}, "
        f"{pol.rounding} of {p.samples_real:.6g}), sample variance ln^alpha(T)/n = {p.log_factor:.6g}/n",
        f"epochs of {pol.first_epoch}*2^r observations, index = {pol.index}, ties = {pol.ties}, "
        f"T in phi = {T}" + (" (the run's horizon)" if options["design_horizon"] is None else " (given)"),
        f"{HU_2025.at('Theorem 4.4')}: mu = {p.mu_paper:.6f}; verdict: {p.verdict()}",
    )
    cfg = {
        "alpha": pol.alpha, "c0": pol.c0, "first_epoch": pol.first_epoch, "rounding": pol.rounding,
        "index": pol.index, "ties": pol.ties, "design_horizon": p.horizon, "samples": p.samples,
        "target_mu": options["target_mu"],
    }  # fmt: skip
    return Configured(pol, f"DP-TS-UCB (alpha = {pol.alpha:.6g})", lines=lines, config=cfg)


def _extras(policy: DPTSUCB, horizon: int, n_arms: int) -> dict[str, Any]:
    """The closed form of :mod:`dpaudit.analyses.dp_ts_ucb` (the accountant composes the same
    declared event), Theorem 4.4's μ and the verdict on it, φ."""
    p = policy.privacy(horizon)
    return {
        "mu_closed_form": p.mu, "mu_paper": p.mu_paper, "paper_verdict": p.verdict(), "samples": p.samples
    }  # fmt: skip


def _audit(policy: Policy, horizon: int, env: Environment, settings: AuditSettings) -> PolicyAudit:
    from bandits.dp_ts_ucb.audit import audit_dp_ts_ucb

    return audit_dp_ts_ucb(policy, horizon, env, settings)


def _audit_horizon(policy: DPTSUCB, horizon: int, n_arms: int) -> int:
    from bandits.dp_ts_ucb.audit import audit_horizon

    return audit_horizon(policy, horizon, n_arms)


SPECS = (
    AlgorithmSpec(
        key="dp-ts-ucb",
        title=f"DP-TS-UCB ({HU_2025.short}): at most phi Gaussian samples of each epoch mean, then their "
        "maximum as a UCB index",
        paper=HU_2025,
        feedback=Feedback.BANDIT,
        privacy="central GDP",
        unit=UNIT,
        default_env=DEFAULT_ENV,
        default_horizon=100_000,
        options=(
            Option("alpha", float, None, "trade-off alpha in [0, 1]: 0 best regret, 1 constant GDP "
                   "(default 1, or chosen by --target-mu)", low=0.0, high=1.0),
            Option("c0", float, 1.0, "constant c0 > 0 of the sampling budget phi", low=0.0, low_open=True),
            Option("first-epoch", int, 1, "observations of an arm's first epoch f (epoch r: f*2^r)", low=1),
            Option("rounding", str, "ceil", "phi = ceil or floor (at least 1) of c0 T^.5(1-a) ln^.5(3-a) T",
                   choices=("ceil", "floor")),
            Option("index", str, "sample", "an arm's index while it samples: the fresh sample or the max",
                   choices=("sample", "max")),
            Option("ties", str, "lowest", "tie rule: lowest index, or a random arm order per run",
                   choices=("lowest", "random")),
            Option("design-horizon", int, None, "the T in phi and ln^alpha(T) (default: the run's T)",
                   low=2),
            Option("target-mu", float, None, "choose the smallest alpha certified at most this GDP mu",
                   low=0.0, low_open=True),
        ),  # fmt: skip
        build=_build,
        auditor=_audit,
        privacy_extras=_extras,
        default_audit_horizon=_audit_horizon,
    ),
)
