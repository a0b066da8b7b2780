"""Chapter 05's Figure 2, identification probabilities against eq. (5), and its claims
(ldp.book.chapters.c05_validation.identification)."""
import json

import numpy as np
import pandas as pd
import pytest

from ldp.book.chapters.c05_validation import identification as F

from figtools import bar_ranges, decide, page_ready, store_with, titles


@pytest.fixture(scope="module")
def ident():
    """An identification table: three panels, two levels each, eight ranks; the analysis a little above."""
    rows = []
    for panel, axis, levels in (("a", "n", [100_000, 1_000_000]), ("b", "m", [64, 32]), ("c", "epsilon", [1.0, 4.0])):
        for i, level in enumerate(levels):
            for rank in range(1, 9):
                sim = min(1.0, (i + 1) / rank)  # the better level finds more
                rows.append({"panel": panel, "axis": axis, "level": level, "rank": rank, "frequency": 0.3 / rank,
                             "sim": sim, "runs": 10, "analysis": min(1.0, sim + 0.05)})
    return pd.DataFrame(rows)


def test_frame(ident):
    data = F.frame(ident)
    assert len(data) == len(ident) and list(data.columns) == [
        "panel", "axis", "level", "rank", "frequency", "simulated_rate", "errorbar_2se", "runs", "analysis"]
    np.testing.assert_array_equal(data["simulated_rate"], ident["sim"])
    np.testing.assert_allclose(data["errorbar_2se"], 2 * np.sqrt(ident["sim"] * (1 - ident["sim"]) / 10))


def test_draw(ident):
    fig = F.draw(F.frame(ident))
    page_ready(fig)
    assert titles(fig) == ["(a) different $n$", "(b) different $m$", r"(c) different $\varepsilon$"]
    lo, hi = zip(*bar_ranges(fig))
    assert min(lo) >= 0 and max(hi) <= 1


def test_claims(ident, tmp_path):
    store = store_with(tmp_path, figures={F.NAME: F.frame(ident)})
    match = decide("fig2-analysis-matches", store)
    assert match["numbers"]["points"] == len(ident) and "max_abs_z_at" in match["numbers"]
    # more users, shorter values (m = 32 after 64), larger epsilon: each level finds at least as much
    assert {i: decide(i, store)["verdict"] for i in ("fig2-more-users", "fig2-shorter-values", "fig2-larger-eps")} \
        == dict.fromkeys(("fig2-more-users", "fig2-shorter-values", "fig2-larger-eps"), "reproduced")


def _independence(var_observed, runs=100, **extra):
    return pd.DataFrame({"panel": "a", "axis": "n", "level": [1e5, 1e6], "n": [1e5, 1e6], "m": 64, "epsilon": 1.0,
                         "runs": runs, "found_mean": 16.0, "var_observed": var_observed, "var_independent": 2.0,
                         "reading": "caption", **extra})


@pytest.mark.parametrize(("observed", "verdict"), [([2.0, 1.7], "reproduced"), ([0.5, 0.4], "not reproduced")])
def test_independence_claim(tmp_path, observed, verdict):
    """Observed variance within a factor 1.5 (plus noise) of the independent coins' variance: a small effect."""
    table = pd.concat([_independence(observed), _independence([2.0, 2.0], reading="text")], ignore_index=True)
    store = store_with(tmp_path, tables={("05_validation", F.INDEPENDENCE): table})
    row = decide("s421-independence", store)
    assert row["verdict"] == verdict and row["numbers"]["points"] == 2
    assert [s["verdict"] for s in json.loads(row["sensitivity"])] == ["reproduced"]  # the text's n
    flat = _independence([0.0, 0.0]).assign(var_independent=0.1)  # the count barely varies: nothing to measure
    store = store_with(tmp_path / "flat", tables={("05_validation", F.INDEPENDENCE): flat})
    assert decide("s421-independence", store)["verdict"] == "not testable here"
