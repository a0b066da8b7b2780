"""The test suite's set-up: matplotlib draws off-screen (the tests, not ``import ldp.book.plotting``, choose the
backend), every figure a test draws is closed after it, the browser tests share one server, one Chromium and
each opening of a page (``tests/browsing.py``), and the costly modules run first."""
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


#: the order of the modules: those with browser tests (one Chromium, each page opened once: kept together at
#: the head of the first worker's queue), then those that run notebooks, then those with slow tests, then the rest
_FIRST = ("browser", "notebook", "slow")


def pytest_collection_modifyitems(config, items):
    """Modules whose tests take longest first, each module's tests together and in their order.

    Under ``pytest -n 2 --dist worksteal`` (``pyproject.toml``) each worker starts on half of this list and
    an idle worker takes the second half of the other's queue, so the long tests are started early, not
    left for one worker at the end while the other waits.
    """
    rank: dict = {}
    for i, item in enumerate(items):
        marks = {m.name for m in item.iter_markers()}
        here = next((k for k, name in enumerate(_FIRST) if name in marks), len(_FIRST))
        first, best = rank.get(item.path, (i, here))
        rank[item.path] = (first, min(best, here))
    items.sort(key=lambda item: (rank[item.path][1], rank[item.path][0]))
