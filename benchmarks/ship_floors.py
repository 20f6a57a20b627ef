"""Regenerate ``dpaudit/audit/shipped_floors.json``: the detection floors of every default audit.

Runs ``dpaudit run ALG`` for every registered algorithm and the README's ``dpaudit audit``
examples (:data:`dpaudit.audit.floor_store.DEFAULT_COMMANDS`) with an empty floor store at the
default simulation size, and ships what they computed, stamped with the code that computed it
(:mod:`dpaudit.audit.floor_store`). Run it whenever a module of ``floor_store.CODE`` changes
(``tests/test_procedure_floor.py`` says so)::

    python benchmarks/ship_floors.py          # about two minutes
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bandits.registry import algorithms  # noqa: E402
from dpaudit.audit import floor_store  # noqa: E402
from dpaudit.cli.main import main as cli  # noqa: E402


def main() -> int:
    commands = [("run", key) for key in sorted(algorithms())] + list(floor_store.DEFAULT_COMMANDS)
    tmp = Path(tempfile.mkdtemp(prefix="dpaudit-floors-"))
    saved = {k: os.environ.pop(k, None) for k in ("DPAUDIT_FLOOR_REPS", "DPAUDIT_CACHE_DIR")}
    os.environ["DPAUDIT_CACHE_DIR"] = str(tmp)
    shipped = floor_store._shipped
    floor_store._shipped = lambda: {}  # compute every floor, shipped or not  # type: ignore[assignment]
    try:
        for argv in commands:
            with contextlib.redirect_stdout(io.StringIO()):
                if cli(list(argv)) not in (0, 1):
                    raise SystemExit(f"dpaudit {' '.join(argv)} failed")
            done = len(list((tmp / "floors").glob("*.json")))
            print(" ".join(argv), done, "floors so far", file=sys.stderr)
        floors = {p.stem: json.loads(p.read_text()) for p in sorted((tmp / "floors").glob("*.json"))}
    finally:
        floor_store._shipped = shipped  # type: ignore[assignment]
        shipped.cache_clear()
        shutil.rmtree(tmp, ignore_errors=True)
        os.environ.pop("DPAUDIT_CACHE_DIR", None)
        os.environ.update({k: v for k, v in saved.items() if v is not None})
    text = json.dumps({"code": floor_store.code_hash(), "floors": floors}, indent=0, sort_keys=True)
    floor_store.SHIPPED.write_text(text + "\n")
    print(f"{len(floors)} floors written to {floor_store.SHIPPED.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
