"""The private bandits of Hu et al. (2024) and their §6 baselines as ``dpaudit run`` algorithms.

``lazy-ucb`` (Alg. 1), ``lazy-dp-ts`` (Alg. 3), ``dp-se`` (Sajed & Sheffet 2019), ``adap-ucb``
and ``adap-klucb`` (Azize & Basu 2022). With no ``--env`` they run the paper's setting 1
(Fig. 1), T = 10⁶. The full-information algorithms of the same paper are in :mod:`bandits.full_info.spec`.

Audits go through the generic black-box path (:func:`bandits.auditing.black_box.audit_policy`) with
pair families chosen to be hard to hide:

* lazy epochs and AdaP episodes: :func:`first_pick_pairs` (a changed first observation — an
  epoch or episode of size 1, the largest change of a private mean — on tied, led or zero
  tables) at the horizon K + 1, the first decision it steers (forgetful schemes replace that mean
  at the arm's next epoch end, and later plays only blur the statistic). Lazy-DP-TS and
  AdaP-KLUCB clip the shifted mean (μ̃ + 3 ln t/(εO) or + α ln t/(εm), > 1 when O = m = 1) to 1,
  which hides most of it: their audits prove little, and the report says how little it could;
* DP-SE: :func:`dpse_pairs` — arms 0 and 1 at a gap near twice the elimination radius of epoch 1,
  one reward of arm 1 changed, and a horizon that covers epoch 2, so that the elimination
  decision shows in the plays of arm 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bandits.actions import Feedback
from bandits.algorithm import AlgorithmSpec, Builder, Configured, Option
from dpaudit.papers import AZIZE_BASU_2022, HU_2024, SAJED_SHEFFET_2019

if TYPE_CHECKING:  # policies and audits load in the functions that use them, not to declare the specs
    from bandits.auditing.black_box import PairDesign
    from bandits.auditing.contract import AuditSettings, PolicyAudit
    from bandits.environments import Environment
    from bandits.lazy.baselines import DPSE
    from bandits.policy import Policy

__all__ = ["SETTING_1", "SETTING_2", "dpse_pairs", "first_pick_pairs", "SPECS"]

SETTING_1 = "bernoulli:0.75,0.625,0.5,0.375,0.25"
SETTING_2 = "bernoulli:0.5,0.4,0.4,0.4,0.4"
T_PAPER = 1_000_000
UNIT = "one round's reward vector"
"""The unit of privacy (the same as :data:`bandits.lazy.policies.UNIT`, checked likewise)."""

EPS = Option("epsilon", float, 1.0, "privacy parameter epsilon (pure DP)", short="-e", low=0.0, low_open=True)
LOG = Option(
    "log", str, "ln", "log in the bonuses (paper: ln; Alg. 3 prints 'log')", choices=("ln", "log2", "log10")
)
TIES = Option(
    "ties",
    str,
    "lowest",
    "tie rule: lowest index, or a random arm order per run",
    choices=("lowest", "random"),
)


def _lazy_engine(key: str) -> Option:
    choices = ("auto", "fast", "step") if key == "lazy-ucb" else ("auto", "numba", "step")
    return Option(
        "engine",
        str,
        "auto",
        "simulation engine (identical actions; auto = fastest available)",
        choices=choices,
    )


def _lazy(key: str) -> Builder:
    def build(options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
        from bandits.engine.compiled import HAVE_NUMBA, KERNEL_MIN_ROUNDS
        from bandits.lazy.policies import LazyDPTS, LazyUCB

        cls = LazyUCB if key == "lazy-ucb" else LazyDPTS
        pol = cls(
            epsilon=options["epsilon"], log=options["log"], ties=options["ties"], engine=options["engine"]
        )
        title = ("Anytime-Lazy-UCB" if cls is LazyUCB else "Lazy-DP-TS") + f" (epsilon = {pol.epsilon:g})"
        engine = pol.engine
        if cls is LazyDPTS and engine == "auto":
            numba = f"auto (numba from {KERNEL_MIN_ROUNDS} rounds)"
            engine = numba if HAVE_NUMBA else "step (numba not installed)"
        lines = (f"log = {pol.log}, ties = {pol.ties}, engine = {engine}",)
        cfg = {"epsilon": pol.epsilon, "log": pol.log, "ties": pol.ties, "engine": pol.engine}
        return Configured(pol, title, lines=lines, config=cfg)

    return build


def first_pick_pairs(horizon: int, n_arms: int) -> list[PairDesign]:
    """The default family plus arm 0's first reward (1 vs 0) against all other arms at 0: the
    first data-dependent decision (round K) then compares arm 0's epoch-0 mean with the others'
    in the noise's tail, where a Laplace pair is most distinguishable."""
    from bandits.auditing.black_box import PairDesign, candidate_pairs

    low = PairDesign("arm 0's first reward 1 vs 0, other arms 0", (0.0,) * n_arms, 0, (0,))
    return candidate_pairs(horizon, n_arms) + [low]


def _first_pick_audit(policy: Policy, horizon: int, env: Environment, settings: AuditSettings) -> PolicyAudit:
    from bandits.auditing.black_box import black_box_audit

    return black_box_audit(policy, horizon, env, settings, pairs=first_pick_pairs(horizon, env.n_arms))


def _first_pick_horizon(policy: Any, horizon: int, n_arms: int) -> int:
    """K + 1 rounds: the K initial pulls (epochs or episodes of size 1, the largest change of a
    private mean) and the first decision, which is the only one they steer before their arm's
    next epoch or episode replaces them (forgetful); later plays only blur the statistic."""
    return min(horizon, n_arms + 1)


# ---------------------------------------------------------------------------------------
# DP-SE


def _dpse_policy(options: Mapping[str, Any], horizon: int) -> DPSE:
    from bandits.lazy.baselines import DPSE

    beta = options.get("beta")
    return DPSE(epsilon=options["epsilon"], beta=1.0 / horizon if beta is None else beta)


def _dpse(options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
    pol = _dpse_policy(options, horizon)
    why = "1/T (Azize & Basu's choice)" if options.get("beta") is None else "given"
    return Configured(
        pol,
        f"DP-SE (epsilon = {pol.epsilon:g})",
        lines=(f"beta = {pol.beta:g} ({why})",),
        config={"epsilon": pol.epsilon, "beta": pol.beta},
    )


def dpse_horizon(policy: DPSE, n_arms: int) -> int:
    """Epoch 1 (K blocks of R_1) and the two blocks of epoch 2 with arms 0 and 1 left."""
    return n_arms * policy.epoch_length(1, n_arms) + 2 * policy.epoch_length(2, 2)


def dpse_pairs(policy: DPSE, n_arms: int) -> list[PairDesign]:
    """Arms 0 and 1 constant at a gap 2·radius − x/(εR_1), x ∈ {0, 1, 2, 3} (noise units of the
    epoch-1 means; the other arms at 0 are eliminated), and the first reward of arm 1's block in
    epoch 1 changed (1 vs 0): it decides, in the tail of the noise, whether arm 1 survives.

    >>> from bandits.lazy.baselines import DPSE
    >>> ps = dpse_pairs(DPSE(epsilon=1.0, beta=1e-6), 2)
    >>> len(ps), ps[0].round == DPSE(epsilon=1.0, beta=1e-6).epoch_length(1, 2)
    (4, True)
    """
    from bandits.auditing.black_box import PairDesign

    R1 = policy.epoch_length(1, n_arms)
    rad = policy.radius(1, n_arms, R1)
    scale = 1.0 / (policy.epsilon * R1)
    out = []
    for x in (0.0, 1.0, 2.0, 3.0):
        gap = max(0.0, min(1.0, 2.0 * rad - x * scale))
        base = (0.5 + gap / 2, 0.5 - gap / 2) + (0.0,) * (n_arms - 2)
        out.append(
            PairDesign(f"gap 2 radius - {x:g} noise scales, arm 1's first reward 1 vs 0", base, R1, (1,))
        )
    return out


def _dpse_audit(policy: Policy, horizon: int, env: Environment, settings: AuditSettings) -> PolicyAudit:
    from bandits.auditing.black_box import black_box_audit
    from bandits.lazy.baselines import DPSE

    if not isinstance(policy, DPSE):
        raise ValueError(f"policy must be a DPSE, got {type(policy).__name__}")
    return black_box_audit(policy, horizon, env, settings, pairs=dpse_pairs(policy, env.n_arms))


def _dpse_audit_horizon(policy: DPSE, horizon: int, n_arms: int) -> int:
    return min(horizon, dpse_horizon(policy, n_arms))


# ---------------------------------------------------------------------------------------
# AdaP


def _adap(index: str) -> Builder:
    def build(options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
        from bandits.lazy.baselines import AdaP

        pol = AdaP(epsilon=options["epsilon"], alpha=options["alpha"], index=index)
        name = "AdaP-KLUCB" if index == "klucb" else "AdaP-UCB"
        return Configured(
            pol,
            f"{name} (epsilon = {pol.epsilon:g}, alpha = {pol.alpha:g})",
            config={"epsilon": pol.epsilon, "alpha": pol.alpha},
        )

    return build


ALPHA = Option(
    "alpha", float, 3.1, "exploration parameter alpha > 3 (Azize & Basu use 3.1)", low=3.0, low_open=True
)

SPECS = (
    AlgorithmSpec(
        key="lazy-ucb",
        title=f"Anytime-Lazy-UCB ({HU_2024.short}, Alg. 1): per-arm doubling epochs, one Lap(1/eps) per "
        "epoch sum",
        feedback=Feedback.BANDIT,
        unit=UNIT,
        default_env=SETTING_1,
        options=(EPS, LOG, TIES, _lazy_engine("lazy-ucb")),
        build=_lazy("lazy-ucb"),
        auditor=_first_pick_audit,
        default_audit_horizon=_first_pick_horizon,
        paper=HU_2024,
        privacy="central pure DP",
        default_horizon=T_PAPER,
    ),
    AlgorithmSpec(
        key="lazy-dp-ts",
        title=f"Lazy-DP-TS ({HU_2024.short}, Alg. 3): Beta posterior on the clipped, shifted private "
        "epoch mean",
        feedback=Feedback.BANDIT,
        unit=UNIT,
        default_env=SETTING_1,
        options=(EPS, LOG, TIES, _lazy_engine("lazy-dp-ts")),
        build=_lazy("lazy-dp-ts"),
        auditor=_first_pick_audit,
        default_audit_horizon=_first_pick_horizon,
        paper=HU_2024,
        privacy="central pure DP",
        default_horizon=T_PAPER,
    ),
    AlgorithmSpec(
        key="dp-se",
        title=f"DP-SE ({SAJED_SHEFFET_2019.short}): private successive elimination, needs T (beta = 1/T)",
        paper=SAJED_SHEFFET_2019,
        feedback=Feedback.BANDIT,
        privacy="central pure DP",
        unit=UNIT,
        default_env=SETTING_1,
        default_horizon=T_PAPER,
        options=(
            EPS,
            Option(
                "beta",
                float,
                None,
                "failure probability beta (default 1/T)",
                low=0.0,
                high=1.0,
                low_open=True,
                high_open=True,
            ),
        ),
        build=_dpse,
        auditor=_dpse_audit,
        default_audit_horizon=_dpse_audit_horizon,
    ),
    AlgorithmSpec(
        key="adap-klucb",
        title=f"AdaP-KLUCB ({AZIZE_BASU_2022.short}): episodes doubling an arm's count, KL-UCB index on "
        "its last episode",
        paper=AZIZE_BASU_2022,
        feedback=Feedback.BANDIT,
        privacy="central pure DP",
        unit=UNIT,
        default_env=SETTING_1,
        default_horizon=T_PAPER,
        options=(EPS, ALPHA),
        build=_adap("klucb"),
        auditor=_first_pick_audit,
        default_audit_horizon=_first_pick_horizon,
    ),
    AlgorithmSpec(
        key="adap-ucb",
        title=f"AdaP-UCB ({AZIZE_BASU_2022.short}): episodes doubling an arm's count, UCB index on its "
        "last episode",
        paper=AZIZE_BASU_2022,
        feedback=Feedback.BANDIT,
        privacy="central pure DP",
        unit=UNIT,
        default_env=SETTING_1,
        default_horizon=T_PAPER,
        options=(EPS, ALPHA),
        build=_adap("ucb"),
        auditor=_first_pick_audit,
        default_audit_horizon=_first_pick_horizon,
    ),
)
