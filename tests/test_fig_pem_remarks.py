"""Chapter 03's figure of section 4.3's remarks on |C_i| and gamma, and their claims
(ldp.book.chapters.c03_pem.pem_remarks)."""
import json

import numpy as np
import pandas as pd
import pytest

from ldp.book.chapters.c03_pem import compute
from ldp.book.chapters.c03_pem import pem_remarks as F

from figtools import decide, page_ready, store_with, titles

M, N, LIMIT = 16, 100_000, 2**12
KS, EPS = (1, 2, 4, 8, 16, 32), (1.0, 4.0)


@pytest.fixture(scope="module")
def tables():
    return (compute.candidate_sizes(KS, EPS, M, n=N, query_limit=LIMIT),
            compute.gamma_above_eta((4, 8), EPS, M, n=N, query_limit=LIMIT))


def test_computed_tables(tables):
    sizes, gammas = tables
    assert len(sizes) == len(KS) * len(EPS) * 2 and set(sizes["model"]) == {"lower", "paper"}
    several = sizes[sizes["etas"].str.count(",") > 0]  # more than one round: |C_i| is one of k/2, k, 2k, 4k
    assert several["ratio"].dropna().isin([0.5, 1.0, 2.0, 4.0]).all()
    above = gammas[gammas["series"] != F.CHOICE]
    assert above["series"].isin(["γ = η + 1", "γ = η + 2"]).all() and (above["gamma"] - above["eta"]).isin([1, 2]).all()
    choice = gammas[gammas["series"] == F.CHOICE]
    assert len(choice) == 2 * len(EPS) and (choice["gamma"] == np.ceil(np.log2(choice["k"]))).all()


def test_frame_and_draw(tables):
    data = F.frame(*tables)
    assert list(data.columns) == ["panel", "k", "epsilon", "series", "x", "y", "y_paper", "saturated",
                                  "saturated_paper", "gamma", "etas", "domains"]
    assert list(dict.fromkeys(data["panel"])) == ["a", "b", "c"]
    a = data[data["panel"] == "a"]
    assert len(a) == len(KS) * len(EPS) and a["y_paper"].notna().any()
    fig = F.draw(data)
    page_ready(fig)
    assert titles(fig) == ["(a) |C_i| the optimizer keeps", "(b) k = 4, γ above η", "(c) k = 8, γ above η"]


def _made_up(ratio_big, ratio_small, f1_above, f1_choice):
    """Panel (a) with |C_i| / k at k = 512 and at k = 4; panel (b) with one configuration above and the choice."""
    rows = [dict(panel="a", k=512, epsilon=1.0, series="|C_i| / k", x=512.0, y=ratio_big, y_paper=0.5),
            dict(panel="a", k=4, epsilon=1.0, series="|C_i| / k", x=4.0, y=ratio_small, y_paper=2.0),
            dict(panel="b", k=16, epsilon=1.0, series="γ = η + 1", x=8.0, y=f1_above, gamma=9, etas="(8, 8)",
                 domains="(131072, 4096)"),
            dict(panel="b", k=16, epsilon=1.0, series=F.CHOICE, x=12.0, y=f1_choice, gamma=4, etas="(12, 12)",
                 domains="(65536, 65536)")]
    return pd.DataFrame(rows).assign(saturated=False, saturated_paper=False)


@pytest.mark.parametrize(("big", "small", "above", "verdicts"), [
    (0.5, 2.0, 0.195, ("reproduced", "reproduced", "reproduced")),  # gamma above eta within 0.01 of the optimum
    (1.0, 1.0, 0.15, ("not reproduced", "not reproduced", "not reproduced")),
])
def test_claims_on_made_up_points(tmp_path, big, small, above, verdicts):
    store = store_with(tmp_path, figures={F.NAME: _made_up(big, small, above, 0.2)})
    got = tuple(decide(i, store)["verdict"] for i in ("s43-cand-big-k", "s43-cand-small-k", "s42-gamma-above-eta"))
    assert got == verdicts
    if verdicts[2] != "reproduced":  # the cause: the settings below the margin and the largest shortfall
        row = decide("s42-gamma-above-eta", store)
        assert row["cause_class"] == "genuine" and f"shortfall {0.2 - above:.3f}" in row["cause"]
        assert json.loads(row["cause_numbers"])["gap"] == row["numbers"]["losses"]
    purpose = json.loads(decide("s42-gamma-above-eta", store)["sensitivity"])[0]  # the optimizer's |D_i| are equal
    assert purpose["verdict"] == "reproduced"


def test_claims_on_the_model(tables, tmp_path):
    store = store_with(tmp_path, figures={F.NAME: F.frame(*tables)})
    for claim_id in ("s43-cand-big-k", "s43-cand-small-k", "s42-gamma-above-eta"):
        row = decide(claim_id, store)
        assert row["verdict"] in ("reproduced", "partly reproduced", "not reproduced", "not testable here"), claim_id
    assert decide("s43-cand-big-k", store)["verdict"] == "not testable here"  # no k of 256 or more in this grid
    assert decide("s42-gamma-above-eta", store)["numbers"]["points"] == 2 * len(EPS)
