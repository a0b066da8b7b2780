"""Chapter 09's placement figure (ldp.book.chapters.c09_malicious_users.malicious_placement): frame, drawing and
claims."""
import pandas as pd

from ldp.book.chapters.c09_malicious_users import malicious_placement as F

from figtools import decide, page_ready, store_with, titles

SHARE = {"fresh, plan's groups": 0.01, "fresh, chosen groups": 0.006, "look-alike, plan's groups": 0.008,
         "look-alike, chosen groups": 0.003}


def inputs(look=0.003, flagged=1.0):
    share = {**SHARE, "look-alike, chosen groups": look}
    grid = pd.DataFrame([{"strategy": s, "epsilon": e, "rep": r, "fraction": f * (1 + 0.1 * r)}
                         for s, f in share.items() for e in (1.0, 2.0, 4.0) for r in range(2)])
    flags = grid.assign(flagged=[flagged if s == "look-alike, chosen groups" else 0.0 for s in grid["strategy"]])
    return grid, flags[["strategy", "epsilon", "flagged"]]


def test_frame():
    data = F.frame(*inputs())
    assert list(data.columns) == ["panel", "strategy", "epsilon", "value", "sd", "runs"]
    assert len(data) == 2 * 4 * 3 and (data["runs"] == 2).all()
    b = data[data["panel"] == "b"].set_index("strategy")["value"]
    assert (b["look-alike, chosen groups"] == 1).all() and (b["fresh, plan's groups"] == 0).all()


def test_draw():
    fig = F.draw(F.frame(*inputs()))
    page_ready(fig)
    assert titles(fig) == ["(a) PEM: share planting one value", "(b) the consistency check at that share"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == list(SHARE)


def test_claims(tmp_path):
    store = store_with(tmp_path, figures={F.NAME: F.frame(*inputs())})
    assert decide("malicious-lookalike-chosen", store)["verdict"] == "reproduced"
    assert decide("malicious-consistency-flags-chosen", store)["verdict"] == "reproduced"
    store = store_with(tmp_path / "no", figures={F.NAME: F.frame(*inputs(look=0.009, flagged=0.0))})
    assert decide("malicious-lookalike-chosen", store)["verdict"] == "not reproduced"
    assert decide("malicious-consistency-flags-chosen", store)["verdict"] == "not reproduced"
