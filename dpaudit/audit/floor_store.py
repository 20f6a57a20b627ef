"""Where computed detection floors are kept: shipped with the package, and on disk.

A floor of :mod:`dpaudit.audit.procedure_floor` depends on the audit's procedure only (sizes,
designs, confidence, claim, simulation size and seed), never on the audited data, and on the
code that computes it. Each floor is stored under a name derived from both (a name-based UUID of
the code of :data:`CODE` and of the floor's parameters):

* **shipped** — ``shipped_floors.json`` beside this module holds the floors of every default
  ``dpaudit run ALG`` and ``dpaudit audit MECH`` (and the README's audit examples), so a first
  audit at the defaults pays nothing for them; the file records the code it was computed with
  and is ignored when that code changed (``tests/test_procedure_floor.py`` then fails until it
  is regenerated: ``python -m dpaudit.audit.floor_store``, a few minutes);
* **on disk** — one small JSON file per floor under ``$DPAUDIT_CACHE_DIR`` (default
  ``~/.cache/dpaudit``; ``off`` disables it), written atomically, so a repeated audit pays
  nothing either.

Example:
    >>> name = key_name(["gaussian", 0.0, {"designs": 1}])
    >>> len(name), read(name) is None   # nothing stored under a made-up key
    (32, True)
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["CODE", "code_hash", "key_name", "read", "write", "cache_dir", "SHIPPED", "DEFAULT_COMMANDS"]

CODE = ("pilot", "power", "reference_pairs", "procedure_floor", "clopper_pearson", "multiplicity",
        "thresholds")  # fmt: skip
"""The modules of :mod:`dpaudit.audit` whose code determines a floor."""

SHIPPED = Path(__file__).resolve().with_name("shipped_floors.json")

DEFAULT_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("audit", "gaussian", "--sensitivity", "1", "--sigma", "1", "--trials", "1000000"),
    ("audit", "rnm-laplace", "--scale", "1", "--epoch-length", "16", "--claim-published"),
)
"""The README's audits (``dpaudit audit`` has no default mechanism parameters), whose floors are
shipped besides those of ``dpaudit run ALG`` for every registered algorithm."""


@functools.lru_cache(maxsize=1)
def code_hash() -> str:
    """A name-based (SHA-1) UUID of the source of :data:`CODE`."""
    here = Path(__file__).resolve().parent
    text = "".join((here / f"{name}.py").read_text(encoding="utf-8") for name in CODE)
    return uuid.uuid5(uuid.NAMESPACE_URL, text).hex


def key_name(parts: Sequence[Any]) -> str:
    """The name a floor with these (JSON-ready) parameters is stored under, for this code."""
    return uuid.uuid5(uuid.NAMESPACE_URL, json.dumps([code_hash(), *parts])).hex


def cache_dir() -> Path | None:
    """The on-disk store (module docstring), ``None`` when switched off."""
    root = os.environ.get("DPAUDIT_CACHE_DIR", "")
    if root.lower() in ("off", "0", "none"):
        return None
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return (Path(root) if root else home / "dpaudit") / "floors"


@functools.lru_cache(maxsize=1)
def _shipped() -> dict[str, Any]:
    try:
        data = json.loads(SHIPPED.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data.get("floors", {}) if data.get("code") == code_hash() else {}


def read(name: str) -> dict[str, Any] | None:
    """The stored floor called ``name`` (shipped first, then on disk), else ``None``."""
    if name in _shipped():
        return dict(_shipped()[name])
    root = cache_dir()
    if root is None:
        return None
    try:
        return dict(json.loads((root / f"{name}.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def write(name: str, value: dict[str, Any]) -> None:
    """Store a floor on disk (atomically; a store that cannot be written is a miss next time)."""
    root = cache_dir()
    if root is not None:
        write_json(root, name, value)


def write_json(root: Path, name: str, value: dict[str, Any]) -> None:
    """Write ``value`` as ``root/name.json`` atomically (a temporary file, then a rename); a
    directory that cannot be written is passed over silently (the entry is a miss next time)."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=root, suffix=".tmp", delete=False) as fh:
            fh.write(json.dumps(value))
        os.replace(fh.name, root / f"{name}.json")
    except OSError:
        pass
