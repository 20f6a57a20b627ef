"""Every registered algorithm computes exactly the pinned numbers (``tests/pinned_runs.py``)."""

from __future__ import annotations

import json
import math

import pytest

from tests.pinned_runs import DATA, keys, pin

PINNED = json.loads(DATA.read_text())


def test_every_registered_algorithm_is_pinned() -> None:
    assert sorted(PINNED) == keys()


def _same(a: object, b: object) -> bool:
    """Equal, NaN equal to NaN, and floats equal to 12 significant digits: NumPy picks its SIMD
    exp/log kernels by the CPU's instruction set, so the last bits of an accounting value can
    differ between machines (the PLD ε of cucb-dp moved by 3 ulps from one CPU to another)."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)
    return a == b


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(PINNED))
def test_run_reproduces_its_pinned_numbers(key: str) -> None:
    now = pin(key)
    want = PINNED[key]
    assert sorted(now) == sorted(want), "the report's numbers moved: " + ", ".join(
        sorted(set(now) ^ set(want))[:10])
    changed = [f"{k}: {want[k]!r} -> {now[k]!r}" for k in want if not _same(now[k], want[k])]
    head = f"{len(changed)} pinned numbers of 'dpaudit run {key}' changed:\n"
    assert not changed, head + "\n".join(changed[:20])
