"""The README's DP-SGD / DP-FTRL section (issue 23) prints what the commands print: the `epsilon dpsgd`
table verbatim, the calibration's answer line (its timing aside), and the accountant example."""

from __future__ import annotations

import re
from pathlib import Path

from dpaudit.cli.main import main

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _block(command: str) -> list[str]:
    """The lines the README shows after ``$ command`` up to the end of its code block."""
    start = README.index(f"$ {command}\n") + len(command) + 3
    return README[start:README.index("```", start)].rstrip("\n").splitlines()


def test_epsilon_dpsgd_block(capsys):
    cmd = "dpaudit epsilon dpsgd --sampling-rate 0.01 --noise-multiplier 1 --steps 1000 --delta 1e-5"
    assert main(cmd.split()[1:]) == 0
    assert capsys.readouterr().out.rstrip("\n").splitlines() == _block(cmd)


def test_calibrate_dpsgd_block(capsys):
    cmd = "dpaudit calibrate dpsgd --target-epsilon 2 --delta 1e-5 --sampling-rate 0.01 --steps 1000"
    assert main(cmd.split()[1:]) == 0
    out = capsys.readouterr().out.rstrip("\n").splitlines()
    shown = _block(cmd)
    assert out[0] == shown[0]
    untimed = re.compile(r"; \d+ evaluations, [0-9.]+ s$")
    assert untimed.sub("", out[1]) == untimed.sub("", shown[1])


def test_accountant_example():
    start = README.index("from dpaudit.accounting import Accountant\n")
    code = README[start:README.index("```", start)]
    printed: list[str] = []
    exec(compile(code, "README", "exec"), {"print": lambda *a: printed.append(" ".join(map(str, a)))})  # noqa: S102
    expected = re.findall(r"# (\S+ \S+)\n", code)
    assert printed == expected and len(printed) == 2
