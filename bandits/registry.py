"""Every algorithm ``dpaudit run ALG`` knows, collected from the algorithm families.

Specs (:class:`~bandits.algorithm.AlgorithmSpec`) live in the ``spec`` module of each family
(``bandits.thompson.spec``, ``bandits.lazy.spec``, ...), each exposing a tuple ``SPECS``.
:func:`get` imports only the family of the key asked for (a run of one algorithm does not pay
for the import of the seven others); :func:`algorithms` imports them all. Adding an algorithm
to a family means adding a spec to its ``SPECS`` and its key to :data:`FAMILY_OF`; adding a
family means adding it to :data:`FAMILIES`. A spec whose key is missing from the index, or
indexed under another family, is refused when its family is loaded
(``tests/test_architecture.py`` loads them all).

Example:
    >>> spec = get("ucb1")
    >>> spec.privacy, spec.feedback.value
    ('none', 'bandit')
    >>> sorted(algorithms())[:3]    # doctest: +ELLIPSIS
    [...]
"""

from __future__ import annotations

import importlib
from types import ModuleType

from bandits.algorithm import AlgorithmSpec

__all__ = ["FAMILIES", "FAMILY_OF", "algorithms", "get"]

FAMILIES = ("thompson", "dp_ts_ucb", "lazy", "full_info", "matroid", "semibandits", "cascading", "references")
"""The algorithm families, in the order ``dpaudit list`` groups them (``bandits.<family>``)."""

FAMILY_OF: dict[str, str] = {
    "ts": "thompson",
    "dp-ts-ucb": "dp_ts_ucb",
    **dict.fromkeys(("lazy-ucb", "lazy-dp-ts", "dp-se", "adap-klucb", "adap-ucb"), "lazy"),
    **dict.fromkeys(("rnm-ftnl", "naive-ftnl"), "full_info"),
    **dict.fromkeys(("dpucb-mat", "dpts-mat", "omm", "cts-gaussian"), "matroid"),
    **dict.fromkeys(("cucb-ldp1", "cucb-ldp2", "cucb-dp", "cucb"), "semibandits"),
    **dict.fromkeys(("cascade-ucb", "cascade-dp", "cascade-dp-sound", "cascade-ldp-laplace",
                     "cascade-ldp-gaussian", "cascade-ldp-laplace-sound", "cascade-ldp-gaussian-sound",
                     "cucb-ldp-gaussian"), "cascading"),
    **dict.fromkeys(("ucb1", "beta-ts"), "references"),
}
"""The family of every registered key: which ``spec`` module :func:`get` imports."""

_REGISTRY: dict[str, AlgorithmSpec] = {}


def _load(family: str) -> ModuleType:
    """Import ``bandits.<family>.spec`` and register its specs (keys already present stay)."""
    module = importlib.import_module(f"bandits.{family}.spec")
    keys = [spec.key for spec in getattr(module, "SPECS", ())]
    if len(set(keys)) != len(keys):
        raise RuntimeError(f"bandits.{family}.spec registers a key twice: {sorted(keys)}")
    for spec in getattr(module, "SPECS", ()):
        if FAMILY_OF.get(spec.key) != family:
            raise RuntimeError(f"algorithm key {spec.key!r} of bandits.{family}.spec is indexed under "
                               f"{FAMILY_OF.get(spec.key)!r} in bandits.registry.FAMILY_OF")
        _REGISTRY.setdefault(spec.key, spec)
    return module


def _spec_modules() -> tuple[ModuleType, ...]:
    """The ``spec`` module of every algorithm family (``bandits.<family>.spec``, each with a tuple
    ``SPECS``), their specs registered. The registry is the one framework module that imports the
    families, and it imports only their specs, which load no policy code."""
    return tuple(_load(family) for family in FAMILIES)


def algorithms() -> dict[str, AlgorithmSpec]:
    """Every registered algorithm, by key (imports every family's ``spec`` module)."""
    _spec_modules()
    return dict(_REGISTRY)


def get(key: str) -> AlgorithmSpec:
    """The spec of ``key``, importing only its family (``ValueError`` listing the known keys
    otherwise)."""
    if key not in _REGISTRY and key in FAMILY_OF:
        _load(FAMILY_OF[key])
    if key not in _REGISTRY:
        known = sorted(set(FAMILY_OF) | set(_REGISTRY))
        raise ValueError(f"ALG must be one of {', '.join(known)}; got {key!r} (see 'dpaudit list')")
    return _REGISTRY[key]
