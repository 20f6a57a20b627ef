"""``dpaudit audit TARGET``: empirically audit a mechanism's certified (or claimed) privacy.

Targets: ``gaussian``, ``laplace``, ``randomized-response``, ``rnm-laplace``,
``rnm-gaussian``, ``cascade`` (the local randomizer of Wang et al. 2021). The claim is the toolkit's own
certified value unless ``--claim-mu M`` or ``--claim-epsilon E [--claim-delta D]`` (or
``--claim-published`` for the papers' own theorems) is given. ``--json`` prints one object
with ``certified``, ``empirical``, ``verdict``, ``detection_floor`` and ``estimate`` (and no
progress bar). By default one test is chosen on a 10 % pilot among the target's pre-registered
designs (``--selection grid``: the Bonferroni grid over all of them instead).

Exit status: 0 the audit ran (verdict ``consistent``, ``inconclusive`` or ``model-mismatch``);
1 the verdict is ``violated`` (a valid lower bound exceeds the claim) or ``model-mismatch``: use it
to gate CI;
2 bad input (one line on stderr); 3 and 4 as every command (:mod:`dpaudit.cli.errors`).

This module is the composition root of an audit: the handler imports the target factories of
``mechanisms.auditing.targets`` and the runner (numpy, scipy) only when a target is audited, so
parsing, ``--help`` and input errors import neither.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dpaudit.cli.common import (
    MAX_ARMS,
    MAX_AUDIT_TRIALS,
    MAX_HORIZON,
    UsageError,
    check_amount,
    emit_json,
    integer,
    number,
    number_list,
    plot_path,
)
from dpaudit.papers import HU_2024, OU_2024, WANG_2021

if TYPE_CHECKING:
    from dpaudit.audit.report import Certified

TARGETS = ("gaussian", "laplace", "randomized-response", "rnm-laplace", "rnm-gaussian", "cascade")

MAX_RNM_ARMS = 1000
"""``audit rnm-laplace --arms``: its exact output distribution is a quadrature per distinct score
and the audit has one candidate design per arm (1000 arms: minutes)."""
MAX_RNM_GAUSSIAN = 100
"""``audit rnm-gaussian --sigmas`` entries (candidates): one candidate design per changed score,
each an exact argmax distribution over all candidates (100 candidates: about a minute)."""
MAX_RNM_GAUSSIAN_SEARCH = 30
"""... and without ``--values``, the search for the most distinguishable neighbour pair (30
candidates: about 15 s; it grows with the cube of the count)."""
MAX_GAP_SEARCH = 1000
"""``audit rnm-laplace --epoch-length`` without ``--gap`` searches every gap up to the epoch
length, one exact distribution each."""
MAX_BATCHES = 10**5
"""The most sampling batches of one audit (``--trials / --batch-size``): each batch is a Python
call and a kept array, so 10⁷ batches of one would take minutes and gigabytes."""
BATCH_ELEMENTS = 1 << 24
"""The most array elements (outputs × output width) one sampling batch may hold (128 MB of
float64): ``--batch-size`` is lowered for wide outputs so that memory stays bounded."""


def _values(text: str) -> list[float]:
    import math

    out = []
    for p in (t.strip() for t in text.split(",") if t.strip()):
        try:
            v = float(p)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"--values must be a comma-separated list of finite numbers, got {p!r}"
            ) from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"--values entries must be finite numbers, got {p!r}")
        out.append(v)
    if not out:
        raise argparse.ArgumentTypeError("--values must be a comma-separated list of finite numbers")
    return out


def _click(name: str) -> Callable[[str], int | None]:
    as_int = integer(name, 1, MAX_ARMS)

    def parse(text: str) -> int | None:
        if text.strip().lower() in ("none", "inf", "no-click"):
            return None
        try:
            return as_int(text)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(
                f"{name} must be an integer in [1, {MAX_ARMS}] or 'none', got {text!r}"
            ) from None

    return parse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("audit", help="empirical lower bounds on privacy vs the certified claim")
    kinds = p.add_subparsers(dest="target", required=True, metavar="TARGET", parser_class=type(p))
    for add in (_add_additive, _add_randomized_response, _add_rnm_laplace, _add_rnm_gaussian, _add_cascade):
        for q in add(kinds):
            _add_claim_options(q, published=q.prog.split()[-1] in ("rnm-laplace", "rnm-gaussian"))
            _add_run_options(q)
            q.set_defaults(handler=run)


def _add_additive(kinds: argparse._SubParsersAction) -> list[argparse.ArgumentParser]:
    g = kinds.add_parser("gaussian", help="Gaussian mechanism x + N(0, sigma^2)")
    g.add_argument("--sigma", type=number("--sigma", 0.0, low_open=True), required=True)
    lap = kinds.add_parser("laplace", help="Laplace mechanism x + Lap(scale)")
    lap.add_argument("--scale", type=number("--scale", 0.0, low_open=True), required=True)
    for q in (g, lap):
        q.add_argument("--sensitivity", type=number("--sensitivity", 0.0, low_open=True), default=1.0)
        q.add_argument("--statistic", choices=("auto", "identity"), default="auto")
    return [g, lap]


def _add_randomized_response(kinds: argparse._SubParsersAction) -> list[argparse.ArgumentParser]:
    rr = kinds.add_parser("randomized-response", help="k-ary randomised response")
    rr.add_argument("--epsilon", type=number("--epsilon", 0.0, low_open=True), required=True)
    rr.add_argument("--categories", type=integer("--categories", 2, MAX_ARMS), default=2,
                    help=f"k, at most {MAX_ARMS}")
    return [rr]


def _add_rnm_laplace(kinds: argparse._SubParsersAction) -> list[argparse.ArgumentParser]:
    rl = kinds.add_parser("rnm-laplace", help=f"Laplace report-noisy-max over counts ({HU_2024.short})")
    rl.add_argument("--scale", type=number("--scale", 0.0, low_open=True), required=True)
    rl.add_argument("--arms", type=integer("--arms", 2, MAX_RNM_ARMS), default=2,
                    help=f"counts compared, at most {MAX_RNM_ARMS}")
    rl.add_argument("--neighbouring", choices=("replace", "add-remove"), default="replace")
    rl.add_argument("--epoch-length", type=integer("--epoch-length", 1, MAX_HORIZON), default=None,
                    help="counts are over an epoch of this many rounds (gap g <= epoch length)")
    rl.add_argument("--gap", type=integer("--gap", 1, MAX_HORIZON), default=None,
                    help="audit counts (g,0,...) vs (g-1,1,...); default: best for --trials")
    return [rl]


def _add_rnm_gaussian(kinds: argparse._SubParsersAction) -> list[argparse.ArgumentParser]:
    rg = kinds.add_parser("rnm-gaussian",
                          help=f"report-noisy-max with heterogeneous Gaussian noise ({OU_2024.short})")
    rg.add_argument("--sensitivities", type=number_list("--sensitivities", max_len=MAX_RNM_GAUSSIAN),
                    required=True, help="s1,s2,... (one, or one per candidate)")
    rg.add_argument("--sigmas", type=number_list("--sigmas", max_len=MAX_RNM_GAUSSIAN), required=True,
                    help=f"sigma1,sigma2,... one per candidate (at most {MAX_RNM_GAUSSIAN}; "
                    f"{MAX_RNM_GAUSSIAN_SEARCH} without --values)")
    rg.add_argument("--values", type=_values, default=None,
                    help="query values f; default: search the most distinguishable neighbour pair")
    return [rg]


def _add_cascade(kinds: argparse._SubParsersAction) -> list[argparse.ArgumentParser]:
    ca = kinds.add_parser("cascade",
                          help=f"{WANG_2021.short} Algorithms 2-3 local randomizer (click feedback)")
    ca.add_argument("--positions", type=integer("--positions", 1, MAX_ARMS), required=True,
                    help=f"positions K of the ranked list, at most {MAX_ARMS}")
    ca.add_argument("--epsilon", type=number("--epsilon", 0.0, low_open=True), required=True)
    ca.add_argument("--noise-delta", type=number("--noise-delta", 0.0, 1.0, low_open=True, high_open=True),
                    default=None,
                    help="Algorithm 3 (Gaussian) with this delta; default Algorithm 2 (Laplace)")
    ca.add_argument("--report", choices=("observed", "all-positions"), default="observed")
    ca.add_argument("--click", type=_click("--click"), default=1,
                    help="position of the user's click in [1, --positions], or 'none'")
    ca.add_argument("--click-prime", type=_click("--click-prime"), default=None,
                    help="the neighbour's click in [1, --positions], or 'none' (default: none)")
    return [ca]


def _add_claim_options(q: argparse.ArgumentParser, *, published: bool) -> None:
    claim = q.add_mutually_exclusive_group()
    claim.add_argument("--claim-mu", type=number("--claim-mu", 0.0, low_open=True),
                       help="audit a mu-GDP claim")
    claim.add_argument("--claim-epsilon", type=number("--claim-epsilon", 0.0),
                       help="audit an (eps, delta) claim")
    if published:
        claim.add_argument("--claim-published", action="store_true",
                           help=f"audit the paper's theorem ({HU_2024.short} Thm 8 / {OU_2024.short} Thm 6)")
    q.add_argument("--claim-delta", type=number("--claim-delta", 0.0, 1.0, high_open=True), default=None)
    q.add_argument("--delta", type=number("--delta", 0.0, 1.0, low_open=True, high_open=True), default=None,
                   help="delta at which eps is audited for mu claims (default 1e-5)")


def _add_run_options(q: argparse.ArgumentParser) -> None:
    q.add_argument("--trials", type=integer("--trials", 100, MAX_AUDIT_TRIALS), default=200_000,
                   help=f"mechanism runs, half on each neighbour, at most {MAX_AUDIT_TRIALS:.0e} "
                   "(default 200000)")
    q.add_argument("--seed", type=integer("--seed", 0), default=0)
    q.add_argument("--confidence", type=number("--confidence", 0.0, 1.0, low_open=True, high_open=True),
                   default=0.95)
    q.add_argument("--batch-size", type=integer("--batch-size", 1, MAX_AUDIT_TRIALS), default=1 << 18)
    q.add_argument("--selection", choices=("pilot", "grid"), default="pilot",
                   help="one test chosen on a pilot (default) or the Bonferroni grid over all designs")
    frac = number("--pilot-fraction", 0.0, 1.0, low_open=True, high_open=True)
    q.add_argument("--pilot-fraction", type=frac,
                   default=0.1, help="share of the trials spent on the pilot (default 0.1)")
    q.add_argument("--plot", metavar="FILE.png", type=plot_path(),
                   help="draw the empirical trade-off region vs the claim")
    q.add_argument("--json", action="store_true", help="print one JSON object (no progress bar)")


def _claim(args: argparse.Namespace) -> Certified | None:
    from dpaudit.audit.claims import DEFAULT_GDP_DELTA, claim_epsilon, claim_mu
    from mechanisms.auditing.targets import published_claim

    if getattr(args, "claim_published", False):
        if args.target == "rnm-laplace":
            if args.claim_delta not in (None, 0.0):
                raise ValueError(
                    "--claim-delta must be 0 (or omitted) with --claim-published for rnm-laplace"
                )
            return published_claim("rnm-laplace", scale=args.scale)
        if args.claim_delta is None or args.claim_delta <= 0:
            raise ValueError("--claim-published for rnm-gaussian needs --claim-delta in (0, 1)")
        s, sg = args.sensitivities, args.sigmas
        return published_claim(
            "rnm-gaussian", sensitivities=s[0] if len(s) == 1 else s, sigmas=sg, delta=args.claim_delta
        )
    if args.claim_mu is not None:
        if args.claim_delta is not None:
            raise ValueError("--claim-delta goes with --claim-epsilon; with --claim-mu use --delta")
        return claim_mu(args.claim_mu, args.delta if args.delta is not None else DEFAULT_GDP_DELTA)
    if args.claim_epsilon is not None:
        return claim_epsilon(args.claim_epsilon, args.claim_delta or 0.0)
    if args.claim_delta is not None:
        raise ValueError("--claim-delta needs --claim-epsilon (or --claim-published)")
    return None


def _check_clicks(args: argparse.Namespace) -> None:
    """A click beyond the last position is no click: refuse it rather than audit a different pair."""
    for name, click in (("--click", args.click), ("--click-prime", args.click_prime)):
        if click is not None and click > args.positions:
            raise UsageError(f"{name} must be in [1, --positions={args.positions}] or 'none', got {click}")


def build_target(args: argparse.Namespace) -> Any:
    """The :class:`~dpaudit.audit.runner.AuditTarget` described by parsed arguments."""
    from mechanisms.auditing import targets as t

    claim = _claim(args)
    if args.target == "gaussian":
        return t.gaussian_target(
            args.sigma, args.sensitivity, claim=claim, delta=args.delta, statistic=args.statistic
        )
    if args.target == "laplace":
        return t.laplace_target(args.scale, args.sensitivity, claim=claim, statistic=args.statistic)
    if args.target == "randomized-response":
        return t.randomized_response_target(args.epsilon, args.categories, claim=claim)
    if args.target == "rnm-laplace":
        if args.gap is not None and args.epoch_length is not None and args.gap > args.epoch_length:
            raise ValueError(f"--gap must be in [1, --epoch-length={args.epoch_length}], got {args.gap}")
        return t.rnm_laplace_target(
            args.scale,
            args.arms,
            args.neighbouring,
            trials=args.trials,
            epoch_length=args.epoch_length,
            gap=args.gap,
            claim=claim,
            confidence=args.confidence,
        )
    if args.target == "rnm-gaussian":
        s, sg = args.sensitivities, args.sigmas
        if len(sg) < 2:
            raise ValueError(f"--sigmas must have at least 2 entries (one per candidate), got {len(sg)}")
        if len(s) not in (1, len(sg)):
            from dpaudit.cli.epsilon import sensitivities_count

            raise ValueError(sensitivities_count(len(s), len(sg)))
        if args.values is not None and len(args.values) != len(sg):
            raise ValueError(
                f"--values must have {len(sg)} entries (one per --sigmas), got {len(args.values)}"
            )
        return t.rnm_gaussian_target(
            s[0] if len(s) == 1 else s,
            sg,
            values=args.values,
            trials=args.trials,
            claim=claim,
            delta=args.delta,
            confidence=args.confidence,
        )
    if args.target == "cascade":
        _check_clicks(args)
        return t.cascade_target(
            args.positions,
            args.epsilon,
            args.noise_delta,
            report=args.report,
            click=args.click,
            click_prime=args.click_prime,
            claim=claim,
        )
    raise ValueError(f"unknown target {args.target!r}")  # pragma: no cover


def cli_words(message: str) -> str:
    """A runner message with its keyword arguments written as this command's options.

    >>> cli_words("trials = 1000 leaves 0; use more trials or selection='grid'")
    '--trials 1000 leaves 0; use more --trials or --selection grid'
    """
    for api, option in (("selection='grid'", "--selection grid"), ("pilot_fraction", "--pilot-fraction"),
                        ("trials = ", "--trials "),
                        ("more trials", "more --trials"), ("batch_size", "--batch-size")):  # fmt: skip
        message = message.replace(api, option)
    return message


def candidate_designs(args: argparse.Namespace) -> int | None:
    """How many pre-registered designs the pilot chooses among, where it is one per category,
    arm or candidate (None: a target whose count is known only once it is built)."""
    if args.target == "randomized-response":
        return int(args.categories)
    if args.target in ("rnm-laplace", "rnm-gaussian"):
        return output_width(args)
    return None


def _check_pilot(args: argparse.Namespace) -> None:
    """Refuse up front a pilot selection that leaves too few main samples (the runner would
    build every design first and then refuse); the same rule as the runner's."""
    k = candidate_designs(args)
    if k is None or args.selection != "pilot":
        return
    n_pilot = max(20, int(round(args.pilot_fraction * args.trials)) // (2 * k))
    n_main = (args.trials - 2 * k * n_pilot) // 2
    if n_main < 20:
        raise UsageError(
            f"--trials {args.trials} leaves {max(n_main, 0)} main samples per side after a pilot of "
            f"{n_pilot} per side on each of {k} candidate designs; use more --trials or --selection grid"
        )


def output_width(args: argparse.Namespace) -> int:
    """Array elements one mechanism run draws: arms, candidates or positions (1 for scalars)."""
    if args.target == "rnm-laplace":
        return args.arms
    if args.target == "rnm-gaussian":
        return len(args.sigmas)
    if args.target == "cascade":
        return args.positions
    return 1


def check_size(args: argparse.Namespace) -> int:
    """Refuse, before any work, an audit whose work (trials × output width array elements)
    exceeds the limit, or a gap search longer than :data:`MAX_GAP_SEARCH`; returns the batch
    size, lowered so that one batch holds at most :data:`BATCH_ELEMENTS` elements."""
    width = output_width(args)
    if args.target == "cascade":
        _check_clicks(args)
    check_amount(args.trials * width, f"--trials x output width ({width})", "array elements")
    if args.target == "rnm-gaussian" and args.values is None and width > MAX_RNM_GAUSSIAN_SEARCH:
        raise UsageError(
            f"--sigmas has {width} candidates: searching the most distinguishable neighbours is limited to "
            f"{MAX_RNM_GAUSSIAN_SEARCH} (it grows with the cube of the count); give --values"
        )
    if args.target == "rnm-laplace" and args.gap is None and (args.epoch_length or 0) > MAX_GAP_SEARCH:
        raise UsageError(
            f"--epoch-length {args.epoch_length} without --gap would search {args.epoch_length} gaps, "
            f"more than the limit {MAX_GAP_SEARCH}; give --gap"
        )
    _check_pilot(args)
    batch = max(1, min(args.batch_size, BATCH_ELEMENTS // width))
    batches = -(-args.trials // batch)
    if batches > MAX_BATCHES:
        raise UsageError(
            f"--trials / --batch-size = {batches} batches, more than the limit {MAX_BATCHES:.0e}; "
            f"use --batch-size >= {-(-args.trials // MAX_BATCHES)}"
        )
    return batch


def run(args: argparse.Namespace) -> int:
    batch_size = check_size(args)
    from dpaudit.audit.runner import run_audit_with_rates

    target = build_target(args)
    try:
        report, rates = run_audit_with_rates(
            target,
            trials=args.trials,
            seed=args.seed,
            confidence=args.confidence,
            batch_size=batch_size,
            progress=not args.json and sys.stderr.isatty(),
            selection=args.selection,
            pilot_fraction=args.pilot_fraction,
        )
    except ValueError as exc:  # the runner speaks in its keyword arguments; say the options
        raise UsageError(cli_words(str(exc))) from None
    if args.json:
        emit_json(report.to_dict())
    else:
        print(report)
    if args.plot:  # after the results are printed: a failing plot loses nothing computed
        from dpaudit.audit.plot import plot_audit

        sys.stdout.flush()
        plot_audit(report, rates, args.plot)
        if not args.json:
            print(f"plot written to {args.plot}")
    return 1 if report.verdict in ("violated", "model-mismatch") else 0
