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
from bandits.structures.combinatorial import MatroidBasis, SemiBandit, SuperArms
from bandits.structures.linear_matroid import LinearMatroid
from bandits.structures.matroids import GraphicMatroid, PartitionMatroid, UniformMatroid
from bandits.structures.rewards import LinearSum, RewardFunction, parse_reward

__all__ = [
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


def _int(text: str, what: str, low: int = 1) -> int:
    try:
        v = int(text)
    except ValueError:
        raise ValueError(f"{what} must be an integer >= {low}, got {text!r}") from None
    if v < low:
        raise ValueError(f"{what} must be an integer >= {low}, got {text!r}")
    return v


def _floats(text: str, what: str) -> tuple[float, ...]:
    out: list[float] = []
    for item in text.split("/"):
        value, x, count = item.strip().partition("x")
        n = _int(count, f"the repeat count in {what}") if x else 1
        out.extend([_number(value, what)] * n)
    return tuple(out)


def _vectors(text: str, what: str) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(_number(v, what) for v in item.split("_")) for item in text.split("/"))


def _ints(text: str, what: str, low: int = 0) -> tuple[int, ...]:
    return tuple(_int(v, what, low) for v in text.replace("/", "_").split("_"))


def _edges(text: str, what: str) -> tuple[tuple[int, int], ...]:
    out = []
    for item in text.split("/"):
        u, dash, v = item.partition("-")
        if not dash:
            raise ValueError(f"{what} must be edges u-v separated by '/', got {item!r}")
        out.append((_int(u, what, 0), _int(v, what, 0)))
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
    k = _int(_need(params, "k", "topk"), "k")
    means = _floats(_need(params, "means", "topk"), "means")
    reward = _reward(params)
    coupling = _coupling(params, reward)
    _done(params, "topk")
    structure = TopK(k) if isinstance(reward, LinearSum) else SemiBandit(k, reward)
    return _semibandit(structure, means, coupling, spec)


def _ranking(params: dict[str, str], spec: str) -> Environment:
    k = _int(_need(params, "k", "ranking"), "k")
    means = _floats(_need(params, "means", "ranking"), "means")
    _done(params, "ranking")
    return _semibandit(Ranking(k), means, "independent", spec)


def _paths(params: dict[str, str], spec: str) -> Environment:
    from bandits.environments.semibandit import PathEnv

    k = _int(_need(params, "k", "paths"), "k")
    reward = _reward(params)
    if "means" in params:
        path_means = _floats(params.pop("means"), "means")
    else:
        n = _int(_need(params, "paths", "paths"), "paths", 2)
        gap = _number(params.pop("gap", "0.1"), "gap")
        base = _number(params.pop("base", "0.5"), "base")
        low = base - gap / (reward.b_1(k) * k)
        path_means = (base,) + (low,) * (n - 1)
    _done(params, "paths")
    return PathEnv(path_means, k, reward, name=spec)


def _superarms(params: dict[str, str], spec: str) -> Environment:
    sets = tuple(tuple(int(x) for x in v) for v in _vectors(_need(params, "sets", "superarms"), "sets"))
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
    k = _int(_need(params, "k", "matroid-uniform"), "k")
    means = params.get("means")
    n = len(_floats(means, "means")) if means is not None else 0
    return _matroid_env(UniformMatroid(max(n, 1), k), params, "matroid-uniform", spec)


def _partition(params: dict[str, str], spec: str) -> Environment:
    blocks = _ints(_need(params, "blocks", "matroid-partition"), "blocks")
    caps = _ints(_need(params, "caps", "matroid-partition"), "caps")
    return _matroid_env(PartitionMatroid(blocks, caps), params, "matroid-partition", spec)


def _graphic(params: dict[str, str], spec: str) -> Environment:
    nv = _int(_need(params, "vertices", "matroid-graphic"), "vertices")
    edges = _edges(_need(params, "edges", "matroid-graphic"), "edges")
    return _matroid_env(GraphicMatroid(nv, edges), params, "matroid-graphic", spec)


def _movielens_like(params: dict[str, str], spec: str) -> Environment:
    from bandits.environments.movielens import movielens_env, movielens_like

    items = _int(params.pop("items", "100"), "items", 2)
    users = _int(params.pop("users", "6040"), "users")
    seed = _int(params.pop("seed", "0"), "seed", 0)
    coupling = params.pop("coupling", "latent")
    reward = params.pop("reward", "sum")
    _done(params, "movielens-like")
    env = movielens_env(movielens_like(items=items, users=users, seed=seed), coupling=coupling, reward=reward)
    object.__setattr__(env, "name", spec)
    return env


def _movielens(params: dict[str, str], spec: str) -> Environment:
    from bandits.environments.movielens import load_movielens, movielens_env

    ratings = _need(params, "ratings", "movielens")
    movies = _need(params, "movies", "movielens")
    top = _int(params.pop("top", "100"), "top")
    coupling = params.pop("coupling", "latent")
    reward = params.pop("reward", "sum")
    _done(params, "movielens")
    env = movielens_env(load_movielens(ratings, movies, top=top), coupling=coupling, reward=reward)
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
