"""The test suite's set-up: matplotlib draws off-screen (the tests, not ``import ldp.book.plotting``, choose the
backend), every figure a test draws is closed after it, and the browser tests share one server, one Chromium
and each opening of a page (``tests/browsing.py``)."""
import os
import sys

import pytest
from browsing import browser, built_book, server, views  # noqa: F401  (the browser tests' session fixtures)

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
