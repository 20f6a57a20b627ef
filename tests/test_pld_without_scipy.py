"""The PLD accountant's pieces written out so that a run does not load dp-accounting, ``scipy.fft``
or ``scipy.signal``: each against the library it replaces, and the run that no longer loads them."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaudit.accounting.pld_steps import dense_pmfs, dp_parameters_pmf, k_ary_pmf, laplace_pmf
from dpaudit.numerics import geometric_suffix_sums, next_fast_len

ROOT = Path(__file__).resolve().parents[1]


def test_next_fast_len_is_scipys() -> None:
    import scipy.fft

    rng = np.random.default_rng(0)
    sizes = list(range(1, 5000)) + [int(n) for n in rng.integers(5000, 10**11, 300)]
    assert [next_fast_len(n) for n in sizes] == [scipy.fft.next_fast_len(n) for n in sizes]


def test_numpy_fft_gives_scipys_bits_in_both_precisions() -> None:
    """The accountant's FFTs moved from scipy.fft to numpy.fft: the same pocketfft, the same bits."""
    import scipy.fft

    rng = np.random.default_rng(1)
    for n, dtype in itertools.product((7, 1000, 6125, 77777), (np.float64, np.longdouble)):
        x = rng.random(n // 2 + 1).astype(dtype)
        assert np.array_equal(np.fft.rfft(x, n), scipy.fft.rfft(x, n))
        spec = np.fft.rfft(x, n)
        assert np.array_equal(np.fft.irfft(spec, n), scipy.fft.irfft(spec, n))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3000), st.sampled_from([0.0, 1e-300, 0.3, math.exp(-1e-4), math.exp(-0.02), 1.0]),
       st.integers(0, 2**32 - 1))  # fmt: skip
def test_geometric_suffix_sums_is_the_first_order_filter(n: int, r: float, seed: int) -> None:
    from scipy import signal

    x = np.random.default_rng(seed).random(n) * np.exp(-np.random.default_rng(seed + 1).uniform(0, 40, n))
    ref = signal.lfilter([1.0], [1.0, -r], x[::-1])[::-1]
    assert np.allclose(geometric_suffix_sums(x, r), ref, rtol=1e-12, atol=0.0)


def test_geometric_suffix_sums_crosses_blocks_exactly() -> None:
    """A long array at a ratio close to 1 spans several blocks; the recursion by hand agrees."""
    r = math.exp(-0.01)  # blocks of 3000
    x = np.random.default_rng(2).random(10_000)
    want = np.empty_like(x)
    acc = 0.0
    for j in range(x.size - 1, -1, -1):
        acc = x[j] + r * acc
        want[j] = acc
    assert np.allclose(geometric_suffix_sums(x, r), want, rtol=1e-12, atol=0.0)


_LAPLACE_GRID = [  # ε = s/b up to 300 on the finest grid: 10⁶–10⁷ masses, seconds each (slow)
    pytest.param(*p, marks=pytest.mark.slow) if p[0] == 0.01 and p[2] == 1e-4 else p
    for p in itertools.product([0.01, 0.3, 1.0, 7.0, 1e3], [0.5, 1.0, 3.0], [1e-4, 1e-2, 1.0])
]


@pytest.mark.parametrize(("scale", "sensitivity", "interval"), _LAPLACE_GRID)
def test_laplace_pmf_is_dp_accountings_connect_the_dots(scale: float, sensitivity: float,
                                                        interval: float) -> None:  # fmt: skip
    from dp_accounting.pld import privacy_loss_distribution as pld

    (ref,) = dense_pmfs(pld.from_laplace_mechanism(scale, sensitivity=sensitivity, pessimistic_estimate=True,
                                                   value_discretization_interval=interval))  # fmt: skip
    ours = laplace_pmf(sensitivity / scale, interval)
    assert (ours.lower, ours.probs.size) == (ref.lower, ref.probs.size)
    # dp-accounting evaluates δ(t) as a difference of CDFs (relative 3e-6 lost at ε = 100, where
    # ours is within 6e-12 of the exact masses: the next test)
    assert np.allclose(ours.probs, ref.probs, rtol=0.0, atol=1e-9)
    assert ours.inf_mass == 0.0 and ref.inf_mass < 1e-14  # dp-accounting's is a rounding residue


@pytest.mark.parametrize(("eps", "interval"),
                         [(1.0, 1e-4), (100.0, 1e-4), (0.003, 1e-4), (3.0, 0.01), (7.0, 1.0)])  # fmt: skip
def test_laplace_pmf_masses_are_the_exact_connect_the_dots_masses(eps: float, interval: float) -> None:
    """Algorithm 1's masses from 160-digit δ at the exact grid points i·h (the losses the masses sit
    at), at 200 indices, the ends included: each rounded up, by at most 5 ulps (a float grid point
    i·h would move a mass by ~1e-14/h absolute: 5e-11 at ε = 100)."""
    import mpmath as mp

    p = laplace_pmf(eps, interval)
    with mp.workdps(160):  # δ ≈ 1 − e^{−100} at the left end for ε = 100: 44 digits cancel
        e, h = mp.mpf(eps), mp.mpf(interval)

        def delta(i: int) -> mp.mpf:
            t = i * h
            return mp.mpf(0) if t >= e else (1 - mp.exp(t)) if t <= -e else 1 - mp.exp((t - e) / 2)

        last = p.probs.size - 1
        sample = set(np.random.default_rng(3).integers(0, last, 196).tolist())
        worst = 0.0
        for j in sorted({0, 1, 2, last - 2, last - 1, last} | sample):
            i = p.lower + j
            if j == 0:
                want = 1 - delta(i) + (delta(i + 1) - delta(i)) / mp.expm1(h)
            elif j == last:
                want = (delta(i) - delta(i - 1)) / mp.expm1(-h)
            else:
                want = ((delta(i + 1) - delta(i)) - mp.exp(h) * (delta(i) - delta(i - 1))) / mp.expm1(h)
            assert want <= p.probs[j] <= want * (1 + 5 * 2.0**-53) + 5e-324, (j, p.probs[j], want)
            worst = max(worst, float((p.probs[j] - want) / want)) if want > 0 else worst
        assert worst > 0.0  # rounded up, by at most a few ulps


@pytest.mark.parametrize(("eps", "interval"),
                         [(3.0, 0.01), (0.02, 1e-3), (40.0, 0.5), (1e-6, 1e-4), (700.0, 2.0)])  # fmt: skip
def test_laplace_pmf_dominates_the_exact_masses_entrywise(eps: float, interval: float) -> None:
    """Every mass against 80-digit Algorithm 1 (one-sided at the ends): none below its exact value
    (so the PMF dominates with ``err`` 0), none more above than its inflation for long double's
    error and one ulp (5 ulps at ε ≤ 40 on x86-64)."""
    import mpmath as mp

    p = laplace_pmf(eps, interval)
    assert p.err == 0.0
    with mp.workdps(400):  # e^{−700} at the left end
        e, h = mp.mpf(eps), mp.mpf(interval)
        s = [mp.mpf(1) if i * h >= e else mp.exp(i * h) if i * h <= -e else mp.exp((i * h - e) / 2)
             for i in range(p.lower - 1, p.lower + p.probs.size + 1)]  # fmt: skip
        g = mp.expm1(h)
        want = [s[1] - (s[2] - s[1]) / g]
        want += [((s[j] - s[j + 1]) - mp.exp(h) * (s[j - 1] - s[j])) / g for j in range(2, p.probs.size)]
        want += [(s[-2] - s[-3]) * mp.exp(h) / g]
        assert abs(mp.fsum(want) - 1) < mp.mpf(10) ** -300  # Algorithm 1's masses telescope to 1
        up = 1 + 2 * (2 * eps + 16) * float(np.finfo(np.longdouble).eps) + 4 * 2.0**-53  # inflation, ulps
        for x, w in zip(p.probs, want):
            assert w <= x <= w * up + 5e-324, (x, w)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.floats(1e-3, 30.0), st.sampled_from([1e-4, 1e-3, 0.05]))
def test_laplace_pmf_dominates_the_mechanism(eps: float, interval: float) -> None:
    """The hockey-stick curve of the PMF is at least Laplace's δ(t) = 1 − e^{(t − ε)/2} (|t| < ε)
    everywhere on [−ε, ε], between the grid points too (connect-the-dots). 40 examples: 80 took
    40 s of the suite (each curve point sums up to 6·10⁵ terms in long double)."""
    from tests.mp_reference import pmf_curve

    p = laplace_pmf(eps, interval)
    for t in np.linspace(-eps, eps, 41):
        ours = pmf_curve(p, interval, float(t))
        exact = 0.0 if t >= eps else -math.expm1((t - eps) / 2.0)
        assert ours >= exact * (1 - 4e-16)  # above between grid points; at them, by the rounding up


@pytest.mark.parametrize(("eps", "delta", "interval"),
                         list(itertools.product([1e-7, 0.3, 1.0, 10.0, 100.0], [0.0, 1e-6, 0.1],
                                                [1e-4, 0.1])))  # fmt: skip
def test_dp_parameters_pmf_is_dp_accountings(eps: float, delta: float, interval: float) -> None:
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    (ref,) = dense_pmfs(pld.from_privacy_parameters(common.DifferentialPrivacyParameters(eps, delta),
                                                    value_discretization_interval=interval))  # fmt: skip
    ours = dp_parameters_pmf(eps, delta, interval)
    assert ours.lower == ref.lower and ours.inf_mass == ref.inf_mass
    # the same masses, rounded up past their rounding error (9 ulps at most)
    assert np.all(ours.probs >= ref.probs) and np.all(ours.probs <= ref.probs * (1 + 10 * 2.0**-53) + 5e-324)


def test_dp_parameters_pmf_survives_a_huge_epsilon() -> None:
    p = dp_parameters_pmf(800.0, 0.0, 1.0)  # e^800 overflows a double
    assert 1.0 <= p.probs[-1] <= 1.0 + 5 * 2.0**-52 and 0.0 < p.probs[0] < 1e-300  # never a silent 0


_TINY_RUNS = """
import contextlib, io, json, sys
from bandits.registry import algorithms
from dpaudit.cli.main import main
heavy = ("scipy", "numba", "dp_accounting", "matplotlib")
unused = {"numpy.ma", "dpaudit.events_ml", "dpaudit.transcripts", "bandits.engine.replacement"} | {
    "dpaudit.accounting." + m for m in ("sampled_rdp", "pld_sampled", "mixtures", "with_replacement",
                                        "repeat_select", "pld_with_replacement")}
out = {}
for name in algorithms():
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["run", name, "-T", "30", "-R", "1", "--audit-trials", "0"])
    loaded = {m.split(".")[0] for m in sys.modules} & set(heavy)
    out[name] = [code, sorted(loaded | (unused & set(sys.modules)))]  # numpy.ma: np.unique's 9 ms
print(json.dumps(out))
"""


def test_a_tiny_run_of_every_algorithm_loads_only_what_it_uses() -> None:
    """Start-up: a tiny run of any registered algorithm (simulation, every certificate, the
    ledger check and the report) runs on NumPy alone (not even ``numpy.ma``, which ``np.unique``
    loads: :func:`dpaudit.numerics.unique` instead); the heavy modules load only where a long
    run or another method needs them. Nor does it load what only other runs use: the events of
    model training (:mod:`dpaudit.events_ml`) and the accounting only they need, the released
    values an audit keeps, the neighbouring replacements. Run in one interpreter, in registry
    order, so the first algorithm that loads one is named."""
    proc = subprocess.run([sys.executable, "-c", _TINY_RUNS], capture_output=True, text=True, cwd=ROOT,
                          check=True)  # fmt: skip
    runs = json.loads(proc.stdout.strip().splitlines()[-1])
    assert all(code == 0 for code, _ in runs.values()), runs
    assert {name: mods for name, (_, mods) in runs.items() if mods} == {}


_K_ARY = [(1.0, 4, 1e-4), (0.3, 10, 1e-3), (5.0, 3, 1e-4), (50.0, 100, 1e-4), (1e-3, 5, 1e-4)]


@pytest.mark.parametrize(("eps", "k", "interval"), _K_ARY)
def test_k_ary_pmf_places_each_atom_up_with_its_mass_rounded_up(eps: float, k: int, interval: float) -> None:
    """k-ary randomized response: losses ε, 0, −ε at ⌈loss/Δ⌉ (the rounding of the quotient is
    inside the PLD's loss margin), masses at least e^ε/(e^ε + k − 1), (k − 2)/(e^ε + k − 1),
    1/(e^ε + k − 1) (50 digits) and within 24 ulps of them, nothing else. (dp-accounting's
    ``from_randomized_response``, used before, derives the losses from the rounded probabilities:
    its grid differs by a step at ε = 1, Δ = 1e-4.)"""
    import mpmath as mp

    p = k_ary_pmf(eps, k, interval)
    with mp.workdps(50):
        e = mp.mpf(eps)
        want = {eps: mp.exp(e) / (mp.exp(e) + k - 1), -eps: 1 / (mp.exp(e) + k - 1)}
        if k > 2:
            want[0.0] = (k - 2) / (mp.exp(e) + k - 1)
        idx = {math.ceil(loss / interval) - p.lower for loss in want}
        for loss, mass in want.items():
            got = p.probs[math.ceil(loss / interval) - p.lower]
            assert mass <= got <= mass * (1 + 24 * 2.0**-53)
    assert not np.any(np.delete(p.probs, sorted(idx))) and p.inf_mass == 0.0 and p.err == 0.0
