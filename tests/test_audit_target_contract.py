"""The audit-target contract (dpaudit.audit.target), checked once for every factory in
mechanisms.auditing.targets.TARGETS: explicit generator, reproducible from the seed, n outputs →
n floats, declared support honoured, consistent against its own certificate at small scale."""

from __future__ import annotations

import random

import numpy as np
import pytest

from dpaudit.audit import AuditTarget, Sampler, run_audit
from dpaudit.audit.report import CONSISTENT, VIOLATED
from dpaudit.audit.runner import collect_statistics
from mechanisms.auditing.targets import TARGETS

S2 = 2**-0.5
TRIALS = 20_000

# name → (factory name, kwargs, audited against its own certificate?)
CASES: dict[str, tuple[str, dict, bool]] = {
    "gaussian": ("gaussian", {"sigma": 1.0}, True),
    "gaussian-identity": ("gaussian", {"sigma": 2.0, "sensitivity": 0.5, "statistic": "identity"}, True),
    "laplace": ("laplace", {"scale": 1.0}, True),
    "randomized-response": ("randomized-response", {"epsilon": 1.0, "num_categories": 3}, True),
    "rnm-laplace": ("rnm-laplace", {"scale": 1.0, "arms": 2, "trials": TRIALS, "epoch_length": 8}, True),
    "rnm-laplace-add-remove": ("rnm-laplace", {"scale": 1.0, "arms": 3, "neighbouring": "add-remove",
                                               "gap": 2}, True),
    "rnm-gaussian": ("rnm-gaussian", {"sensitivities": 0.5, "sigmas": [S2, S2, 1.0],
                                      "values": [0.0, 0.5, 0.2], "trials": TRIALS}, True),
    "cascade": ("cascade", {"num_positions": 3, "epsilon": 1.0, "report": "all-positions"}, True),
    # the paper's reporting: lengths differ, the loss is ±inf (declared in the support); the paper's
    # claim is refuted by design (tests/test_audit_claims.py): the audit must say so
    "cascade-observed": ("cascade", {"num_positions": 3, "epsilon": 1.0, "delta": 1e-3}, False),
}


def test_every_factory_has_a_contract_case() -> None:
    assert set(TARGETS) <= {factory for factory, _, _ in CASES.values()}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request: pytest.FixtureRequest) -> tuple[str, AuditTarget, bool]:
    factory, kwargs, own = CASES[request.param]
    return request.param, TARGETS[factory](**kwargs), own


def _inputs(t: AuditTarget) -> list:
    return [np.asarray(x, dtype=float) if isinstance(x, tuple) else x for x in (t.pair.x, t.pair.x_prime)]


def test_is_an_audit_target_with_a_sampler(case) -> None:
    name, t, _ = case
    assert isinstance(t, AuditTarget) and isinstance(t.mechanism, Sampler), name
    # claim=None: the toolkit's certificate (cascade: the paper's, which its recorded event certifies)
    expected = "Wang et al. (2021), Algorithm" if name.startswith("cascade") else "dpaudit"
    assert t.certified.source.startswith(expected)
    assert 0.0 <= t.delta < 1.0


def test_samples_only_from_the_generator_it_is_given(case) -> None:
    _, t, _ = case
    x = _inputs(t)[0]
    for not_a_generator in (None, 0, np.random.RandomState(0)):
        with pytest.raises(ValueError, match="rng"):
            t.mechanism.sample(x, not_a_generator, size=4)
    np_state, py_state = np.random.get_state(), random.getstate()  # noqa: NPY002 (the legacy state is checked)
    t.mechanism.sample(x, np.random.default_rng(0), size=64)
    after = np.random.get_state()  # noqa: NPY002
    assert np_state[0] == after[0] and np.array_equal(np_state[1], after[1]) and np_state[2:] == after[2:]
    assert random.getstate() == py_state


def test_reproducible_from_its_seed(case) -> None:
    _, t, _ = case
    for x in _inputs(t):
        a = t.mechanism.sample(x, np.random.default_rng(11), size=256)
        b = t.mechanism.sample(x, np.random.default_rng(11), size=256)
        c = t.mechanism.sample(x, np.random.default_rng(12), size=256)
        assert all(np.array_equal(u, v) for u, v in zip(a, b)) and len(a) == len(b) == 256
        assert not all(np.array_equal(u, v) for u, v in zip(a, c))  # the seed matters
    n1, a1 = collect_statistics(t, 4000, seed=5, batch_size=1500)
    n2, a2 = collect_statistics(t, 4000, seed=5, batch_size=1500)
    assert np.array_equal(n1, n2) and np.array_equal(a1, a2)


def test_statistic_maps_n_outputs_to_n_floats_inside_the_support(case) -> None:
    name, t, _ = case
    seen_infinite = False
    for x in _inputs(t):
        for n in (1, 333):
            s = np.asarray(t.statistic(t.mechanism.sample(x, np.random.default_rng(n), size=n)))
            assert s.shape == (n,) and s.dtype == np.float64
            assert not np.isnan(s).any()
            infinite = s[~np.isfinite(s)]
            if infinite.size:  # only disjoint supports give ±inf, and then the support says so
                assert t.support is not None and set(infinite.tolist()) <= set(t.support)
                seen_infinite = True
    assert seen_infinite == (name == "cascade-observed")
    if t.support is not None:
        null, alt = collect_statistics(t, 4000, seed=1)
        assert set(np.unique(np.concatenate([null, alt])).tolist()) <= set(t.support)


def test_consistent_against_its_own_certificate(case) -> None:
    """Own certificate: consistent. The one published claim in CASES (the observed reporting of
    Wang et al. 2021, refuted by design) must come out violated at the same small scale."""
    name, t, own = case
    r = run_audit(t, trials=TRIALS, seed=0)
    assert r.verdict == (CONSISTENT if own else VIOLATED), (name, r.empirical, r.certified)
    assert r.empirical.trials == TRIALS
