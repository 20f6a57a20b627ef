"""White-box audit of Gaussian Thompson sampling (Ou, Avella Medina & Cummings 2024, Algorithms
1–2): the implementation against the certificate *and* against its own model.

The released output of Thompson sampling is the action sequence a_1..a_T; neighbouring reward
streams R, R′ differ in one reward r_τ. :func:`audit_thompson`

1. **designs** (:class:`TSNeighbour`, pre-registered): fixed reward tables whose columns are
   constant — every arm pays ``arm_reward`` (½: all arms *tied*, so the changed arm stays
   competitive and every sampling round leaks) and one ``leader`` may pay a little more (a
   near tie) — except r_τ, the changed arm j's first observation (τ = j·b, in the deterministic
   pre-pull; with b = 0 the whole round-0 row), which is 1 under R and 0 under R′. The family
   holds one design per changed arm j (a bug on one arm cannot hide behind the others) and a
   near tie with the changed arm 0.05 behind a leader;
2. **statistics** of each trajectory: the *score* Σ_t w_t (1{a_t = j} − 1/N) with
   w_t = 1/sqrt(c(n_j(t) + 1)) — the first-order expansion of the privacy loss in the tiny mean
   shift Δ_t = 1/(n_j + 1) between R and R′ (at a symmetric state ∂ log P(a)/∂μ_j ∝
   (1{a = j} − 1/N)/σ_j, and Δ_t/σ_j = w_t), i.e. the locally most powerful test; the changed
   arm's pull count; for N = 2 the exact privacy loss L = Σ_t log P(a_t | h_t, R)/P(a_t | h_t, R′)
   (closed form, Φ of the mean difference over sqrt(σ_a² + σ_o²));
3. **pilot** (``pilot_fraction`` of the trajectories, split over the designs): picks the design,
   the statistic, the threshold and its orientation (:func:`dpaudit.audit.thresholds.pilot_choice`);
4. **main sample**: fresh trajectories of the *real* implementation (the policy's agent, exactly
   as :func:`bandits.engine.simulator.simulate` plays it on a fixed table, in blocks of
   :data:`~bandits.thompson.audit_trajectories.BATCH`) certify that one test with Clopper–Pearson
   (α/2 per rate): valid lower bounds on μ and on ε at δ for *any* statistic, so the verdict needs
   no trust in the model;
5. **model** (:func:`model_actions`): an independent plain simulation of the declared
   ``ThompsonConfig(T, N, b, c)`` on the same tables. Model tests at level ``model_alpha``
   (Bonferroni over all of them): Kolmogorov–Smirnov and Welch two-sample tests, implementation
   vs model, of the score and of the changed arm's pull count on both tables; on a subsample of
   the implementation's trajectories with the exact loss, the likelihood-ratio identities
   E_R[g·e^{−L}] = E_R′[g] with the bounded g = 1{L ≥ 0} (and the mirror image under R′ with
   1{L < 0}), Welch tests of bounded variables (true for every g iff L is the log-likelihood
   ratio of the implementation's output laws; the unbounded E_R[e^{−L}] = 1 is heavy-tailed and
   its z-test is not valid at small counts), and a
   goodness-of-fit z-test of the model's per-round probability of playing the changed arm,
   Σ_t (1{a_t = j} − p_t(j)) / sqrt(Σ_t p_t(j)(1 − p_t(j))) (a martingale under the model). A
   rejection is the verdict ``model-mismatch``;
6. **exact loss** on the subsample (all trajectories for N = 2): per-round log P(a | h) for
   N ≥ 3 by a 41-node trapezoidal rule on z ∈ [−8, 8] (step 0.4) of
   ∫ φ(z) Π_{l≠a} Φ((μ_a + σ_a z − μ_l)/σ_l) dz (spectrally accurate for these smooth, tied
   states: ≤ 1e-11 in log P on tied 5-arm states with counts 1897–2800), checked in every audit
   against the toolkit's exact quadrature (:func:`dpaudit.analyses.rnm_gaussian.log_argmax_probability`)
   on 256 states (and replaced by it if they differ by more than 1e-8); it feeds the second bound
   (a pre-registered
   Bonferroni grid) and the Monte-Carlo privacy profile E_R[(1 − e^{ε−L})₊] (DKW band; valid only
   if the model tests pass).

The report's ``empirical`` is the pilot-chosen test on the main sample; ``estimate`` is the
two-sided interval for the μ that test exhibits, ``floor`` the detection floor of the test
(:mod:`dpaudit.audit.power`; with ``AuditSettings(floor="algorithm")``, or one kept from such a
measurement, the floor measured on the algorithm instead: :mod:`bandits.thompson.outputs_floor`,
its pilot replayed on noise-scaled runs); ``details`` hold the exact-loss bound, the model tests, the
profile, the pilot's choice and timings. Randomness comes only from ``seed``: block i of side s
of stage k uses ``SeedSequence(seed, spawn_key=(0x7A5D17, k, design, s, i))``, so results do
not depend on the executor.

Example (tiny scale; ``dpaudit run ts`` audits 2·10⁴ trajectories per neighbour):
    >>> from bandits import GaussianTS, parse_env
    >>> audit = audit_thompson(GaussianTS(b=1, c=1.0), 40, parse_env("bernoulli:0.5,0.5"),
    ...                        AuditSettings(trials=4000))
    >>> rep = audit.primary
    >>> audit.verdict, rep.target, rep.details["model_tests"]["rejected"]
    ('consistent', 'thompson-sampling', False)
    >>> 0 < rep.empirical.mu_lower <= rep.estimate.upper and rep.empirical.mu_lower < rep.certified.mu
    True
"""

from __future__ import annotations

import math
import time
from concurrent.futures import Executor
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from bandits.auditing.contract import AuditSettings, PolicyAudit
from bandits.auditing.kept_floors import algorithm_floor
from bandits.auditing.views import VIEWS
from bandits.environments import Environment
from bandits.policy import Policy
from bandits.thompson.audit_designs import NeighbourTables, TSNeighbour
from bandits.thompson.audit_pilot import choose, pilot_plan, pilot_sample
from bandits.thompson.audit_trajectories import _model_block, _policy_block, sample_stage
from bandits.thompson.draws_audit import draws_report
from bandits.thompson.draws_floor import draws_leak_floor
from bandits.thompson.model_tests import model_tests
from bandits.thompson.outputs_floor import outputs_leak_floor
from bandits.thompson.policy import GaussianTS
from dpaudit.analyses.thompson_sampling import ThompsonConfig
from dpaudit.audit.estimate import mu_interval_from_counts
from dpaudit.audit.leak_floor import LeakFloor
from dpaudit.audit.multiplicity import Bonferroni
from dpaudit.audit.pilot import pilot_choice
from dpaudit.audit.power import floor_report
from dpaudit.audit.profile import epsilon_lower_bound_from_losses, monte_carlo_profile
from dpaudit.audit.report import AuditReport, Certified, Empirical
from dpaudit.audit.thresholds import single_test_rates, threshold_rates
from dpaudit.conversions import gdp_epsilon

__all__ = [
    "ThompsonAuditOptions",
    "audit_thompson",
]


# ---------------------------------------------------------------------------------------
# the audit


def _check_args(policy: Any, horizon: int, arms: int, trials: int, seed: int, confidence: float,
                delta: float) -> None:  # fmt: skip
    if not isinstance(policy, GaussianTS):
        raise ValueError(f"policy must be a GaussianTS, got {type(policy).__name__}")
    for name, v, low in (("horizon", horizon, 2), ("arms", arms, 2), ("trials", trials, 2)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {v!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    if not 0.5 <= confidence < 1.0:
        raise ValueError(f"confidence must be in [0.5, 1), got {confidence!r}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")


def _pilot(
    policy: GaussianTS, horizon: int, arms: int, trials: int, seed: int, confidence: float,
    neighbour: TSNeighbour | None, pilot_fraction: float, executor: Executor | None, progress: bool,
    mu_certified: float,
) -> dict[str, Any]:
    """Choose the design and the outputs' test on pilot trajectories of the implementation
    (:mod:`bandits.thompson.audit_pilot`). With one design (given, or too few trials for a pilot)
    the threshold is left to the model sample (NaN here)."""
    designs, n_pilot, n_main = pilot_plan(arms, trials, pilot_fraction, neighbour)
    if len(designs) == 1:
        return {"designs": designs, "design": 0, "statistic": "score", "threshold": math.nan,
                "orientation": 0, "predicted": math.nan, "per_design": 0, "main": trials, "draws_alarm": []}
    samples = [pilot_sample(policy, nb, d, horizon, arms, n_pilot, stage=0, seed=seed, executor=executor,
                            progress=progress, desc=f"ts-audit pilot {d + 1}/{len(designs)}")
               for d, nb in enumerate(designs)]  # fmt: skip
    return {"designs": designs, "per_design": n_pilot, "main": n_main,
            **choose(samples, arms, n_main, confidence, mu_certified)}


def _exact_loss_section(main: tuple[dict[str, Any], dict[str, Any]], delta: float, confidence: float
                        ) -> dict[str, Any]:
    """Bounds from the exact privacy loss of the subsample that has it: the Bonferroni-grid
    threshold family (a separate statement at the same confidence) and the Monte-Carlo privacy
    profile (valid only if L is the true loss, i.e. if the model tests pass)."""
    if "L" not in main[0] or main[0]["L"].size < 2 or main[1]["L"].size < 2:
        return {}
    L0, L1 = main[0]["L"], main[1]["L"]
    fam = threshold_rates(L0, L1, confidence=confidence, selection=Bonferroni())
    half = 1.0 - (1.0 - confidence) / 2.0
    mc = [epsilon_lower_bound_from_losses(x, delta=delta, confidence=half) for x in (L0, -L1)]
    prof = monte_carlo_profile(L0, [0.0, 0.25, 0.5, 1.0, 2.0], confidence=half)
    return {
        "trajectories_per_table": int(L0.size),
        "mu_lower": fam.mu_lower_bound().mu,
        "epsilon_lower": fam.epsilon_lower_bound(delta).epsilon,
        "method": "clopper-pearson, bonferroni grid of 600 tests "
                  "(a separate statement at the same confidence)",
        "mu_gaussian_fit": float(math.sqrt(max(0.0, L0.mean() - L1.mean()))),
        "loss_mean_R": float(L0.mean()), "loss_sd_R": float(L0.std()),
        "loss_mean_Rprime": float(L1.mean()), "loss_sd_Rprime": float(L1.std()),
        "monte_carlo_profile": {
            "epsilon_lower": max(b.epsilon for b in mc), "confidence_each_order": half,
            "epsilons": list(prof.epsilons), "delta_estimate": list(prof.delta_estimate),
            "delta_lower": list(prof.delta_lower),
            "assumption": "L is the true privacy loss: valid only if the model tests pass",
        },
        "probabilities": main[0].get("rule"),
    }


def _details(policy: GaussianTS, horizon: int, arms: int, cfg: ThompsonConfig, mu_c: float, eps_c: float,
             delta: float, confidence: float, nb: TSNeighbour, tables: NeighbourTables, designs: list,
             pilot: dict[str, Any], rates: Any, n_main: int, floor: Any, estimate: Any, n_model: int,
             mt: dict[str, Any], exact: dict[str, Any], main: Any, model: Any, trials: int) -> dict[str, Any]:
    """The JSON-ready details of a Thompson-sampling audit report (its view: the outputs)."""
    return {
        "view": "outputs",
        "policy": policy.name, "horizon": horizon, "arms": arms, "b": policy.b, "c": policy.c,
        "claim": {"horizon": cfg.horizon, "arms": cfg.arms, "prepulls": cfg.prepulls,
                  "variance_scale": cfg.variance_scale},
        "mu_certified": mu_c, "mu_paper": cfg.mu_paper, "epsilon_certified": eps_c,
        "epsilon_paper": float(gdp_epsilon(cfg.mu_paper, delta)),
        "neighbour": {**asdict(nb), "description": nb.describe(), "tau": tables.tau,
                      "observer": tables.observer, "first_private_round": tables.first_private_round},
        "pilot": {"designs": [d.describe() for d in designs],
                  "trajectories_per_table_per_design": pilot["per_design"], "chosen_design": pilot["design"],
                  "statistic": pilot["statistic"], "threshold": pilot["threshold"],
                  "orientation": pilot["orientation"], "predicted_mu_lower": pilot["predicted"],
                  "draws_alarm_mu": pilot["draws_alarm"]},
        "certifying_test": {"false_positives": rates.false_positives[0],
                            "false_negatives": rates.false_negatives[0],
                            "trajectories_per_table": n_main, "fpr_upper": rates.fpr_upper[0],
                            "fnr_upper": rates.fnr_upper[0]},
        "detection_floor": None if floor is None else floor.describe(),  # (else the measured one's)
        "estimate": f"the certifying test exhibits mu in [{estimate.lower:.4f}, {estimate.upper:.4f}] "
                    f"({100 * confidence:g}%) against the certified {mu_c:.4f}",
        "model_trajectories_per_table": n_model,
        "model_tests": mt,
        "exact_loss": exact,
        "statistics_means": {k: [float(np.mean(main[s][k])) for s in (0, 1)] for k in ("score", "pulls")},
        "model_means": {k: [float(np.mean(model[s][k])) for s in (0, 1)] for k in ("score", "pulls")},
        "trials_per_neighbour": trials,
    }  # fmt: skip


@dataclass(frozen=True)
class ThompsonAuditOptions:
    """The Thompson-sampling audit's own knobs (:func:`audit_thompson`).

    Attributes:
        neighbour: fix the design (default: the pilot chooses among :func:`candidate_designs`).
        claim: the certified claim under audit (default: the policy's own (b, c)).
        pilot_fraction: share of the trials spent on the pilot over the designs.
        model_trials: model trajectories per table (default ``trials // 4``, at least 200).
        exact_trials: main trajectories per table with the exact loss (default every trajectory
            for N = 2; for N ≥ 3, where it costs ≈ 10–25 ms of CPU per trajectory, trials/100
            clipped to [16, 128]).
        model_alpha: level of the model tests (Bonferroni over all of them).
    """

    neighbour: TSNeighbour | None = None
    claim: ThompsonConfig | None = None
    pilot_fraction: float = 0.1
    model_trials: int | None = None
    exact_trials: int | None = None
    model_alpha: float = 1e-3


def audit_thompson(
    policy: Policy,
    horizon: int,
    env: Environment,
    settings: AuditSettings,
    options: ThompsonAuditOptions | None = None,
) -> PolicyAudit:
    """Audit Gaussian Thompson sampling (module docstring): the family's
    :class:`~bandits.auditing.contract.PolicyAuditor`.

    ``settings.trials`` trajectories per neighbouring table in total (``options.pilot_fraction``
    of them for the pilot over the designs, unless ``options.neighbour`` fixes the design or the
    pilot would leave fewer than half of them — then the tie with arm 1 changed is the design
    and the statistic is the score, its threshold chosen on the model sample). The certified
    claim is ``options.claim`` (default: the policy's own (b, c)): μ = ``claim.mu_tight``,
    ε = gdp_epsilon(μ, δ).
    """
    opt = options or ThompsonAuditOptions()
    if not isinstance(policy, GaussianTS):
        raise ValueError(f"policy must be a GaussianTS, got {type(policy).__name__}")
    arms, trials = env.n_arms, settings.trials
    _check_args(policy, horizon, arms, trials, settings.seed, settings.confidence, settings.delta)
    if not 0.0 < opt.pilot_fraction < 1.0:
        raise ValueError(f"pilot_fraction must be in (0, 1), got {opt.pilot_fraction!r}")
    t_start = time.perf_counter()
    # two views, each at 1 − α/2 (Bonferroni, AuditSettings.shared): the actions (outputs) and
    # the changed arm's draws (releases)
    each = settings.shared(VIEWS)
    cfg = opt.claim if opt.claim is not None else ThompsonConfig(int(horizon), arms, policy.b, policy.c)
    pilot = _pilot(policy, int(horizon), arms, trials, settings.seed, each.confidence, opt.neighbour,
                   opt.pilot_fraction, settings.executor, settings.progress, cfg.mu_tight)  # fmt: skip
    t_pilot = time.perf_counter()
    samples = _main_and_model(policy, int(horizon), arms, each, opt, pilot)
    seconds = {"pilot": t_pilot - t_start, **samples.pop("seconds")}
    t_floor = time.perf_counter()
    plan = (pilot["designs"], pilot["per_design"], pilot["main"])
    outputs_floor, outputs_kept = algorithm_floor(
        "outputs", settings, [policy, int(horizon), env, opt],
        lambda: outputs_leak_floor(policy, int(horizon), arms, plan, seed=settings.floor_seed,
                                   confidence=each.confidence, mu_certified=cfg.mu_tight,
                                   delta=settings.delta, model_trials=samples["n_model"],
                                   executor=settings.executor, progress=settings.progress))  # fmt: skip
    if outputs_kept is None and outputs_floor is not None:  # measured here, not read
        seconds["floor"] = time.perf_counter() - t_floor
    report = _certify(policy, int(horizon), arms, each, cfg, pilot, samples, opt.model_alpha, outputs_floor)
    if outputs_kept is not None:
        report.details["algorithm_floor_kept"] = outputs_kept
    t_floor = time.perf_counter()
    # the releases view's floor, on the design the pilot chose (which depends on the audit's seed:
    # part of the key)
    chosen = pilot["designs"][pilot["design"]]
    measured, kept = algorithm_floor(
        "releases (posterior draws)", settings, [policy, int(horizon), env, opt, chosen],
        lambda: draws_leak_floor(policy, samples["tables"], int(horizon), pilot["main"],
                                 seed=settings.floor_seed, confidence=each.confidence,
                                 mu_certified=cfg.mu_tight, executor=settings.executor,
                                 progress=settings.progress))  # fmt: skip
    draws = draws_report(samples["main"], mu_certified=cfg.mu_tight, delta=settings.delta,
                         confidence=each.confidence, measured=measured)  # fmt: skip
    if kept is None and measured is not None:  # measured here, not read
        seconds["releases_floor"] = time.perf_counter() - t_floor
        draws.details["seconds"] = {"floor": seconds["releases_floor"]}
    if kept is not None:
        draws.details["algorithm_floor_kept"] = kept
    t_end = time.perf_counter()
    seconds.update(bounds_and_tests=t_end - t_start - sum(seconds.values()), total=t_end - t_start)
    report.details["seconds"] = seconds
    return PolicyAudit(report, components={"releases": draws})


def _main_and_model(
    policy: GaussianTS, horizon: int, arms: int, settings: AuditSettings, opt: ThompsonAuditOptions,
    pilot: dict[str, Any],
) -> dict[str, Any]:  # fmt: skip
    """The main sample of the implementation on the chosen design and the model's sample; with a
    fixed design, the threshold chosen on the (independent) model sample."""
    trials, n_main, stat = settings.trials, pilot["main"], pilot["statistic"]
    n_model = max(200, trials // 4) if opt.model_trials is None else int(opt.model_trials)
    if opt.exact_trials is None:
        n_exact = trials if arms == 2 else min(128, max(16, trials // 100))
    else:
        n_exact = int(opt.exact_trials)
    d_star = pilot["design"]
    tables = pilot["designs"][d_star].tables(policy, horizon, arms)
    ex, seed, progress = settings.executor, settings.seed, settings.progress
    t0 = time.perf_counter()
    main = sample_stage(_policy_block, (policy, tables, horizon), (min(n_exact, n_main), policy.c, True), 1,
                   d_star, n_main, seed, ex, progress, "ts-audit main")  # fmt: skip
    t1 = time.perf_counter()
    model_cfg = ThompsonConfig(horizon, arms, policy.b, policy.c)
    model = sample_stage(_model_block, (model_cfg, tables), (), 2, d_star, n_model, seed, ex, progress,
                    "ts-audit model")  # fmt: skip
    t2 = time.perf_counter()
    if not math.isfinite(pilot["threshold"]):  # a fixed design: the threshold from the model sample
        ch = pilot_choice([(model[0][stat], model[1][stat], None)], n_main, confidence=settings.confidence,
                          kind="mu")  # fmt: skip
        pilot.update(threshold=ch.threshold, orientation=ch.orientation, predicted=ch.predicted)
    return {"main": main, "model": model, "tables": tables, "n_model": n_model,
            "seconds": {"main": t1 - t0, "model": t2 - t1}}  # fmt: skip


def _certify(
    policy: GaussianTS, horizon: int, arms: int, settings: AuditSettings, cfg: ThompsonConfig,
    pilot: dict[str, Any], samples: dict[str, Any], model_alpha: float, measured: LeakFloor | None,
) -> AuditReport:  # fmt: skip
    """The certifying test on the main sample against the claim ``cfg``, the model tests and the
    exact-loss section; with ``measured`` (:func:`bandits.thompson.outputs_floor.outputs_leak_floor`)
    the floor measured on the algorithm decides, and a view without power is inconclusive."""
    delta, confidence, trials = settings.delta, settings.confidence, settings.trials
    main, model, n_main, stat = samples["main"], samples["model"], pilot["main"], pilot["statistic"]
    method = "one test chosen on an independent pilot"
    rates = single_test_rates(main[0][stat], main[1][stat], pilot["threshold"], pilot["orientation"],
                              confidence=confidence, method=method)  # fmt: skip
    mb, eb = rates.mu_lower_bound(), rates.epsilon_lower_bound(delta)
    mu_c = cfg.mu_tight
    eps_c = float(gdp_epsilon(mu_c, delta))
    # the reference floor, where no floor measured on the algorithm decides (its exact binomial sums
    # cost more than the rest of the bounds together)
    floor = None if measured is not None else floor_report(
        n_main, n_main, rates.alpha_per_bound, certified_mu=mu_c, certified_epsilon=eps_c, delta=delta)
    estimate = mu_interval_from_counts(rates.false_positives[0], n_main, rates.false_negatives[0], n_main,
                                       confidence=confidence)  # fmt: skip
    mt = model_tests(main, model, alpha=model_alpha)
    exact = _exact_loss_section(main, delta, confidence)
    emp = Empirical(epsilon_lower=float(eb.epsilon), mu_lower=float(mb.mu), delta=delta,
                    confidence=confidence,
                    trials=2 * trials, method="clopper-pearson, one test chosen on an independent pilot",
                    statistic={"score": "score statistic (first-order privacy loss)",
                               "pulls": "pulls of the changed arm",
                               "L": "exact privacy loss"}[stat])  # fmt: skip
    nb = pilot["designs"][pilot["design"]]
    details = _details(policy, horizon, arms, cfg, mu_c, eps_c, delta, confidence, nb, samples["tables"],
                       pilot["designs"], pilot, rates, n_main, floor, estimate, samples["n_model"], mt, exact,
                       main, model, trials)  # fmt: skip
    if measured is not None:
        details.update(detection_floor=measured.describe(), algorithm_floor=measured.to_dict())
    cert = Certified(mu=mu_c, epsilon=eps_c, delta=delta, source="dpaudit")
    return AuditReport.build(target="thompson-sampling", certified=cert, empirical=emp, details=details,
                             floor=floor if measured is None else None, estimate=estimate,
                             model_mismatch=mt["rejected"],
                             inconclusive=measured is not None and not measured.has_power)  # fmt: skip
