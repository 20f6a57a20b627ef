"""The text of an audit section, one place for its wording (``dpaudit run`` and ``str(PolicyAudit)``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dpaudit.formatting import fmt_down, fmt_up

__all__ = ["audit_lines"]


def _component_line(name: str, c: Mapping[str, Any]) -> str:
    """One line per further component: its verdict, bounds and what it tested (or why it could not)."""
    emp = c["empirical"]
    mu = "" if emp.get("mu_lower") is None else f"mu >= {fmt_down(emp['mu_lower'], 4)}, "
    details = c.get("details", {})
    what = details.get("chosen", {}).get("statistic") or emp.get("statistic", "")
    what = "" if what == "none" else what
    if details.get("view") == "releases" and emp.get("trials"):
        what += f"; {emp['trials'] // 2} runs per side"
    if details.get("no_power"):
        what = f"{what}; {details['no_power']}" if what else details["no_power"]
    line = (
        f"  {name}{' [model: ' + details['model'] + ']' if details.get('model') else ''}: "
        f"{c['verdict'].upper()} at {100 * emp['confidence']:.4g}%: {mu}epsilon >= "
        f"{fmt_down(emp['epsilon_lower'], 4)} ({what})"
    )
    floor = details.get("algorithm_floor")
    if floor:
        line += f"\n    its floor, {details['detection_floor']}"
    return line


def _primary_label(a: Mapping[str, Any]) -> str:
    """What the primary test looked at: the outputs (actions) when its ``details["view"]`` says so
    (the black-box and Thompson-sampling audits), else its target, with what it re-builds when it
    audits a model of the mechanism."""
    outputs = a.get("details", {}).get("view") == "outputs"
    label = "outputs (actions)" if outputs else a.get("target", "")
    model = a.get("details", {}).get("model")
    if not model:
        return label
    return f"{label} [model: {model}; {a['empirical']['trials'] // 2} samples per input]"


def audit_lines(a: Mapping[str, Any] | None) -> list[str]:
    """The lines of an audit section from its JSON form (:meth:`PolicyAudit.to_dict` with the
    run's ``trials``, and optionally ``horizon`` and ``note``); None: the audit was skipped."""
    if a is None:
        return ["audit: skipped (audit trials = 0)"]
    emp, cert = a["empirical"], a["certified"]
    at = f" at T = {a['horizon']}" if a.get("horizon") is not None else ""
    lines = [f"audit: {a['verdict'].upper()} ({a['trials']} trials per neighbouring stream{at})"]
    if a.get("note"):
        lines.append(f"  {a['note']}")
    mu_l, mu_c = emp.get("mu_lower"), cert.get("mu")
    # the claim under audit is the toolkit's certificate, or (when it certifies nothing) a paper's claim
    said = "certified" if cert.get("source", "dpaudit") == "dpaudit" else f"claimed by {cert['source']}"
    mu_txt = ""
    if mu_l is not None:
        claim = "" if mu_c is None else f" ({said} {fmt_up(mu_c, 4)})"
        mu_txt = f"mu >= {fmt_down(mu_l, 4)}{claim}, "
    eps_claim = ""
    if mu_c is None and cert.get("epsilon") is not None:
        eps_claim = f" ({said} {fmt_up(cert['epsilon'], 4)})"
    comps = a.get("details", {}).get("components", {})
    if comps:
        fw = 100 * a["details"]["family_confidence"]
        levels = {round(c["empirical"]["confidence"], 12) for c in (*comps.values(), a)}
        what = "two views" if list(comps) == ["releases"] else f"{1 + len(comps)} tests"
        what += " in two views (outputs, releases)" if "releases" in comps and len(comps) > 1 else ""
        each = f", each at {100 * levels.pop():.4g}%" if len(levels) == 1 else ""
        lines.append(f"  {what}{each} (Bonferroni; family-wise {fw:.4g}%):")
    lines.append(
        (f"  {_primary_label(a)}: " if comps else "  ")
        + f"empirical lower bounds at {100 * emp['confidence']:.4g}% confidence: {mu_txt}"
        f"epsilon >= {fmt_down(emp['epsilon_lower'], 4)} at delta = {emp['delta']:g}{eps_claim}"
    )
    if a.get("details", {}).get("no_power"):
        lines.append(f"    {'INCONCLUSIVE, ' if comps else ''}without power: {a['details']['no_power']}")
    lines += [_component_line(name, c) for name, c in comps.items()]
    floor = a.get("details", {}).get("detection_floor")
    if floor:
        lines.append(f"  detection floor: {floor}")
    if a.get("details", {}).get("floor_note"):
        lines.append(f"  ({a['details']['floor_note']})")
    est = a.get("estimate")
    if est and mu_c is not None:
        lines.append(
            f"  the certifying test exhibits mu in [{fmt_down(est['lower'], 4)}, {fmt_up(est['upper'], 4)}] "
            f"({100 * est['confidence']:g}% two-sided) against the {said} {fmt_up(mu_c, 4)}"
        )
    mt = a.get("details", {}).get("model_tests")
    if mt:
        bad = [t["test"] for t in mt["tests"] if t["rejected"]]
        lines.append(
            f"  implementation vs its model: {len(mt['tests'])} tests at level {mt['alpha']:g} (Bonferroni): "
            + ("all pass" if not bad else "REJECTED: " + "; ".join(bad))
        )
    pub = a.get("published_verdict")
    if pub:
        lines.append(f"  against the published claim: {pub}")
    return lines + _verdict_lines(a, comps, mu_l)


def _verdict_lines(a: Mapping[str, Any], comps: Mapping[str, Any], mu_l: float | None) -> list[str]:
    """What the verdict means, and for an inconclusive run what it would take."""
    verdict, lines = a["verdict"], []
    need = a.get("details", {}).get("would_need")
    if verdict == "inconclusive" and need:
        blind = any(p.get("details", {}).get("no_power") for p in (a, *comps.values()))
        lines.append(
            f"  to see it: about --audit-trials {need['audit_trials']:,} would bring the {need['view']} "
            "view's floor to the certificate (floors shrink about as 1/sqrt(trials))"
            + ("; a view without power says what it needs with its floor measured (--audit-floor algorithm)"
               if blind else "")
        )
    if verdict == "inconclusive":
        lines.append(
            "  (inconclusive = no view of the running code could have seen a violation: a certificate "
            "below the detection floor, a pilot that found no release the change reaches, or a bound of 0 "
            "(the view did not see the algorithm's own loss) proves nothing)"
        )
    elif verdict == "model-mismatch":
        lines.append("  (model-mismatch = the implementation's outputs differ from its declared model's)")
    else:
        lines.append(
            "  (consistent = no lower bound above the certified value; it does not prove the claim"
            + ("; a zero bound means no leakage was detected at this sample size)" if not mu_l else ")")
        )
    return lines
