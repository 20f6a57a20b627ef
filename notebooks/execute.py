"""Execute the notebooks in place, saving their outputs (what the repository ships).

Run from the repository root:

    python notebooks/execute.py                 # reduced scale (well under a minute each)
    DPAUDIT_FULL_SCALE=1 python notebooks/execute.py [NAME.ipynb ...]   # the papers' scale

Figures go to ``notebooks/figures/`` (or ``DPAUDIT_FIGURES_DIR``). The test suite executes the
same notebooks at reduced scale into a temporary directory (``tests/test_notebooks.py``) and
never writes here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).resolve().parent


def main(names: list[str]) -> None:
    os.environ.setdefault("DPAUDIT_FIGURES_DIR", str(HERE / "figures"))
    root = str(HERE.parent)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    paths = [HERE / n for n in names] if names else sorted(HERE.glob("*.ipynb"))
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        nbclient.NotebookClient(
            nb, timeout=None, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
        ).execute()
        nbformat.write(nb, path)
        print(f"executed {path.name}")


if __name__ == "__main__":
    main(sys.argv[1:])
