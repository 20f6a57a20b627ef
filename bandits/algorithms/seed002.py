"""Seed 002's private bandits and its §6 baselines as ``dpaudit run`` algorithms.

``lazy-ucb`` (Alg. 1), ``lazy-dp-ts`` (Alg. 3), ``rnm-ftnl`` (Alg. 4, ``--noise published`` =
Lap(1/ε) as printed, certified 2ε; ``corrected`` = Lap(2/ε), certified ε), ``naive-ftnl`` (§5
text), ``dp-se`` (Sajed & Sheffet 2019), ``adap-ucb`` and ``adap-klucb`` (Azize & Basu 2022).
With no ``--env`` the bandit algorithms run seed 002's setting 1 (Fig. 1) and the full-information
ones the "all gaps equal" instance (one action 0.6, three at 0.5), T = 10⁶.

Audits go through the generic black-box path (:func:`bandits.policy_audit.audit_policy`) with
pair families chosen to be hard to hide:

* lazy epochs and AdaP episodes: :func:`first_pick_pairs` (a changed first observation — an
  epoch or episode of size 1, the largest change of a private mean — on tied, led or zero
  tables) at the horizon K + 1, the first decision it steers (forgetful schemes replace that mean
  at the arm's next epoch end, and later plays only blur the statistic). Lazy-DP-TS and
  AdaP-KLUCB clip the shifted mean (μ̃ + 3 ln t/(εO) or + α ln t/(εm), > 1 when O = m = 1) to 1,
  which hides most of it: their audits prove little, and the report says how little it could;
* RNM-FTNL / naive FTNL: :func:`rnm_pairs` — inside global epoch s (the one ending a quarter of
  the way into the horizon), action 0 leads by g rounds and one round's vector (1, 0, …) is
  replaced by (0, 1, …), g = 1..2^s; the released leader decides the next epoch's 2^{s+1} plays.
  With K = 2 and long epochs the published Lap(1/ε) is refuted (``published_verdict``);
* DP-SE: :func:`dpse_pairs` — arms 0 and 1 at a gap near twice the elimination radius of epoch 1,
  one reward of arm 1 changed, and a horizon that covers epoch 2, so that the elimination
  decision shows in the plays of arm 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bandits.actions import Feedback
from bandits.registry import AlgorithmSpec, Configured, Option

if TYPE_CHECKING:  # policies and audits load in the functions that use them, not to declare the specs
    from bandits.baselines import DPSE
    from bandits.environments import Environment
    from bandits.policy_audit import PairDesign

__all__ = ["SETTING_1", "SETTING_2", "FULL_INFO_ENV", "rnm_pairs", "dpse_pairs", "SPECS"]

SETTING_1 = "bernoulli:0.75,0.625,0.5,0.375,0.25"
SETTING_2 = "bernoulli:0.5,0.4,0.4,0.4,0.4"
FULL_INFO_ENV = "bernoulli:0.6,0.5,0.5,0.5"
T_PAPER = 1_000_000
SEED = "002_7fdd135d06c1835d.txt"
"""Seed 002's file (the same as :data:`bandits.lazy.SEED`, repeated so that declaring the specs
imports no policy; ``tests/test_registry.py`` checks that they agree)."""
UNIT = "one round's reward vector"
"""The unit of privacy (the same as :data:`bandits.lazy.UNIT`, checked likewise)."""

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


def _lazy(key: str):
    def build(options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
        from bandits.kernels import HAVE_NUMBA
        from bandits.lazy import LazyDPTS, LazyUCB

        cls = LazyUCB if key == "lazy-ucb" else LazyDPTS
        pol = cls(
            epsilon=options["epsilon"], log=options["log"], ties=options["ties"], engine=options["engine"]
        )
        title = ("Anytime-Lazy-UCB" if cls is LazyUCB else "Lazy-DP-TS") + f" (epsilon = {pol.epsilon:g})"
        engine = pol.engine
        if cls is LazyDPTS and engine == "auto":
            engine = "numba" if HAVE_NUMBA else "step (numba not installed)"
        lines = (f"log = {pol.log}, ties = {pol.ties}, engine = {engine}",)
        cfg = {"epsilon": pol.epsilon, "log": pol.log, "ties": pol.ties, "engine": pol.engine}
        return Configured(pol, title, lines=lines, config=cfg)

    return build


def first_pick_pairs(horizon: int, n_arms: int) -> list[PairDesign]:
    """The default family plus arm 0's first reward (1 vs 0) against all other arms at 0: the
    first data-dependent decision (round K) then compares arm 0's epoch-0 mean with the others'
    in the noise's tail, where a Laplace pair is most distinguishable."""
    from bandits.policy_audit import PairDesign, candidate_pairs

    low = PairDesign("arm 0's first reward 1 vs 0, other arms 0", (0.0,) * n_arms, 0, (0,))
    return candidate_pairs(horizon, n_arms) + [low]


def _first_pick_audit(policy: Any, horizon: int, env: Environment, **kw: Any) -> Any:
    from bandits.policy_audit import audit_policy

    return audit_policy(policy, horizon, env, pairs=first_pick_pairs(horizon, env.n_arms), **kw)


def _first_pick_horizon(policy: Any, horizon: int, n_arms: int) -> int:
    """K + 1 rounds: the K initial pulls (epochs or episodes of size 1, the largest change of a
    private mean) and the first decision, which is the only one they steer before their arm's
    next epoch or episode replaces them (forgetful); later plays only blur the statistic."""
    return min(horizon, n_arms + 1)


# ---------------------------------------------------------------------------------------
# full information


def rnm_pairs(horizon: int, n_arms: int) -> tuple[list[PairDesign], int]:
    """Pairs for global-epoch algorithms at ``horizon``: epoch s with 2^{s+1} ≤ (horizon + 1)/2,
    so that epoch s + 1 (whose plays reveal the released leader) fits; action 0 leads by g rounds
    of epoch s (vectors (1, 0, …)), and the first of them is (1, 0, …) vs (0, 1, …). Returns the
    pairs and epoch s.

    >>> pairs, s = rnm_pairs(63, 2)
    >>> s, len(pairs), pairs[0].tables(63)[1][15].tolist()
    (4, 9, [0.0, 1.0])
    """
    from bandits.full_info import epoch_bounds
    from bandits.policy_audit import PairDesign

    s = max(1, (horizon + 1).bit_length() - 3)
    start, stop = epoch_bounds(s)
    zeros = (0.0,) * n_arms
    lead = (1.0,) + (0.0,) * (n_arms - 1)
    swap = (0.0, 1.0) + (0.0,) * (n_arms - 2)
    pairs = [
        PairDesign(
            f"epoch {s}: action 0 leads by {g}, one round (1,0) vs (0,1)",
            zeros,
            start,
            None,
            values=(lead, swap),  # whole row: a vector per side
            overrides=((start, start + g, lead),),
        )
        for g in sorted({1, 2, 3, 4, 5, 6, 8, 11, 16, stop - start} & set(range(1, stop - start + 1)))
    ]
    return pairs, s


def _rnm_audit(policy: Any, horizon: int, env: Environment, **kw: Any) -> Any:
    from bandits.policy_audit import audit_policy

    pairs, _ = rnm_pairs(horizon, env.n_arms)
    return audit_policy(policy, horizon, env, pairs=pairs, **kw)


def _rnm_audit_horizon(policy: Any, horizon: int, n_arms: int) -> int:
    return min(horizon, 63)  # epoch 4 (16 rounds) and the 32 rounds of epoch 5


def _rnm(options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
    from bandits.full_info import RNMFTNL

    pol = RNMFTNL(epsilon=options["epsilon"], noise=options["noise"])
    cert = pol.declare(horizon, env.n_arms).event.epsilon
    lines = (
        f"noise Lap({pol.scale:g}) ({options['noise']}): certified {cert:g}-DP under replace-one"
        + (" (Theorem 8 claims epsilon)" if pol.noise == "published" else ""),
    )
    return Configured(
        pol,
        f"RNM-FTNL (epsilon = {pol.epsilon:g}, {pol.noise} noise)",
        lines=lines,
        config={"epsilon": pol.epsilon, "noise": pol.noise},
    )


def _naive(options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
    from bandits.full_info import NaiveFTNL

    pol = NaiveFTNL(epsilon=options["epsilon"])
    return Configured(
        pol, f"naive FTNL (epsilon = {pol.epsilon:g}, Lap(K/epsilon) sums)", config={"epsilon": pol.epsilon}
    )


# ---------------------------------------------------------------------------------------
# DP-SE


def _dpse_policy(options: Mapping[str, Any], horizon: int) -> DPSE:
    from bandits.baselines import DPSE

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

    >>> from bandits.baselines import DPSE
    >>> ps = dpse_pairs(DPSE(epsilon=1.0, beta=1e-6), 2)
    >>> len(ps), ps[0].round == DPSE(epsilon=1.0, beta=1e-6).epoch_length(1, 2)
    (4, True)
    """
    from bandits.policy_audit import PairDesign

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


def _dpse_audit(policy: DPSE, horizon: int, env: Environment, **kw: Any) -> Any:
    from bandits.policy_audit import audit_policy

    return audit_policy(policy, horizon, env, pairs=dpse_pairs(policy, env.n_arms), **kw)


def _dpse_audit_horizon(policy: DPSE, horizon: int, n_arms: int) -> int:
    return min(horizon, dpse_horizon(policy, n_arms))


# ---------------------------------------------------------------------------------------
# AdaP


def _adap(index: str):
    def build(options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
        from bandits.baselines import AdaP

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

_COMMON = dict(paper=SEED, privacy="central pure DP", default_horizon=T_PAPER)

SPECS = (
    AlgorithmSpec(
        key="lazy-ucb",
        title="Anytime-Lazy-UCB (seed 002, Alg. 1): per-arm doubling epochs, one Lap(1/eps) per epoch sum",
        feedback=Feedback.BANDIT,
        unit=UNIT,
        default_env=SETTING_1,
        options=(EPS, LOG, TIES, _lazy_engine("lazy-ucb")),
        build=_lazy("lazy-ucb"),
        auditor=_first_pick_audit,
        default_audit_horizon=_first_pick_horizon,
        **_COMMON,
    ),
    AlgorithmSpec(
        key="lazy-dp-ts",
        title="Lazy-DP-TS (seed 002, Alg. 3): Beta posterior on the clipped, shifted private epoch mean",
        feedback=Feedback.BANDIT,
        unit=UNIT,
        default_env=SETTING_1,
        options=(EPS, LOG, TIES, _lazy_engine("lazy-dp-ts")),
        build=_lazy("lazy-dp-ts"),
        auditor=_first_pick_audit,
        default_audit_horizon=_first_pick_horizon,
        **_COMMON,
    ),
    AlgorithmSpec(
        key="rnm-ftnl",
        title="RNM-FTNL (seed 002, Alg. 4, full information): global doubling epochs, report-noisy-max",
        feedback=Feedback.FULL,
        unit=UNIT,
        default_env=FULL_INFO_ENV,
        options=(
            EPS,
            Option(
                "noise",
                str,
                "published",
                "Lap(1/eps) as published (certified 2 eps) or corrected Lap(2/eps)",
                choices=("published", "corrected"),
            ),
        ),
        build=_rnm,
        auditor=_rnm_audit,
        default_audit_horizon=_rnm_audit_horizon,
        **_COMMON,
    ),
    AlgorithmSpec(
        key="naive-ftnl",
        title="naive FTNL (seed 002, section 5 text): global epochs, K noisy sums with Lap(K/eps)",
        feedback=Feedback.FULL,
        unit=UNIT,
        default_env=FULL_INFO_ENV,
        options=(EPS,),
        build=_naive,
        auditor=_rnm_audit,
        default_audit_horizon=_rnm_audit_horizon,
        **_COMMON,
    ),
    AlgorithmSpec(
        key="dp-se",
        title="DP-SE (Sajed & Sheffet 2019): private successive elimination, needs T (beta = 1/T)",
        paper=None,
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
        title="AdaP-KLUCB (Azize & Basu 2022): episodes doubling an arm's count, KL-UCB index on its "
        "last episode",
        paper=None,
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
        title="AdaP-UCB (Azize & Basu 2022): episodes doubling an arm's count, UCB index on its last episode",
        paper=None,
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
