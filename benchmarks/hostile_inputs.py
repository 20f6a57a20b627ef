"""The hostile inputs of ``benchmarks/bad_input_table.py`` (issues 14 and 21): each row a command
line, its expected exit status and what its answer or its one error line must match.

Issue 14's rows cover the options' sizes and values; issue 21's rows its table of crashes, hangs
and runaway memory (``ISSUE_21``), every ``--env`` grammar (``ENV_GRAMMARS``) and output paths
(``OUTPUT_PATHS``: unwritable figures, a full disk, terminals that cannot encode the output).
"""

# ruff: noqa: E501  (a row is one command and one expected message: easier to read on one line)

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Row", "ROWS", "ISSUE_21", "ENV_GRAMMARS", "OUTPUT_PATHS"]


@dataclass(frozen=True)
class Row:
    """One command line of the table.

    Attributes:
        args: the arguments after ``dpaudit``.
        exit: the expected exit status (0 answered, 1 audit violated, 2 refused, 3 the
            environment failed).
        expect: a regular expression the answer (exit 0/1: stdout) or the error line (exit 2)
            must match.
        small: for the in-process tests, the same row on smaller inputs (None: run ``args``
            as they are; only rows that do real work need one).
        small_expect: what the answer on ``small`` must match (default ``expect``).
        env: environment variables of the process (e.g. ``PYTHONIOENCODING=ascii``).
        stdout: a file stdout is redirected to (e.g. ``/dev/full``); None: captured.
    """

    args: tuple[str, ...]
    exit: int
    expect: str
    small: tuple[str, ...] | None = None
    small_expect: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    stdout: str | None = None

    @property
    def in_process(self) -> bool:
        """Whether the row can run inside the test process (no environment, no redirection)."""
        return not self.env and self.stdout is None

    @property
    def command(self) -> str:
        """The command line, a long list shown as its first entries and its length, a long word
        as its ends."""

        def show(a: str) -> str:
            if a.count(",") > 8:
                return ",".join(a.split(",")[:3]) + f",... ({a.count(',') + 1} entries)"
            if a.count("_") > 8:
                return "_".join(a.split("_")[:3]) + f"_... ({a.count('_') + 1} entries)"
            if len(a) > 90:
                return a[:30] + f"...({len(a)} characters)..." + a[-20:]
            return a if a and " " not in a else repr(a)

        head = "".join(f"{k}={v} " for k, v in self.env)
        tail = f" > {self.stdout}" if self.stdout else ""
        return head + "dpaudit " + " ".join(show(a) for a in self.args) + tail


def _r(
    cmd: str,
    exit: int,
    expect: str,
    small: str | None = None,
    small_expect: str | None = None,
    *,
    env: dict[str, str] | None = None,
    stdout: str | None = None,
) -> Row:
    import shlex

    small_args = None if small is None else tuple(shlex.split(small))
    return Row(tuple(shlex.split(cmd)), exit, expect, small_args, small_expect,
               tuple(sorted((env or {}).items())), stdout)  # fmt: skip


NO_DIR = "/nonexistent/dir/x.png"
PLOT_MISSING = r"--plot: directory '/nonexistent/dir' does not exist"

SMALL_RUN = "-T 2000 -R 2 --audit-trials 0"
FULL_DISK = r"input/output failed: (stdout is /dev/full: every write fails|No space left on device)"
LONG_NAME = "/tmp/" + "a" * 300 + ".png"
RATINGS = "movielens:ratings=nofile/ratings.dat,movies=nofile/movies.dat,top=100"

ISSUE_21: tuple[Row, ...] = (
    # issue 21's table: crashes, hangs and runaway memory, now refused or answered
    _r(f"run cucb-ldp2 --env topk:k=4,means=0.5x1000000000 {SMALL_RUN}", 2,
       r"--env: means has 1,000,000,000 entries \(repeat counts included\), more than the limit 10,000"),
    _r(f"run cucb --env movielens-like:items=1000000000,users=6040,seed=0 {SMALL_RUN}", 2,
       r"--env: items must be an integer in \[2, 10000\]"),
    _r(f"run cucb --env movielens-like:items=100,users=100000000,seed=0 {SMALL_RUN}", 2,
       r"--env: users must be an integer in \[1, 1000000\]"),
    _r(f"run cucb --env paths:k=1000000,paths=4,gap=0.1 {SMALL_RUN}", 2, r"--env: k must be an integer in \[1, 10000\]"),
    _r(f"run cascade-ucb --env {RATINGS}", 2, r"--env: ratings: no such file 'nofile/ratings.dat'"),
    _r(f"run ts --target-mu 1e-300 {SMALL_RUN}", 2, r"--target-mu must be at least 3\.16e-149 at --horizon 2000"),
    _r("tune ts --target-mu 1e-300 -T 2000 -R 2", 2, r"--target-mu must be at least 3\.16e-149 at --horizon 2000"),
    _r(f"run ts --plot /proc/x.png {SMALL_RUN}", 2, r"--plot: cannot write '/proc/x.png'"),
    _r(f"run ts --plot {LONG_NAME} {SMALL_RUN}", 2, r"--plot: cannot write .*: File name too long"),
    _r("audit gaussian --sigma 1e300 --trials 1000", 0, r"exact\s+: mu = 1\.000000e-300"),
    _r("epsilon gaussian --mu 1 --delta 1e-5 --json", 3, FULL_DISK,
       stdout="/dev/full"),
    _r("epsilon gaussian --mu 1e-320 --delta 1e-5", 0, r"best\s+0\s+certified by basic"),
    _r("epsilon ts -T 1000 -N 2 -b 1 -c 1e308 --delta 1e-6", 0, r"certified mu = 2\.23\d+e-153"),
    _r("epsilon gaussian --mu 1 --delta 1e-5 --plot /tmp/dpaudit-F.png", 0, r"plot written to /tmp/dpaudit-F\.png"),
    _r(f"run ts {SMALL_RUN}", 0, r"pseudo-regret\s+\S+ \+/- ", env={"PYTHONIOENCODING": "ascii"}),
    _r("compare ts dpucb-mat", 2, r"dpucb-mat cannot run on the instance of the first algorithm \(ts: bernoulli"),
    # issue 21's messages and displays
    _r("epsilon rnm-gaussian --sensitivities 1,2 --sigmas 1 --delta 1e-5", 2,
       r"--sensitivities must have 1 entry \(as many as --sigmas\), got 2"),
    _r("audit randomized-response --epsilon 1 --categories 10000 --trials 1000", 2,
       r"use more --trials or --selection grid$"),
    _r("run", 2, r"run needs ALG"),
    _r("epsilon gaussian --mu 1e308 --delta 1e-5", 0, r"GDP mu = 1\.00000\de\+308"),
    _r("epsilon laplace --epsilon0 1e-300 --delta 1e-5", 0, r"basic\s+1\.00000\de-300"),
    _r("epsilon gaussian --mu 1 --delta 1e-5", 0, r"advanced\s+4\.377179"),
    _r("run cucb-dp -T 20000 -R 2 --audit-trials 0", 0, r"LINEAR regret: with these constants every UCB stays 1",
       "run cucb-dp -T 5000 -R 2 --audit-trials 0"),
    _r("run dp-se -T 5000 -R 2 --audit-trials 0", 0, r"LINEAR regret: the horizon is within DP-SE's first epoch"),
)  # fmt: skip

CUCB = "run cucb " + SMALL_RUN
MAT = "run dpucb-mat " + SMALL_RUN
CASCADE = "run cascade-ucb " + SMALL_RUN

ENV_GRAMMARS: tuple[Row, ...] = (
    # --env of K-armed bandits
    _r("run ts --env bernoulli:", 2, r"--env: spec parameters must be a comma-separated list of numbers"),
    _r("run ts --env bernoulli:nan,0.5", 2, r"--env: probs\[0\] must be a number, got NaN"),
    _r("run ts --env truncexp:inf,1", 2, r"--env: "),
    _r("run ts --env truncexp:-1,1", 2, r"--env: "),
    _r("run ts --env bernoulli:" + ",".join(["0.5"] * 10001), 2, r"--env: spec must list at most 10000 arms, got 10001"),
    _r("run ts --env nocolon", 2, r"--env: spec must look like"),
    _r("tune ts --target-mu 1 --env bernoulli:0.5x3", 2, r"--env: spec parameter '0\.5x3' is not a number"),
    # top-k, paths and super-arms
    _r(f"{CUCB} --env topk:k=0,means=0.5x4", 2, r"--env: k must be an integer in \[1, 10000\], got '0'"),
    _r(f"{CUCB} --env topk:k=2,means=0.5x-1", 2, r"--env: the repeat count in means must be an integer >= 1, got '-1'"),
    _r(f"{CUCB} --env topk:k=2,means=0.5x1e3", 2, r"--env: the repeat count in means must be an integer"),
    _r(f"{CUCB} --env topk:k=2,means=abcx3", 2, r"--env: means must be a number, got 'abc'"),
    _r(f"{CUCB} --env topk:k=2,means=1.5x4", 2, r"--env: "),
    _r(f"{CUCB} --env topk:k=2,means=0.5x4,reward=nosuch", 2, r"--env: "),
    _r(f"{CUCB} --env topk:k=2,means=0.5x4,k=3", 2, r"--env: spec parameter 'k' given twice"),
    _r(f"{CUCB} --env topk:k=2,means=0.5x4,extra=1", 2, r"--env: topk has no parameter\(s\) \['extra'\]"),
    _r(f"{CUCB} --env topk:k=2", 2, r"--env: topk needs the parameter means="),
    _r(f"{CUCB} --env topk:k=5,means=0.5x4", 2, r"--env: "),
    _r(f"{CUCB} --env paths:k=4,paths=1000000000", 2, r"--env: paths must be an integer in \[2, 10000\]"),
    _r(f"{CUCB} --env paths:k=100,paths=1000", 2, r"--env: paths x k = 1,000 x 100 = 100,000 arms, more than the limit"),
    _r(f"{CUCB} --env paths:k=4,paths=4,gap=2", 2, r"--env: gap must be in \[0, 1\], got '2'"),
    _r(f"{CUCB} --env paths:k=4,paths=4,gap=nan", 2, r"--env: gap must be in \[0, 1\], got 'nan'"),
    _r(f"{CUCB} --env superarms:sets=0_99999999999,means=0.5x4", 2, r"--env: sets must be an integer in \[0, 9999\]"),
    _r(f"{CUCB} --env superarms:sets=0_1/2_3,means=0.5x3", 2, r"--env: "),
    # matroids
    _r(f"{MAT} --env matroid-linear:vectors=1_0/0_1_1,means=0.5x2", 2, r"--env: vectors must be"),
    _r(f"{MAT} --env matroid-linear:vectors=" + "_".join(["1"] * 2000) + ",means=0.5", 2,
       r"--env: one of the vectors has 2,000 entries, more than the limit 1,000"),
    _r(f"{MAT} --env matroid-linear:e2", 2, r"--env: matroid-linear knows the named instance 'e1', got 'e2'"),
    _r(f"{MAT} --env matroid-uniform:k=1000000,means=0.5x4", 2, r"--env: k must be an integer in \[1, 10000\]"),
    _r(f"{MAT} --env matroid-graphic:vertices=1000000000,edges=0-1,means=0.5", 2,
       r"--env: vertices must be an integer in \[1, 10000\]"),
    _r(f"{MAT} --env matroid-graphic:vertices=3,edges=0-5,means=0.5", 2, r"--env: "),
    _r(f"{MAT} --env matroid-partition:blocks=0_1,caps=1,means=0.5x2", 2, r"--env: "),
    _r(f"{MAT} --env matroid-partition:blocks=" + "_".join(["0"] * 20000) + ",caps=1,means=0.5", 2,
       r"--env: blocks has 20,000 entries, more than the limit 10,000"),
    # MovieLens: sizes and files
    _r(f"{MAT} --env movielens-like:items=100,users=1000000", 2,
       r"--env: users x items = 1,000,000 x 100 = 100,000,000 pool entries, more than the limit 2,000,000"),
    _r(f"{MAT} --env movielens-like:items=1,users=10", 2, r"--env: items must be an integer in \[2, 10000\]"),
    _r(f"{MAT} --env movielens-like:seed=-1", 2, r"--env: seed must be an integer in \[0, "),
    _r(f"{MAT} --env movielens:ratings=/etc,movies=/etc", 2, r"--env: ratings: '/etc' is not a regular file"),
    _r(f"{MAT} --env movielens:ratings=/dev/zero,movies=/dev/zero", 2,
       r"--env: ratings: '/dev/zero' is not a regular file"),
    _r(f"{MAT} --env movielens:ratings=README.md,movies=README.md", 2, r"--env: ratings file line 1: expected"),
    _r(f"{MAT} --env movielens:movies=x", 2, r"--env: movielens needs the parameter ratings="),
    # cascades
    _r(f"{CASCADE} --env cascade:l=1000000000,k=4", 2, r"--env: cascade l must be an integer in \[1, 10000\]"),
    _r(f"{CASCADE} --env cascade:l=20,k=20", 2, r"--env: k must be in \[1, l - 1\]"),
    _r(f"{CASCADE} --env cascade:l=20,k=4,p=nan", 2, r"--env: cascade p must be a finite number, got 'nan'"),
    _r(f"{CASCADE} --env cascade:k=4,means=0.2x4/0.05x1000000000", 2,
       r"--env: cascade means has 1,000,000,004 entries \(repeat counts included\)"),
    _r(f"{CASCADE} --env topk:k=2,means=0.5x4", 2, r"--env: the cascade algorithms play ordered lists"),
    # products of sizes: refused with the estimate before anything is allocated
    _r("run cucb --env topk:k=4,means=0.5x10000 -T 1000000 -R 10", 2,
       r"--horizon x --reps x arms = 1e\+11 arm-rounds, more than the limit 5e\+10"),
    _r("run cucb --env topk:k=4,means=0.5x10000 -T 100 -R 10000", 2,
       r"repetitions x arms = 10,000 x 10,000 = 1e\+08 state entries per array, more than the limit 1e\+07"),
    _r("run cucb --env topk:k=4,means=0.5x10000 -T 1000 -R 2 --audit-trials 1000000", 2,
       r"audit horizon x 2 --audit-trials x arms = .* arm-rounds, more than the limit"),
    _r("tune ts --target-mu 1 --env bernoulli:" + ",".join(["0.5"] * 10000) + " -T 100000 -R 100", 2,
       r"repetitions x arms = 2,000 x 10,000 = 2e\+07 state entries per array, more than the limit 1e\+07"),
    _r("compare cucb cucb-ldp2 --env topk:k=4,means=0.5x10000 -T 1000000 -R 5", 2,
       r"--horizon x --reps x algorithms x arms = 1e\+11 arm-rounds, more than the limit"),
    _r("run cucb -T 500 -R 2 --audit-trials 0 --env topk:k=4,means=0.5x9990/0.7x10", 0, r"m = 10000 arms",
       "run cucb --env topk:k=4,means=0.5x90/0.7x10 -T 500 -R 2 --audit-trials 0", r"m = 100 arms"),
)  # fmt: skip

OUTPUT_PATHS: tuple[Row, ...] = (
    _r(f"run ts --plot /dev/null/x.png {SMALL_RUN}", 2, r"--plot: directory '/dev/null' does not exist"),
    _r(f"run ts --plot /tmp {SMALL_RUN}", 2, r"--plot must end in \.png, \.pdf or \.svg, got '/tmp'"),
    _r("epsilon gaussian --mu 1 --delta 1e-5 --plot /proc/self/x.png", 2, r"--plot: (cannot write '/proc/self/x\.png'|directory '/proc/self' is not writable)"),
    _r("audit gaussian --sigma 1 --plot /sys/x.png", 2, r"--plot: cannot write '/sys/x\.png'"),
    _r("tune ts --target-mu 1 --plot /proc/x.pdf", 2, r"--plot: cannot write '/proc/x\.pdf'"),
    _r("compare ucb1 --plot /proc/x.svg", 2, r"--plot: cannot write '/proc/x\.svg'"),
    _r(f"epsilon gaussian --mu 1 --delta 1e-5 --plot {LONG_NAME}", 2, r"--plot: cannot write .*: File name too long"),
    _r("epsilon gaussian --mu 1 --delta 1e-5", 3, FULL_DISK, stdout="/dev/full"),
    _r("audit gaussian --sigma 1 --trials 1000", 3, FULL_DISK,
       stdout="/dev/full"),
    _r(f"run ts {SMALL_RUN} --json", 3, FULL_DISK, stdout="/dev/full"),
    _r("list", 3, FULL_DISK, stdout="/dev/full"),
    _r("--help", 3, FULL_DISK, stdout="/dev/full"),
    _r("epsilon ts -T 100000 -N 5 -b 100 -c 10 --delta 1e-6", 0, r"best\s+95\.62146\d",
       env={"PYTHONIOENCODING": "ascii"}),
    _r("audit gaussian --sigma 1 --trials 1000", 0, r"mu >= ", env={"PYTHONIOENCODING": "ascii"}),
    _r(f"run ts {SMALL_RUN}", 0, r"\+/- ", env={"PYTHONIOENCODING": "koi8-r", "LC_ALL": "C"}),
    _r("audit gaussian --sigma 1 --trials 1000 --plot /tmp/dpaudit-audit.png", 0, r"plot written to /tmp/dpaudit-audit\.png"),
)  # fmt: skip

ROWS: tuple[Row, ...] = (
    # certified numbers in milliseconds (closed forms)
    _r("epsilon gaussian --mu 1 --delta 1e-5 --steps 1000000", 0, r"gdp\s+5\.042639e\+05"),
    _r("epsilon gaussian --mu 1 --delta 1e-5 --steps 10000000", 0, r"gdp\s+5\.013486e\+06"),
    _r("epsilon gaussian --mu 1 --delta 1e-5 --steps 100000000", 0, r"gdp\s+5\.004265e\+07"),
    _r("epsilon gaussian --mu 0.001 --steps 1000000000 --delta 1e-10", 0, r"best\s+700\.252314"),
    _r("run ts --prepulls 0 --variance-scale 1 --audit-trials 0", 0, r"mu = 223\.605680-GDP",
       "run ts --prepulls 0 --variance-scale 1 --audit-trials 0 -T 2000 -R 2",
       r"mu = 31\.614870-GDP over 1999 private rounds"),
    # sizes that would not fit: refused up front
    _r("audit gaussian --sigma 1 --trials 1000000000", 2,
       r"--trials must be an integer in \[100, 10000000\]"),
    _r("audit randomized-response --epsilon 1 --categories 1000000000", 2,
       r"--categories must be an integer in \[2, 10000\]"),
    _r("audit rnm-laplace --scale 1 --arms 1000000000", 2, r"--arms must be an integer in \[2, 1000\]"),
    _r("run ts -R 1000000000", 2, r"--reps must be an integer in \[1, 100000\]"),
    _r("run ts --audit-trials 10000000000000", 2, r"--audit-trials must be an integer in \[0, 10000000\]"),
    _r("tune ts --target-mu 1 -R 1000000000", 2, r"--reps must be an integer in \[1, 100000\]"),
    _r("run ts -T 1000000000000", 2, r"--horizon must be an integer in \[2, 1000000000\]"),
    _r("run ts -T 1000000000 -R 100", 2, r"--horizon x --reps = 1e\+11 rounds, more than the limit 1e\+10"),
    _r("audit cascade --positions 1000000 --epsilon 1", 2, r"--positions must be an integer in \[1, 10000\]"),
    _r("audit cascade --positions 10000 --epsilon 1 --trials 10000000", 2,
       r"= 1e\+11 array elements, more than the limit 1e\+10"),
    _r("audit rnm-laplace --scale 1 --epoch-length 1000000", 2, r"would search 1000000 gaps"),
    _r("audit gaussian --sigma 1 --trials 1e7 --batch-size 1", 2, r"= 10000000 batches, more than the limit"),
    _r("tune ts --target-mu 1 --arms 1000000", 2, r"--arms must be an integer in \[2, 10000\]"),
    _r("audit rnm-gaussian --sensitivities 1 --sigmas " + ",".join(["1"] * 101), 2,
       r"--sigmas must have at most 100 entries, got 101"),
    _r("audit rnm-gaussian --sensitivities 1 --sigmas " + ",".join(["1"] * 31), 2,
       r"--sigmas has 31 candidates: searching .* limited to 30"),
    # numerics that overflowed or divided by zero
    _r("epsilon laplace --epsilon0 800 --delta 1e-5", 0, r"best\s+799\.99998"),
    _r("epsilon ts -T 1000 -N 2 -b 1 -c 1 --epsilon 5000", 0, r"best\s+4\.940656e-324"),
    _r("run ts --env truncexp:0.1,1000 --audit-trials 0", 0, r"pseudo-regret",
       "run ts --env truncexp:0.1,1000 --audit-trials 0 -T 2000 -R 2"),
    # output paths checked before the work
    _r(f"list --plot {NO_DIR}", 2, r"unrecognized arguments: --plot"),
    _r(f"run ts --plot {NO_DIR}", 2, PLOT_MISSING),
    _r(f"tune ts --target-mu 1 --plot {NO_DIR}", 2, PLOT_MISSING),
    _r(f"epsilon gaussian --mu 1 --delta 1e-5 --plot {NO_DIR}", 2, PLOT_MISSING),
    _r(f"epsilon laplace --epsilon0 1 --delta 1e-5 --plot {NO_DIR}", 2, PLOT_MISSING),
    _r(f"epsilon rnm-gaussian --sensitivities 1 --sigmas 1,2 --delta 1e-5 --plot {NO_DIR}", 2, PLOT_MISSING),
    _r(f"epsilon ts -T 1000 -N 2 --delta 1e-5 --plot {NO_DIR}", 2, PLOT_MISSING),
    _r(f"audit gaussian --sigma 1 --plot {NO_DIR}", 2, PLOT_MISSING),
    _r(f"audit laplace --scale 1 --plot {NO_DIR}", 2, PLOT_MISSING),
    _r(f"audit randomized-response --epsilon 1 --plot {NO_DIR}", 2, PLOT_MISSING),
    _r(f"audit rnm-laplace --scale 1 --plot {NO_DIR}", 2, PLOT_MISSING),
    _r(f"audit rnm-gaussian --sensitivities 1 --sigmas 1,2 --plot {NO_DIR}", 2, PLOT_MISSING),
    _r(f"audit cascade --positions 3 --epsilon 1 --plot {NO_DIR}", 2, PLOT_MISSING),
    # strict JSON (infinities as the strings "inf"/"-inf")
    _r("audit cascade --positions 3 --epsilon 1 --trials 20000 --json", 1, r'"exact_loss": "inf"'),
    # contradictions
    _r("run ts --audit-horizon 100000 -T 2000", 2, r"--audit-horizon must be in \[2, 2000\]"),
    _r("audit cascade --positions 3 --click 100 --epsilon 1", 2, r"--click must be in \[1, --positions=3\]"),
    _r("audit cascade --positions 3 --click-prime 4 --epsilon 1", 2,
       r"--click-prime must be in \[1, --positions=3\]"),
    # integers written as floats; version; plain numbers; empty values
    _r("audit gaussian --sigma 1 --trials 1e6", 0, r"1,000,000 trials",
       "audit gaussian --sigma 1 --trials 1e4", r"10,000 trials"),
    _r("--version", 0, r"^dpaudit \d+\.\d+\S*"),
    _r("run ts --env bernoulli:1.5", 2, r"--env: probs\[0\] must be in \[0, 1\], got 1\.5$"),
    _r("epsilon gaussian --mu 1 --delta 1e-5 --plot ''", 2, r"--plot must name a file"),
    _r("epsilon rnm-gaussian --sensitivities 1,,1 --sigmas 1,1,1 --delta 1e-5", 2, r"empty entry in '1,,1'"),
    _r("audit rnm-gaussian --sensitivities 1,,1 --sigmas 1,1,1", 2, r"empty entry in '1,,1'"),
    # bad arguments: refused before numpy/SciPy are imported
    _r("epsilon gaussian --mu abc --delta 1e-5", 2, r"--mu must be a number"),
    _r("audit gaussian --sigma -1", 2, r"--sigma must be in \(0, inf\)"),
    _r("tune ts --target-mu nan", 2, r"--target-mu must be in \(0, inf\)"),
    _r("run ts --variance-scale 0.5", 2, r"--variance-scale"),
    _r("nosuch", 2, r"invalid choice: 'nosuch'"),
    *ISSUE_21,
    *ENV_GRAMMARS,
    *OUTPUT_PATHS,
)
