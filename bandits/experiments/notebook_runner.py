"""One command per paper: ``python -m bandits.experiments.NAME [--full] [--out DIR]`` executes the
paper's notebook (``notebooks/NAME.ipynb``, whose cells call this package) without modifying it,
prints what its cells print, and says where the figures went.

Without ``--full`` everything runs at the reduced scale the test suite uses (seconds to a minute);
with ``--full`` at the paper's scale (minutes; the shipped figures in ``docs/img`` come from
there). Figures go to ``--out`` (default: ``docs/img`` with ``--full``, a fresh folder under the
system's temporary directory otherwise, so a quick run never overwrites the shipped figures).
The notebooks need ``nbclient`` and ``ipykernel`` (the ``notebooks`` extra:
``pip install -e ".[notebooks]"``) and the repository's ``notebooks/`` folder.

Every experiment module with a ``__main__`` (``matroid_bandits``, ``combinatorial_semibandits``,
``cascading_bandits``, ``thompson_sampling_figures``) calls :func:`main`;
``private_stochastic_bandits`` runs its grid directly.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["NOTEBOOKS", "FIGURE_SUFFIXES", "default_out", "execute_notebook", "main"]

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
"""The repository's notebooks folder (the notebooks are not part of the installed packages)."""
FIGURE_SUFFIXES = (".png", ".pdf", ".svg")


def default_out(name: str, full: bool) -> Path:
    """Where the figures go unless ``--out`` says otherwise (module docstring)."""
    if full:
        return NOTEBOOKS.parent / "docs" / "img"
    return Path(tempfile.gettempdir()) / "dpaudit-experiments" / name


def _parser(name: str, title: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"python -m bandits.experiments.{name}", description=title)
    p.add_argument("--full", action="store_true", help="the paper's scale (minutes), not the reduced one")
    p.add_argument("--out", type=Path, default=None,
                   help="folder for the figures (default: docs/img with --full, else a temporary one)")
    p.add_argument("--timeout", type=float, default=None, help="seconds per cell (default: none)")
    return p


def execute_notebook(nb: Any, workdir: Path, timeout: float | None = None) -> Any:
    """Execute ``nb`` (an nbformat notebook) in place with a ``python3`` kernel started in
    ``workdir``; Ctrl-C stops the caller too.

    nbclient handles SIGINT itself while a cell runs: it shuts the kernel down, and the caller
    sees a dead kernel, not the interrupt, so a test suite would go on with the next notebook.
    Here an interrupt during execution is raised as ``KeyboardInterrupt`` once the kernel is
    gone (and the kernel is shut down whatever happens).
    """
    import nbclient

    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(workdir)}})  # fmt: skip
    try:
        client.execute()
    except Exception:
        if getattr(client, "_async_cleanup_kernel_future", None) is not None:  # nbclient saw SIGINT
            raise KeyboardInterrupt from None
        raise
    finally:
        if client.km is not None and client.km.has_kernel:
            client.km.shutdown_kernel(now=True)
    if getattr(client, "_async_cleanup_kernel_future", None) is not None:
        raise KeyboardInterrupt
    return nb


def _execute(path: Path, out: Path, full: bool, timeout: float | None) -> list[str]:
    """The notebook at ``path`` executed in memory (the file is not rewritten); its stdout."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    path_entries = filter(None, [str(NOTEBOOKS.parent), os.environ.get("PYTHONPATH")])
    env = {"DPAUDIT_FULL_SCALE": "1" if full else "0", "DPAUDIT_FIGURES_DIR": str(out),
           "PYTHONPATH": os.pathsep.join(path_entries)}  # fmt: skip
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the kernel inherits the environment
    try:
        execute_notebook(nb, out, timeout)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    text = []
    for cell in nb.cells:
        for o in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if o.get("output_type") == "stream" and o.get("name") == "stdout":
                text.append(o["text"])
    return text


def main(name: str, title: str, argv: Sequence[str] | None = None) -> int:
    """Run ``notebooks/NAME.ipynb`` as the module docstring says; the exit status."""
    args = _parser(name, title).parse_args(argv)
    path = NOTEBOOKS / f"{name}.ipynb"
    if not path.exists():
        print(f"{path} not found: the notebooks ship with the repository, not the package", file=sys.stderr)
        return 2
    try:
        import nbclient  # noqa: F401
        import nbformat  # noqa: F401
    except ModuleNotFoundError as exc:
        print(f"{exc.name} is needed to run the notebook: pip install -e '.[notebooks]'", file=sys.stderr)
        return 2
    out = (args.out or default_out(name, args.full)).resolve()
    out.mkdir(parents=True, exist_ok=True)
    scale = "full" if args.full else "reduced"
    print(f"{name}: {scale} scale, figures to {out}", flush=True)
    start = time.perf_counter()
    before = {p: p.stat().st_mtime for p in out.iterdir()}
    for chunk in _execute(path, out, args.full, args.timeout):
        sys.stdout.write(chunk)
    written = sorted(p for p in out.iterdir()
                     if p.suffix in FIGURE_SUFFIXES and before.get(p) != p.stat().st_mtime)  # fmt: skip
    print(f"{name}: done in {time.perf_counter() - start:.0f} s; {len(written)} figure(s) written to {out}:")
    for p in written:
        print(f"  {p}")
    return 0
