"""End-to-end audits of the cascading bandits of Wang et al. (2021) on neighbouring click streams.

Neighbouring inputs differ in **one user's attraction vector** (one round's row of the outcome
table, replaced): at round τ every item attracts (the user clicks at position 1, ``C = 1``) or
none does (no click, ``C = ∞``); every other round is the same fixed row. The real agent plays
both tables; what is tested is what the algorithm releases:

* **local algorithms** (:class:`~bandits.cascading.policies.CascadeLDP`,
  :class:`~bandits.cascading.policies.CascadeLDPFixed`): the server's view of user τ — the report
  it receives (the rest of the transcript is post-processing of other users' reports and their
  own data). Statistics: the **number of values** sent and the **first value** (for the one-hot
  report of ``C = 1`` vs ``C = ∞`` only position 1 differs, and the likelihood ratio of the Laplace
  and Gaussian reports is monotone in it). With the paper's initialisation, the initial record
  w₀ (all items 1 vs 0) is audited the same way (its "report" is the raw vector).
* **central algorithms** (:class:`~bandits.cascading.policies.CascadeDP`,
  :class:`~bandits.cascading.policies.CascadeDPCounts`): the **list sequence** after τ (rows before
  and after τ: no item attracts, so every shown item is examined). Statistics: how many items of
  ``A_τ`` are shown again in ``A_{τ+d}``, d = 1, 2, 3 (with C = 1 only ``a_1`` is examined at τ, so
  Algorithm 1's un-noised counts bring the other K − 1 items back at once), and, with the paper's
  initialisation, plays of item 0 in rounds 1–3 on w₀ = e₀ vs 0.

The test is chosen on an independent pilot (pair, statistic, threshold, orientation: the largest
predicted bound at the main sample size), then fresh trajectories give one Clopper–Pearson test
(false-positive and false-negative rates at level α/2 each) → ε at δ and GDP μ lower bounds. When
the toolkit certifies nothing (a ``NonPrivateEvent``), the audit's claim is the paper's: the
verdict says whether the paper's ε survives. Claims with a δ (Theorems 5, 7) are audited at that
δ. Every report gives its detection floor and ceiling (:mod:`dpaudit.audit.power`); with
``--audit-floor algorithm``, or kept from such a run, the floor of the report and list-sequence
audits is measured by running them again on the noise-scaled agent
(:mod:`bandits.auditing.replicated_floor`), and that of CUCB-LDP-Gaussian's randomizer on the
noise-scaled randomizer (:mod:`bandits.auditing.mechanism_floor`); the raw initial records, which
carry no noise, keep the reference floor.

Example:
    >>> from bandits.environments.cascade import cascade_instance
    >>> from bandits.cascading.policies import CascadeLDP
    >>> from bandits.auditing.contract import AuditSettings
    >>> rep = audit_cascade_policy(CascadeLDP(1.0, "laplace", init="none"), 2, cascade_instance(),
    ...                            AuditSettings(trials=400))
    >>> rep.verdict, rep.primary.empirical.statistic
    ('violated', 'number of values sent by user 1')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bandits.auditing.black_box import audit_policy, certify_chosen, pilot_size
from bandits.auditing.claims import DEFAULT_MECHANISM_TRIALS, detection_floor
from bandits.auditing.contract import AuditSettings, PolicyAudit
from bandits.auditing.kept_floors import algorithm_floor
from bandits.auditing.mechanism_floor import mechanism_leak_floor, with_measured_floor
from bandits.auditing.replicated_floor import with_replicated_floor
from bandits.cascading.policies import CascadeLDP, CascadeLDPFixed, CascadePolicy
from bandits.engine.simulator import simulate
from bandits.environments import Environment, RewardTableEnv
from bandits.policy import Outcomes, Policy, RunContext
from dpaudit.accounting import account
from dpaudit.audit import (
    AuditReport,
    AuditTarget,
    Certified,
    run_audit,
)
from dpaudit.audit.estimate import mu_interval_from_counts
from dpaudit.audit.neighbours import NeighbourPair
from dpaudit.audit.pilot import pilot_choice
from dpaudit.audit.power import floor_report, largest_provable_epsilon
from dpaudit.audit.runner import DEFAULT_BATCH
from dpaudit.audit.target import choose_statistic
from dpaudit.conversions import pure_dp_to_gdp
from dpaudit.ledger import RunLedgers
from dpaudit.papers import WANG_2021
from dpaudit.validation import check_integer
from mechanisms.randomness import RepRandom

__all__ = [
    "Design",
    "transcript_samples",
    "audit_designs",
    "audit_cascade_policy",
    "audit_cucb_ldp_gaussian",
    "claim_under_audit",
    "cascade_audit_horizon",
    "BLOCK",
]

BLOCK = 2048
"""Runs per simulated block (fixed: results do not depend on the executor)."""

Statistic = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Design:
    """Two fixed (T, L) tables (``null``, ``alt``) that differ in one row, what is read from a run
    (``"transcript"``: the report of round ``round``; ``"lists"``: the list sequence) and the
    pre-registered statistics (name → function of the read outputs, one float per run)."""

    name: str
    null: np.ndarray
    alt: np.ndarray
    read: str
    round: int
    statistics: tuple[tuple[str, Statistic], ...]


def transcript_samples(
    policy: Policy, env: Environment, table: np.ndarray, tau: int, n: int, seed: np.random.SeedSequence
) -> np.ndarray:
    """(n, width) reports of user ``tau`` in n runs of the real agent on the fixed ``table``
    (NaN where a value is not sent)."""
    L = env.n_arms
    out = []
    for b, start in enumerate(range(0, n, BLOCK)):
        size = min(BLOCK, n - start)
        seeds = np.random.SeedSequence(seed.entropy, spawn_key=tuple(seed.spawn_key) + (b,)).spawn(size)
        run = RunContext(
            L, tau + 1, env.structure, RepRandom(seeds), RepRandom(seeds).child(2), RunLedgers(size)
        )
        agent = policy.agent(run)
        agent.capture_round = tau  # type: ignore[attr-defined]
        rows = np.broadcast_to(table[None, : tau + 1], (size, tau + 1, L))
        agent.run_chunk(0, tau + 1, Outcomes(rows, policy.feedback))
        cap = agent.captured  # type: ignore[attr-defined]
        if cap is None:
            raise ValueError(f"{policy.name} released no report at round {tau}")
        out.append(np.asarray(cap, dtype=float))
    return np.concatenate(out, axis=0)


def _list_samples(
    policy: Policy, env: Environment, table: np.ndarray, n: int, seed: np.random.SeedSequence
) -> np.ndarray:
    horizon = table.shape[0]
    env_t = RewardTableEnv(table, action_structure=env.structure)
    out = []
    for b, start in enumerate(range(0, n, BLOCK)):
        size = min(BLOCK, n - start)
        s = np.random.SeedSequence(seed.entropy, spawn_key=tuple(seed.spawn_key) + (b,))
        res = simulate(
            policy, env_t, horizon, size, s, record_actions=True, progress=False, checkpoints=(),
            ledgers=False,
        )
        out.append(np.asarray(res.actions, dtype=np.int64))
    return np.concatenate(out, axis=0)


def _statistics(
    policy: Policy, env: Environment, design: Design, n: int, seed: np.random.SeedSequence
) -> dict:
    """{"null"/"alt": (n, S) statistic values}."""
    out = {}
    for side, table, k in (("null", design.null, 0), ("alt", design.alt, 1)):
        s = np.random.SeedSequence(seed.entropy, spawn_key=tuple(seed.spawn_key) + (k,))
        if design.read == "transcript":
            raw = transcript_samples(policy, env, table, design.round, n, s)
        else:
            raw = _list_samples(policy, env, table, n, s)
        out[side] = np.stack([f(raw) for _, f in design.statistics], axis=1)
    return out


def audit_designs(
    policy: Policy,
    env: Environment,
    designs: Sequence[Design],
    *,
    trials: int,
    seed: int | list[int],
    confidence: float,
    delta: float,
    certified: Certified,
    published: Certified | None,
    select: str,
    target: str,
    pilot_fraction: float = 0.2,
    details: dict[str, Any] | None = None,
) -> AuditReport:
    """Pilot every (design, statistic), test the best one on fresh runs (module docstring)."""
    n = check_integer("trials", trials, 10)
    n_pilot = pilot_size(n, pilot_fraction, 100)
    pilots, keys = [], []
    for c, d in enumerate(designs):
        st = _statistics(policy, env, d, n_pilot, np.random.SeedSequence(seed, spawn_key=(0xCA5, 0, c)))
        for s, (name, _) in enumerate(d.statistics):
            pilots.append((st["null"][:, s], st["alt"][:, s], None))
            keys.append((d, s, name))
    pc = pilot_choice(pilots, n, confidence=confidence, kind=select, delta=delta)
    d, s, name = keys[pc.candidate]
    o, thr = pc.orientation, pc.threshold
    main = _statistics(policy, env, d, n, np.random.SeedSequence(seed, spawn_key=(0xCA5, 1)))
    x, y = main["null"][:, s], main["alt"][:, s]
    empirical, fp, fn = certify_chosen(x, y, o, thr, delta=delta, confidence=confidence, statistic=name)
    alpha = (1.0 - confidence) / 2.0
    floor = floor_report(n, n, alpha, certified_mu=certified.mu if select == "mu" else None,
                         certified_epsilon=certified.epsilon, delta=delta)
    ceiling = largest_provable_epsilon(n, n, alpha, delta)
    choice = {"bound": pc.predicted, "name": name}
    info = {
        "chosen": {
            "design": d.name,
            "statistic": choice["name"],
            "threshold": thr,
            "orientation": o,
            "predicted_bound": choice["bound"],
            "false_positives": fp,
            "false_negatives": fn,
            "selected_by": select,
        },
        "candidates": [f"{dd.name}: {nm}" for dd in designs for nm, _ in dd.statistics],
        "pilot_trials_per_side": n_pilot,
        "detection_floor": f"{floor.describe()}; no test can prove more than epsilon = {ceiling:.3f}",
        **dict(details or {}),
    }
    return AuditReport.build(
        target=target, certified=certified, empirical=empirical, details=info, published=published,
        floor=floor, estimate=mu_interval_from_counts(fp, n, fn, n, confidence=confidence),
    )


def claim_under_audit(
    policy: Policy, horizon: int, env: Environment, delta: float
) -> tuple[Certified, Certified | None, float, str]:
    """(the claim audited, the paper's claim, the δ of the audit, "epsilon"/"mu" selection).

    The toolkit's certificate when it certifies something; otherwise the paper's claim (its ε and,
    for a pure claim, the implied GDP μ). A claim with its own δ is audited at that δ."""
    decl = policy.declare(horizon, env.n_arms, env.structure)
    if decl is None:
        raise ValueError(f"{policy.name} declares no privacy: nothing to audit")
    claim = decl.published
    d = float(claim.delta) if claim is not None and claim.delta else float(delta)
    acc = account(decl.event, delta=d)
    pub = None
    if claim is not None and claim.epsilon is not None:
        mu = None if claim.delta else float(pure_dp_to_gdp(claim.epsilon))
        pub = Certified(mu=mu, epsilon=float(claim.epsilon), delta=d, source=claim.source)
    if acc.best.value is not None:
        cert = Certified(mu=acc.mu, epsilon=acc.best.value, delta=d, source="dpaudit")
    elif pub is not None:
        cert = Certified(
            mu=pub.mu, epsilon=pub.epsilon, delta=d,
            source=f"{pub.source} (the toolkit certifies nothing: not private; the paper's claim is audited)",
        )  # fmt: skip
    else:
        raise ValueError(f"{policy.name} is not private and carries no claim: nothing to audit")
    kind = decl.guarantee
    select = "mu" if kind == "gdp" or (kind == "none" and claim is not None and claim.delta) else "epsilon"
    return cert, pub, d, select


def _length(raw: np.ndarray) -> np.ndarray:
    return np.isfinite(raw).sum(axis=1).astype(float)


def _first(raw: np.ndarray) -> np.ndarray:
    return np.nan_to_num(raw[:, 0], nan=0.0)


def _overlap(tau: int, d: int) -> Statistic:
    def stat(actions: np.ndarray) -> np.ndarray:
        a, b = actions[:, tau], actions[:, tau + d]
        return (a[:, :, None] == b[:, None, :]).any(axis=2).sum(axis=1).astype(float)

    return stat


def _plays(item: int, first: int, last: int) -> Statistic:
    def stat(actions: np.ndarray) -> np.ndarray:
        return (actions[:, first : last + 1] == item).reshape(actions.shape[0], -1).sum(axis=1).astype(float)

    return stat


def cascade_audit_horizon(policy: Policy, horizon: int, n_items: int, k: int) -> int:
    """The audited horizon: 2 for local algorithms (user 1's report; round 0 is w₀ with the paper's
    initialisation), ⌈L/K⌉ + 6 for central ones (every item shown once, then the changed round and
    three more), at most ``horizon``."""
    if isinstance(policy, (CascadeLDP, CascadeLDPFixed)):
        return min(horizon, 2)
    return min(horizon, -(-n_items // k) + 6)


def _designs(policy: CascadePolicy, env: Environment, horizon: int) -> list[Design]:
    L = env.n_arms
    zeros = np.zeros((horizon, L))

    def change(row: int, values_null: np.ndarray, values_alt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a, b = zeros.copy(), zeros.copy()
        a[row], b[row] = values_null, values_alt
        return a, b

    out: list[Design] = []
    if isinstance(policy, (CascadeLDP, CascadeLDPFixed)):
        tau = horizon - 1
        a, b = change(tau, np.ones(L), np.zeros(L))
        stats: tuple[tuple[str, Statistic], ...] = (
            (f"number of values sent by user {tau}", _length),
            (f"first value sent by user {tau}", _first),
        )
        out.append(
            Design(
                f"user {tau}: every item attractive (C = 1) vs none (no click)",
                a,
                b,
                "transcript",
                tau,
                stats,
            )
        )
        return out
    last = horizon - 4
    for tau in sorted({1, last}):
        if tau < 1 or tau + 3 >= horizon:
            continue
        a, b = change(tau, np.ones(L), np.zeros(L))
        stats = tuple((f"items of A_{tau} shown again in A_{tau + d}", _overlap(tau, d)) for d in (1, 2, 3))
        out.append(
            Design(f"user {tau}: C = 1 vs no click (other users: no click)", a, b, "lists", tau, stats)
        )
    if policy.init == "paper" and horizon >= 4:
        e0 = np.zeros(L)
        e0[0] = 1.0
        a, b = change(0, e0, np.zeros(L))
        out.append(
            Design("w_0 = e_0 vs 0", a, b, "lists", 0, (("plays of item 0 in rounds 1-3", _plays(0, 1, 3)),))
        )
    if not out:
        raise ValueError(f"horizon {horizon} is too short for the list-sequence audit (need >= 5)")
    return out


def audit_cascade_policy(
    policy: Policy, horizon: int, env: Environment, settings: AuditSettings
) -> PolicyAudit:
    """The audit ``dpaudit run cascade-*`` runs (module docstring); the settings' executor and
    progress are not used (the runs are vectorised in blocks)."""
    if not isinstance(policy, CascadePolicy):
        raise ValueError(f"policy must be a cascade policy, got {type(policy).__name__}")
    T = check_integer("horizon", horizon, 2)
    local = isinstance(policy, (CascadeLDP, CascadeLDPFixed))
    with_w0 = local and policy.init == "paper"  # two tests, each at half the error level
    trials, seed, confidence = settings.trials, settings.seed, settings.shared(1 + with_w0).confidence
    cert, pub, d, select = claim_under_audit(policy, T, env, settings.delta)
    what = "user's report (white box: the server's view)" if local else "list sequence (black box)"
    designs = _designs(policy, env, T)

    def audit(p: Policy, s: int | list[int]) -> AuditReport:
        return audit_designs(p, env, designs, trials=trials, seed=s, confidence=confidence, delta=d,
                             certified=cert, published=pub, select=select,
                             target=f"{policy.name}: {what}")  # fmt: skip

    primary = with_replicated_floor(audit(policy, seed), "outputs", settings, [policy, T, env], audit, policy,
                                    select if getattr(cert, select) is not None else None)  # fmt: skip
    components: dict[str, AuditReport] = {}
    if with_w0:
        L = env.n_arms
        a, b = np.zeros((1, L)), np.zeros((1, L))
        a[0] = 1.0
        w0 = Design("w_0: every item 1 vs 0", a, b, "transcript", 0, (("first value of w_0", _first),))
        components["initial record w_0"] = audit_designs(
            policy, env, [w0], trials=trials, seed=seed + 1, confidence=confidence, delta=d, certified=cert,
            published=pub, select=select, target=f"{policy.name}: the initial record w_0 (raw)",
        )  # fmt: skip
    floor = primary.details["detection_floor"]
    against = None
    if pub is not None:
        against = AuditReport.build(
            target=primary.target, certified=pub, empirical=primary.empirical, details={}
        )
    return PolicyAudit(primary, components, against, floor)


def audit_cucb_ldp_gaussian(
    policy: Policy,
    horizon: int,
    env: Environment,
    settings: AuditSettings,
    *,
    mechanism_trials: int = DEFAULT_MECHANISM_TRIALS,
) -> PolicyAudit:
    """The audit of ``dpaudit run cucb-ldp-gaussian`` (Wang et al. 2021, Alg. 4): the Gaussian randomizer on
    0_K vs 1_K (white box, every user after round 0; primary when u₀ is not used), the action
    sequences (:func:`bandits.auditing.black_box.audit_policy`) and, with the paper's initialisation, the
    raw initial record u₀ (all 1 vs all 0) against the paper's claim."""
    from bandits.cascading.cucb_ldp_gaussian import CUCBLDPGaussian

    if not isinstance(policy, CUCBLDPGaussian):
        raise ValueError(f"policy must be a CUCBLDPGaussian, got {type(policy).__name__}")
    T = check_integer("horizon", horizon, 2)
    parts = 3 if policy.init == "paper" else 2  # the randomizer, the action sequences (and u_0)
    each = settings.shared(parts)
    trials, seed, confidence = settings.trials, settings.seed, each.confidence
    k = env.structure.k  # type: ignore[attr-defined]
    d = float(policy.calibration_delta)
    users = dataclasses.replace(policy, init="none")
    acc = account(users.declare(T, env.n_arms, env.structure).event, delta=d)
    cert_users = Certified(mu=acc.mu, epsilon=acc.best.value, delta=d, source="dpaudit (users t >= 1)")
    claim = Certified(epsilon=float(policy.epsilon), delta=d, source=WANG_2021.at(policy.theorem))
    mech = policy.randomizer(k)
    pair = NeighbourPair(
        tuple([0.0] * k), tuple([1.0] * k), "replace (one user's outcomes)", f"0_{k} vs 1_{k}"
    )
    target = AuditTarget(f"{policy.name} randomizer", mech, pair, choose_statistic(mech, pair), cert_users, d)
    rand = run_audit(target, trials=mechanism_trials, seed=seed, confidence=confidence,
                     executor=settings.executor)  # fmt: skip
    measured, kept = algorithm_floor("mechanism", settings, [policy, T, env, mechanism_trials], lambda: (
        mechanism_leak_floor(target, trials=mechanism_trials, confidence=confidence, batch_size=DEFAULT_BATCH,
                             floor_seed=settings.floor_seed)))  # fmt: skip
    model = "the Gaussian randomizer re-built from the policy's parameters, not the running agent"
    rand = dataclasses.replace(rand, details={**rand.details, "model": model})
    rand = with_measured_floor(rand, measured, kept)
    actions = audit_policy(policy, T, env, each)
    components: dict[str, AuditReport] = {"action sequences": actions}
    primary = rand
    if policy.init == "paper":
        L = env.n_arms
        a, b = np.ones((1, L)), np.zeros((1, L))
        u0 = Design("u_0: every arm 1 vs 0", a, b, "transcript", 0, (("first value of u_0", _first),))
        primary = audit_designs(
            policy, env, [u0], trials=trials, seed=seed, confidence=confidence, delta=d, certified=claim,
            published=claim, select="epsilon", target=f"{policy.name}: the initial record u_0 (raw)",
            details={"certified_by_toolkit": "none: u_0 is used un-noised"},
        )  # fmt: skip
        components["randomizer (users t >= 1)"] = rand
    against = AuditReport.build(
        target=primary.target, certified=claim, empirical=primary.empirical, details={}
    )
    floor = primary.details.get("detection_floor") or detection_floor(
        mechanism_trials // 2, delta=d, confidence=confidence
    )
    return PolicyAudit(primary, components, against, floor)
