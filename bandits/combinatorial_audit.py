"""Audits of the combinatorial algorithms: the mechanisms white-box, the action sequences black-box.

A run's audit (``dpaudit run KEY``) combines, through the generic paths:

* **seed 000, ``init="paper"``** — the initialisation release itself. The real agent plays its
  initialisation round on two neighbouring inputs that differ in the record w₀ (all arms 1 vs all
  arms 0); the released vector ``w̃ = w₀ + Lap(1/ε₀)^L`` is read from the agent and thresholded
  on its full-vector likelihood ratio ``ε₀ Σ_e (|w̃_e| − |w̃_e − 1|)`` (Neyman–Pearson optimal;
  maximal, L·ε₀, on the event {every w̃_e ≥ 1}). The ε lower bound is compared with the toolkit's
  certificate (L·ε₀) and with the paper's ε (Theorems 1/3), which it refutes when L·ε₀ > ε.
* **seed 003 LDP** — the local randomizer (:mod:`mechanisms.local`) on inputs 0_K vs 1_K
  (CUCB-LDP1) or 0 vs 1 (CUCB-LDP2), white-box privacy loss (:func:`dpaudit.audit.run_audit`).
* **seed 003 DP** — the tree releases (:class:`TreeReleases`: every node of the full padded tree,
  :class:`~mechanisms.counting.BinaryTreeCounter`) on two streams that differ in one user's
  K-sparse leaf (0 vs 1 on K coordinates), exact privacy loss of all nodes.
* **every algorithm** — the end-to-end action sequences (:func:`bandits.policy_audit.audit_policy`:
  pre-registered neighbouring tables, a pilot choosing pair/statistic/threshold, fresh
  trajectories, Clopper–Pearson). For ``init="public-w0"`` round 0 is not a protected record, so
  its pairs change round 1 instead.

The combined verdict is ``violated`` if any component proves more than the toolkit certifies;
``published_verdict`` compares the strongest component with the paper's claim. Each report
states its **detection floor**: the largest ε any test with n trials per side can prove
(all outcomes on the right side), so "consistent" is read against what could have been seen.

Example:
    >>> floor = max_provable_epsilon(1000, delta=1e-6, confidence=0.95)
    >>> round(floor, 2)
    5.6
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bandits.combinatorial import problem
from bandits.environments import Environment
from bandits.policy import Outcomes, Policy, RunContext
from bandits.policy_audit import PairDesign, audit_policy, candidate_pairs
from dpaudit.accounting import account
from dpaudit.audit import (
    AuditReport,
    Bonferroni,
    Certified,
    Empirical,
    epsilon_lower_bound,
)
from dpaudit.audit.neighbours import NeighbourPair
from dpaudit.audit.power import floor_report, largest_provable_epsilon
from dpaudit.audit.report import Verdict
from dpaudit.audit.runner import AuditTarget, choose_statistic, run_audit
from dpaudit.events import check_integer
from dpaudit.ledger import RunLedgers
from mechanisms.counting import BinaryTreeCounter, tree_levels
from mechanisms.randomness import RepRandom

__all__ = [
    "CombinedAudit",
    "max_provable_epsilon",
    "detection_floor",
    "init_release_samples",
    "audit_init_release",
    "TreeReleases",
    "tree_target",
    "ldp_target",
    "audit_matroid_policy",
    "audit_csb_policy",
    "DEFAULT_INIT_TRIALS",
    "DEFAULT_MECHANISM_TRIALS",
]

DEFAULT_INIT_TRIALS = 20_000
"""Initialisation releases per neighbour for the seed-000 init audit."""
DEFAULT_MECHANISM_TRIALS = 200_000
"""Mechanism samples (both neighbours together) for the randomizer and tree audits."""


def max_provable_epsilon(trials: int, *, delta: float, confidence: float) -> float:
    """The largest ε lower bound one pre-registered test can give with ``trials`` runs per side
    (:func:`dpaudit.audit.power.largest_provable_epsilon`): the audit's detection ceiling."""
    n = check_integer("trials", trials)
    return largest_provable_epsilon(n, n, (1.0 - confidence) / 2.0, delta)


def detection_floor(trials: int, *, delta: float, confidence: float) -> str:
    """One line for the report: the design's floor (:func:`dpaudit.audit.power.floor_report`: the
    smallest ε of the canonical (ε, δ) pair that ``trials`` runs per side detect with probability
    ≥ 1/2) and its ceiling (the most any test can prove)."""
    n = check_integer("trials", trials)
    alpha = (1.0 - confidence) / 2.0
    floor = floor_report(n, n, alpha, certified_mu=None, certified_epsilon=1.0, delta=delta)
    top = largest_provable_epsilon(n, n, alpha, delta)
    return (f"{trials} runs per side: epsilon >= {floor.epsilon:.3g} at delta = {delta:g} is detected with "
            f"probability >= 1/2; no test can prove epsilon above {top:.3g}")


@dataclass(frozen=True)
class CombinedAudit:
    """Several audits of one run: ``primary`` (whose bounds the report shows) and the others by
    name; the verdict is ``violated`` if any of them is."""

    primary: AuditReport
    components: Mapping[str, AuditReport] = field(default_factory=dict)
    published: AuditReport | None = None
    floor: str = ""

    @property
    def verdict(self) -> str:
        """The most severe verdict of the parts (violated > model-mismatch > inconclusive of the
        primary > consistent): one refuted part refutes the run."""
        parts = (self.primary, *self.components.values())
        for v in ("violated", "model-mismatch"):
            if any(Verdict(r.verdict).value == v for r in parts):
                return v
        return Verdict(self.primary.verdict).value

    def to_dict(self) -> dict[str, Any]:
        d = self.primary.to_dict()
        d["verdict"] = self.verdict
        d["details"] = dict(d["details"])
        d["details"]["components"] = {k: v.to_dict() for k, v in self.components.items()}
        if self.floor:
            d["details"]["detection_floor"] = self.floor
        if self.published is not None:
            p = self.published
            word = "VIOLATED" if p.verdict == "violated" else "consistent"
            d["published_verdict"] = (
                f"{word}: epsilon >= {p.empirical.epsilon_lower:.4f} vs claimed {p.certified.epsilon:g} "
                f"({p.certified.source})"
            )
            d["published_audit"] = p.to_dict()
        return d


def _certified(policy: Policy, horizon: int, env: Environment, delta: float) -> Certified:
    decl = policy.declare(horizon, env.n_arms, env.structure)
    if decl is None:
        return Certified(source="none: the policy declares no privacy")
    if delta > 0:
        eps = account(decl.event, delta=delta).best.value
    else:  # δ = 0: the pure ε of basic composition (independent of δ for pure leaves)
        eps = account(decl.event, delta=1e-12).bounds["basic"].value
    return Certified(epsilon=eps, delta=delta, source="dpaudit")


def _claim(policy: Policy, horizon: int, env: Environment, delta: float) -> Certified | None:
    decl = policy.declare(horizon, env.n_arms, env.structure)
    if decl is None or decl.published is None or decl.published.epsilon is None:
        return None
    return Certified(epsilon=float(decl.published.epsilon), delta=delta, source=decl.published.source)


# ---------------------------------------------------------------------------------------
# seed 000: the initialisation release


def init_release_samples(
    policy: Policy, env: Environment, w0: np.ndarray, n: int, seed: np.random.SeedSequence, block: int = 4096
) -> np.ndarray:
    """(n, L) initialisation releases w̃ of the real agent on the first outcome row ``w0``."""
    L = env.n_arms
    row = np.asarray(w0, dtype=float).reshape(1, 1, L)
    out = []
    for b, start in enumerate(range(0, n, block)):
        size = min(block, n - start)
        seeds = np.random.SeedSequence(seed.entropy, spawn_key=tuple(seed.spawn_key) + (b,)).spawn(size)
        run = RunContext(L, 2, env.structure, RepRandom(seeds), RepRandom(seeds).child(2), RunLedgers(size))
        agent = policy.agent(run)
        agent.run_chunk(0, 1, Outcomes(np.broadcast_to(row, (size, 1, L)), policy.feedback))
        rel = getattr(agent, "released_init", None)
        if rel is None:
            raise ValueError(
                f"{policy.name} makes no initialisation release (init must be 'paper' or 'public-w0')"
            )
        out.append(np.asarray(rel))
    return np.concatenate(out, axis=0)


def audit_init_release(
    policy: Policy,
    env: Environment,
    *,
    trials: int = DEFAULT_INIT_TRIALS,
    seed: int = 0,
    confidence: float = 0.95,
    delta: float = 1e-6,
) -> tuple[AuditReport, AuditReport | None]:
    """Audit the initialisation release (module docstring): (vs the toolkit's certificate, vs the
    paper's claim)."""
    n = check_integer("trials", trials, 100)
    L = env.n_arms
    K = problem(env.structure).k
    eps0 = policy.epsilon0(K)  # type: ignore[attr-defined]
    root = np.random.SeedSequence(check_integer("seed", seed, 0), spawn_key=(0xA0D17,))
    null = init_release_samples(
        policy, env, np.ones(L), n, np.random.SeedSequence(root.entropy, spawn_key=(0xA0D17, 0))
    )
    alt = init_release_samples(
        policy, env, np.zeros(L), n, np.random.SeedSequence(root.entropy, spawn_key=(0xA0D17, 1))
    )

    def llr(y: np.ndarray) -> np.ndarray:  # log p(y | w0 = 1) − log p(y | w0 = 0), rounded (post-processing)
        return np.round(eps0 * (np.abs(y) - np.abs(y - 1.0)).sum(axis=1), 9)

    bound = epsilon_lower_bound(
        llr(null), llr(alt), delta=delta, confidence=confidence, selection=Bonferroni()
    )
    empirical = Empirical(
        epsilon_lower=float(bound.epsilon),
        mu_lower=None,
        delta=delta,
        confidence=confidence,
        trials=2 * n,
        method="clopper-pearson, bonferroni over a pre-registered threshold grid",
        statistic=f"full-vector likelihood ratio of the initial release (L = {L}, eps0 = {eps0:.6g})",
    )
    details = {
        "neighbours": "the initial record w0: every arm 1 vs every arm 0 (replace one round's reward vector)",
        "exact_max_loss": L * eps0,
        "per_round_epsilon": K * eps0,
        "detection_floor": detection_floor(n, delta=delta, confidence=confidence),
    }
    target = f"{policy.name}: initialisation release (white box)"
    own = AuditReport.build(
        target=target, certified=_certified(policy, 2, env, delta), empirical=empirical, details=details
    )
    claim = _claim(policy, 2, env, delta)
    pub = (
        None
        if claim is None
        else AuditReport.build(target=target, certified=claim, empirical=empirical, details=details)
    )
    return own, pub


def _shift_pairs(pairs: list[PairDesign], horizon: int) -> list[PairDesign]:
    """The same designs with changes at round 0 moved to round 1 (w₀ public: round 0 unprotected)."""
    out = []
    for p in pairs:
        r = max(1, p.round) if horizon > 1 else p.round
        out.append(
            dataclasses.replace(
                p, round=r, name=p.name.replace(" 0 ", f" {r} ").replace("round 0", f"round {r}")
            )
        )
    return out


def audit_matroid_policy(
    policy: Policy,
    horizon: int,
    env: Environment,
    *,
    trials: int,
    seed: int = 0,
    confidence: float = 0.95,
    delta: float = 1e-6,
    executor: Executor | None = None,
    progress: bool = False,
    init_trials: int = DEFAULT_INIT_TRIALS,
) -> CombinedAudit:
    """The audit ``dpaudit run dpucb-mat`` / ``dpts-mat`` runs (module docstring)."""
    init = getattr(policy, "init", "cover")
    pairs = candidate_pairs(horizon, env.n_arms)
    if init == "public-w0":
        pairs = _shift_pairs(pairs, horizon)
    actions = audit_policy(
        policy, horizon, env, trials=trials, seed=seed, confidence=confidence, delta=delta,
        executor=executor, progress=progress, pairs=pairs,
    )  # fmt: skip
    floor = detection_floor(trials, delta=delta, confidence=confidence)
    if init != "paper" or not getattr(policy, "private", False):
        return CombinedAudit(actions, {}, None, floor)
    own, pub = audit_init_release(
        policy, env, trials=init_trials, seed=seed, confidence=confidence, delta=delta
    )
    return CombinedAudit(own, {"action sequences": actions}, pub, own.details["detection_floor"])


# ---------------------------------------------------------------------------------------
# seed 003: randomizers and the tree


@dataclass(frozen=True)
class TreeReleases:
    """Every node the full padded tree releases on a stream (T, m): ``sample`` and the exact
    ``privacy_loss`` of the node values between two streams (for :func:`run_audit`)."""

    horizon: int
    dim: int
    node_scale: float
    sensitivity: float

    def _counter(self, rng: np.random.Generator, size: Any = None) -> BinaryTreeCounter:
        return BinaryTreeCounter(
            self.horizon, shape=(self.dim,), noise_scale=self.node_scale, sensitivity=self.sensitivity,
            tree="full", padded=True, rng=rng, size=size,
        )  # fmt: skip

    def sample(self, x: Any, rng: np.random.Generator, size: Any = None) -> np.ndarray:
        stream = np.asarray(x, dtype=float).reshape(self.horizon, self.dim)
        c = self._counter(rng, size)
        for leaf in stream:
            c.step(leaf)
        c.close()
        return c.released_values()

    def privacy_loss(self, values: Any, x: Any, x_prime: Any) -> np.ndarray:
        c = self._counter(np.random.default_rng(0))
        for _ in range(self.horizon):
            c.step(np.zeros(self.dim))
        c.close()
        xs = np.asarray(x, dtype=float).reshape(self.horizon, self.dim)
        xp = np.asarray(x_prime, dtype=float).reshape(self.horizon, self.dim)
        return c.privacy_loss(values, xs, xp)

    @property
    def levels(self) -> int:
        return tree_levels(self.horizon, padded=True)

    @property
    def epsilon(self) -> float:
        """levels · Δ / b (every step in every level's node)."""
        return self.levels * self.sensitivity / self.node_scale


def tree_target(
    policy: Policy, horizon: int, env: Environment, *, delta: float, step: int | None = None
) -> AuditTarget:
    """CUCB-DP's tree on streams (T, m) of zeros vs one user's leaf set to 1 on K coordinates."""
    k, m = problem(env.structure).k, env.n_arms
    T = check_integer("horizon", horizon, 2)
    mech = TreeReleases(T, m, policy.node_scale(T, k), float(k))  # type: ignore[attr-defined]
    tau = T // 2 if step is None else step
    x = np.zeros((T, m))
    xp = x.copy()
    xp[tau, :k] = 1.0
    pair = NeighbourPair(
        tuple(x.ravel().tolist()), tuple(xp.ravel().tolist()), "replace (one user's leaf)",
        f"stream of T = {T} zero leaves vs user {tau}'s leaf 1 on {k} coordinates",
        exact_loss=mech.epsilon,
    )  # fmt: skip
    claim = Certified(epsilon=_certified(policy, T, env, delta).epsilon, delta=delta, source="dpaudit")
    details = {"levels": mech.levels, "node_scale": mech.node_scale, "exact_max_loss": mech.epsilon}
    return AuditTarget(
        "cucb-dp tree", mech, pair, choose_statistic(mech, pair), claim, delta, details=details
    )


def ldp_target(policy: Policy, env: Environment, *, delta: float) -> AuditTarget:
    """The local randomizer of CUCB-LDP1 (0_K vs 1_K) or CUCB-LDP2 (0 vs 1)."""
    from bandits.csb import CUCBLDP1

    k = problem(env.structure).k
    if isinstance(policy, CUCBLDP1):
        mech: Any = policy.randomizer(k)
        pair = NeighbourPair(
            tuple([0.0] * k),
            tuple([1.0] * k),
            "replace (one user's outcomes)",
            f"0_{k} vs 1_{k}",
            mech.epsilon,
        )
    else:
        mech = policy.randomizer()  # type: ignore[attr-defined]
        pair = NeighbourPair(0.0, 1.0, "replace (one user's outcome)", "0 vs 1", mech.epsilon)
    claim = Certified(epsilon=mech.epsilon, delta=delta, source="dpaudit")
    return AuditTarget(f"{policy.name} randomizer", mech, pair, choose_statistic(mech, pair), claim, delta)


def audit_csb_policy(
    policy: Policy,
    horizon: int,
    env: Environment,
    *,
    trials: int,
    seed: int = 0,
    confidence: float = 0.95,
    delta: float = 1e-6,
    executor: Executor | None = None,
    progress: bool = False,
    mechanism_trials: int = DEFAULT_MECHANISM_TRIALS,
) -> CombinedAudit:
    """The audit ``dpaudit run cucb-ldp1/-ldp2/-dp`` runs: the mechanism (white box, primary)
    and the action sequences (black box)."""
    from bandits.csb import CUCBDP

    actions = audit_policy(
        policy, horizon, env, trials=trials, seed=seed, confidence=confidence, delta=delta,
        executor=executor, progress=progress,
    )  # fmt: skip
    target = (
        tree_target(policy, horizon, env, delta=delta)
        if isinstance(policy, CUCBDP)
        else ldp_target(policy, env, delta=delta)
    )
    # tree outputs are (levels·T nodes × m) per sample: batches of 2^14 keep a batch under ~100 MB
    mech = run_audit(
        target,
        trials=mechanism_trials,
        seed=seed,
        confidence=confidence,
        executor=executor,
        batch_size=1 << 14,
    )
    claim = _claim(policy, horizon, env, delta)
    pub = None
    if claim is not None:
        pub = AuditReport.build(target=mech.target, certified=claim, empirical=mech.empirical, details={})
    floor = detection_floor(mechanism_trials // 2, delta=delta, confidence=confidence)
    return CombinedAudit(mech, {"action sequences": actions}, pub, floor)
