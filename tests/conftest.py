"""Shared pytest options and the ``slow`` marks of doctests.

Tests that take more than about a second are marked ``@pytest.mark.slow`` where they are defined;
the doctests of :data:`SLOW_DOCTESTS` (which cannot carry a decorator) are marked here, so that
``python -m pytest -m "not slow"`` is the quick subset (README).

``--slow`` enlarges the standing soundness sweep (``tests/test_soundness.py``) from its default
size (≥ 10⁴ certified values in well under a minute) to a long run. The option is passed to the
test modules through the environment variable ``DPAUDIT_SOUNDNESS_SCALE`` because hypothesis
settings are fixed when a module is imported.

``DPAUDIT_FLOOR_REPS`` (below) makes the simulated detection floors of audits cheaper.
"""

from __future__ import annotations

import os

import pytest

SLOW_SCALE = 20

NUMBA = [pytest.param(True, id="numba"), pytest.param(False, id="numpy")]
"""Parameters of :func:`numba_mode`: ``@pytest.mark.parametrize("numba_mode", NUMBA, indirect=True)``."""


@pytest.fixture
def numba_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Run the test with the compiled loops (skipped without numba) or with the NumPy fallback."""
    from bandits.engine import compiled

    if request.param:
        monkeypatch.setenv("DPAUDIT_NUMBA", "1")
        if not compiled.available():
            pytest.skip("numba is not installed")
    else:
        monkeypatch.setenv("DPAUDIT_NUMBA", "0")
        assert not compiled.available()
    return bool(request.param)

# The audits' detection floors are simulated (dpaudit.audit.procedure_floor): the suite uses 64
# pilots per search (256 per polish) instead of 400, which keeps their cost small; the docs'
# examples and the floor checks run at the default (tests/test_docs.py, test_procedure_floor.py).
os.environ.setdefault("DPAUDIT_FLOOR_REPS", "64")

SLOW_DOCTESTS = (
    "bandits/auditing/black_box.py",
    "bandits/auditing/contract.py",
    "bandits/matroid/policies.py",
    "bandits/thompson/audit.py",
    "bandits/thompson/outputs_floor.py",
    "bandits/thompson/tuner.py",
    "dpaudit/analyses/rnm_gaussian.py",
    "dpaudit/audit/plot.py",
    "mechanisms/auditing/pairs.py",
)
"""Modules whose doctests run audits or simulations (each a second or more)."""


@pytest.fixture(autouse=True)
def _own_kept_floors(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own store of measured floors (bandits.auditing.kept_floors): a floor one test
    measures must not decide another's default audit."""
    monkeypatch.setenv("DPAUDIT_KEPT_FLOORS", str(tmp_path_factory.mktemp("kept-floors")))


def pytest_addoption(parser):
    parser.addoption(
        "--slow",
        action="store_true",
        default=False,
        help=f"run the soundness sweep at {SLOW_SCALE}x its default size (tests/test_soundness.py)",
    )


def pytest_configure(config):
    if config.getoption("--slow"):
        os.environ["DPAUDIT_SOUNDNESS_SCALE"] = str(SLOW_SCALE)


def pytest_collection_modifyitems(config, items):
    import pytest

    for item in items:
        path = item.nodeid.split("::", 1)[0]
        if path in SLOW_DOCTESTS and type(item).__name__ == "DoctestItem":
            item.add_marker(pytest.mark.slow)
