"""The combinatorial layer: reward functions, matroids and the greedy oracle, structures, semi-bandit
environments, the --env grammar and the MovieLens loader (issue 12, shared by the matroid, cascading
and semi-bandit families)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from bandits.actions import Ranking, TopK
from bandits.engine import compiled
from bandits.engine.tables import reward_table
from bandits.environments.grammar import MATROID_E1_MEANS, parse_combinatorial_env
from bandits.environments.movielens import GENRES, load_movielens, movielens_env, movielens_like
from bandits.environments.semibandit import LatentUserEnv, PathEnv
from bandits.environments.specs import spec_for
from bandits.structures.combinatorial import MatroidBasis, SemiBandit, SuperArms, problem, ranking
from bandits.structures.greedy import cover_with_bases, greedy
from bandits.structures.linear_matroid import LinearMatroid, hadamard_bound, primes_for
from bandits.structures.matroids import GraphicMatroid, PartitionMatroid, UniformMatroid
from bandits.structures.rewards import REWARDS, Average, Bottleneck, Coverage, LinearSum

E1 = parse_combinatorial_env("matroid-linear:e1")


# ---------------------------------------------------------------------------------------
# reward functions


@pytest.mark.parametrize("name", sorted(REWARDS))
@pytest.mark.parametrize("k", [1, 2, 4, 8])
def test_declared_smoothness_and_monotonicity_hold(name, k):
    f = REWARDS[name]()
    rng = np.random.default_rng(k)
    a, b = rng.random((2000, k)), rng.random((2000, k))
    d = np.abs(f.value(a) - f.value(b))
    assert np.all(d <= f.b_inf(k) * np.abs(a - b).max(axis=1) + 1e-12)
    assert np.all(d <= f.b_1(k) * np.abs(a - b).sum(axis=1) + 1e-12)
    hi = np.maximum(a, b)
    assert f.monotone and np.all(f.value(hi) >= f.value(a) - 1e-12)
    # the constants are attained (not loose by a factor): sum and coverage at K, average at 1/K
    tight = {"sum": (np.ones(k), np.zeros(k)), "average": (np.ones(k), np.zeros(k))}
    if name in tight:
        x, y = tight[name]
        assert f.value(x) - f.value(y) == pytest.approx(f.b_1(k) * k)


def test_assumption1_under_each_coupling_by_simulation():
    mu = np.array([0.7, 0.4, 0.55])
    acts = np.array([[0, 1, 2]])
    rng = np.random.default_rng(0)
    u = rng.random((200_000, 1))
    como = (u < mu).astype(float)
    ind = (rng.random((200_000, 3)) < mu).astype(float)
    assert Bottleneck().realised(como, np.broadcast_to(acts, (200_000, 3))).mean() == pytest.approx(
        0.4, abs=4e-3
    )
    assert Coverage().realised(ind, np.broadcast_to(acts, (200_000, 3))).mean() == pytest.approx(
        float(Coverage().expected(mu, acts)[0]), abs=4e-3
    )
    assert Bottleneck().unbiased_under("comonotone") and not Bottleneck().unbiased_under("independent")
    assert LinearSum().unbiased_under("latent") and not Coverage().unbiased_under("latent")


# ---------------------------------------------------------------------------------------
# matroids and greedy


def test_e1_instance_facts():
    m = E1.structure.matroid
    assert (m.rank, m.loops, E1.structure.k) == (3, (6,), 3)
    best = problem(E1.structure).oracle(E1.means[None, :])
    assert sorted(best[0].tolist()) == [0, 1, 2]  # A* = {e1, e2, e3}
    assert E1.optimum == pytest.approx(2.15, abs=1e-12)
    assert not m.independent([0, 5]) and m.independent([3, 4, 5])


def exact_random_greedy_return(env) -> float:
    """E[f(greedy(order))] for a uniformly random order (i.i.d. continuous scores), exactly."""
    orders = np.array(list(itertools.permutations(range(env.n_arms))))
    acts = greedy(env.structure.matroid, orders)
    return float(env.means[acts].sum(axis=1).mean())


def test_random_score_greedy_returns_1504():
    exact = exact_random_greedy_return(E1)  # over all 7! = 5040 orders
    assert exact == pytest.approx(4.51 / 3, abs=1e-12)  # 1.50333… (Monte Carlo: ≈ 1.502)
    assert abs(exact - 1.504) < 1e-3
    rng = np.random.default_rng(12)
    n = 100_000
    acts = problem(E1.structure).oracle(rng.random((n, 7)))
    ret = E1.means[acts].sum(axis=1)
    se = ret.std(ddof=1) / math.sqrt(n)
    assert abs(ret.mean() - exact) < 4 * se and se < 0.002


def random_matroids(rng):
    for _ in range(6):
        v = rng.integers(-2, 3, size=(9, 4))
        v[rng.random(9) < 0.2] = 0
        yield LinearMatroid.from_rows(v)
        yield GraphicMatroid(5, tuple(tuple(int(x) for x in e) for e in rng.integers(0, 5, size=(9, 2))))
        yield PartitionMatroid(tuple(int(b) for b in rng.integers(0, 3, 9)), (1, 2, 0))


def scalar_greedy(matroid, order):
    chosen = []
    for e in order:
        if matroid.independent(chosen + [int(e)]):
            chosen.append(int(e))
    return chosen


@pytest.mark.slow
def test_greedy_engines_agree_with_the_scalar_definition():
    rng = np.random.default_rng(3)
    for m in random_matroids(rng):
        orders = np.array([rng.permutation(9) for _ in range(25)])
        t = greedy(m, orders, engine="table")
        s = greedy(m, orders, engine="state")
        assert np.array_equal(t, s)
        assert all(t[r].tolist() == scalar_greedy(m, orders[r]) for r in range(25))
        assert set(m.loops).isdisjoint(t.ravel().tolist())


@pytest.mark.slow
def test_exact_linear_independence_for_0_1_vectors_numba_and_numpy_identical(monkeypatch):
    rng = np.random.default_rng(5)
    v = (rng.random((40, 18)) < 0.2).astype(int)
    v[:, 6] = 0  # an unused coordinate: rank <= 17, like the MovieLens genres without documentaries
    m = LinearMatroid.from_rows(v)
    assert m.exact and len(primes_for(hadamard_bound(m.array))) == 2  # bound > 65521: two primes
    orders = np.array([rng.permutation(40) for _ in range(30)])
    state = greedy(m, orders, engine="state")
    assert all(state[r].tolist() == scalar_greedy(m, orders[r]) for r in range(6))  # exact rationals
    if compiled.available():
        assert np.array_equal(greedy(m, orders, engine="numba"), state)
    monkeypatch.setenv("DPAUDIT_NUMBA", "0")
    assert not compiled.available()
    assert np.array_equal(greedy(m, orders), state)  # auto falls back to the NumPy state engine


def test_float_vectors_use_a_tolerance_and_bad_input_is_named():
    m = LinearMatroid.from_rows([[0.5, 0.25], [1.0, 0.5], [0.1, 0.3]])
    assert not m.exact and m.rank == 2 and greedy(m, np.array([[0, 1, 2]])).tolist() == [[0, 2]]
    with pytest.raises(ValueError, match="arithmetic='exact' needs integer vectors"):
        LinearMatroid.from_rows([[0.5, 1.0]], arithmetic="exact")
    with pytest.raises(ValueError, match="k must be in"):
        UniformMatroid(3, 4)
    with pytest.raises(ValueError, match="edges"):
        GraphicMatroid(2, ((0, 5),))
    with pytest.raises(ValueError, match="caps must have one entry per block"):
        PartitionMatroid((0, 1, 2), (1, 1))


def test_tie_rules():
    s = np.array([[1.0, 1.0, 1.0, 0.2]])
    assert ranking(s).tolist() == [[0, 1, 2, 3]]
    keys = np.array([[0.9, 0.1, 0.5, 0.0]])
    assert ranking(s, keys).tolist() == [[1, 2, 0, 3]]
    # random keys make every tied arm equally likely to lead
    rng = np.random.default_rng(1)
    first = ranking(np.ones((30_000, 4)), rng.random((30_000, 4)))[:, 0]
    assert np.allclose(np.bincount(first) / 30_000, 0.25, atol=0.015)


def test_cover_with_bases_covers_every_non_loop_arm():
    cover = cover_with_bases(E1.structure.matroid)
    assert cover == ((0, 1, 2), (3, 4, 5))
    assert all(E1.structure.matroid.is_basis(b) for b in cover)


# ---------------------------------------------------------------------------------------
# structures


@pytest.mark.parametrize("reward", [LinearSum(), Average(), Bottleneck(), Coverage()])
def test_oracles_are_exact_and_the_benchmark_is_alpha_opt(reward):
    rng = np.random.default_rng(2)
    mu = rng.random(7)
    s = SemiBandit(3, reward)
    opt = float(reward.expected(mu, s.actions(7)).max())
    assert s.exact_optimum(mu) == pytest.approx(opt) and s.optimum(mu) == pytest.approx(opt)
    half = SemiBandit(3, reward, alpha=0.5)
    assert half.optimum(mu) == pytest.approx(0.5 * opt)
    mb = MatroidBasis(E1.structure.matroid, reward)
    best = float(reward.expected(mu, mb.actions(7)).max())
    assert mb.optimum(mu) == pytest.approx(best)  # greedy exact on a matroid for every shipped reward


def test_problem_views_and_validity():
    assert problem(TopK(3)).reward == LinearSum() and problem(Ranking(2)).reward == Coverage()
    assert problem(SemiBandit(2, Average())).b_1() == 0.5
    sa = SuperArms(((0, 1), (2, 3)))
    assert problem(sa).oracle(np.array([[0.2, 0.2, 0.3, 0.3]])).tolist() == [[2, 3]]
    assert E1.structure.valid(np.array([[[0, 1, 2], [3, 4, 5]]]), 7)
    assert not E1.structure.valid(np.array([[0, 5, 2]]), 7)  # e1 ∥ e6
    with pytest.raises(ValueError, match="structure must be one of"):
        problem(object())


# ---------------------------------------------------------------------------------------
# environments


def test_environment_tables_do_not_depend_on_chunking_and_follow_their_coupling():
    for env in (
        parse_combinatorial_env("topk:k=2,means=0.3/0.6/0.9,reward=min"),
        parse_combinatorial_env("paths:k=2,paths=3,gap=0.2"),
        E1,
    ):
        whole = env.reward_chunk(0, 0, 500, np.random.default_rng(4))
        g = np.random.default_rng(4)
        parts = np.concatenate([env.reward_chunk(0, a, b, g) for a, b in ((0, 7), (7, 300), (300, 500))])
        assert np.array_equal(whole, parts)
    como = reward_table(parse_combinatorial_env("topk:k=2,means=0.3/0.6/0.9,reward=min"), 20_000, seed=1)
    assert np.all(como[:, 0] <= como[:, 1]) and np.all(como[:, 1] <= como[:, 2])  # one shared uniform
    paths = reward_table(parse_combinatorial_env("paths:k=2,paths=3,gap=0.2"), 2000, seed=1)
    assert np.array_equal(paths[:, 0], paths[:, 1]) and np.array_equal(paths[:, 4], paths[:, 5])


def test_latent_pool_and_path_instance():
    pool = np.array([[1, 0, 1], [1, 1, 0], [0, 0, 0], [1, 1, 1]])
    env = LatentUserEnv(pool, TopK(2))
    assert env.means.tolist() == [0.75, 0.5, 0.5]
    rows = reward_table(env, 4000, seed=2)
    assert all(tuple(r) in {tuple(p) for p in pool.tolist()} for r in rows.tolist())
    p = PathEnv((0.5, 0.45, 0.45), 4)
    assert p.n_arms == 12 and p.optimum == pytest.approx(2.0)
    assert parse_combinatorial_env("paths:k=4,paths=3,gap=0.2").means.tolist() == p.means.tolist()
    with pytest.raises(ValueError, match="does not satisfy"):
        LatentUserEnv(pool, SemiBandit(2, Bottleneck()))


@pytest.mark.parametrize(
    "spec",
    [
        "topk:k=2,means=0.5x3/0.7x2,reward=min",
        "topk:k=3,means=0.1/0.2/0.3/0.4,reward=average",
        "topk:k=2,means=0.1/0.2/0.3,reward=coverage",
        "ranking:k=2,means=0.1/0.2/0.3",
        "paths:k=2,means=0.5/0.4",
        "superarms:sets=0_1/1_2/0_2,means=0.5/0.4/0.3",
        "matroid-linear:vectors=1_0/0_1/1_1,means=0.5/0.4/0.3",
        "matroid-uniform:k=2,means=0.5/0.4/0.3",
        "matroid-partition:blocks=0_0_1,caps=1_1,means=0.5/0.4/0.3",
        "matroid-graphic:vertices=3,edges=0-1/1-2/0-2,means=0.5/0.4/0.3",
    ],
)
def test_every_kind_parses_and_its_spec_parses_back(spec):
    env = parse_combinatorial_env(spec)
    again = parse_combinatorial_env(spec_for(env.structure, env.means, getattr(env, "coupling", "paths")))
    assert again.means.tolist() == env.means.tolist() and again.structure == env.structure


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("topk:k=2", "needs the parameter means="),
        ("topk:k=x,means=0.5/0.5", "k must be an integer"),
        ("topk:k=2,means=0.5/0.5,nosuch=1", "has no parameter"),
        ("heap:k=2", "spec kind must be one of"),
        ("matroid-linear:e9", "named instance 'e1'"),
        ("topk:k=2,means=0.5/1.5", "probs\\[1\\] must be in"),
        ("matroid-graphic:vertices=2,edges=0+1,means=0.5", "edges u-v"),
    ],
)
def test_grammar_errors_name_the_parameter(spec, match):
    with pytest.raises(ValueError, match=match):
        parse_combinatorial_env(spec)


# ---------------------------------------------------------------------------------------
# MovieLens


def test_movielens_loader_on_a_small_file(tmp_path):
    movies = tmp_path / "movies.dat"
    ratings = tmp_path / "ratings.dat"
    movies.write_text(
        "1::Toy Story (1995)::Animation|Children's|Comedy\n"
        "2::Jumanji (1995)::Adventure|Children's|Fantasy\n"
        "3::Heat (1995)::Action|Crime|Thriller\n"
        "4::Nixon (1995)::Drama\n",
        encoding="latin-1",
    )
    lines = ["1::1::5::0", "1::2::3::0", "2::1::4::0", "3::1::4::0", "3::3::2::0", "4::2::1::0", "4::4::1::0"]
    ratings.write_text("\n".join(lines) + "\n", encoding="latin-1")
    data = load_movielens(ratings, movies, top=3)
    assert data.movie_ids == (1, 2, 3)  # 3, 2, then ties (1 rating) by id: 3 before 4
    assert data.means.tolist() == [0.75, 0.5, 0.25]  # #ratings / #users (4 users)
    assert data.genres[0, GENRES.index("Comedy")] == 1 and data.genres.sum(axis=1).tolist() == [3, 3, 3]
    env = parse_combinatorial_env(f"movielens:ratings={ratings},movies={movies},top=3")
    assert env.n_arms == 3 and env.structure.k == 3 and env.means.tolist() == [0.75, 0.5, 0.25]
    bad = tmp_path / "bad.dat"
    bad.write_text("1::X::Cartoon\n", encoding="latin-1")
    with pytest.raises(ValueError, match="unknown genre 'Cartoon'"):
        load_movielens(ratings, bad, top=1)


def test_movielens_like_instance():
    data = movielens_like(seed=0)
    env = movielens_env(data)
    assert env.n_arms == 100 and env.structure.k == 17  # rank 17: no documentary
    assert data.genres[:, GENRES.index("Documentary")].sum() == 0
    assert 1 <= data.genres.sum(axis=1).min() and data.genres.sum(axis=1).max() <= 6
    m = env.means
    assert 0.53 < m.max() < 0.6 and 0.18 < m.min() < 0.25  # popularity 0.568 → ≈ 0.21
    corr = np.corrcoef(data.pool[:, :20].T)[np.triu_indices(20, 1)]
    assert corr.mean() > 0.1  # rewards of one round are correlated through the user
    ind = movielens_env(data, coupling="independent")
    assert np.allclose(ind.means, m) and ind.structure == env.structure
    assert MATROID_E1_MEANS[0] == 0.8
