"""The test suite's set-up: matplotlib draws off-screen (the tests, not ``import ldp.book.plotting``, choose the
backend), and every figure a test draws is closed after it."""
import os
import sys

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")
