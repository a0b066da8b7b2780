"""Chapter 07's Figure 7, the threshold versions, its release table and claims
(ldp.book.chapters.c07_evaluation_more.threshold)."""
import json

import numpy as np
import pandas as pd
import pytest

from ldp.book.chapters import REGISTRY
from ldp.book.chapters.c07_evaluation_more import threshold as F
from ldp.book.claims.store import ResultStore

from builds import require
from figtools import bar_ranges, decide, page_ready, store_with, titles

EPS, THETAS = [0.9, 2.0, 4.0], [0.005, 0.01, 0.023, 0.035]
SCORE = {"PEM": 0.8, "SPM": 0.5, "MCM": 0.3}


def summaries(score=lambda p, e, t: SCORE[p], std=0.02):
    def rows(keys):
        s = pd.DataFrame(keys)
        proto = s["protocol"] if "protocol" in s else s["protocol_name"]
        mean = [score(p, e, t) for p, e, t in zip(proto, s["epsilon"], s.get("threshold", [0.023] * len(s)))]
        return s.assign(f1_mean=mean, f1_std=std, f1_count=10, f1_sem=std / np.sqrt(10),
                        f1_topk_mean=mean, f1_topk_std=std, f1_topk_count=10,
                        n_found_mean=np.arange(len(s), dtype=float), n_true_mean=16.0, n_true_std=0.0)
    s7a = rows([{"protocol": p, "epsilon": e} for p in SCORE for e in EPS])
    s7bc = rows([{"protocol_name": p, "threshold": t, "epsilon": e} for p in SCORE for t in THETAS
                 for e in (2.0, 4.0)])
    return s7a, s7bc


def test_frame_is_exactly_the_summaries():
    s7a, s7bc = summaries()
    data = F.frame(s7a, s7bc, theta_fixed=0.023, eps_bc=(2.0, 4.0))
    assert list(data.columns) == ["panel", "protocol", "epsilon", "threshold", "f1_mean", "f1_std", "runs"]
    assert len(data) == len(s7a) + len(s7bc) and set(data.loc[data["panel"] == "c", "epsilon"]) == {4.0}
    bc = data[data["panel"] != "a"].rename(columns={"protocol": "protocol_name"})
    m = bc.merge(s7bc, on=["protocol_name", "threshold", "epsilon"], suffixes=("", "_in"))
    assert len(m) == len(s7bc) and np.array_equal(m["f1_mean"], m["f1_mean_in"])


def test_draw():
    s7a, s7bc = summaries(lambda p, e, t: [0.0, 1.0][p == "PEM"], std=0.3)  # bars that would cross 0 and 1
    fig = F.draw(F.frame(s7a, s7bc, theta_fixed=0.023, eps_bc=(2.0, 4.0)))
    page_ready(fig)
    assert titles(fig) == [r"(a) $\theta = 0.023$", r"(b) $\varepsilon = 2$", r"(c) $\varepsilon = 4$"]
    lo, hi = zip(*bar_ranges(fig))
    assert min(lo) >= 0 and max(hi) <= 1


def test_release_frame():
    s7a, s7bc = summaries()
    table = F.release_frame(s7a, s7bc, theta_fixed=0.023, eps_bc=(2.0, 4.0))
    assert tuple(table.columns) == REGISTRY.tables[F.CHAPTER]["threshold-release"][0]
    assert len(table) == len(s7a) + len(s7bc) and (table["true_count"] == 16).all()
    assert np.isclose(table["released_mean"].sum(), s7a["n_found_mean"].sum() + s7bc["n_found_mean"].sum())
    s7bc.loc[0, "n_true_std"] = 1.0  # the runs of a point disagree on the truth: not one shared data set
    with pytest.raises(ValueError, match="n_true"):
        F.release_frame(s7a, s7bc, theta_fixed=0.023, eps_bc=(2.0, 4.0))


def _store(folder, s7a, s7bc, release=None):
    """Figure 7's data and its release table (by default of the same summaries: both releases score alike)."""
    release = (s7a, s7bc) if release is None else release
    return store_with(folder, figures={F.NAME: F.frame(s7a, s7bc, theta_fixed=0.023, eps_bc=(2.0, 4.0))},
                      tables={(F.CHAPTER, "threshold-release"):
                              F.release_frame(*release, theta_fixed=0.023, eps_bc=(2.0, 4.0))})


def test_claims(tmp_path):
    lead = {0.9: 0.1, 2.0: 0.3, 4.0: 0.05}  # PEM's lead largest at epsilon = 2
    s7a, s7bc = summaries(lambda p, e, t: 0.5 + (lead[e] if p == "PEM" else 0) - (0.2 if p == "MCM" else 0))
    store = _store(tmp_path, s7a, s7bc)
    ids = ("fig7a-pem-better", "fig7a-lead-at-eps2", "fig7bc-pem-better", "fig7b-theta-0005")
    assert {i: decide(i, store)["verdict"] for i in ids} == dict.fromkeys(ids, "reproduced")
    assert decide("fig7-other-datasets", store)["verdict"] == "not testable here"
    s7a, s7bc = summaries(lambda p, e, t: 0.2 if p == "PEM" and t == 0.005 else SCORE[p])  # PEM trails at 0.005
    row = decide("fig7b-theta-0005", _store(tmp_path / "low", s7a, s7bc))
    assert row["verdict"] == "not reproduced" and "values with frequency ≥ 0.005: 16" in row["measured"]


def test_figure_7bc_is_decided_on_the_translated_k(tmp_path):
    """7(b, c) read the top-k(theta) release of the runs; the figure's literal release is the other reading."""
    fine = summaries()  # PEM ahead everywhere
    trails = summaries(lambda p, e, t: 0.2 if p == "PEM" and t == 0.005 else SCORE[p])  # PEM behind at 0.005
    for folder, figure, release, verdict, literal in (("a", trails, fine, "reproduced", "not reproduced"),
                                                      ("b", fine, trails, "not reproduced", "reproduced")):
        store = _store(tmp_path / folder, *figure, release=release)
        row = decide("fig7b-theta-0005", store)
        assert row["verdict"] == verdict and [s["verdict"] for s in json.loads(row["sensitivity"])] == [literal]
        whole = decide("fig7bc-pem-better", store)
        assert whole["verdict"] == ("reproduced" if verdict == "reproduced" else "partly reproduced")
    figure_only = store_with(tmp_path / "c", figures={F.NAME: F.frame(*fine, theta_fixed=0.023, eps_bc=(2.0, 4.0))})
    assert decide("fig7bc-pem-better", figure_only)["verdict"] == "not testable here"  # no release table
    late = {0.9: 0.1, 2.0: 0.05, 4.0: 0.3}  # the lead largest at epsilon = 4
    s7a, s7bc = summaries(lambda p, e, t: 0.5 + (late[e] if p == "PEM" else 0))
    store = store_with(tmp_path / "late", figures={F.NAME: F.frame(s7a, s7bc, theta_fixed=0.023, eps_bc=(2.0, 4.0))})
    assert decide("fig7a-lead-at-eps2", store)["verdict"] == "not reproduced"


def test_release_table_saved_by_the_quick_build():
    store = ResultStore.for_build("quick")
    require(store.figure_path(F.NAME))
    table = store.load(F.CHAPTER, "threshold-release")
    assert tuple(table.columns) == REGISTRY.tables[F.CHAPTER]["threshold-release"][0] and len(table) > 0
    assert not table.isna().any().any()
