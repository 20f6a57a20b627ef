"""Figures of the experiment notebooks: shown inline, saved only when the caller names a folder.

The notebooks' setup cells call these, so that where a figure goes is decided in one place:
``DPAUDIT_FIGURES_DIR`` (set by ``python -m bandits.experiments.NAME`` and by the test suite)
names the folder; without it nothing is written.

>>> import os, tempfile
>>> os.environ[ENV] = tempfile.mkdtemp()
>>> figures_dir().is_dir()
True
>>> del os.environ[ENV]
>>> figures_dir() is None
True
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["ENV", "figures_dir", "show"]

ENV = "DPAUDIT_FIGURES_DIR"


def figures_dir() -> Path | None:
    """The folder named by ``DPAUDIT_FIGURES_DIR`` (created), or ``None`` when it is unset."""
    name = os.environ.get(ENV)
    if not name:
        return None
    folder = Path(name)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def show(fig: Any, name: str, dpi: int = 110) -> None:
    """Display ``fig`` in the notebook; save it as ``name`` in :func:`figures_dir` too when set.

    The figure is drawn once, as PNG at ``dpi``: the saved file and the inline image are the same
    bytes (displaying the figure object would draw it again, at the inline backend's own size)."""
    import io

    import matplotlib.pyplot as plt
    from IPython.display import Image, display

    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=dpi)
    folder = figures_dir()
    if folder is not None:
        if Path(name).suffix.lower() == ".png":
            (folder / name).write_bytes(png.getvalue())
        else:
            fig.savefig(folder / name, dpi=dpi)
    display(Image(data=png.getvalue()))
    plt.close(fig)
