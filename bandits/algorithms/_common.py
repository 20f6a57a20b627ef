"""What several spec modules share, without importing the code behind it.

Declaring a spec must stay cheap (``dpaudit run ALG --bad-option`` imports every spec module),
so the environment grammars are wrapped in functions that import them on first use, and the
option choices of the policies are repeated here (``tests/test_registry.py`` checks that they
agree with the modules that define them). This module has no ``SPECS``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bandits.environments import Environment

TIE_RULES = ("index", "random")
"""The oracles' tie rules (:data:`bandits.combinatorial.TIE_RULES`)."""


def parse_combinatorial_env(text: str) -> Environment:
    """:func:`bandits.env_grammar.parse_combinatorial_env`, imported when called."""
    from bandits.env_grammar import parse_combinatorial_env as parse

    return parse(text)


def parse_cascade_env(text: str) -> Environment:
    """:func:`bandits.cascade_env.parse_cascade_env`, imported when called."""
    from bandits.cascade_env import parse_cascade_env as parse

    return parse(text)
