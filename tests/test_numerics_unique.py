"""dpaudit.numerics.unique is numpy.unique (values and inverse indices) without loading numpy.ma."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpaudit.numerics import unique

_FLOATS = arrays(np.float64, st.integers(0, 60), elements=st.floats(-1e3, 1e3, allow_nan=False).map(round))
_INTS = arrays(np.int64, st.integers(0, 60), elements=st.integers(-5, 5))


@settings(max_examples=200, deadline=None)
@given(st.one_of(_FLOATS, _INTS))
def test_unique_is_numpys(a: np.ndarray) -> None:
    u, inv = unique(a, return_inverse=True)
    nu, ninv = np.unique(a, return_inverse=True)
    assert np.array_equal(u, nu) and u.dtype == nu.dtype
    assert np.array_equal(inv, ninv.reshape(-1))
    assert np.array_equal(unique(a), nu)


def test_a_tiny_run_does_not_load_numpy_ma() -> None:
    code = ("import contextlib, io, json, sys\nfrom dpaudit.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['run', 'ts', '-T', '10', '-R', '1', '--audit-trials', '0'])\n"
            "print(json.dumps(sorted(m for m in sys.modules\n"
            "                        if m == 'numpy.ma' or m.startswith('concurrent'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.strip().splitlines()[-1]) == []
