"""mechanisms.seeding mixes a block's seeds at once: every generator is NumPy's, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bandits.engine.streams import StreamSeeds, rep_streams
from mechanisms.randomness import RepRandom
from mechanisms.seeding import generators, seed_states

ENTROPY = st.one_of(st.integers(0, 2**256), st.lists(st.integers(0, 2**70), min_size=1, max_size=6))


def _numpy(entropy, key, pool=4):
    return np.random.SeedSequence(entropy, spawn_key=tuple(key), pool_size=pool)


@settings(max_examples=200, deadline=None)
@given(entropy=ENTROPY, width=st.integers(0, 7), rows=st.integers(1, 6), pool=st.integers(4, 9),
       data=st.data())  # fmt: skip
def test_the_states_are_seedsequences(entropy, width, rows, pool, data):
    word = st.integers(0, 2**32 - 1)
    keys = [data.draw(st.lists(word, min_size=width, max_size=width)) for _ in range(rows)]
    got = seed_states(entropy, keys, pool)
    want = np.stack([_numpy(entropy, k, pool).generate_state(4, np.uint64) for k in keys])
    assert got.dtype == np.uint64 and np.array_equal(got, want)


@settings(max_examples=50, deadline=None)
@given(entropy=ENTROPY, keys=st.lists(st.lists(st.integers(0, 2**32 - 1), min_size=2, max_size=2), min_size=1,
                                      max_size=5))  # fmt: skip
def test_the_generators_are_numpys(entropy, keys):
    for g, k in zip(generators(entropy, keys), keys, strict=True):
        ref = np.random.Generator(np.random.PCG64(_numpy(entropy, k)))
        assert g.bit_generator.state == ref.bit_generator.state
        assert np.array_equal(g.standard_normal(7), ref.standard_normal(7))


@pytest.mark.parametrize("entropy,keys", [
    (5, [(2**32, 1), (3, 1)]),  # a key word past 32 bits
    (5, [(2**70, 1), (3, 1)]),  # and past 64
    (5, [(1, 2), (3,)]),  # keys of different lengths
    (np.array([2**40, 3], dtype=np.uint64), [(1,), (2,)]),  # array entropy: mixed here
])  # fmt: skip
def test_what_it_cannot_mix_takes_numpys_path_and_arrays_mix(entropy, keys):
    assert (seed_states(entropy, keys) is None) == isinstance(entropy, int)
    for g, k in zip(generators(entropy, keys), keys, strict=True):
        assert g.random() == np.random.Generator(np.random.PCG64(_numpy(entropy, k))).random()


def test_a_run_s_streams_and_generators_are_the_seeds():
    root = np.random.SeedSequence(12345, spawn_key=(7, 2))
    streams = tuple(rep_streams(root, r) for r in range(40))
    for name in ("rewards", "policy", "privacy"):
        seeds = StreamSeeds(streams, name)
        fast = RepRandom.deferred(40, seeds).generators
        slow = RepRandom(seeds()).generators
        assert [g.bit_generator.state for g in fast] == [g.bit_generator.state for g in slow]
    assert StreamSeeds((), "policy").generators() == []


def test_children_and_scaled_streams_keep_the_makers_generators():
    from mechanisms.randomness import ScaledRandom

    streams = tuple(rep_streams(np.random.SeedSequence(99), r) for r in range(12))
    deferred = RepRandom.deferred(12, StreamSeeds(streams, "privacy"))
    plain = RepRandom(StreamSeeds(streams, "privacy")())
    scaled_pair = ScaledRandom.scaling(deferred, 0.5).child(2), ScaledRandom(plain.seeds, 0.5).child(2)
    for a, b in ((deferred.child(3).child(1), plain.child(3).child(1)), scaled_pair):
        assert "seeds" not in a.__dict__  # made from the maker, not from seeds
        assert np.array_equal(a.laplace((4,)), b.laplace((4,)))
        assert [s.spawn_key for s in a.seeds] == [s.spawn_key for s in b.seeds]
    half_child = ScaledRandom.scaling(deferred, 0.5).child(2)
    assert np.array_equal(half_child.laplace((5,)), 0.5 * plain.child(2).laplace((5,)))  # still scaled
    scaled = ScaledRandom.scaling(deferred, 0.25)
    assert np.array_equal(scaled.standard_normal((3,)), 0.25 * plain.standard_normal((3,)))
    with pytest.raises(ValueError, match="factor must be a positive finite number"):
        ScaledRandom.scaling(deferred, 0.0)
