"""The suite itself: its schedule and the sizes the README gives.

The two xdist workers take whole files, heaviest first by ``tests/file_seconds.json``
(``tests/conftest.py``). A file missing from it runs first, whatever it costs, and a heavy file
recorded as light runs last, alone on one worker: the record must name every test file and
nothing that is gone. Record it again with ``DPAUDIT_RECORD_FILE_SECONDS=tests/file_seconds.json
python -m pytest`` (a full run).

The README gives the number of tests of the whole suite and of the quick subset
(``-m "not slow"``); a run of the whole suite counts both and compares.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.conftest import FILE_SECONDS, WHOLE_SUITE, _file, _recorded

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


def readme_counts(text: str) -> tuple[int, int]:
    """The README's test counts: (the whole suite, the quick subset).

    >>> readme_counts('The whole suite (12 tests) runs ... is the quick\\n subset (7 tests, all')
    (12, 7)
    """
    whole = re.search(r"The\s+whole\s+suite\s+\((\d+)\s+tests\)", text)
    quick = re.search(r"is\s+the\s+quick\s+subset\s+\((\d+)\s+tests,", text)
    if whole is None or quick is None:
        raise ValueError("the README no longer gives the suite's sizes in the expected words")
    return int(whole.group(1)), int(quick.group(1))


def test_the_readme_gives_the_suites_sizes(request: pytest.FixtureRequest) -> None:
    if os.environ.get(WHOLE_SUITE) != "1":  # set by tests/conftest.py
        pytest.skip("counts only in a run of the whole suite")
    items = request.session.items  # every worker collects the whole suite
    slow = sum(1 for item in items if item.get_closest_marker("slow") is not None)
    want = readme_counts((ROOT / "README.md").read_text(encoding="utf-8"))
    assert (len(items), len(items) - slow) == want, (
        f"the README says {want[0]} tests, {want[1]} in the quick subset; this run collected "
        f"{len(items)}, {len(items) - slow} of them not slow"
    )
