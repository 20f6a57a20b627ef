"""Shared pytest options and the ``slow`` marks of doctests.

Tests that take more than about a second are marked ``@pytest.mark.slow`` where they are defined;
the doctests of :data:`SLOW_DOCTESTS` (which cannot carry a decorator) are marked here, so that
``python -m pytest -m "not slow"`` is the quick subset (README).

``--slow`` enlarges the standing soundness sweep (``tests/test_soundness.py``) from its default
size (≥ 10⁴ certified values in well under a minute) to a long run. The option is passed to the
test modules through the environment variable ``DPAUDIT_SOUNDNESS_SCALE`` because hypothesis
settings are fixed when a module is imported.

``DPAUDIT_FLOOR_REPS`` (below) makes the simulated detection floors of audits cheaper, and the
floors the suite simulates are kept (:data:`SUITE_FLOORS`): a fresh machine reads them instead of
simulating them again.

The files run heaviest first (:data:`FILE_SECONDS`, a file's seconds in the last recorded run;
a file not recorded counts as heaviest): the two xdist workers take whole files (``--dist
loadfile``) in collection order, so a heavy file collected last would leave one worker running it
alone at the end. ``DPAUDIT_RECORD_FILE_SECONDS=tests/file_seconds.json python -m pytest``
records them again.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path

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
    "bandits/experiments/tuner_vs_grid.py",
    "bandits/thompson/audit.py",
    "bandits/thompson/draws_floor.py",
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


MP_DIGITS = 60
"""mpmath's working digits in every test (those of :mod:`tests.mp_reference`'s oracles), unless
its module declares its own ``MP_DIGITS``: set per test, so that no module's choice (a module-level
``mp.mp.dps = …`` runs at collection, when every worker imports every test module) decides
another's precision, and a test's result does not depend on which tests its worker ran before."""


@pytest.fixture(autouse=True)
def _mpmath_digits(request: pytest.FixtureRequest):
    import mpmath

    with mpmath.workdps(getattr(request.module, "MP_DIGITS", MP_DIGITS)):
        yield


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
    if not hasattr(config, "workerinput"):  # the controller (or -n 0); xdist workers inherit it
        os.environ[WHOLE_SUITE] = "1" if _whole_suite(config) else "0"
        os.environ["DPAUDIT_CACHE_DIR"] = _session_floor_store(bool(os.environ.get(RECORD_SUITE_FLOORS)))


WHOLE_SUITE = "DPAUDIT_WHOLE_SUITE"
"""Set to 1 by the session's controller when it collects the whole suite (tests/test_suite.py
counts it then): an xdist worker is handed the paths explicitly and cannot tell by itself."""


def _whole_suite(config) -> bool:
    """Whether the command line chose the whole suite: no paths, marks, keywords, deselection or
    re-run of the last failures."""
    opt = config.option
    chosen = config.args_source == pytest.Config.ArgsSource.ARGS
    return not (chosen or opt.markexpr or opt.keyword or getattr(opt, "deselect", None)
                or getattr(opt, "lf", False))  # fmt: skip


FILE_SECONDS = Path(__file__).with_name("file_seconds.json")
"""Seconds per test file (setup, call and teardown of its tests) in the last recorded full run."""

_SECONDS: dict[str, float] = defaultdict(float)


def _file(nodeid: str) -> str:
    """The file a test (or doctest) item belongs to, as its node id spells it."""
    return nodeid.split("::", 1)[0]


def _recorded() -> dict[str, float]:
    try:
        return {str(k): float(v) for k, v in json.loads(FILE_SECONDS.read_text(encoding="utf-8")).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def pytest_collection_modifyitems(config, items):
    seconds = _recorded()
    for item in items:
        if _file(item.nodeid) in SLOW_DOCTESTS and type(item).__name__ == "DoctestItem":
            item.add_marker(pytest.mark.slow)
    # heaviest file first (a stable sort: each file's tests keep their order and stay together)
    items.sort(key=lambda item: -seconds.get(_file(item.nodeid), math.inf))


def pytest_runtest_logreport(report):
    if os.environ.get("DPAUDIT_RECORD_FILE_SECONDS"):
        _SECONDS[_file(report.nodeid)] += report.duration


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput"):
        return  # what follows, the controller does once
    target = os.environ.get("DPAUDIT_RECORD_FILE_SECONDS")
    if target and _SECONDS:
        ranked = sorted(_SECONDS.items(), key=lambda kv: (-kv[1], kv[0]))
        text = json.dumps({k: round(v, 1) for k, v in ranked}, indent=1) + "\n"
        Path(target).write_text(text, encoding="utf-8")
    store = Path(os.environ.get("DPAUDIT_CACHE_DIR", ""))
    if store.name.startswith(_STORE_PREFIX):
        _NEW_FLOORS.extend(sorted(p.stem for p in (store / "floors").glob("*.json") if p.stem not in _kept()))
        if os.environ.get(RECORD_SUITE_FLOORS) and exitstatus == 0 and _whole_suite(session.config):
            _keep_suite_floors(store / "floors")
        shutil.rmtree(store, ignore_errors=True)


def pytest_terminal_summary(terminalreporter):
    if _NEW_FLOORS and not os.environ.get(RECORD_SUITE_FLOORS):
        terminalreporter.write_line(
            f"{len(_NEW_FLOORS)} detection floors were simulated that tests/suite_floors.json does not "
            f"keep (a fresh machine simulates them again): DPAUDIT_RECORD_SUITE_FLOORS=1 python -m pytest "
            f"records them")


SUITE_FLOORS = Path(__file__).with_name("suite_floors.json")
"""The detection floors (:mod:`dpaudit.audit.floor_store`) the whole suite simulated in its last
recorded run, with the code they were computed by. Each session starts from a temporary store
(``DPAUDIT_CACHE_DIR``, shared by the xdist workers and the commands the tests start) holding them
when that code is today's, and removes it at the end: the suite never reads or writes the user's
own store, and a fresh machine does not simulate them again. A floor's name includes its
parameters and the code, so a changed test simulates its own. ``DPAUDIT_RECORD_SUITE_FLOORS=1
python -m pytest`` (the whole suite, passing) records them again from an empty store;
``tests/test_procedure_floor.py`` fails when they were computed by other code, and a session that
simulated floors the file does not keep says how many at its end."""

RECORD_SUITE_FLOORS = "DPAUDIT_RECORD_SUITE_FLOORS"
_STORE_PREFIX = "dpaudit-suite-floors-"


_NEW_FLOORS: list[str] = []


def _kept() -> dict[str, dict]:
    """The floors of :data:`SUITE_FLOORS`, if this code computed them (else none)."""
    from dpaudit.audit import floor_store

    kept = json.loads(SUITE_FLOORS.read_text(encoding="utf-8")) if SUITE_FLOORS.exists() else {}
    return dict(kept["floors"]) if kept.get("code") == floor_store.code_hash() else {}


def _session_floor_store(empty: bool) -> str:
    """A new temporary store for this session, holding :data:`SUITE_FLOORS` unless ``empty``."""
    from dpaudit.audit import floor_store

    root = Path(tempfile.mkdtemp(prefix=_STORE_PREFIX))
    for name, value in ({} if empty else _kept()).items():
        floor_store.write_json(root / "floors", name, value)
    return str(root)


def _keep_suite_floors(floors: Path) -> None:
    """Write the floors this session's store holds to :data:`SUITE_FLOORS`."""
    from dpaudit.audit import floor_store

    found = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(floors.glob("*.json"))}
    text = json.dumps({"code": floor_store.code_hash(), "floors": found}, indent=0, sort_keys=True)
    SUITE_FLOORS.write_text(text + "\n", encoding="utf-8")
