"""Chapter 06's comparison over the domain size (the introduction's claim) and its claim
(ldp.book.chapters.c06_evaluation.eval_domain)."""
import json

import numpy as np
import pandas as pd
import pytest

from ldp.book.chapters.c06_evaluation import eval_domain as F

from figtools import bar_ranges, decide, page_ready, store_with, titles

MS = [16, 32, 64, 128]


def summary(f1, std=0.05, runs=10):
    """A summarize-like frame by dataset, protocol, m (one grid label per m) of ``f1(protocol, m)``."""
    rows = [{"dataset": f"Synthetic, m = {m}", "protocol": p, "m": m, "f1_mean": f1(p, m), "f1_std": std,
             "f1_count": runs, "ncr_mean": f1(p, m), "ncr_std": std, "ncr_count": runs}
            for p in ("PEM", "MCM", "SPM") for m in MS]
    return pd.DataFrame(rows)


def growing(p, m):  # PEM stays near 0.9, the others fall with m
    return 0.9 if p == "PEM" else max(0.0, 0.9 - m / 150)


def test_frame_and_draw():
    data = F.frame(summary(growing))
    assert list(data.columns) == ["panel", "dataset", "metric", "protocol", "m", "mean", "std", "runs"]
    assert set(data["dataset"]) == {"Synthetic"} and len(data) == 2 * 3 * len(MS)
    fig = F.draw(data)
    page_ready(fig)
    assert titles(fig) == ["(a) F1", "(b) NCR"]
    lo, hi = zip(*bar_ranges(fig))
    assert min(lo) >= 0 and max(hi) <= 1


@pytest.mark.parametrize(("f1", "verdict"), [
    (growing, "reproduced"),
    (lambda p, m: 0.9 if p == "PEM" else max(0.0, 0.9 - 0.6 * (m == 32)), "not reproduced"),  # the lead peaks at 32
])
def test_claim_on_made_up_curves(tmp_path, f1, verdict):
    store = store_with(tmp_path, figures={F.NAME: F.frame(summary(f1))})
    row = decide("s1-advantage-grows-with-domain", store)
    assert row["verdict"] == verdict and row["numbers"]["series"] == 1
    assert [s["verdict"] for s in json.loads(row["sensitivity"])] == [verdict]  # NCR equals F1 here
    assert "m = 16" in row["measured"] or row["verdict"] == "reproduced"


def test_the_lead_uses_the_standard_error_of_the_difference(tmp_path):
    """A dip within noise (two runs, SD 0.3) does not break the rise."""
    dip = {16: 0.1, 32: 0.5, 64: 0.45, 128: 0.8}
    store = store_with(tmp_path, figures={F.NAME: F.frame(summary(lambda p, m: 0.9 if p == "PEM" else 0.9 - dip[m],
                                                                  std=0.3, runs=2))})
    row = decide("s1-advantage-grows-with-domain", store)
    assert row["verdict"] == "reproduced" and np.isfinite(row["numbers"]["worst_z"])
