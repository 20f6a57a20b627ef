"""``dpaudit epsilon``: certified ε (or δ) of a configuration under every method.

Module-level imports are the standard library and :mod:`dpaudit.cli.common` only; the
accountant (numpy, scipy, dp-accounting) is imported by the handler, so parsing, ``--help``
and input errors stay fast.
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING

from dpaudit.cli.common import MAX_STEPS, emit_json, integer, number, number_list, plot_path
from dpaudit.formatting import fmt, fmt_up
from dpaudit.papers import OU_2024

if TYPE_CHECKING:
    from dpaudit.accounting import AccountingReport
    from dpaudit.analyses.thompson_sampling import ThompsonConfig
    from dpaudit.events import PrivacyEvent

PUBLISHED_NOTES = {
    "paper": "as published: Theorem 4 mu = sqrt(T/(c(b+1)))",
    "paper_rdp": "as published: Theorem 8",
    "paper_standard": "as published: Corollary 1 (Theorem 7 + advanced composition)",
}
"""Notes for the published (not certified) bounds of ``epsilon ts``; the methods' own notes are
:data:`dpaudit.accounting.METHOD_NOTES`."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("epsilon", help="certified privacy of a configuration under every method")
    kinds = p.add_subparsers(dest="kind", required=True, metavar="SUBCOMMAND",
                             parser_class=type(p))

    ts = kinds.add_parser("ts", help=f"Gaussian Thompson sampling with (b, c) ({OU_2024.short})")
    ts.add_argument("--horizon", "-T", type=integer("--horizon", 1, MAX_STEPS), required=True,
                    help="rounds T")
    ts.add_argument("--arms", "-N", type=integer("--arms", 2, 10**6), required=True, help="arms N")
    ts.add_argument("--prepulls", "-b", type=integer("--prepulls", 0, MAX_STEPS), default=0,
                    help="pre-pulls per arm b (b*N < T)")
    ts.add_argument("--variance-scale", "-c", type=number("--variance-scale", 1.0), default=1.0,
                    help="posterior variance scale c >= 1")

    g = kinds.add_parser("gaussian", help="k-fold Gaussian mechanism")
    g.add_argument("--mu", type=number("--mu", 0.0, low_open=True),
                   help="GDP parameter of one step (or give --sensitivity and --sigma)")
    g.add_argument("--sensitivity", type=number("--sensitivity", 0.0, low_open=True),
                   help="l2-sensitivity of one step (with --sigma)")
    g.add_argument("--sigma", type=number("--sigma", 0.0, low_open=True), help="noise standard deviation")
    g.add_argument("--steps", type=integer("--steps", 1, MAX_STEPS), default=1, help="k steps")

    lap = kinds.add_parser("laplace", help="k-fold Laplace mechanism")
    lap.add_argument("--epsilon0", type=number("--epsilon0", 0.0, low_open=True),
                     help="epsilon of one step (or give --sensitivity and --scale)")
    lap.add_argument("--sensitivity", type=number("--sensitivity", 0.0, low_open=True),
                     help="l1-sensitivity of one step (with --scale)")
    lap.add_argument("--scale", type=number("--scale", 0.0, low_open=True), help="Laplace scale b")
    lap.add_argument("--steps", type=integer("--steps", 1, MAX_STEPS), default=1, help="k steps")

    r = kinds.add_parser("rnm-gaussian", help="report-noisy-max with heterogeneous Gaussian noise")
    r.add_argument("--sensitivities", type=number_list("--sensitivities"), required=True,
                   help="s1,s2,... (one, or one per candidate)")
    r.add_argument("--sigmas", type=number_list("--sigmas"), required=True,
                   help="sigma1,sigma2,... one per candidate")
    r.add_argument("--steps", type=integer("--steps", 1, MAX_STEPS), default=1, help="k steps")

    d = kinds.add_parser("dpsgd", help="DP-SGD: k steps of the subsampled Gaussian mechanism")
    add_dpsgd_options(d, noise_required=True)

    for q in (ts, g, lap, r, d):
        target = q.add_mutually_exclusive_group(required=True)
        target.add_argument("--delta", type=number("--delta", 0.0, 1.0, low_open=True, high_open=True),
                            help="report epsilon at this delta")
        target.add_argument("--epsilon", type=number("--epsilon", 0.0),
                            help="report delta at this epsilon")
        q.add_argument("--json", action="store_true", help="print one JSON object")
        q.add_argument("--pld-accuracy", type=number("--pld-accuracy", 1e-6, 1.0), default=1e-4,
                       help="the PLD grid interval: its accuracy in epsilon, about, per composition "
                            "(widened where memory requires; the report says so)")
        q.add_argument("--plot", metavar="FILE.png", type=plot_path(),
                       help="draw epsilon(delta) for every method")
        q.set_defaults(handler=run)


def add_dpsgd_options(p: argparse.ArgumentParser, *, noise_required: bool) -> None:
    """The DP-SGD options shared by ``epsilon dpsgd`` and ``calibrate dpsgd``."""
    p.add_argument("--sampling-rate", "-q", type=number("--sampling-rate", 0.0, 1.0, low_open=True),
                   help="Poisson sampling rate q (or --dataset-size and --batch-size)")
    p.add_argument("--noise-multiplier", "-s", type=number("--noise-multiplier", 0.0, low_open=True),
                   required=noise_required, help="noise standard deviation / clipping norm")
    p.add_argument("--steps", "-k", type=integer("--steps", 1, MAX_STEPS), required=noise_required,
                   help="training steps k")
    p.add_argument("--sampling", choices=("poisson", "without-replacement", "with-replacement"),
                   default="poisson",
                   help="poisson: each record joins a batch with probability q (add/remove relation); "
                        "without-replacement / with-replacement: batches of --batch-size drawn from "
                        "--dataset-size records, distinct or independently (replace-one relation: one "
                        "replaced record moves the clipped sum by 2C per copy)")
    p.add_argument("--dataset-size", type=integer("--dataset-size", 1, 10**12),
                   help="records N (without-replacement; with poisson, q = B/N unless --sampling-rate)")
    p.add_argument("--batch-size", type=integer("--batch-size", 1, 10**12), help="records per batch B")


def dpsgd_step(args: argparse.Namespace, noise_multiplier: float) -> PrivacyEvent:
    """One DP-SGD step from the command line's sampling options."""
    from dpaudit.events import GaussianEvent, PoissonSampledEvent
    from dpaudit.events_ml import SampledWithoutReplacementEvent, SampledWithReplacementEvent

    n, b = args.dataset_size, args.batch_size
    if (n is None) != (b is None):
        raise ValueError("give --dataset-size and --batch-size together")
    if n is not None and b > n and args.sampling != "with-replacement":
        raise ValueError(f"--batch-size must be at most --dataset-size ({n}), got {b}")
    inner = GaussianEvent(sigma=noise_multiplier)
    if args.sampling != "poisson":
        if n is None:
            raise ValueError(f"--sampling {args.sampling} needs --dataset-size and --batch-size")
        if args.sampling_rate is not None:
            raise ValueError(f"--sampling-rate is B/N with --sampling {args.sampling}: give only "
                             "--dataset-size and --batch-size")
        # replacing one record moves a sum of gradients clipped to norm C by up to 2C (per copy)
        fixed = SampledWithoutReplacementEvent if args.sampling == "without-replacement" else \
            SampledWithReplacementEvent
        return fixed(n, b, GaussianEvent(sigma=noise_multiplier, sensitivity=2.0))
    if args.sampling_rate is None:
        if n is None:
            raise ValueError("give --sampling-rate, or --dataset-size with --batch-size")
        return PoissonSampledEvent(b / n, inner)
    if n is not None:
        raise ValueError("give either --sampling-rate or --dataset-size with --batch-size, not both")
    return PoissonSampledEvent(args.sampling_rate, inner)


def _event(args: argparse.Namespace) -> tuple[PrivacyEvent, ThompsonConfig | None]:
    from dpaudit.events import GaussianEvent, GaussianReportNoisyMaxEvent, LaplaceEvent

    if args.kind == "ts":
        from dpaudit.analyses.thompson_sampling import ThompsonConfig

        cfg = ThompsonConfig(args.horizon, args.arms, args.prepulls, args.variance_scale)
        return cfg.event(), cfg
    if args.kind == "gaussian":
        if args.mu is not None:
            if args.sensitivity is not None or args.sigma is not None:
                raise ValueError("give either --mu or --sensitivity with --sigma, not both")
            ev: PrivacyEvent = GaussianEvent.from_mu(args.mu)
        elif args.sigma is not None:
            ev = GaussianEvent(sigma=args.sigma, sensitivity=args.sensitivity or 1.0)
        else:
            raise ValueError("give --mu, or --sigma (with optional --sensitivity, default 1)")
        return ev.repeat(args.steps), None
    if args.kind == "laplace":
        if args.epsilon0 is not None:
            if args.scale is not None or args.sensitivity is not None:
                raise ValueError("give either --epsilon0 or --sensitivity with --scale, not both")
            ev = LaplaceEvent.from_epsilon(args.epsilon0)
        elif args.scale is not None:
            ev = LaplaceEvent(scale=args.scale, sensitivity=args.sensitivity or 1.0)
        else:
            raise ValueError("give --epsilon0, or --scale (with optional --sensitivity, default 1)")
        return ev.repeat(args.steps), None
    if args.kind == "rnm-gaussian":
        s, g = args.sensitivities, args.sigmas
        if len(s) not in (1, len(g)):
            raise ValueError(sensitivities_count(len(s), len(g)))
        return GaussianReportNoisyMaxEvent(tuple(s), tuple(g)).repeat(args.steps), None
    if args.kind == "dpsgd":
        return dpsgd_step(args, args.noise_multiplier).repeat(args.steps), None
    raise ValueError(f"unknown subcommand {args.kind!r}")  # pragma: no cover


def sensitivities_count(given: int, candidates: int) -> str:
    """The refusal of a --sensitivities list whose length matches neither 1 nor --sigmas.

    >>> sensitivities_count(2, 1)
    '--sensitivities must have 1 entry (as many as --sigmas), got 2'
    >>> sensitivities_count(2, 3)
    '--sensitivities must have 1 entry or 3 (one per --sigmas), got 2'
    """
    if candidates == 1:
        return f"--sensitivities must have 1 entry (as many as --sigmas), got {given}"
    return f"--sensitivities must have 1 entry or {candidates} (one per --sigmas), got {given}"


def _report(args: argparse.Namespace, event: PrivacyEvent, cfg: ThompsonConfig | None) -> AccountingReport:
    from dpaudit.accounting import account

    if cfg is not None:
        from dpaudit.analyses.thompson_sampling import thompson_report

        return thompson_report(cfg, delta=args.delta, epsilon=args.epsilon)
    return account(event, delta=args.delta, epsilon=args.epsilon)


def dpsgd_header(args: argparse.Namespace) -> str:
    """One line naming the DP-SGD configuration and its neighbouring relation."""
    if args.sampling != "poisson":
        how = (f"batches of {args.batch_size} of {args.dataset_size} records drawn "
               f"{args.sampling.replace('-', ' ')} (replace one record: sensitivity 2C"
               f"{' per copy' if args.sampling == 'with-replacement' else ''})")
    else:
        q = args.sampling_rate if args.sampling_rate is not None else args.batch_size / args.dataset_size
        how = f"Poisson sampling q = {q:g} (add or remove one record)"
    return f"DP-SGD: {args.steps} steps, noise multiplier {args.noise_multiplier:g}, {how}"


def _table(report: AccountingReport, cfg: ThompsonConfig | None, header: str | None = None) -> str:
    """The report's own table (``str(report)``), with the Thompson-sampling header and the
    published bounds' notes for ``epsilon ts``."""
    if cfg is None:
        return report.table(header=header)
    header = (
        f"Thompson sampling T={cfg.horizon} N={cfg.arms} b={cfg.prepulls} c={cfg.variance_scale:g}: "
        f"certified mu = {fmt_up(cfg.mu_tight)} (paper: {fmt(cfg.mu_paper)}); "
        f"{cfg.private_rounds} private rounds"
    )
    return report.table(header=header, notes=PUBLISHED_NOTES)


def plot_curves(event: PrivacyEvent, cfg: ThompsonConfig | None, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from dpaudit.accounting import epsilon_curves

    deltas = np.logspace(-12, math.log10(0.5), 25)
    curves = epsilon_curves(event, deltas)
    if cfg is not None:
        from dpaudit.analyses.thompson_sampling import epsilon_curves as ts_curves

        extra = ts_curves(cfg, deltas)
        curves.update({k: list(v) for k, v in extra.items() if k != "gdp"})
    from dpaudit.plotstyle import fit_log_axis, series_style

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    drawn: list[float] = []
    for i, (name, ys) in enumerate(curves.items()):
        # a log axis cannot show epsilon = 0 (delta above the mechanism's delta(0)): those points are left out
        pts = [(d, y) for d, y in zip(deltas, ys) if y is not None and math.isfinite(y) and y > 0]
        if pts:
            style = series_style(i, len(curves))
            if name.startswith("paper"):
                style["linestyle"] = "--"
            ax.plot(*zip(*pts), label=name, **style)
            drawn += [y for _, y in pts]
    ax.set_xscale("log")
    fit_log_axis(ax, drawn)
    ax.set_xlabel("delta")
    ax.set_ylabel("certified epsilon")
    ax.set_title("epsilon(delta) by composition method")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(args: argparse.Namespace) -> int:
    import sys

    from dpaudit.accounting import progress
    from dpaudit.accounting.pld import accuracy_of

    event, cfg = _event(args)
    with progress.enabled(not args.json and sys.stderr.isatty()), accuracy_of(args.pld_accuracy):
        report = _report(args, event, cfg)
    if args.json:
        d = report.to_dict()
        if cfg is not None:
            d["mu"] = cfg.mu_tight
            d["mu_paper"] = cfg.mu_paper
        emit_json(d)
    else:
        print(_table(report, cfg, dpsgd_header(args) if args.kind == "dpsgd" else None))
    if args.plot:  # after the results are printed: a failing plot loses nothing computed
        sys.stdout.flush()
        with progress.enabled(not args.json and sys.stderr.isatty()):
            plot_curves(event, cfg, args.plot)
        if not args.json:
            print(f"plot written to {args.plot}")
    return 0
