"""Every algorithm ``dpaudit run ALG`` knows, collected from the algorithm families.

Specs (:class:`~bandits.algorithm.AlgorithmSpec`) live in the ``spec`` module of each family
(``bandits.thompson.spec``, ``bandits.lazy.spec``, ...), each exposing a tuple ``SPECS``;
:func:`algorithms` imports them all on first use. Adding an algorithm to a family means adding a
spec to its ``SPECS``; adding a family means adding its ``spec`` module to :func:`_spec_modules`.

Example:
    >>> spec = get("ucb1")
    >>> spec.privacy, spec.feedback.value
    ('none', 'bandit')
    >>> sorted(algorithms())[:3]    # doctest: +ELLIPSIS
    [...]
"""

from __future__ import annotations

from types import ModuleType

from bandits.algorithm import AlgorithmSpec

__all__ = ["algorithms", "get"]

_REGISTRY: dict[str, AlgorithmSpec] = {}

def _spec_modules() -> tuple[ModuleType, ...]:
    """The ``spec`` module of every algorithm family (``bandits.<family>.spec``, each with a tuple
    ``SPECS``). The registry is the one framework module that imports the families, and it
    imports only their specs, which load no policy code."""
    from bandits.cascading import spec as cascading
    from bandits.dp_ts_ucb import spec as dp_ts_ucb
    from bandits.full_info import spec as full_info
    from bandits.lazy import spec as lazy
    from bandits.matroid import spec as matroid
    from bandits.references import spec as references
    from bandits.semibandits import spec as semibandits
    from bandits.thompson import spec as thompson

    return (thompson, dp_ts_ucb, lazy, full_info, matroid, semibandits, cascading, references)


def algorithms() -> dict[str, AlgorithmSpec]:
    """Every registered algorithm, by key (imports the families' ``spec`` modules on first use)."""
    if not _REGISTRY:
        for module in _spec_modules():
            for spec in getattr(module, "SPECS", ()):
                if spec.key in _REGISTRY:
                    raise RuntimeError(f"algorithm key {spec.key!r} registered twice")
                _REGISTRY[spec.key] = spec
    return dict(_REGISTRY)


def get(key: str) -> AlgorithmSpec:
    """The spec of ``key`` (``ValueError`` listing the known keys otherwise)."""
    specs = algorithms()
    if key not in specs:
        raise ValueError(f"ALG must be one of {', '.join(sorted(specs))}; got {key!r} (see 'dpaudit list')")
    return specs[key]
