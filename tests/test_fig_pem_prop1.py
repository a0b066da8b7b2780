"""Chapter 03's figure of Proposition 1 and Lemma 1, and their claims (ldp.book.chapters.c03_pem.pem_prop1)."""
import json

import numpy as np
import pytest

from ldp import analysis
from ldp.analysis import appendix
from ldp.book.chapters import REGISTRY
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


def test_eq6_is_eq5_with_the_appendix_p_q(grid, tmp_path):
    """The table of eq. (6) against eq. (5): equal to floating point with the printed slots, not with the text's."""
    table = F.identity_frame(grid)
    assert list(table.columns) == list(REGISTRY.tables["03_pem"][F.IDENTITY][0])
    assert len(table) == 3 * 3 * 5  # three budgets, three g, five frequencies
    assert table["difference"].abs().max() < 1e-12 and (table["eq6"] - table["eq5_text"]).abs().max() > 1e-3
    assert table["difference"].abs().max() == appendix.prop1_identity_error(grid)
    store = store_with(tmp_path, figures={F.NAME: F.frame(grid)}, tables={("03_pem", F.IDENTITY): table})
    row = decide("s4-eq6-identity", store)
    assert row["verdict"] == "reproduced" and row["numbers"]["points"] == len(table)
    assert [s["verdict"] for s in json.loads(row["sensitivity"])] == ["not reproduced"]  # the text's slots
    wrong = table.assign(eq6=table["eq6"] + 1e-6)  # made up: eq. (6) off by 10^-6
    store = store_with(tmp_path / "wrong", figures={F.NAME: F.frame(grid)}, tables={("03_pem", F.IDENTITY): wrong})
    assert decide("s4-eq6-identity", store)["verdict"] == "not reproduced"
