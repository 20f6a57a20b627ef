"""Chandak, Hu & Hegde (2023), §5.2 (E3): MovieLens-1M diverse recommendation — a loader and a
synthetic stand-in.

The experiment (after Kveton et al. 2014): the base arms are the 100 movies with the most
ratings; movie e's feature is its genre indicator u_e ∈ {0,1}¹⁸ (multi-hot — the paper's
"one-hot" cannot be, movies have several genres); a set of movies is independent iff their
genre vectors are linearly independent (rank 17: no documentary among them); each round a user
is drawn uniformly at random (with replacement) and w_t(e) = 1 iff that user rated e, so
w̄(e) = #ratings(e)/#users and one round's rewards are correlated through the user.

* :func:`load_movielens` reads the real ``ratings.dat`` / ``movies.dat`` of ML-1M
  (``UserID::MovieID::Rating::Timestamp`` and ``MovieID::Title::Genres``, Latin-1), which cannot
  be downloaded here: a user with the files points to them (``--env movielens:ratings=PATH,
  movies=PATH``).
* :func:`movielens_like` builds a stand-in of our design: L = 100 items with multi-hot
  genre vectors of rank 17 (1–5 genres per item, drawn in proportion to approximate ML-1M genre
  frequencies, Documentary excluded), popularity decaying from 0.568 (American Beauty:
  3428/6040) as 0.568·(i+1)^−0.216 (≈ 0.21 at i = 99, approximate), and a pool of 6040 latent
  users whose rating indicators are Bernoulli(σ(a_u + b_i + θ_u·u_i/|u_i|)) with a user activity
  a_u ~ N(0, 1.2²) and genre tastes θ_u ~ N(0, 0.8² I), the item offsets b_i calibrated (by
  bisection) so that the expected marginals are the popularities. The arms' means are the pool's
  column means, as in the paper.

Example:
    >>> data = movielens_like(seed=0)
    >>> data.genres.shape, data.pool.shape, round(float(data.pool.mean(axis=0).max()), 2)
    ((100, 18), (6040, 100), 0.56)
    >>> from bandits.structures.linear_matroid import LinearMatroid
    >>> LinearMatroid.from_rows(data.genres).rank
    17
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dpaudit.validation import check_integer

if TYPE_CHECKING:  # the environment types load with the function that builds them
    from bandits.environments.semibandit import LatentUserEnv, SemiBanditEnv

__all__ = [
    "GENRES",
    "GENRE_FREQUENCIES",
    "MovieLensData",
    "load_movielens",
    "movielens_like",
    "movielens_env",
]

GENRES = (
    "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime", "Documentary", "Drama",
    "Fantasy", "Film-Noir", "Horror", "Musical", "Mystery", "Romance", "Sci-Fi", "Thriller", "War",
    "Western",
)  # fmt: skip
"""The 18 genres of ML-1M ``movies.dat``, in this (alphabetical) order."""

GENRE_FREQUENCIES = (
    503, 283, 105, 251, 1200, 211, 127, 1603, 68, 44, 343, 114, 106, 471, 276, 492, 143, 68,
)  # fmt: skip
"""Approximate numbers of ML-1M movies per genre (order of :data:`GENRES`; from memory, used only
to draw the synthetic instance's genres)."""


@dataclass(frozen=True, eq=False)
class MovieLensData:
    """Movies (arms), their genre vectors, and the user × movie "rated" indicator pool."""

    titles: tuple[str, ...]
    genres: np.ndarray = field(repr=False)  # (L, 18) int 0/1
    pool: np.ndarray = field(repr=False)  # (U, L) 0/1
    movie_ids: tuple[int, ...] = ()
    source: str = ""

    @property
    def means(self) -> np.ndarray:
        """w̄(e) = #ratings(e)/#users."""
        return self.pool.mean(axis=0)


def _genre_vector(text: str) -> np.ndarray:
    v = np.zeros(len(GENRES), dtype=np.int64)
    for g in text.strip().split("|"):
        if g not in GENRES:
            raise ValueError(f"movies file: unknown genre {g!r} (known: {', '.join(GENRES)})")
        v[GENRES.index(g)] = 1
    return v


def load_movielens(
    ratings: str | Path, movies: str | Path, *, top: int = 100, max_pool: int | None = None
) -> MovieLensData:
    """The ``top`` most-rated movies of an ML-1M-format data set (ties: smaller MovieID first).

    Every user who appears in ``ratings`` is a row of the pool (ML-1M: 6040 users), so the
    column means are #ratings/#users. The ratings are kept as two integer arrays (16 bytes a
    line); with ``max_pool`` a pool of more than that many users × ``top`` entries is refused
    before it is allocated.
    """
    top = check_integer("top", top)
    users: dict[int, int] = {}
    rated_users, rated_movies = array("q"), array("q")
    counts: Counter[int] = Counter()
    with open(ratings, encoding="latin-1") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            parts = line.strip().split("::")
            if len(parts) < 2:
                raise ValueError(
                    f"ratings file line {n}: expected UserID::MovieID::Rating::Timestamp, got {line[:100]!r}"
                )
            try:
                u, m = int(parts[0]), int(parts[1])
                if not (0 <= m < 2**63):
                    raise ValueError
            except ValueError:
                raise ValueError(
                    f"ratings file line {n}: UserID and MovieID must be integers, got {line[:100]!r}"
                ) from None
            rated_users.append(users.setdefault(u, len(users)))
            rated_movies.append(m)
            counts[m] += 1
    info: dict[int, tuple[str, np.ndarray]] = {}
    with open(movies, encoding="latin-1") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            parts = line.rstrip("\n").split("::")
            if len(parts) != 3:
                raise ValueError(f"movies file line {n}: expected MovieID::Title::Genres, got {line[:100]!r}")
            try:
                movie = int(parts[0])
            except ValueError:
                raise ValueError(
                    f"movies file line {n}: MovieID must be an integer, got {line[:100]!r}"
                ) from None
            info[movie] = (parts[1], _genre_vector(parts[2]))
    if len(counts) < top:
        raise ValueError(f"top must be at most the number of rated movies ({len(counts)}), got {top}")
    chosen = sorted(counts, key=lambda m: (-counts[m], m))[:top]
    missing = [m for m in chosen if m not in info]
    if missing:
        raise ValueError(f"movies file has no entry for rated movie(s) {missing[:5]}")
    if max_pool is not None and len(users) * top > max_pool:
        raise ValueError(
            f"users x top = {len(users):,} x {top:,} = {len(users) * top:,} pool entries, more than the "
            f"limit {max_pool:,}"
        )
    col = {m: j for j, m in enumerate(chosen)}
    pool = np.zeros((len(users), top), dtype=np.int8)
    for u, m in zip(rated_users, rated_movies):
        j = col.get(m)
        if j is not None:
            pool[u, j] = 1
    genres = np.stack([info[m][1] for m in chosen])
    return MovieLensData(
        titles=tuple(info[m][0] for m in chosen),
        genres=genres,
        pool=pool,
        movie_ids=tuple(chosen),
        source=f"movielens:ratings={ratings},movies={movies},top={top}",
    )


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def movielens_like(
    *, items: int = 100, users: int = 6040, seed: int = 0, top: float = 0.568, decay: float = 0.216
) -> MovieLensData:
    """The synthetic stand-in for the ML-1M top-100 instance (module docstring)."""
    L = check_integer("items", items, 2)
    U = check_integer("users", users)
    rng = np.random.default_rng(np.random.SeedSequence(check_integer("seed", seed, 0), spawn_key=(7,)))
    freq = np.array(GENRE_FREQUENCIES, dtype=float)
    freq[GENRES.index("Documentary")] = 0.0
    freq /= freq.sum()
    sizes = rng.choice([1, 2, 3, 4, 5], size=L, p=[0.3, 0.35, 0.22, 0.1, 0.03])
    genres = np.zeros((L, len(GENRES)), dtype=np.int64)
    for i, s in enumerate(sizes):
        genres[i, rng.choice(len(GENRES), size=s, replace=False, p=freq)] = 1
    # every non-documentary genre used at least once (rank 17 needs it), deterministically
    for g in np.flatnonzero((genres.sum(axis=0) == 0) & (freq > 0)):
        genres[(int(g) * 7) % L, g] = 1
    target = top * (np.arange(1, L + 1, dtype=float)) ** (-decay)
    activity = rng.normal(0.0, 1.2, size=(U, 1))
    taste = rng.normal(0.0, 0.8, size=(U, len(GENRES)))
    affinity = activity + taste @ (genres / genres.sum(axis=1, keepdims=True)).T  # (U, L)
    lo, hi = np.full(L, -20.0), np.full(L, 20.0)
    for _ in range(60):  # bisection on the item offsets: E_u σ(affinity + b) = target
        mid = 0.5 * (lo + hi)
        too_high = _sigmoid(affinity + mid).mean(axis=0) > target
        hi = np.where(too_high, mid, hi)
        lo = np.where(too_high, lo, mid)
    prob = _sigmoid(affinity + 0.5 * (lo + hi))
    pool = (rng.random((U, L)) < prob).astype(np.int8)
    return MovieLensData(
        titles=tuple(f"item {i}" for i in range(L)),
        genres=genres,
        pool=pool,
        movie_ids=tuple(range(L)),
        source=f"movielens-like:items={L},users={U},seed={seed}",
    )


def movielens_env(
    data: MovieLensData, *, coupling: str = "latent", reward: str = "sum"
) -> SemiBanditEnv | LatentUserEnv:
    """The matroid bandit of ``data``: a basis of the genre-vector linear matroid; outcomes from
    the user pool (``coupling="latent"``, the paper) or independent Bernoulli arms with the same
    means (``"independent"``, the model the theorems assume)."""
    from bandits.environments.semibandit import LatentUserEnv, SemiBanditEnv
    from bandits.structures.combinatorial import MatroidBasis
    from bandits.structures.linear_matroid import LinearMatroid
    from bandits.structures.rewards import parse_reward

    structure = MatroidBasis(LinearMatroid.from_rows(data.genres), parse_reward(reward))
    name = (
        data.source
        + (f",coupling={coupling}" if coupling != "latent" else "")
        + (f",reward={reward}" if reward != "sum" else "")
    )
    if coupling == "latent":
        return LatentUserEnv(data.pool, structure, name=name, labels=data.titles)
    if coupling == "independent":
        return SemiBanditEnv(tuple(data.means.tolist()), structure, "independent", name=name)
    raise ValueError(f"coupling must be 'latent' or 'independent', got {coupling!r}")
