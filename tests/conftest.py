"""Shared pytest options.

``--slow`` enlarges the standing soundness sweep (``tests/test_soundness.py``) from its default
size (≥ 10⁴ certified values in well under a minute) to a long run. The option is passed to the
test modules through the environment variable ``DPAUDIT_SOUNDNESS_SCALE`` because hypothesis
settings are fixed when a module is imported.
"""

from __future__ import annotations

import os

SLOW_SCALE = 20


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
