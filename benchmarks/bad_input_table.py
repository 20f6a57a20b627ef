"""Issue 14's table of hostile inputs, re-run: exit status, time, peak memory and message of each row.

Run: ``python benchmarks/bad_input_table.py`` (prints the markdown table;
``--update docs/cli-limits.md`` also rewrites the table between the markers of that file;
``--only TEXT`` runs the rows whose command contains TEXT).

Every row is a fresh ``python -m dpaudit ...`` of this checkout (``PYTHONPATH`` = the repo
root) under ``/usr/bin/time -f "%e %M"`` (wall seconds, peak RSS), with an address-space limit
of 8 GiB and a timeout of 120 s so that a regression cannot take the machine down. A row passes
when its exit status is the expected one (0, or 1 for a ``violated`` audit, with the expected
text in the output; 2 with exactly one stderr line ``dpaudit: error: ...``), no traceback is
printed, and it took at most 10 s and 1 GB. The last column says what was printed: the error
line, or the line of the answer that matters.

:data:`ROWS` is shared with ``tests/test_cli_bounds.py``, which runs the same rows in-process
(the refused ones as they are, the ones that do work on smaller inputs).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIME_LIMIT_S = 10.0
MEMORY_LIMIT_KB = 1 << 20  # 1 GiB
BEGIN, END = "<!-- bad-input-table:begin -->", "<!-- bad-input-table:end -->"


@dataclass(frozen=True)
class Row:
    """One command line of the table.

    Attributes:
        args: the arguments after ``dpaudit``.
        exit: the expected exit status (0 answered, 1 audit violated, 2 refused).
        expect: a regular expression the answer (exit 0/1: stdout) or the error line (exit 2)
            must match.
        small: for the in-process tests, the same row on smaller inputs (None: run ``args``
            as they are; only rows that do real work need one).
        small_expect: what the answer on ``small`` must match (default ``expect``).
    """

    args: tuple[str, ...]
    exit: int
    expect: str
    small: tuple[str, ...] | None = None
    small_expect: str | None = None

    @property
    def command(self) -> str:
        """The command line, a long list shown as its first entries and its length."""

        def show(a: str) -> str:
            if a.count(",") > 8:
                return ",".join(a.split(",")[:3]) + f",... ({a.count(',') + 1} entries)"
            return a if a and " " not in a else repr(a)

        return "dpaudit " + " ".join(show(a) for a in self.args)


def _r(cmd: str, exit: int, expect: str, small: str | None = None, small_expect: str | None = None) -> Row:
    import shlex

    small_args = None if small is None else tuple(shlex.split(small))
    return Row(tuple(shlex.split(cmd)), exit, expect, small_args, small_expect)


NO_DIR = "/nonexistent/dir/x.png"
PLOT_MISSING = r"--plot: directory '/nonexistent/dir' does not exist"

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
)


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))


def measure(row: Row, timeout: float = 120.0) -> dict:
    """Run ``row`` in a fresh process; exit status, seconds, peak KB, stdout, stderr and verdict."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        cmd = ["/usr/bin/time", "-q", "-f", "%e %M", "-o", t.name, sys.executable, "-m", "dpaudit", *row.args]
        try:
            p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout,
                               stdin=subprocess.DEVNULL, preexec_fn=_limit_memory)  # fmt: skip
            code, out, err = p.returncode, p.stdout, p.stderr
            secs, kb = (float(x) for x in t.read().split()[-2:])
        except subprocess.TimeoutExpired as exc:
            code, secs, kb = None, timeout, float("nan")
            out, err = str(exc.stdout or ""), str(exc.stderr or "")
    return {"row": row, "exit": code, "seconds": secs, "kb": kb, "out": out, "err": err,
            **judge(row, code, out, err, secs, kb)}  # fmt: skip


def judge(row: Row, code: int | None, out: str, err: str, secs: float = 0.0, kb: float = 0.0) -> dict:
    """Whether a result is what ``row`` promises (module docstring) and the line to show."""
    problems = []
    if code != row.exit:
        problems.append(f"exit {code}, expected {row.exit}")
    if "Traceback" in err or "Traceback" in out:
        problems.append("traceback")
    if code == 2:
        lines = err.strip().splitlines()
        shown = lines[0] if lines else ""
        if len(lines) != 1 or not shown.startswith("dpaudit: error: "):
            problems.append(f"{len(lines)} stderr lines")
        text = shown
    else:
        m = re.search(row.expect, out, re.MULTILINE)
        shown = m.group(0) if m else (out.strip().splitlines() or [""])[-1]
        text = out
    if not re.search(row.expect, text, re.MULTILINE):
        problems.append(f"no match for {row.expect!r}")
    if secs > TIME_LIMIT_S:
        problems.append(f"{secs:.1f} s > {TIME_LIMIT_S:g} s")
    if kb == kb and kb > MEMORY_LIMIT_KB:
        problems.append(f"{kb / 1024:.0f} MB > 1 GB")
    return {"ok": not problems, "problems": problems, "shown": shown.strip()}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(results: list[dict]) -> str:
    head = ["| command | exit | time | peak memory | ok | message / answer |", "|---|---|---|---|---|---|"]
    body = []
    for r in results:
        ok = "yes" if r["ok"] else "NO: " + "; ".join(r["problems"])
        mem = "-" if r["kb"] != r["kb"] else f"{r['kb'] / 1024:.0f} MB"
        body.append(
            f"| `{_cell(r['row'].command)}` | {r['exit']} | {r['seconds']:.2f} s | {mem} | {ok} | "
            f"{_cell(r['shown'])} |"
        )
    return "\n".join(head + body)


def update(path: Path, text: str) -> None:
    doc = path.read_text()
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"{path} has no {BEGIN} ... {END} markers")
    start, stop = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    path.write_text(doc[:start] + "\n" + text + "\n" + doc[stop:])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", type=Path, help="rewrite the table between the markers of this file")
    ap.add_argument("--only", default=None, help="run only the rows whose command contains this text")
    args = ap.parse_args(argv)
    rows = [r for r in ROWS if args.only is None or args.only in r.command]
    results = []
    for row in rows:
        res = measure(row)
        results.append(res)
        print(f"{'ok ' if res['ok'] else 'BAD'} {res['seconds']:6.2f} s {res['kb'] / 1024:7.0f} MB  "
              f"{row.command}", file=sys.stderr)  # fmt: skip
    bad = sum(not r["ok"] for r in results)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    text = (
        table(results)
        + f"\n\n{len(results) - bad} of {len(results)} rows as promised (exit 0/1 with the answer, or 2 with "
        f"one line; <= {TIME_LIMIT_S:g} s and 1 GB). Measured {time.strftime('%Y-%m-%d %H:%M')}, load "
        f"average {load} on {os.cpu_count()} cores, Python {sys.version.split()[0]}."
    )
    print(text)
    if args.update is not None:
        update(args.update, text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
