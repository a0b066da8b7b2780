"""Chapter 03's figure of Proposition 1 and Lemma 1, and their claims (ldp.book.chapters.c03_pem.pem_prop1)."""
import numpy as np
import pytest

from ldp import analysis
from ldp.book.chapters.c03_pem import pem_prop1 as F

from figtools import decide, page_ready, store_with, titles


@pytest.fixture(scope="module")
def grid():
    return analysis.prop1_grid(np.linspace(0.5, 8, 6), (2, 4, 8), np.geomspace(1e-3, 0.5, 5), 1e6)


def test_frame(grid):
    line = np.linspace(0.1, 8, 20)
    data = F.frame(grid, lemma_epsilons=line)
    cells = data[data.panel != "d"]
    both = cells.astype({"g": int}).merge(grid, on=["g", "epsilon", "f"], validate="one_to_one")
    assert len(cells) == len(grid) == len(both) and (both.value == both.P1 - both.P2).all()
    assert len(data[data.panel == "d"]) == 3 * len(line) + 3 + 1 and str(data.g.dtype) == "Int64"


def test_draw(grid):
    fig = F.draw(F.frame(grid))
    page_ready(fig)
    assert titles(fig)[:3] == ["(a) P1 − P2, g = 2", "(b) P1 − P2, g = 4", "(c) P1 − P2, g = 8"]


def test_claims(grid, tmp_path):
    store = store_with(tmp_path, figures={F.NAME: F.frame(grid)})
    assert decide("s4-lemma-1", store)["verdict"] == "reproduced"
    prop = decide("s4-proposition-1", store)
    assert prop["numbers"]["points"] == len(grid) and prop["numbers"]["share"] == pytest.approx(
        (grid.P1 > grid.P2).mean())
