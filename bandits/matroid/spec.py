"""The matroid bandits of Chandak, Hu & Hegde (2023) as ``dpaudit run``: DPUCB-MAT, DPTS-MAT and
the baselines OMM (Kveton et al. 2014) and CTS-Gaussian (Wang & Chen 2018)
(:mod:`bandits.matroid.policies`).

With no options they run the paper's synthetic instance (E1: the 7-vector linear matroid in ℝ³ of
Table 2, n = 10⁴, ε = 2) with the paper's literal initialisation; ``--env`` takes the
combinatorial grammar of :mod:`bandits.environments.grammar` (e.g. ``movielens-like:seed=0`` for E3).
The privacy section certifies the per-record ε (L·ε₀ for ``--init paper``, K·ε₀ = ε otherwise)
beside the paper's ε; the audit is :func:`bandits.matroid.audit.audit_matroid_policy`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from bandits.actions import Feedback
from bandits.algorithm import TIE_RULES, AlgorithmSpec, Configured, Option, parse_combinatorial_env
from dpaudit.papers import CHANDAK_HU_HEGDE_2023, KVETON_2014, WANG_CHEN_2018, Citation

if TYPE_CHECKING:  # policies and audits load in the functions that use them
    from bandits.auditing.contract import AuditSettings, PolicyAudit
    from bandits.environments import Environment
    from bandits.matroid.policies import MatroidPolicy
    from bandits.policy import Policy

UNIT = "one round's reward vector"
"""The unit of privacy (:data:`bandits.matroid.policies.UNIT`, repeated so that declaring the specs
imports no policy; ``tests/test_registry.py`` checks that they agree, and :data:`INIT_MODES`)."""
INIT_MODES = ("paper", "public-w0", "cover")
DEFAULT_ENV = "matroid-linear:e1"
DEFAULT_HORIZON = 10_000
AUDIT_HORIZON = 100

INIT = Option(
    "init",
    str,
    "paper",
    "initialisation: paper (w0 observed for every arm: L*eps0 for that record), public-w0 (w0 declared "
    "public), cover (legal: data-independent bases covering every arm)",
    choices=INIT_MODES,
)
TIES = Option("ties", str, "index", "oracle ties: index (lower arm first) or random", choices=TIE_RULES)
EPSILON = Option(
    "epsilon",
    float,
    2.0,
    "privacy budget epsilon (eps0 = epsilon/K per observed arm)",
    low=0.0,
    low_open=True,
)


def _build(cls_name: str, title: str) -> Any:
    def build(options: Mapping[str, Any], env: Environment, horizon: int) -> Configured:
        import bandits.matroid.policies as mb
        from bandits.structures.combinatorial import problem

        cls = getattr(mb, cls_name)
        kw = {"init": options["init"], "ties": options["ties"]}
        pol = cls(options["epsilon"], **kw) if "epsilon" in options else cls(**kw)
        k = problem(env.structure).k
        lines = [
            f"K = {k} (rank), L = {env.n_arms} arms; initialisation: {pol.init}; oracle ties: {pol.ties}"
        ]
        config: dict[str, Any] = {"init": pol.init, "ties": pol.ties, "K": k}
        if "epsilon" in options:
            eps0 = pol.epsilon0(k)
            lines.append(f"eps = {pol.epsilon:g}, eps0 = eps/K = {eps0:.6g}")
            config.update(epsilon=pol.epsilon, epsilon0=eps0)
        lines.append("regret benchmark: opt = f(A*) (the greedy oracle is exact on a matroid: alpha = 1)")
        return Configured(pol, title, lines=tuple(lines), config=config)

    return build


def _extras(policy: MatroidPolicy, horizon: int, n_arms: int) -> dict[str, Any]:
    eps = getattr(policy, "epsilon", None)
    if eps is None:
        return {}
    return {"init": policy.init, "paper_epsilon": float(eps)}


def _published(policy: MatroidPolicy, horizon: int, n_arms: int, delta: float) -> dict[str, float]:
    return {"paper": float(policy.epsilon)}  # type: ignore[attr-defined]


def _audit_horizon(policy: MatroidPolicy, horizon: int, n_arms: int) -> int:
    return min(horizon, AUDIT_HORIZON)


def _audit(policy: Policy, horizon: int, env: Environment, settings: AuditSettings) -> PolicyAudit:
    from bandits.matroid.audit import audit_matroid_policy

    return audit_matroid_policy(policy, horizon, env, settings)


def _spec(key: str, cls_name: str, title: str, private: bool, paper: Citation) -> AlgorithmSpec:
    opts = (EPSILON, INIT, TIES) if private else (INIT, TIES)
    return AlgorithmSpec(
        key=key,
        title=title,
        paper=paper,
        feedback=Feedback.SEMI_BANDIT,
        privacy="central pure DP" if private else "none",
        unit=UNIT if private else None,
        default_env=DEFAULT_ENV,
        default_horizon=DEFAULT_HORIZON,
        options=opts,
        build=_build(cls_name, title),
        auditor=_audit if private else None,
        published_bounds=_published if private else None,
        privacy_extras=_extras if private else None,
        default_audit_horizon=_audit_horizon,
        env_parser=parse_combinatorial_env,
    )


SPECS = (
    _spec(
        "dpucb-mat",
        "DPUCBMat",
        f"DPUCB-MAT ({CHANDAK_HU_HEGDE_2023.short}, Alg. 2): DP UCB on matroids, lazy doubling Laplace "
        "epochs",
        True,
        CHANDAK_HU_HEGDE_2023,
    ),
    _spec(
        "dpts-mat",
        "DPTSMat",
        f"DPTS-MAT ({CHANDAK_HU_HEGDE_2023.short}, Alg. 3): DP Thompson sampling on matroids, lazy "
        "Laplace epochs",
        True,
        CHANDAK_HU_HEGDE_2023,
    ),
    _spec(
        "omm",
        "OMM",
        f"OMM ({KVETON_2014.short}): UCB1 greedy on matroids, non-private baseline of "
        f"{CHANDAK_HU_HEGDE_2023.short}",
        False,
        KVETON_2014,
    ),
    _spec(
        "cts-gaussian",
        "CTSGaussian",
        f"CTS with Gaussian priors ({WANG_CHEN_2018.short}) on matroids, non-private baseline of "
        f"{CHANDAK_HU_HEGDE_2023.short}",
        False,
        WANG_CHEN_2018,
    ),
)
