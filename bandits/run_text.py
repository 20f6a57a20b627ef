"""The text ``dpaudit run`` prints for a :class:`~bandits.run.RunReport` (one place for wording)."""

from __future__ import annotations

from typing import Any

__all__ = ["summary_lines"]


def _privacy_lines(p: dict[str, Any]) -> list[str]:
    if not p["private"]:
        return ["privacy: none (a non-private reference; nothing is certified)"]
    lines = [f"privacy (certified; neighbours differ in {p['unit']}, output = the action sequence)"]
    pub = p.get("published")
    if p["mu"] is not None:
        rounds = p.get("private_rounds", p.get("releases"))
        what = "private rounds" if "private_rounds" in p else "releases"
        claim = ""
        if pub is not None and pub.get("mu") is not None:
            claim = f" ({pub['source']}: {pub['mu']:.6f}, not certified)"
        lines.append(f"  mu = {p['mu']:.6f}-GDP over {rounds} {what}{claim}")
    if p.get("epsilon_pure") is not None:
        lines.append(f"  epsilon = {p['epsilon_pure']:.6f} at delta = 0 (pure epsilon-DP, basic composition)")
    if p["epsilon"] is None:
        lines.append(f"  NOT PRIVATE as certified: {p['reasons'].get('basic', 'no method applies')}")
    else:
        lines.append(f"  epsilon = {p['epsilon']:.6f} at delta = {p['delta']:g} (by {p['epsilon_method']})")
    if pub is not None and pub.get("mu") is None:
        at = f" at delta = {pub['delta']:g}" if pub.get("delta") else ""
        lines.append(f"  published ({pub['source']}): epsilon = {pub['epsilon']:g}{at}: {pub['status']}")
    elif pub is not None and pub["status"].startswith("NOT"):
        lines.append(f"  published ({pub['source']}): {pub['status']}")
    return lines


def _audit_lines(a: dict[str, Any] | None) -> list[str]:
    if a is None:
        return ["audit: skipped (audit trials = 0)"]
    emp, cert = a["empirical"], a["certified"]
    lines = [
        f"audit: {a['verdict'].upper()} ({a['trials']} trials per neighbouring stream at T = {a['horizon']})"
    ]
    if a.get("note"):
        lines.append(f"  {a['note']}")
    mu_l, mu_c = emp.get("mu_lower"), cert.get("mu")
    # the claim under audit is the toolkit's certificate, or (when it certifies nothing) a paper's claim
    said = "certified" if cert.get("source", "dpaudit") == "dpaudit" else f"claimed by {cert['source']}"
    mu_txt = (
        ""
        if mu_l is None
        else (f"mu >= {mu_l:.4f}" + ("" if mu_c is None else f" ({said} {mu_c:.4f})") + ", ")
    )
    lines.append(
        f"  empirical lower bounds at {100 * emp['confidence']:g}% confidence: {mu_txt}"
        f"epsilon >= {emp['epsilon_lower']:.4f} at delta = {emp['delta']:g}"
        + ("" if mu_c is not None or cert.get("epsilon") is None else f" ({said} {cert['epsilon']:.4f})")
    )
    floor = a.get("details", {}).get("detection_floor")
    if floor:
        lines.append(f"  detection floor: {floor}")
    est = a.get("estimate")
    if est and mu_c is not None:
        hi = "inf" if est["upper"] == float("inf") else f"{est['upper']:.4f}"
        lines.append(
            f"  the certifying test exhibits mu in [{est['lower']:.4f}, {hi}] "
            f"({100 * est['confidence']:g}% two-sided) against the {said} {mu_c:.4f}"
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
    verdict = a["verdict"]
    if verdict == "inconclusive":
        lines.append(
            "  (inconclusive = the certificate is below the detection floor: a zero bound proves nothing)"
        )
    elif verdict == "model-mismatch":
        lines.append("  (model-mismatch = the implementation's outputs differ from its declared model's)")
    else:
        lines.append(
            "  (consistent = no lower bound above the certified value; it does not prove the claim"
            + ("; a zero bound means no leakage was detected at this sample size)" if not mu_l else ")")
        )
    return lines


def summary_lines(report: Any) -> list[str]:
    """The lines of the text report (header, regret, privacy, ledger check, audit, time)."""
    c, r = report.config, report.regret
    lines = [
        f"{report.title} on {c['env']}",
        f"  T = {c['horizon']}, N = {c['arms']}, {c['reps']} repetitions, seed {c['seed']}",
    ]
    lines += [f"  {x}" for x in report.lines]
    lines += [
        "regret at T (mean ± s.e. over repetitions)",
        f"  pseudo-regret    {r['mean']:10.1f} ± {r['stderr']:.1f}",
        f"  empirical regret {r['empirical_mean']:10.1f} ± {r['empirical_stderr']:.1f}",
    ]
    lines += _privacy_lines(report.privacy)
    lc = report.ledger_check
    lines.append(f"ledger check: {lc['message']}")
    lines += _audit_lines(report.audit)
    t = report.timing
    lines.append(
        f"time: simulation {t['simulation']:.1f} s, accounting {t['accounting']:.1f} s, "
        f"ledger check {t['ledger_check']:.1f} s, audit {t['audit']:.1f} s"
    )
    return lines
