"""Chapter 08's notebook plumbing (ldp.book.chapters.c08_after_pem.compute): the values and sentences its text quotes.

Each function is checked on a small hand-made case whose answer is known: which points PEM's lead depends on the
successors' tuning, which sentence a missing AOL file or a costlier PEM produces, which series the engine check
calls far or blind.
"""
import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from ldp.book.chapters.c08_after_pem import after_pem
from ldp.book.chapters.c08_after_pem import compute as C
from ldp.datasets.aol import AOL_FILENAME


def test_published_and_tuned_series_are_the_figures_successors():
    assert set(C.PUBLISHED) <= {label for _, _, label in C.protocols(2**20)}
    assert [*C.PUBLISHED, *(s for t in C.TUNED.values() for s in t)] == sorted(after_pem.SUCCESSORS,
                                                                               key=lambda s: "tuned" in s)


def test_checked_grids_sorts_and_refuses_a_grid_without_eps_fixed():
    assert C.checked_grids([4, 1.2, 2], [16, 1], eps_fixed=2.0) == ([1.2, 2.0, 4.0], [1, 16])
    with pytest.raises(ValueError, match="eps_fixed = 3.0"):
        C.checked_grids([1.0, 2.0], [16], eps_fixed=3.0)


def test_aol_missing_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("LDP_DATA_DIR", str(tmp_path))
    assert C.aol_missing() == "is missing"
    assert C.missing_panels("is missing") == {"AOL": "the AOL data file\nis missing in this build"}
    (tmp_path / AOL_FILENAME).write_bytes(b"not the tally")
    assert C.aol_missing() == "fails its sha256 check"
    assert C.missing_panels("") == {}


def test_feasible_candidates_keep_what_the_query_limit_allows():
    series = C.candidates(2**20)
    tried = C.feasible_candidates(series, [("x", {}, "A"), ("y", {}, "B")], m={"A": 64, "B": 16},
                                  epsilons=[2.0], ks=[16])
    assert list(tried) == ["A", "B"] and tried["A"] == [c for cs in series.values() for c in cs]
    small = C.candidates(2**12)
    kept = C.feasible_candidates(small, [("x", {}, "A")], m={"A": 64}, epsilons=[2.0], ks=[16])["A"]
    assert 0 < len(kept) < sum(map(len, small.values()))
    assert all(C.feasible(c, m=64, epsilons=[2.0], ks=[16]) for c in kept)


def test_sweep_table_marks_the_choice_and_the_settings_not_run():
    sweep = pd.DataFrame({"dataset": ["A", "A", "B"], "series": ["S"] * 3, "setting": ["b = 2", "b = 4", "b = 2"],
                          "F1 (mean)": [0.5, 0.71, 0.2], "runs": 2, "chosen": [False, True, True]})
    t = C.sweep_table(sweep, ["B", "A"])
    assert list(t.columns) == ["B", "A"] and list(t.index) == [("S", "b = 2"), ("S", "b = 4")]
    assert t.loc[("S", "b = 4")].tolist() == ["–", "0.71 ✓"] and t.loc[("S", "b = 2"), "A"] == "0.50"


def test_f1_table_reads_eps_fixed_in_the_given_order():
    summary = pd.DataFrame({"dataset": ["A", "A", "A", "A"], "protocol": ["X", "Y", "X", "Y"],
                            "epsilon": [2.0, 2.0, 4.0, 4.0], "f1_mean": [0.1, 0.2, 0.3, 0.4]})
    t = C.f1_table(summary, ["Y", "X"], ["A"], eps_fixed=2.0, k_fixed=16)
    assert t["A"].tolist() == [0.2, 0.1] and t.index.name == "mean F1 at ε = 2, k = 16"


def test_engine_check_specs_keep_each_setting_once():
    a, b = ("SFP", {"query_limit": 8}, "SFP"), ("TreeHist", {"bits_per_level": 8}, "TreeHist (8 bits)")
    assert C.engine_check_specs([a, b, ("SFP", {"query_limit": 8}, "SFP (tuned)")]) == [a, b]


def _frame(x, points):
    """A figure frame: per (point, protocol) a mean F1 with std 0.01 over 100 runs (SE 0.001, above the floor)."""
    return pd.DataFrame([{"dataset": "D", "protocol": p, "metric": "f1", x: xv, "mean": m, "std": 0.01, "runs": 100}
                         for xv, means in points.items() for p, m in means.items()])


def test_figure_findings_name_the_points_where_the_lead_depends_on_tuning():
    eps = _frame("epsilon", {1.0: {"PEM": 0.9, "TreeHist": 0.5, "SFP (tuned)": 0.9},     # lead lost to tuning
                             2.0: {"PEM": 0.9, "TreeHist": 0.5, "SFP (tuned)": 0.6}})    # lead kept
    k = _frame("k", {16: {"PEM": 0.5, "SFP": 0.5, "TreeHist (tuned)": 0.4}})             # no lead at all
    out = C.figure_findings({"epsilon": eps, "k": k}, repetitions=100, eps_fixed=2.0, k_fixed=16)
    text = out["tuning_text"].data
    assert "ahead beyond noise at 2 of the 3 points" in text and "stays ahead at 1 of them" in text
    assert "by 0.13 in F1 on average (at most 0.40)" in text  # (0.4 - 0) + (0.4 - 0.3) + (0 - 0.1), over 3
    assert "depends on the tuning at D, ε = 1 (SFP (tuned): 0.90 against PEM's 0.90)." in text
    assert {k: out[k] for k in ("repetitions", "eps_fixed", "k_fixed")} == {"repetitions": 100, "eps_fixed": 2.0,
                                                                           "k_fixed": 16}
    kept = C.figure_findings({"epsilon": eps[eps["epsilon"] == 2.0]}, repetitions=100, eps_fixed=2.0, k_fixed=16)
    assert kept["tuning_text"].data.endswith("At none of these points does PEM's lead depend on the successors' "
                                             "tuning.")


def _deploy(bits, server):
    labels = ["PEM", "TreeHist", "SFP", "SFP (Hadamard sketch)", "SFP (tuned)"]
    columns = {C.COLUMNS["bits"]: bits, C.COLUMNS["server"]: server, C.COLUMNS["counts"]: [5.0, 7.5, 1, 2, 3]}
    return pd.DataFrame(columns, index=pd.Index(labels, name="protocol"))


def test_cost_findings_quote_every_published_series_and_say_when_aol_is_missing():
    protos = ["PEM", "TreeHist", "TreeHist (8 bits)", "TreeHist (tuned, partitioned users)", "SFP",
              "SFP (tuned, partitioned users)"]
    summary = pd.DataFrame([{"dataset": ds, "protocol": p, "epsilon": e, "f1_mean": 0.1 * i + (e == 2.0)}
                            for ds in ("URL", "AOL", "Synthetic") for i, p in enumerate(protos) for e in (2.0, 4.0)])
    deploy = _deploy([68, 300, 2176, 140, 5000], [0.4, 0.05, 3.0, 1.5, 9.0])
    out = C.cost_findings(deploy, summary, eps_fixed=2.0, no_aol="", n_deploy=10, n_synthetic=20, n_warmup=3)
    assert out["synthetic_treehist8_f1_eps2"] == pytest.approx(1.2) and out["url_pem_f1_eps2"] == 1.0
    assert not [k for k in out if "aol" in k and k != "aol_text"] and not [k for k in out if "tuned" in k]
    assert out["bits_sfp_hadamard"] == 140 and out["server_treehist"] == 0.05 and out["counts_ms_max"] == 7.5
    assert out["aol_text"].startswith("On AOL at ε = 2, PEM reaches F1 = 1.000, TreeHist 1.100 (8 bits: 1.200")
    assert out["cost_text"].data == ("A PEM user sends 68 bits, the fewest of all protocols (SFP: 2176 with the "
                                     "count-mean sketch, 140 with the Hadamard sketch; TreeHist: 300). The server "
                                     "aggregates PEM's reports in 0.40 s, 8.0 times as long as TreeHist (0.05 s), "
                                     "and SFP's in 3.00 s.")
    assert (out["n_deploy"], out["n_synthetic"], out["n_warmup"]) == (10, 20, 3)
    fewer = C.cost_findings(_deploy([68, 30, 2176, 140, 5000], [0.01, 0.05, 3.0, 1.5, 9.0]),
                            summary[summary["dataset"] != "AOL"], eps_fixed=2.0, no_aol="is missing", n_deploy=10,
                            n_synthetic=20, n_warmup=3)
    assert fewer["cost_text"].data.startswith("A PEM user sends 68 bits, against 30 for TreeHist (SFP")
    assert "PEM's reports in 0.01 s, the fastest, and SFP's" in fewer["cost_text"].data
    assert fewer["aol_text"].startswith("No AOL results: the AOL data file is missing in this build, so panels (b)")


def _check(f1_z, ncr_z, f1_proto, f1_mean):
    return pd.DataFrame({"f1 z": f1_z, "ncr z": ncr_z, "f1 protocol": f1_proto, "f1 counts mean": f1_mean,
                         "protocol-engine seconds": [1.5, 2.5, 3.0]}, index=["A", "B", "C"])


def test_engine_check_findings_name_far_and_blind_series():
    quiet = C.engine_check_findings(_check([0.5, -1.0, np.nan], [0.0, 1.9, 0.3], [0.5, 0.6, 0.0],
                                           [0.5, 0.6, 0.0]), n=100, runs=10)
    assert quiet["check_text"].data == ("The single protocol-engine run lies within two count-level standard "
                                        "deviations of the runs' mean for every series. At this *n*, 1 of the 3 "
                                        "series (C) find no heavy hitter with either engine, so for them the check "
                                        "says little (a larger `n_engine_check` tests them).")
    assert quiet["check_max_abs_z"] == 1.9 and quiet["check_comparisons"] == 6 and quiet["check_seconds"] == 7.0
    assert quiet["check_p_any_z2"] == pytest.approx(1 - (1 - 2 * norm.sf(2.0)) ** 6)
    assert (quiet["check_n"], quiet["check_runs"], quiet["check_n_protocols"]) == (100, 10, 3)
    far = C.engine_check_findings(_check([2.5, 0.0, 0.0], [0.0, -3.0, 0.0], [0.5] * 3, [0.4] * 3), n=100, runs=10)
    assert far["check_text"].data == ("The protocol-engine run lies more than two count-level standard deviations "
                                      "from the runs' mean for A, B.")


def test_closing_findings_compare_the_two_sketches():
    class Clock:
        def seconds(self):
            return 12.5

        def text(self):
            return "13 s"

    out = C.closing_findings(eps_fixed=2.0, k_fixed=16, query_limit=2**20, clock=Clock())
    assert out["cms_width"] == 1024 and out["eps_half"] == 1.0 and out["runtime_s"] == 12.5
    assert out["hadamard_var_ratio"] > 1 and out["sfp_url_fragments"] > 1
    assert C.chapter_runtime(Clock(), quick=True) == {
        "chapter_runtime": "13 s in this quick build (small settings, not the paper's)"}
    assert C.chapter_runtime(Clock(), quick=False)["chapter_runtime"] == "13 s with the paper's settings"
