"""Shared pieces of the command line: one-line errors, parsers for numbers and lists, output."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any, NoReturn


class UsageError(Exception):
    """Bad command-line input: printed as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (no usage dump) and exit with status 2."""

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        raise UsageError(message)


def number(
    name: str,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
):
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


def integer(name: str, low: int):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {low}, got {text!r}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {low}, got {text!r}")
        return v

    return parse


def number_list(name: str, low: float = 0.0):
    def parse(text: str) -> list[float]:
        parts = [p.strip() for p in text.split(",") if p.strip()]
        if not parts:
            raise argparse.ArgumentTypeError(f"{name} must be a comma-separated list of numbers > {low:g}")
        out = []
        for p in parts:
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


def emit_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, sort_keys=False, default=_default)
    sys.stdout.write("\n")


def _default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def fmt(v: float | None) -> str:
    if v is None:
        return "n/a"
    if v == 0:
        return "0"
    if abs(v) >= 1e5 or abs(v) < 1e-3:
        return f"{v:.6e}"
    return f"{v:.6f}"
