"""The ``--env`` grammar of combinatorial problems (``dpaudit run dpucb-mat --env SPEC``).

::

    SPEC   := KIND ":" PARAMS
    PARAMS := NAME                                   (a named instance, e.g. "e1")
            | KEY "=" VALUE ("," KEY "=" VALUE)*
    VALUE  := number | word | path | LIST
    LIST   := ITEM ("/" ITEM)*
    ITEM   := number ["x" count]                     ("0.5x12" = twelve times 0.5)
            | number ("_" number)*                   (a vector: "1_0_1")
            | vertex "-" vertex                      (an edge: "0-3")

Kinds (every kind takes ``reward=sum|average|min|coverage``, default ``sum``, and where it
applies ``coupling=independent|comonotone``; default ``independent``, or ``comonotone`` for
``min``, whose expectation needs it — see :mod:`bandits.environments.semibandit`):

=====================  ============================================================================
kind                   parameters
=====================  ============================================================================
``topk``               ``k``, ``means`` — any k of the arms (``TopK(k)`` for ``sum``, else
                       ``SemiBandit(k, reward)``); e.g. ``topk:k=2,means=0.5x8/0.7x2,reward=min``
``ranking``            ``k``, ``means`` — an ordered list of k items (cascade, ``Ranking(k)``)
``paths``              ``k`` and ``means`` (one per path) or ``paths``, ``gap`` (Δ, default 0.1),
                       ``base`` (default 0.5): the K-path instance of Chen et al. 2020, path 0
                       at ``base``, the others at base − Δ/(B_1 K)
``superarms``          ``sets`` (e.g. ``0_1/2_3/1_2``), ``means`` — an explicit decision set
``matroid-linear``     ``e1`` (Chandak, Hu & Hegde 2023, Table 2) or ``vectors`` (e.g.
                       ``1_0/0_1/1_1``), ``means``
``matroid-uniform``    ``k``, ``means``
``matroid-partition``  ``blocks`` (one per arm), ``caps`` (one per block), ``means``
``matroid-graphic``    ``vertices``, ``edges`` (e.g. ``0-1/1-2/0-2``), ``means``
``movielens-like``     ``items`` (100), ``users`` (6040), ``seed`` (0), ``coupling=latent|independent``
``movielens``          ``ratings=PATH``, ``movies=PATH``, ``top`` (100) — the real ML-1M files
=====================  ============================================================================

Every size is bounded before anything is built, and a spec over a bound is refused with the
field, its size and the limit: at most :data:`~bandits.environments.stochastic.MAX_ARMS` arms
(repeat counts included: ``0.5x1000000000`` is refused while parsing, not allocated), super-arms,
edges, vertices or items; vectors of at most :data:`MAX_DIMENSION` entries and
:data:`MAX_ENTRIES` numbers in all; ``movielens-like`` at most :data:`MAX_USERS` users and
:data:`MAX_POOL` user × item entries; a ``movielens`` file must exist, be readable and hold at
most :data:`MAX_FILE_BYTES` bytes, and its pool at most :data:`MAX_LOADED_POOL` entries.

Other packages add kinds with :func:`register_kind` (e.g. a cascade problem);
:func:`bandits.environments.specs.spec_for` writes the spec of a structure and means back
(every environment's ``spec`` parses again).

Example:
    >>> env = parse_combinatorial_env("topk:k=2,means=0.5x3/0.7x2,reward=min")
    >>> env.structure, env.coupling, env.optimum
    (SemiBandit(k=2, reward=Bottleneck(), alpha=1.0), 'comonotone', 0.7)
    >>> e1 = parse_combinatorial_env("matroid-linear:e1")
    >>> e1.n_arms, e1.structure.k, round(e1.optimum, 2)
    (7, 3, 2.15)
    >>> parse_combinatorial_env(e1.spec).means.tolist() == e1.means.tolist()
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bandits.actions import ActionStructure, Ranking, TopK
from bandits.environments import Environment
from bandits.environments.stochastic import MAX_ARMS
from bandits.structures.combinatorial import MatroidBasis, SemiBandit, SuperArms
from bandits.structures.linear_matroid import LinearMatroid
from bandits.structures.matroids import GraphicMatroid, PartitionMatroid, UniformMatroid
from bandits.structures.rewards import LinearSum, RewardFunction, parse_reward

__all__ = [
    "MAX_DIMENSION",
    "MAX_ENTRIES",
    "MAX_USERS",
    "MAX_POOL",
    "MAX_LOADED_POOL",
    "MAX_FILE_BYTES",
    "MATROID_E1_VECTORS",
    "MATROID_E1_MEANS",
    "KINDS",
    "register_kind",
    "parse_combinatorial_env",
]

MATROID_E1_VECTORS = ((1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (0, 1, 1), (2, 0, 0), (0, 0, 0))
"""Chandak, Hu & Hegde (2023), §5.1 / Table 2: e1..e7 in ℝ³ (Neel & Neudauer 2009); e6 ∥ e1, e7 is
a loop."""
MATROID_E1_MEANS = (0.8, 0.75, 0.6, 0.2, 0.3, 0.4, 0.7)
"""Chandak, Hu & Hegde (2023), Table 2: the Bernoulli means of e1..e7."""

MAX_DIMENSION = 1000
"""The most entries of one vector (``matroid-linear`` vectors, ``superarms`` sets)."""
MAX_ENTRIES = 10**6
"""The most numbers one list of vectors or sets may hold in all."""
MAX_USERS = 10**6
"""The most users of ``movielens-like`` (its pool is users × items)."""
MAX_POOL = 2 * 10**6
"""The most user × item entries of a ``movielens-like`` pool: drawing and calibrating it costs
about 2 µs and 50 bytes per entry (2·10⁶: a few seconds, 0.1 GB; the default is 6040 × 100)."""
MAX_LOADED_POOL = 10**8
"""The most user × ``top`` entries of a ``movielens`` pool read from files (one byte each)."""
MAX_FILE_BYTES = 1 << 28
"""The largest ``movielens`` ratings or movies file read (256 MiB; ML-1M's ratings.dat has 24 MB)."""

Builder = Callable[[dict[str, str], str], Environment]
KINDS: dict[str, Builder] = {}
"""kind → builder(params, spec); see :func:`register_kind`."""


def register_kind(name: str, builder: Builder) -> None:
    """Register a new kind: ``builder(params, spec)`` gets the ``KEY=VALUE`` pairs as strings
    (a bare name under the key ``"name"``) and the whole spec, and returns an environment."""
    if not isinstance(name, str) or not name or ":" in name:
        raise ValueError(f"name must be a non-empty string without ':', got {name!r}")
    KINDS[name] = builder


# ---------------------------------------------------------------------------------------
# values


def _params(body: str, spec: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for i, part in enumerate(p.strip() for p in body.split(",")):
        if not part:
            raise ValueError(f"spec parameters must be KEY=VALUE pairs separated by commas, got {spec!r}")
        key, eq, value = part.partition("=")
        if not eq:
            if i != 0:
                raise ValueError(f"spec parameter {part!r} must look like KEY=VALUE (in {spec!r})")
            key, value = "name", key
        key = key.strip().lower()
        if key in out:
            raise ValueError(f"spec parameter {key!r} given twice (in {spec!r})")
        out[key] = value.strip()
    return out


def _number(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{what} must be a number, got {text!r}") from None


def _int(text: str, what: str, low: int = 1, high: int | None = None) -> int:
    span = f">= {low}" if high is None else f"in [{low}, {high}]"
    try:
        v = int(text)
    except ValueError:
        raise ValueError(f"{what} must be an integer {span}, got {text!r}") from None
    if v < low or (high is not None and v > high):
        raise ValueError(f"{what} must be an integer {span}, got {text!r}")
    return v


def too_many(what: str, count: int, limit: int, unit: str = "entries") -> ValueError:
    """The refusal of a size over its limit: the field, the size and the limit, in one line."""
    return ValueError(f"{what} has {count:,} {unit}, more than the limit {limit:,}")


def _floats(text: str, what: str, limit: int = MAX_ARMS) -> tuple[float, ...]:
    """A ``/``-separated list whose items may repeat (``0.5x12``); the total, repeat counts
    included, is checked against ``limit`` before the list is built."""
    items: list[tuple[str, int]] = []
    for item in text.split("/"):
        value, x, count = item.strip().partition("x")
        items.append((value, _int(count, f"the repeat count in {what}") if x else 1))
    total = sum(n for _, n in items)
    if total > limit:
        raise too_many(what, total, limit, "entries (repeat counts included)")
    out: list[float] = []
    for value, n in items:
        out.extend([_number(value, what)] * n)
    return tuple(out)


def _items(text: str, what: str, sep: str = "/", limit: int = MAX_ARMS) -> list[str]:
    parts = text.split(sep)
    if len(parts) > limit:
        raise too_many(what, len(parts), limit)
    return parts


def _vectors(text: str, what: str, limit: int = MAX_ARMS) -> tuple[tuple[float, ...], ...]:
    rows = [item.split("_") for item in _items(text, what, limit=limit)]
    longest = max(len(r) for r in rows)
    if longest > MAX_DIMENSION:
        raise too_many(f"one of the {what}", longest, MAX_DIMENSION)
    total = sum(len(r) for r in rows)
    if total > MAX_ENTRIES:
        raise too_many(what, total, MAX_ENTRIES, "numbers")
    return tuple(tuple(_number(v, what) for v in row) for row in rows)


def _ints(text: str, what: str, low: int = 0) -> tuple[int, ...]:
    return tuple(_int(v, what, low) for v in _items(text.replace("/", "_"), what, "_"))


def _edges(text: str, what: str) -> tuple[tuple[int, int], ...]:
    out = []
    for item in _items(text, what):
        u, dash, v = item.partition("-")
        if not dash:
            raise ValueError(f"{what} must be edges u-v separated by '/', got {item!r}")
        out.append((_int(u, what, 0, MAX_ARMS - 1), _int(v, what, 0, MAX_ARMS - 1)))
    return tuple(out)


def _need(params: dict[str, str], key: str, kind: str) -> str:
    if key not in params:
        raise ValueError(f"{kind} needs the parameter {key}= (see bandits.environments.grammar)")
    return params.pop(key)


def _done(params: dict[str, str], kind: str) -> None:
    if params:
        raise ValueError(f"{kind} has no parameter(s) {sorted(params)} (see bandits.environments.grammar)")


def _reward(params: dict[str, str]) -> RewardFunction:
    return parse_reward(params.pop("reward", "sum"))


def _coupling(params: dict[str, str], reward: RewardFunction) -> str:
    default = "independent" if reward.unbiased_under("independent") else reward.couplings[0]
    value = params.pop("coupling", default).strip().lower()
    if value not in ("independent", "comonotone"):
        raise ValueError(f"coupling must be 'independent' or 'comonotone', got {value!r}")
    return value


# ---------------------------------------------------------------------------------------
# kinds


def _semibandit(
    structure: ActionStructure, means: tuple[float, ...], coupling: str, spec: str
) -> Environment:
    from bandits.environments.semibandit import SemiBanditEnv

    return SemiBanditEnv(means, structure, coupling, name=spec)


def _topk(params: dict[str, str], spec: str) -> Environment:
    k = _int(_need(params, "k", "topk"), "k", 1, MAX_ARMS)
    means = _floats(_need(params, "means", "topk"), "means")
    reward = _reward(params)
    coupling = _coupling(params, reward)
    _done(params, "topk")
    structure = TopK(k) if isinstance(reward, LinearSum) else SemiBandit(k, reward)
    return _semibandit(structure, means, coupling, spec)


def _ranking(params: dict[str, str], spec: str) -> Environment:
    k = _int(_need(params, "k", "ranking"), "k", 1, MAX_ARMS)
    means = _floats(_need(params, "means", "ranking"), "means")
    _done(params, "ranking")
    return _semibandit(Ranking(k), means, "independent", spec)


def _paths(params: dict[str, str], spec: str) -> Environment:
    from bandits.environments.semibandit import PathEnv

    k = _int(_need(params, "k", "paths"), "k", 1, MAX_ARMS)
    reward = _reward(params)
    if "means" in params:
        path_means = _floats(params.pop("means"), "means", MAX_ARMS // k)
    else:
        n = _int(_need(params, "paths", "paths"), "paths", 2, MAX_ARMS)
        if n * k > MAX_ARMS:
            raise ValueError(f"paths x k = {n:,} x {k:,} = {n * k:,} arms, more than the limit {MAX_ARMS:,}")
        base = _unit(params.pop("base", "0.5"), "base")
        gap = _unit(params.pop("gap", "0.1"), "gap")
        low = base - gap / (reward.b_1(k) * k)
        if not low >= 0.0:
            raise ValueError(f"gap must leave the other paths a mean base - gap/(B_1 k) >= 0, got {gap:g}")
        path_means = (base,) + (low,) * (n - 1)
    if len(path_means) * k > MAX_ARMS:
        raise ValueError(
            f"paths x k = {len(path_means):,} x {k:,} = {len(path_means) * k:,} arms, more than the limit "
            f"{MAX_ARMS:,}"
        )
    _done(params, "paths")
    return PathEnv(path_means, k, reward, name=spec)


def _unit(text: str, what: str) -> float:
    v = _number(text, what)
    if not 0.0 <= v <= 1.0:
        raise ValueError(f"{what} must be in [0, 1], got {text!r}")
    return v


def _superarms(params: dict[str, str], spec: str) -> Environment:
    sets = tuple(tuple(_int(x, "sets", 0, MAX_ARMS - 1) for x in v.split("_"))
                 for v in _items(_need(params, "sets", "superarms"), "sets"))  # fmt: skip
    if sum(len(v) for v in sets) > MAX_ENTRIES:
        raise too_many("sets", sum(len(v) for v in sets), MAX_ENTRIES, "numbers")
    means = _floats(_need(params, "means", "superarms"), "means")
    reward = _reward(params)
    coupling = _coupling(params, reward)
    _done(params, "superarms")
    return _semibandit(SuperArms(sets, reward), means, coupling, spec)


def _matroid_env(matroid: Any, params: dict[str, str], kind: str, spec: str) -> Environment:
    means = _floats(_need(params, "means", kind), "means")
    reward = _reward(params)
    coupling = _coupling(params, reward)
    _done(params, kind)
    return _semibandit(MatroidBasis(matroid, reward), means, coupling, spec)


def _linear(params: dict[str, str], spec: str) -> Environment:
    name = params.pop("name", None)
    if name is not None:
        if name.lower() != "e1":
            raise ValueError(f"matroid-linear knows the named instance 'e1', got {name!r}")
        params.setdefault("means", "/".join(repr(m) for m in MATROID_E1_MEANS))
        matroid = LinearMatroid.from_rows(MATROID_E1_VECTORS)
    else:
        matroid = LinearMatroid(_vectors(_need(params, "vectors", "matroid-linear"), "vectors"))
    return _matroid_env(matroid, params, "matroid-linear", spec)


def _uniform(params: dict[str, str], spec: str) -> Environment:
    k = _int(_need(params, "k", "matroid-uniform"), "k", 1, MAX_ARMS)
    means = params.get("means")
    n = len(_floats(means, "means")) if means is not None else 0
    return _matroid_env(UniformMatroid(max(n, 1), k), params, "matroid-uniform", spec)


def _partition(params: dict[str, str], spec: str) -> Environment:
    blocks = _ints(_need(params, "blocks", "matroid-partition"), "blocks")
    caps = _ints(_need(params, "caps", "matroid-partition"), "caps")
    return _matroid_env(PartitionMatroid(blocks, caps), params, "matroid-partition", spec)


def _graphic(params: dict[str, str], spec: str) -> Environment:
    nv = _int(_need(params, "vertices", "matroid-graphic"), "vertices", 1, MAX_ARMS)
    edges = _edges(_need(params, "edges", "matroid-graphic"), "edges")
    return _matroid_env(GraphicMatroid(nv, edges), params, "matroid-graphic", spec)


def _movielens_like(params: dict[str, str], spec: str) -> Environment:
    from bandits.environments.movielens import movielens_env, movielens_like

    items = _int(params.pop("items", "100"), "items", 2, MAX_ARMS)
    users = _int(params.pop("users", "6040"), "users", 1, MAX_USERS)
    if users * items > MAX_POOL:
        raise ValueError(
            f"users x items = {users:,} x {items:,} = {users * items:,} pool entries, more than the limit "
            f"{MAX_POOL:,} (about 2 us and 50 bytes each to build)"
        )
    seed = _int(params.pop("seed", "0"), "seed", 0, 2**63 - 1)
    coupling = params.pop("coupling", "latent")
    reward = params.pop("reward", "sum")
    _done(params, "movielens-like")
    env = movielens_env(movielens_like(items=items, users=users, seed=seed), coupling=coupling, reward=reward)
    object.__setattr__(env, "name", spec)
    return env


def readable_file(path: str, what: str, limit: int = MAX_FILE_BYTES) -> str:
    """``path`` if it names an existing readable file of at most ``limit`` bytes, else a
    ``ValueError`` naming ``what`` (checked before any work)."""
    import os

    if not path:
        raise ValueError(f"{what} must name a file, got ''")
    if not os.path.exists(path):
        raise ValueError(f"{what}: no such file {path!r}")
    if not os.path.isfile(path):
        raise ValueError(f"{what}: {path!r} is not a regular file")
    if not os.access(path, os.R_OK):
        raise ValueError(f"{what}: {path!r} is not readable")
    size = os.path.getsize(path)
    if size > limit:
        raise too_many(f"{what} {path!r}", size, limit, "bytes")
    return path


def _movielens(params: dict[str, str], spec: str) -> Environment:
    from bandits.environments.movielens import load_movielens, movielens_env

    ratings = readable_file(_need(params, "ratings", "movielens"), "ratings")
    movies = readable_file(_need(params, "movies", "movielens"), "movies")
    top = _int(params.pop("top", "100"), "top", 1, MAX_ARMS)
    coupling = params.pop("coupling", "latent")
    reward = params.pop("reward", "sum")
    _done(params, "movielens")
    data = load_movielens(ratings, movies, top=top, max_pool=MAX_LOADED_POOL)
    env = movielens_env(data, coupling=coupling, reward=reward)
    object.__setattr__(env, "name", spec)
    return env


for _name, _builder in (
    ("topk", _topk),
    ("ranking", _ranking),
    ("paths", _paths),
    ("superarms", _superarms),
    ("matroid-linear", _linear),
    ("matroid-uniform", _uniform),
    ("matroid-partition", _partition),
    ("matroid-graphic", _graphic),
    ("movielens-like", _movielens_like),
    ("movielens", _movielens),
):
    register_kind(_name, _builder)


def parse_combinatorial_env(spec: str) -> Environment:
    """Parse a combinatorial ``--env`` spec (module docstring).

    >>> parse_combinatorial_env("topk:k=2")
    Traceback (most recent call last):
    ...
    ValueError: topk needs the parameter means= (see bandits.environments.grammar)
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise ValueError(
            f"spec must look like KIND:KEY=VALUE,... (kinds: {', '.join(sorted(KINDS))}), got {spec!r}"
        )
    kind, _, body = spec.partition(":")
    kind = kind.strip().lower()
    if kind not in KINDS:
        raise ValueError(f"spec kind must be one of {sorted(KINDS)}, got {kind!r}")
    return KINDS[kind](_params(body, spec), spec.strip())
