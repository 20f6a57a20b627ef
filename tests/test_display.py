"""An honest display: a certified upper bound is never printed below its value, a lower bound never
above it, and every number stays one short token from 5e-324 to 1.8e308.

The printed text of ``dpaudit epsilon``, ``dpaudit audit`` and ``dpaudit run`` is compared with the
JSON of the same command (full precision): every certified number read back from the text is at
least its JSON value, every empirical lower bound at most its JSON value.
"""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpaudit.cli.main import main
from dpaudit.formatting import fmt, fmt_down, fmt_up

NUMBER = r"(-?\d+\.\d+(?:e[+-]\d+)?|-?\d+(?:e[+-]\d+)?|inf)"


@settings(max_examples=400, deadline=None)
@given(x=st.floats(allow_nan=False, allow_infinity=False), digits=st.integers(min_value=1, max_value=8))
def test_rounded_up_never_below_rounded_down_never_above(x: float, digits: int) -> None:
    up, down, near = fmt_up(x, digits), fmt_down(x, digits), fmt(x, digits)
    assert float(up) >= x and float(down) <= x
    assert float(down) <= float(near) <= float(up)
    assert max(len(up), len(down)) <= digits + 12, (up, down)  # readable: never 309 digits


def _run(capsys: pytest.CaptureFixture, argv: list[str]) -> tuple[int, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out


def _table(text: str) -> dict[str, float]:
    """method -> printed value of an accounting table (certified rows only)."""
    rows = {}
    for line in text.splitlines():
        m = re.match(rf"\s+(basic|advanced|rdp|gdp|pld|best)\s+{NUMBER}\s", line + " ")
        if m:
            rows[m.group(1)] = float(m.group(2))
    return rows


QUESTIONS = st.one_of(
    st.tuples(st.just("--delta"), st.sampled_from(["1e-300", "1e-12", "1e-6", "1e-3", "0.3"])),
    st.tuples(st.just("--epsilon"), st.sampled_from(["0", "1e-9", "0.5", "3", "40"])),
)
EVENTS = st.one_of(
    st.tuples(st.just("gaussian"), st.just("--mu"),
              st.sampled_from(["1e-320", "1e-150", "1e-6", "0.3", "1", "7.5", "1e3", "1e150"])),
    st.tuples(st.just("laplace"), st.just("--epsilon0"), st.sampled_from(["1e-9", "0.1", "1", "30"])),
)  # fmt: skip


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(event=EVENTS, question=QUESTIONS, steps=st.sampled_from(["1", "7", "1000", "1000000"]))
def test_epsilon_text_is_never_below_its_json(capsys, event, question, steps) -> None:
    kind, option, value = event
    argv = ["epsilon", kind, option, value, "--steps", steps, *question]
    code, text = _run(capsys, argv)
    assert code == 0, argv
    code, out = _run(capsys, [*argv, "--json"])
    data = json.loads(out)
    printed = _table(text)
    for method, bound in data["bounds"].items():
        if bound is not None and method in printed:
            assert printed[method] >= float(bound), (argv, method, printed[method], bound)
    if data["best"]["value"] is not None:
        assert printed["best"] >= float(data["best"]["value"])
    m = re.search(rf"GDP mu = {NUMBER}", text)
    if m and data["mu"] is not None:
        assert float(m.group(1)) >= data["mu"]


def _between(text: str, pattern: str) -> float:
    m = re.search(pattern, text)
    assert m, (pattern, text)
    return float(m.group(1))


@pytest.mark.parametrize("sigma", ["0.3", "1", "7"])
def test_audit_text_bounds_are_on_the_safe_side_of_its_json(capsys, sigma: str) -> None:
    argv = ["audit", "gaussian", "--sigma", sigma, "--trials", "4000"]
    _, text = _run(capsys, argv)
    _, out = _run(capsys, [*argv, "--json"])
    data = json.loads(out)
    assert _between(text, rf"certified\s+: mu = {NUMBER}") >= data["certified"]["mu"]
    assert _between(text, rf"empirical\s+: mu >= {NUMBER}") <= data["empirical"]["mu_lower"]
    assert _between(text, rf"epsilon >= {NUMBER}") <= data["empirical"]["epsilon_lower"]
    lower, upper = data["estimate"]["lower"], data["estimate"]["upper"]
    assert _between(text, rf"mu in \[{NUMBER},") <= lower
    if isinstance(upper, float) and math.isfinite(upper):
        assert _between(text, rf"mu in \[[^,]+, {NUMBER}\]") >= upper


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ["run", "ts", "-T", "2000", "-R", "2", "--audit-trials", "500", "--target-mu", "0.7"],
        ["run", "lazy-ucb", "-T", "2000", "-R", "2", "--audit-trials", "0", "--epsilon", "0.3"],
    ],
)
def test_run_text_is_never_below_its_json(capsys, argv: list[str]) -> None:
    _, text = _run(capsys, argv)
    _, out = _run(capsys, [*argv, "--json"])
    data = json.loads(out)
    privacy = data["privacy"]
    if privacy["mu"] is not None:
        assert _between(text, rf"  mu = {NUMBER}-GDP") >= privacy["mu"]
    assert _between(text, rf"  epsilon = {NUMBER} at delta = \S+ \(by") >= privacy["epsilon"]
    if privacy["epsilon_pure"] is not None:
        assert _between(text, rf"  epsilon = {NUMBER} at delta = 0") >= privacy["epsilon_pure"]
    audit = data["audit"]
    if audit is not None:
        emp = audit["empirical"]
        if emp.get("mu_lower") is not None:
            assert _between(text, rf"mu >= {NUMBER}") <= emp["mu_lower"]
        assert _between(text, rf"epsilon >= {NUMBER} at delta") <= emp["epsilon_lower"]
