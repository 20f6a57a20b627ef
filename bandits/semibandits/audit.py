"""The audit of the (locally) private combinatorial semi-bandits (``dpaudit run cucb-ldp1/-ldp2/-dp``).

* **LDP** — the local randomizer (:mod:`mechanisms.local`) on inputs 0_K vs 1_K (CUCB-LDP1) or
  0 vs 1 (CUCB-LDP2), white-box privacy loss (:func:`dpaudit.audit.run_audit`).
* **DP** — the tree releases (:class:`TreeReleases`: every node of the full padded tree,
  :class:`~mechanisms.continual.tree.BinaryTreeCounter`) on two streams that differ in one
  user's K-sparse leaf (0 vs 1 on K coordinates), exact privacy loss of all nodes.
* **the action sequences** — :func:`bandits.auditing.black_box.audit_policy`.

The mechanism's floor, with ``--audit-floor algorithm`` or kept from such a run, is measured on
the mechanism itself: the same ``run_audit`` on it with its noise scaled by 1/L
(:mod:`bandits.auditing.mechanism_floor`; :data:`TREE_FLOOR_REPLICATES` audits per factor for the
tree, 64 for the randomizers).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from bandits.auditing.black_box import audit_policy
from bandits.auditing.claims import (
    DEFAULT_MECHANISM_TRIALS,
    certified_claim,
    detection_floor,
    published_claim,
)
from bandits.auditing.contract import AuditSettings, PolicyAudit
from bandits.auditing.kept_floors import algorithm_floor
from bandits.auditing.mechanism_floor import mechanism_leak_floor, with_measured_floor
from bandits.environments import Environment
from bandits.policy import Policy
from bandits.structures.combinatorial import problem
from dpaudit.audit import AuditReport, Certified
from dpaudit.audit.neighbours import NeighbourPair
from dpaudit.audit.runner import AuditTarget, choose_statistic, run_audit
from dpaudit.validation import check_integer
from mechanisms.continual.tree import BinaryTreeCounter, tree_levels

__all__ = ["TreeReleases", "tree_target", "ldp_target", "audit_csb_policy", "TREE_FLOOR_REPLICATES"]

TREE_FLOOR_REPLICATES = 16
"""Whole audits per leak factor of the tree's measured floor (each samples 2·10⁵ full trees, ~5 s
of CPU at the default T = 32: 64 like the randomizers' would take about 40 minutes)."""


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
    claim = Certified(epsilon=certified_claim(policy, T, env, delta).epsilon, delta=delta, source="dpaudit")
    details = {"levels": mech.levels, "node_scale": mech.node_scale, "exact_max_loss": mech.epsilon}
    return AuditTarget(
        "cucb-dp tree", mech, pair, choose_statistic(mech, pair), claim, delta, details=details
    )


def ldp_target(policy: Policy, env: Environment, *, delta: float) -> AuditTarget:
    """The local randomizer of CUCB-LDP1 (0_K vs 1_K) or CUCB-LDP2 (0 vs 1)."""
    from bandits.semibandits.policies import CUCBLDP1

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
    settings: AuditSettings,
    *,
    mechanism_trials: int = DEFAULT_MECHANISM_TRIALS,
) -> PolicyAudit:
    """The audit ``dpaudit run cucb-ldp1/-ldp2/-dp`` runs: the mechanism (white box, primary; a
    model of it, labelled so) and the action sequences (black box), each at half the error level;
    the family's
    :class:`~bandits.auditing.contract.PolicyAuditor`."""
    from bandits.semibandits.policies import CUCBDP

    each = settings.shared(2)  # two tests: the mechanism's and the action sequences'
    actions = audit_policy(policy, horizon, env, each)
    delta, confidence = settings.delta, each.confidence
    tree = isinstance(policy, CUCBDP)
    target = tree_target(policy, horizon, env, delta=delta) if tree else ldp_target(policy, env, delta=delta)
    # tree outputs are (levels·T nodes × m) per sample: batches of 2^14 keep a batch under ~100 MB
    batch = 1 << 14
    mech = run_audit(target, trials=mechanism_trials, seed=settings.seed, confidence=confidence,
                     executor=settings.executor, batch_size=batch)  # fmt: skip
    measured, kept = algorithm_floor(
        "mechanism", settings, [policy, horizon, env, mechanism_trials],
        lambda: mechanism_leak_floor(target, trials=mechanism_trials, confidence=confidence, batch_size=batch,
                                     floor_seed=settings.floor_seed,
                                     replicates=TREE_FLOOR_REPLICATES if tree else 64))  # fmt: skip
    model = (
        "the tree counter re-built from the policy's node scale, not the running agent"
        if tree
        else "the local randomizer re-built from the policy's epsilon, not the running agent"
    )
    mech = with_measured_floor(replace(mech, details={**mech.details, "model": model}), measured, kept)
    claim = published_claim(policy, horizon, env, delta)
    pub = None
    if claim is not None:
        pub = AuditReport.build(target=mech.target, certified=claim, empirical=mech.empirical, details={})
    floor = mech.details["detection_floor"] if measured is not None else detection_floor(
        mechanism_trials // 2, delta=delta, confidence=confidence)
    return PolicyAudit(mech, {"action sequences": actions}, pub, floor)
