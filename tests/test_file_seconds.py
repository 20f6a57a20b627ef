"""The suite's schedule (``tests/conftest.py``): the two xdist workers take whole files, heaviest
first by ``tests/file_seconds.json``. A file missing from it runs first, whatever it costs, and a
heavy file recorded as light runs last, alone on one worker: the record must name every test file
and nothing that is gone. Record it again with ``DPAUDIT_RECORD_FILE_SECONDS=tests/file_seconds.json
python -m pytest`` (a full run)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import FILE_SECONDS, _file, _recorded

ROOT = Path(__file__).resolve().parents[1]


def test_every_test_file_is_recorded_and_every_record_exists() -> None:
    recorded = _recorded()
    files = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").glob("test_*.py")}
    missing = sorted(files - set(recorded))
    gone = sorted(name for name in recorded if not (ROOT / name).is_file())
    assert not missing, f"not in {FILE_SECONDS.name} (record it again, see this module): {missing}"
    assert not gone, f"in {FILE_SECONDS.name} but no longer in the repository: {gone}"
    assert all(seconds >= 0.0 for seconds in recorded.values())


def test_a_node_id_names_its_file() -> None:
    assert _file("tests/test_docs.py::test_docs_example[README.md:61]") == "tests/test_docs.py"
    doctest = "bandits/auditing/black_box.py::bandits.auditing.black_box"
    assert _file(doctest) == "bandits/auditing/black_box.py"
