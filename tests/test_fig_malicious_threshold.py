"""Chapter 09's threshold figures (ldp.book.chapters.c09_malicious_users.malicious_threshold): frames from the search
grid, drawing, claims."""
import numpy as np
import pandas as pd
import pytest

from ldp.book.chapters.c09_malicious_users import malicious_threshold as F

from figtools import decide, page_ready, store_with, titles

ROWS = {"Synthetic": "a", "AOL": "b"}
BASE = {"PEM": 0.01, "SPM": 0.007, "MCM": 0.008}


def inputs(x="epsilon", ratio=2.2, levels=(1.0, 2.0)):
    """A search grid (two repetitions per point) and its predictions (``BASE`` times 1.025 is the mean)."""
    rows, pred = [], []
    for d in ROWS:
        for p, base in BASE.items():
            for v in levels:
                for kind, f in (("MGA", base), ("input", ratio * base)):
                    point = {"dataset": d, "protocol": p, "kind": kind, "epsilon": 2.0, "need": 1, x: v}
                    rows += [{**point, "rep": r, "fraction": f * (1 + 0.05 * r), "runs": 5} for r in range(2)]
                    pred.append({"dataset": d, "protocol": p, "kind": kind, x: v, "predicted": f})
    return pd.DataFrame(rows), pd.DataFrame(pred)


@pytest.mark.parametrize("x", ["epsilon", "need"])
def test_frame_summarizes_the_searches(x):
    grid, pred = inputs(x, levels=(1.0, 2.0) if x == "epsilon" else (1, 4, 16))
    grid.loc[0, "fraction"] = np.nan  # a search that never planted
    data = F.frame(grid, pred, datasets=ROWS, x=x)
    assert list(data.columns) == ["panel", "dataset", "kind", "protocol", x, "mean", "sd", "runs", "above_max",
                                  "predicted"]
    assert set(data["panel"]) == {"a1", "a2", "b1", "b2"}
    assert data["runs"].sum() + data["above_max"].sum() == len(grid) and data["above_max"].sum() == 1
    np.testing.assert_allclose(data["mean"].iloc[1:] / data["predicted"].iloc[1:], 1.025)


@pytest.mark.parametrize("x", ["epsilon", "need"])
def test_draw(x):
    grid, pred = inputs(x, levels=(1.0, 2.0) if x == "epsilon" else (1, 4, 16))
    fig = F.draw(F.frame(grid, pred, datasets=ROWS, x=x), x=x)
    page_ready(fig)
    assert titles(fig) == ["(a1) Synthetic: maximal gain", "(a2) Synthetic: input manipulation",
                           "(b1) AOL: maximal gain", "(b2) AOL: input manipulation"]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["PEM", "SPM", "MCM", "first-order prediction"]


def test_claims(tmp_path):
    grid, pred = inputs()
    store = store_with(tmp_path, figures={F.NAMES["epsilon"]: F.frame(grid, pred, datasets=ROWS)})
    for claim in ("malicious-mga-needs-fewer", "malicious-spm-below-pem", "malicious-prediction-pem"):
        assert decide(claim, store)["verdict"] == "reproduced", claim
    grid, pred = inputs(ratio=0.5)  # input manipulation cheaper than maximal gain
    store = store_with(tmp_path / "cheap", figures={F.NAMES["epsilon"]: F.frame(grid, pred, datasets=ROWS)})
    assert decide("malicious-mga-needs-fewer", store)["verdict"] == "not reproduced"
