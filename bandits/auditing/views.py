"""Both views of a run, one family-wise verdict: what the mechanisms released, and what was played.

An algorithm's own auditor (or the black-box audit) sees its *outputs*, the action sequences;
:mod:`bandits.auditing.releases` sees its *releases*, the values its mechanisms published.
:func:`audit_views` runs both on the same configuration and returns one
:class:`~bandits.auditing.contract.PolicyAudit` whose ``"releases"`` component says which view
saw what (with :attr:`~bandits.policy.Policy.release_trials` times the trials for the
releases). Each view is certified at confidence 1 − α/2 (Bonferroni over the two views); an
auditor whose view holds several tests (a mechanism beside the action sequences) shares its view's
level among them (:meth:`~bandits.auditing.contract.AuditSettings.shared`), so the chance that a
correct implementation is reported ``violated`` by any test stays at most α
(:attr:`~bandits.auditing.contract.PolicyAudit.family_confidence`). A part whose lower bound is 0
did not see even the algorithm's own loss: it says ``inconclusive``, not ``consistent`` (unless
its floor was measured on the algorithm; :class:`~bandits.auditing.contract.PolicyAudit`). An
algorithm whose mechanisms record no keyed release gets its auditor's audit at the full
confidence: Gaussian Thompson sampling's auditor reads the posterior draws itself (its releases
view, :mod:`bandits.thompson.draws_audit`) and splits α over its two views the same way.

Example:
    >>> from bandits.auditing.black_box import black_box_audit
    >>> from bandits.environments import parse_env
    >>> from bandits.lazy.policies import LazyUCB
    >>> audit = audit_views(black_box_audit, LazyUCB(epsilon=1.0), 6, parse_env("bernoulli:0.5,0.5,0.5"),
    ...                     AuditSettings(trials=2000))
    >>> sorted(audit.components), audit.components["releases"].empirical.confidence
    (['releases'], 0.975)
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from bandits.auditing.contract import AuditSettings, PolicyAudit, PolicyAuditor
from bandits.auditing.releases import audit_releases, records_releases
from dpaudit.audit.runner import trials_needed

if TYPE_CHECKING:  # pragma: no cover
    from bandits.environments import Environment
    from bandits.policy import Policy

__all__ = ["audit_views", "VIEWS"]

VIEWS = 2
"""The views a run is audited in when its mechanisms record releases (outputs, releases)."""


def audit_views(
    auditor: PolicyAuditor, policy: Policy, horizon: int, env: Environment, settings: AuditSettings
) -> PolicyAudit:
    """``auditor``'s audit of the outputs with the releases audit beside it (module docstring),
    each at confidence 1 − (1 − ``settings.confidence``)/2; only the outputs' at the full
    confidence when the policy's mechanisms record no release."""
    if not records_releases(policy, horizon, env):
        alone = auditor(policy, horizon, env, settings)
        return _floor_note(_what_it_would_take(alone, settings.trials), settings)
    each = settings.shared(VIEWS)
    outputs = auditor(policy, horizon, env, each)
    more = replace(each, trials=each.trials * policy.release_trials)
    releases = audit_releases(policy, horizon, env, more, design=policy.release_audit(horizon, env.n_arms))
    both = replace(outputs, components={**outputs.components, "releases": releases})
    return _floor_note(_what_it_would_take(both, settings.trials), settings)


def _what_it_would_take(audit: PolicyAudit, trials: int) -> PolicyAudit:
    """For an ``inconclusive`` run: the ``--audit-trials`` at which the cheapest part whose
    certificate lies below its (reference) floor would have its floor at the certificate, floors
    shrinking about as 1/√trials (:func:`dpaudit.audit.runner.trials_needed`, scaled from the
    part's own runs per side to the audit's trials), as ``details["would_need"]`` of the primary."""
    if audit.verdict != "inconclusive":
        return audit
    needs = []
    primary_name = str(audit.primary.details.get("view") or audit.primary.target)  # as _floor_note names it
    parts = {primary_name: audit.primary, **audit.components}
    for name, r in parts.items():
        per_side = r.empirical.trials // 2
        if r.floor is None or per_side < 1 or not r.floor.below(r.certified.mu, r.certified.epsilon):
            continue
        need = trials_needed(r.floor, r.certified, per_side)
        if need is not None:
            needs.append((math.ceil(need * trials / per_side), name))
    if not needs:
        return audit
    n, name = min(needs)
    details = {**audit.primary.details, "would_need": {"audit_trials": n, "view": name}}
    return replace(audit, primary=replace(audit.primary, details=details))


REFERENCE_NOTE = (
    "reference floor: this procedure on a reference pair, not on this algorithm; measured on an "
    "algorithm, floors have come out higher. --audit-floor algorithm measures it, at many times "
    "the audit's cost"
)
"""What a report says under a floor that was not measured on the algorithm: the floor of the
audit's procedure on a reference pair, which was lower than the floor measured on the algorithm
in every view of ``docs/audit-bounds.md`` (``python benchmarks/bench_default_floors.py``)."""


def _floor_note(audit: PolicyAudit, settings: AuditSettings) -> PolicyAudit:
    """Say which floors decided: the black-box outputs audit and the releases audit measure theirs
    on the algorithm (:mod:`bandits.auditing.leak_floor`) with ``floor="algorithm"``, or take one
    kept from such a measurement at this configuration, floor seed and code
    (:mod:`bandits.auditing.kept_floors`); so do both views of Thompson sampling's own auditor
    (:mod:`bandits.thompson.outputs_floor`, :mod:`bandits.thompson.draws_floor`), and so do the
    families' mechanism components (:mod:`bandits.auditing.mechanism_floor`,
    :mod:`bandits.auditing.replicated_floor`) but for releases without noise; with no measured
    floor every floor shown is a reference floor."""
    # the primary by its view ("outputs": the black-box and Thompson-sampling auditors), else by its
    # target, as its line of the text names it (a family's own primary: a mechanism model's, a
    # white-box release's)
    name = str(audit.primary.details.get("view") or audit.primary.target)
    parts = {name: audit.primary, **audit.components}
    measured = [k for k, r in parts.items() if "algorithm_floor" in r.details]
    if not measured and settings.floor != "algorithm":
        if not audit.primary.details.get("detection_floor"):
            return audit
        primary = replace(audit.primary, details={**audit.primary.details, "floor_note": REFERENCE_NOTE})
        return replace(audit, primary=primary)
    kept = {k: parts[k].details["algorithm_floor_kept"] for k in measured
            if "algorithm_floor_kept" in parts[k].details}  # fmt: skip
    note = "floors measured on this algorithm: " + (", ".join(measured) or "none")
    if kept:
        cpu = sum(float(e["cpu_seconds"]) for e in kept.values())
        shipped = all(e["where"] == "shipped" for e in kept.values())
        where = "with the package" if shipped else "on this machine"
        note += (f" (kept {where}: measured by --audit-floor algorithm at this configuration and code, "
                 f"at any audit seed (floor seed {settings.floor_seed}), {cpu:.0f} s of CPU then; "
                 "--audit-floor reference shows the reference floor)")  # fmt: skip
    reference_only = [k for k in parts if k not in measured]
    if reference_only:
        note += "; reference floors: " + ", ".join(reference_only) + " (no measured floor for this view)"
    primary = replace(audit.primary, details={**audit.primary.details, "floor_note": note})
    return replace(audit, primary=primary)
