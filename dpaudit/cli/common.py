"""Shared pieces of the command line: one-line errors, parsers for numbers, lists and output
paths, strict JSON output.

Every parser here raises ``argparse.ArgumentTypeError`` with one line naming the option and its
valid range; :class:`Parser` turns it into :class:`UsageError` (one line, exit status 2) and shows
every option's default in ``--help``.

>>> integer("--reps", 1, 10**4)("1e3"), integer("--reps", 1)("7")
(1000, 7)
>>> integer("--reps", 1, 10**4)("1.5")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: --reps must be an integer in [1, 10000], got '1.5'
>>> jsonable({"a": float("inf"), "b": [1.0, float("-inf")]})
{'a': 'inf', 'b': [1.0, '-inf']}
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from dpaudit.cli.errors import UsageError
from dpaudit.formatting import fmt

__all__ = [
    "UsageError", "Parser", "number", "integer", "number_list", "plot_path", "check_writable", "jsonable",
    "emit_json", "fmt",
    "check_amount", "MAX_STEPS", "MAX_HORIZON", "MAX_REPS", "MAX_ARMS", "MAX_AUDIT_TRIALS", "MAX_WORK",
    "MAX_FLOOR_WORK", "MAX_ARM_ROUNDS", "MAX_STATE", "MAX_LIST", "check_simulation",
]

MAX_STEPS = 10**9
"""The most steps (rounds) a composition may have on ``dpaudit epsilon``."""
MAX_HORIZON = 10**9
MAX_REPS = 10**5
MAX_ARMS = 10**4
MAX_AUDIT_TRIALS = 10**7
MAX_WORK = 10**10
"""Documented limits (docs/cli-limits.md): rounds, repetitions, arms (and categories, positions),
audit trials (``run``: neighbouring-run pairs; ``audit``: mechanism runs), and the work of one
command: T·R rounds of simulation, or trials × output width of an audit (about 10⁷–10⁸ rounds or
10⁸–10⁹ array elements per second here: 10¹⁰ is minutes to hours)."""
MAX_FLOOR_WORK = 10**11
"""The most rounds of a floor measured on the algorithm (``run --audit-floor algorithm``): an
explicit request for the audit's most expensive part, made once and kept
(:mod:`bandits.auditing.kept_floors`). The bound of Thompson sampling's default (both views'
floors) is 9.2·10¹⁰ rounds, measured in 12.5 min here; DP-SE's, 5.2·10¹⁰, in 43 min."""
MAX_ARM_ROUNDS = 5 * 10**10
"""The most arm-rounds (rounds × repetitions × arms) of one simulation or audit: the per-round
work grows with the arms (Gaussian TS at N = 5 meets it at the 10¹⁰-round limit; CUCB-DP over
10⁴ arms runs about 2·10⁶ arm-rounds a second here)."""
MAX_STATE = 10**7
"""The most repetitions × arms of one simulation: every policy keeps several float64 arrays of
that shape (10⁷: 80 MB each)."""
MAX_LIST = MAX_ARMS
"""The most entries of a comma-separated list option (``--sigmas``, ``--sensitivities``)."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (no usage dump) and exit with status 2, and
    whose ``--help`` shows every option's default."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)

    def _print_message(self, message: str, file: Any = None) -> None:
        """As argparse's, but a failed write (``--help > /dev/full``) is raised, not swallowed."""
        if message:
            (file or sys.stderr).write(message)


def terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` finds it (``COLUMNS``, then the
    terminal of stdout, else 80), without importing :mod:`shutil`, whose compression modules
    cost every command a few milliseconds of start-up.

    >>> import os, shutil
    >>> terminal_columns() == shutil.get_terminal_size().columns
    True
    """
    import os

    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Adds "(default: X)" to an option's help unless the help already states its default or the
    default is None / a switch's False; sized to the terminal as argparse's own formatter is."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:  # fmt: skip
        super().__init__(prog, indent_increment, max_help_position,
                         terminal_columns() - 2 if width is None else width)  # fmt: skip

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        quiet = action.default in (None, False, argparse.SUPPRESS) or not action.option_strings
        if quiet or "default" in text:
            return text
        return text + " (default: %(default)s)"


def check_amount(amount: int, what: str, unit: str = "rounds", limit: int = MAX_WORK) -> None:
    """Refuse up front, with the estimate and the limit, work of more than ``limit`` ``unit``."""
    if amount > limit:
        raise UsageError(
            f"{what} = {amount:.3g} {unit}, more than the limit {limit:.0e} "
            "(hours of work on this machine); use smaller sizes"
        )


def check_simulation(horizon: int, reps: int, arms: int, what: str = "--horizon x --reps") -> None:
    """Refuse up front a simulation of more than :data:`MAX_WORK` rounds, :data:`MAX_ARM_ROUNDS`
    arm-rounds or :data:`MAX_STATE` repetitions × arms, with the estimate and the limit;
    ``what`` names the options that make up ``horizon`` × ``reps``."""
    if horizon * reps > MAX_WORK:
        raise UsageError(
            f"{what} = {horizon * reps:.3g} rounds, more than the limit {MAX_WORK:.0e} "
            "(hours of simulation on this machine); use fewer rounds or repetitions"
        )
    if reps * arms > MAX_STATE:
        raise UsageError(
            f"repetitions x arms = {reps:,} x {arms:,} = {reps * arms:.3g} state entries per array, "
            f"more than the limit {MAX_STATE:.0e} (80 MB per array); use fewer repetitions or arms"
        )
    if horizon * reps * arms > MAX_ARM_ROUNDS:
        raise UsageError(
            f"{what} x arms = {horizon * reps * arms:.3g} arm-rounds, more than the limit "
            f"{MAX_ARM_ROUNDS:.0e} (hours of simulation on this machine); "
            "use fewer rounds, repetitions or arms"
        )


def number(
    name: str,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> Callable[[str], float]:
    """An argparse ``type`` that parses a finite float and checks its range, naming the option."""

    def rng() -> str:
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        left = "(" if low_open or low is None else "["
        right = ")" if high_open or high is None else "]"
        return f"{left}{lo}, {hi}{right}"

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number in {rng()}, got {text!r}") from None
        bad = math.isnan(v) or math.isinf(v)
        if low is not None:
            bad = bad or (v <= low if low_open else v < low)
        if high is not None:
            bad = bad or (v >= high if high_open else v > high)
        if bad:
            raise argparse.ArgumentTypeError(f"{name} must be in {rng()}, got {text!r}")
        return v

    return parse


def integer(name: str, low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type`` for an integer in [low, high]; ``1e6`` is accepted when it is an integer."""
    span = f">= {low}" if high is None else f"in [{low}, {high}]"

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            try:
                f = float(text)
            except ValueError:
                f = math.nan
            if not (math.isfinite(f) and f.is_integer()):
                raise argparse.ArgumentTypeError(f"{name} must be an integer {span}, got {text!r}") from None
            v = int(f)
        if v < low or (high is not None and v > high):
            raise argparse.ArgumentTypeError(f"{name} must be an integer {span}, got {text!r}")
        return v

    return parse


def number_list(name: str, low: float = 0.0, max_len: int = MAX_LIST) -> Callable[[str], list[float]]:
    """An argparse ``type`` for a comma-separated list of at most ``max_len`` numbers > ``low``;
    an empty entry (``1,,1``) is refused, not skipped."""

    def parse(text: str) -> list[float]:
        parts = [p.strip() for p in text.split(",")]
        if not any(parts):
            raise argparse.ArgumentTypeError(f"{name} must be a comma-separated list of numbers > {low:g}")
        if len(parts) > max_len:
            raise argparse.ArgumentTypeError(f"{name} must have at most {max_len} entries, got {len(parts)}")
        out = []
        for p in parts:
            if not p:
                raise argparse.ArgumentTypeError(f"{name} has an empty entry in {text!r}")
            try:
                v = float(p)
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"{name} must be a comma-separated list of numbers > {low:g}, got {p!r}") from None
            if not (v > low) or math.isinf(v):
                raise argparse.ArgumentTypeError(f"{name} entries must be in ({low:g}, inf), got {p!r}")
            out.append(v)
        return out

    return parse


def plot_path(name: str = "--plot") -> Callable[[str], str]:
    """An argparse ``type`` for a figure file, checked before any work starts: a non-empty path
    ending in .png, .pdf or .svg whose directory exists and is writable, that can really be
    opened for writing (so a name too long for the file system, a read-only or virtual file
    system such as /proc, or a directory of that name is refused now, not after the work), and
    matplotlib installed (the ``plot`` extra). A file created by the check is removed again."""

    def parse(text: str) -> str:
        import importlib.util
        import os

        if not text.strip():
            raise argparse.ArgumentTypeError(f"{name} must name a file ending in .png, .pdf or .svg, got ''")
        if os.path.splitext(text)[1].lower() not in (".png", ".pdf", ".svg"):
            raise argparse.ArgumentTypeError(f"{name} must end in .png, .pdf or .svg, got {_shown(text)}")
        folder = os.path.dirname(os.path.abspath(text))
        if not os.path.isdir(folder):
            raise argparse.ArgumentTypeError(f"{name}: directory {_shown(folder)} does not exist")
        if not os.access(folder, os.W_OK):
            raise argparse.ArgumentTypeError(f"{name}: directory {_shown(folder)} is not writable")
        check_writable(text, name)
        if importlib.util.find_spec("matplotlib") is None:
            raise argparse.ArgumentTypeError(f"{name} needs matplotlib: pip install 'dpaudit[plot]'")
        return text

    return parse


def _shown(text: str, limit: int = 80) -> str:
    """``repr(text)``, shortened in the middle beyond ``limit`` characters (a message stays one
    readable line)."""
    if len(text) <= limit:
        return repr(text)
    return repr(text[: limit // 2] + "..." + text[-(limit // 2) :]) + f" ({len(text)} characters)"


def check_writable(path: str, name: str) -> None:
    """Open ``path`` for appending (nothing is truncated) and close it again; a file that did
    not exist before is removed. Raises ``argparse.ArgumentTypeError`` naming ``name`` and the
    reason when the file cannot be written."""
    import os

    existed = os.path.lexists(path)
    try:
        with open(path, "ab"):
            pass
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise argparse.ArgumentTypeError(f"{name}: cannot write {_shown(path)}: {why}") from None
    if not existed:
        try:
            os.remove(path)
        except OSError:
            pass


def jsonable(obj: Any) -> Any:
    """``obj`` with NumPy scalars and arrays turned into Python values and every non-finite float
    written as the string ``"inf"``, ``"-inf"`` (or ``"nan"``): strict JSON (RFC 8259 has no
    infinities), and the value is still readable."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if type(obj).__module__ == "numpy":
        obj = obj.tolist() if hasattr(obj, "tolist") else obj.item()
        return jsonable(obj)
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    return obj


def emit_json(obj: Any) -> None:
    """Print ``obj`` as strict JSON (:func:`jsonable`; ``allow_nan=False``)."""
    json.dump(jsonable(obj), sys.stdout, indent=2, sort_keys=False, allow_nan=False)
    sys.stdout.write("\n")
