"""Chapter 07's Figure 8, the design choices of PEM, and its claims (ldp.book.chapters.c07_evaluation_more.design)."""
import numpy as np
import pandas as pd

from ldp.book.chapters.c07_evaluation_more import design as F

from figtools import bar_ranges, decide, page_ready, store_with, titles

EPS = [0.9, 1.2, 2.0, 4.0]
ETAS = [2, 6, 10]
A_SERIES = (F.PEM_OPTIMISED, "SPM, budget split", "SPM, partitioned users", "MCM, budget split",
            "MCM, partitioned users")


def _summary(rows: list[dict], mean, std=0.02) -> pd.DataFrame:
    s = pd.DataFrame(rows)
    return s.assign(f1_mean=[mean(r) for r in rows], f1_std=std, f1_count=10)


def summaries(a=None, b=None, c=None, std=0.02):
    """Figure 8's summaries: (a) partitioning beats splitting, MCM 0.1 split and 0.8 partitioned at eps = 1.2;
    (b) F1 grows with eta, 0.4 at eta = 2 and 0.8 at eta = 10 (eps = 0.9); (c) three assumptions alike."""
    a = a or (lambda r: {"budget split": 0.1, "partitioned users": 0.8}.get(r["protocol"].split(", ")[-1], 0.9))
    b = b or (lambda r: 0.4 + 0.05 * (int(r["protocol"].split()[-1]) - 2))
    c = c or (lambda r: 0.7)
    s8a = _summary([{"protocol": p, "epsilon": e} for p in A_SERIES for e in EPS], a, std)
    s8b = _summary([{"protocol": f"eta = {h}", "epsilon": e} for h in ETAS for e in EPS], b, std)
    s8c = _summary([{"assumption": x, "epsilon": e, "configuration": "etas=12", "predicted F1": 0.5}
                    for x in ("Zipf 1", "Zipf 2", "uniform") for e in EPS], c, std)
    return s8a, s8b, s8c


def test_frame():
    s8a, s8b, s8c = summaries()
    data = F.frame(s8a, s8b, s8c)
    assert list(data.columns) == ["panel", "series", "epsilon", "x", "f1_mean", "f1_std", "runs"]
    assert len(data) == len(s8a) + len(s8b) + len(EPS) + len(s8c)  # (b) also draws optimised PEM, dashed
    for panel in "bc":  # curves of (b) and (c) shifted sideways, so that coinciding ones stay visible
        p = data[data["panel"] == panel]
        assert np.isclose(np.abs(p["x"] - p["epsilon"]).max(), F.DODGE) and (p["x"] != p["epsilon"]).any()
    ref = data[(data["panel"] == "b") & (data["series"] == "optimised (dashed line)")]
    assert ref["f1_std"].isna().all() and len(ref) == len(EPS)


def test_draw():
    fig = F.draw(F.frame(*summaries(a=lambda r: 1.0, b=lambda r: 0.0, std=0.3)))  # bars that would cross 0, 1
    page_ready(fig)
    assert titles(fig) == ["(a) partitioning users", r"(b) $\eta$ (PEM)", "(c) assumed distribution"]
    lo, hi = zip(*bar_ranges(fig))
    assert min(lo) >= 0 and max(hi) <= 1
    legends = [[t.get_text() for t in ax.get_legend().get_texts()] for ax in fig.axes]  # one per panel
    assert "PEM optimised (dashed)" in legends[1] and "MCM, budget split" in legends[0] and len(legends) == 3
    assert not set(legends[0]) & set(legends[1]) and not set(legends[1]) & set(legends[2])


def test_claims(tmp_path):
    store = store_with(tmp_path, figures={F.NAME: F.frame(*summaries())})
    ids = [c.id for c in F.CLAIMS if c.id != "fig8a-other-settings"]
    assert {i: decide(i, store)["verdict"] for i in ids} == dict.fromkeys(ids, "reproduced")
    assert decide("fig8a-other-settings", store)["verdict"] == "not testable here"
    apart = summaries(b=lambda r: 0.9 - 0.05 * int(r["protocol"].split()[-1]),
                      c=lambda r: {"Zipf 1": 0.7, "Zipf 2": 0.6, "uniform": 0.5}[r["assumption"]])
    store = store_with(tmp_path / "apart", figures={F.NAME: F.frame(*apart)})
    assert decide("fig8b-eta-better", store)["verdict"] == "not reproduced"
    assert decide("fig8c-assumption-similar", store)["verdict"] == "not reproduced"
