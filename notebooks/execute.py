"""Execute the notebooks in place, saving their outputs (what the repository ships).

Run from the repository root:

    python notebooks/execute.py                 # reduced scale (well under a minute each)
    DPAUDIT_FULL_SCALE=1 python notebooks/execute.py [NAME.ipynb ...]   # the papers' scale

Figures are shown inline in the saved notebooks and written to ``notebooks/figures/`` (ignored
by git), or to ``DPAUDIT_FIGURES_DIR`` (``docs/img`` for the shipped figures). The test suite
executes the same notebooks at reduced scale into a temporary directory
(``tests/test_notebooks.py``) and never writes here. Ctrl-C stops the run and its kernel.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent


def main(names: list[str]) -> None:
    os.environ.setdefault("DPAUDIT_FIGURES_DIR", str(HERE / "figures"))
    root = str(HERE.parent)
    sys.path.insert(0, root)
    from bandits.experiments.notebook_runner import execute_notebook

    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    paths = [HERE / n for n in names] if names else sorted(HERE.glob("*.ipynb"))
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        execute_notebook(nb, HERE)
        nbformat.write(nb, path)
        print(f"executed {path.name}")


if __name__ == "__main__":
    main(sys.argv[1:])
