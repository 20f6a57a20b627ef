"""The tables of hostile inputs (issues 14 and 21), re-run: exit status, time, peak memory and message
of each row.

Run: ``python benchmarks/bad_input_table.py`` (prints the markdown table;
``--update docs/cli-limits.md`` also rewrites the table between the markers of that file;
``--only TEXT`` runs the rows whose command contains TEXT).

Every row is a fresh ``python -m dpaudit ...`` of this checkout (``PYTHONPATH`` = the repo
root) under ``/usr/bin/time -f "%e %U %S %M"`` (wall and CPU seconds, peak RSS), with an
address-space limit of 8 GiB and a timeout of 120 s so that a regression cannot take the machine
down. A row passes when its exit status is the expected one (0, or 1 for a ``violated`` audit,
with the expected text in the output; 2 for bad input or 3 for an environment failure such as a
full disk, with exactly one stderr line ``dpaudit: error: ...``), no traceback is printed, and it
took at most 10 s of CPU and 1 GB (the wall time is shown too: it depends on the load of the
shared machine). The last column says what was printed: the error line, or the line of the answer
that matters. A row may set environment variables (``PYTHONIOENCODING=ascii``) and send stdout
to a file (``> /dev/full``).

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
from pathlib import Path

try:
    from benchmarks.hostile_inputs import ROWS, Row
except ModuleNotFoundError:  # run as a script: benchmarks/ itself is on the path
    from hostile_inputs import ROWS, Row  # type: ignore[no-redef]

__all__ = ["ROOT", "ROWS", "Row", "measure", "judge", "table", "update", "main"]

ROOT = Path(__file__).resolve().parents[1]
TIME_LIMIT_S = 10.0
MEMORY_LIMIT_KB = 1 << 20  # 1 GiB
BEGIN, END = "<!-- bad-input-table:begin -->", "<!-- bad-input-table:end -->"


def _limit_memory() -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))


def measure(row: Row, timeout: float = 120.0) -> dict:
    """Run ``row`` in a fresh process; exit status, seconds, peak KB, stdout, stderr and verdict."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    env.update(row.env)
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        cmd = ["/usr/bin/time", "-q", "-f", "%e %U %S %M", "-o", t.name, sys.executable, "-m", "dpaudit",
               *row.args]  # fmt: skip
        sink = open(row.stdout, "w") if row.stdout else None  # closed below
        try:
            p = subprocess.run(cmd, cwd=ROOT, env=env, text=True, errors="replace", timeout=timeout,
                               stdout=sink or subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, preexec_fn=_limit_memory)  # fmt: skip
            code, out, err = p.returncode, p.stdout or "", p.stderr
            secs, user, system, kb = (float(x) for x in t.read().split()[-4:])
            cpu = user + system
        except subprocess.TimeoutExpired as exc:
            code, secs, cpu, kb = None, timeout, timeout, float("nan")
            out, err = str(exc.stdout or ""), str(exc.stderr or "")
        finally:
            if sink is not None:
                sink.close()
    return {"row": row, "exit": code, "seconds": secs, "cpu": cpu, "kb": kb, "out": out, "err": err,
            **judge(row, code, out, err, cpu, kb)}  # fmt: skip


def judge(row: Row, code: int | None, out: str, err: str, secs: float = 0.0, kb: float = 0.0) -> dict:
    """``secs``: the CPU seconds the row may spend (:data:`TIME_LIMIT_S`)."""
    """Whether a result is what ``row`` promises (module docstring) and the line to show."""
    problems = []
    if code != row.exit:
        problems.append(f"exit {code}, expected {row.exit}")
    if "Traceback" in err or "Traceback" in out:
        problems.append("traceback")
    if code in (2, 3):
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
        problems.append(f"{secs:.1f} s of CPU > {TIME_LIMIT_S:g} s")
    if kb == kb and kb > MEMORY_LIMIT_KB:
        problems.append(f"{kb / 1024:.0f} MB > 1 GB")
    return {"ok": not problems, "problems": problems, "shown": shown.strip()}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(results: list[dict]) -> str:
    head = ["| command | exit | CPU (wall) | peak memory | ok | message / answer |",
            "|---|---|---|---|---|---|"]  # fmt: skip
    body = []
    for r in results:
        ok = "yes" if r["ok"] else "NO: " + "; ".join(r["problems"])
        mem = "-" if r["kb"] != r["kb"] else f"{r['kb'] / 1024:.0f} MB"
        body.append(
            f"| `{_cell(r['row'].command)}` | {r['exit']} | {r['cpu']:.2f} s ({r['seconds']:.1f} s) | {mem} "
            f"| {ok} | {_cell(r['shown'])} |"
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
        print(f"{'ok ' if res['ok'] else 'BAD'} {res['cpu']:6.2f} s CPU {res['seconds']:6.2f} s "
              f"{res['kb'] / 1024:7.0f} MB  {row.command}", file=sys.stderr)  # fmt: skip
    bad = sum(not r["ok"] for r in results)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    text = (
        table(results)
        + f"\n\n{len(results) - bad} of {len(results)} rows as promised (exit 0/1 with the answer, or 2/3 "
        f"with one line; <= {TIME_LIMIT_S:g} s of CPU and 1 GB). Measured {time.strftime('%Y-%m-%d %H:%M')}, "
        f"load average {load} on {os.cpu_count()} cores, Python {sys.version.split()[0]}."
    )
    print(text)
    if args.update is not None:
        update(args.update, text)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
