"""Chapter 06's plumbing (ldp.book.chapters.c06_evaluation): the AOL check, the tables the page shows, and the values
its prose quotes, on small hand-made summaries whose numbers are known.

The grids themselves, the figures and the claims are checked by the figure modules' tests and by the quick build
(``tests/test_missing_data.py`` builds the chapter without the AOL data).
"""
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import ldp
from ldp.book.chapters.c06_evaluation import compute, prose
from ldp.datasets import AOL_FILENAME, Dataset
from ldp.values import from_ints

NO_AOL = compute.AolStatus("is missing", "not found")
WITH_AOL = compute.AolStatus("", "")


# ------------------------------------------------------------------------------- the AOL data
def test_aol_status_without_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("LDP_DATA_DIR", str(tmp_path))  # the only folder searched: empty
    status = compute.aol_status()
    assert not status.present and status.problem == "is missing" and str(tmp_path) in status.error
    assert status.absent == "the AOL data file is missing in this build"


def test_aol_status_with_a_corrupt_file(tmp_path, monkeypatch):
    (tmp_path / AOL_FILENAME).write_bytes(b"not the tally")
    monkeypatch.setenv("LDP_DATA_DIR", str(tmp_path))
    status = compute.aol_status()
    assert status.problem == "fails its sha256 check" and "sha256" in status.error
    assert status.absent == "the AOL data file fails its sha256 check in this build"


def test_aol_status_present():
    assert WITH_AOL.present and WITH_AOL.absent == ""


# ------------------------------------------------------------------------------- tables of the page
def summary_eps() -> pd.DataFrame:
    """Two data sets, three protocols, ε in (1, 4): PEM leads by 0.2, 0.4 on URL; by -0.1, 0.3 on Synthetic."""
    rows = []
    f1 = {("URL", 1.0): (0.5, 0.3, 0.2), ("URL", 4.0): (0.9, 0.5, 0.4),
          ("Synthetic", 1.0): (0.6, 0.7, 0.1), ("Synthetic", 4.0): (1.0, 0.7, 0.6)}
    for (ds, e), values in f1.items():
        for meth, v in zip(compute.METHODS, values):
            rows.append({"dataset": ds, "protocol": meth, "epsilon": e, "f1_mean": v, "f1_std": v / 10,
                         "ncr_mean": v, "ncr_std": 0.0})
    return pd.DataFrame(rows)


def test_per_method_table():
    t = compute.per_method_table(summary_eps(), "epsilon", "f1_mean")
    assert t.index.tolist() == [1.0, 4.0] and t.columns.name is None
    assert t.loc[4.0, "URL PEM"] == 0.9 and t.loc[1.0, "Synthetic MCM"] == 0.7 and t.shape == (2, 6)


def test_protocols_at_builds_each_method_and_budget():
    p = compute.protocols_at(["PEM", "MCM"], [1.0, 2.0], k=4, m=16, query_limit=2**10)
    assert set(p) == {("PEM", 1.0), ("PEM", 2.0), ("MCM", 1.0), ("MCM", 2.0)}
    assert isinstance(p["PEM", 2.0], ldp.PEM) and isinstance(p["MCM", 1.0], ldp.MCM)
    assert p["MCM", 1.0].epsilon == 1.0 and p["PEM", 2.0].k == 4


def test_anomaly_view_one_row_per_point_readable_names():
    table = pd.DataFrame([("D", "PEM", 1, "kept_part1", 1.0), ("D", "PEM", 1, "rank_part1_top1", 3.0),
                          ("D", "PEM", 1, "noise_free_f1", 0.0), ("D", "PEM", 1, "rank_part1_top2", 1.0),
                          ("D", "SPM", 1, "parts_missed_top1", 2.0), ("D", "SPM", 1, "f1_mean", 0.12345)],
                         columns=["dataset", "protocol", "k", "quantity", "value"])
    v = compute.anomaly_view(table)
    assert v.columns.tolist() == ["dataset", "protocol", "k", "kept in part 1", "part-1 rank of the top value",
                                  "parts missing the top value", "F1 on exact counts", "F1 (mean)"]
    assert v.iloc[0]["part-1 rank of the top value"] == 3.0 and v.iloc[1]["part-1 rank of the top value"] == ""
    assert v.iloc[1]["F1 (mean)"] == 0.123  # rounded to 3 digits


# ------------------------------------------------------------------------------- the prose's values
def test_figure5_lead_and_counts():
    f = prose.figure5(summary_eps(), epsilons=[1.0, 4.0], k=16, aol=NO_AOL)
    assert f["eval_eps_lo"] == 1.0 and f["eval_eps_hi"] == 4.0
    assert f["eval_url_eps4_f1_pem"] == 0.9 and f["eval_url_eps4_f1sd_pem"] == pytest.approx(0.09)
    assert f["eval_url_eps4_nhh_mcm"] == pytest.approx(0.5 * 16)
    assert f["eval_gap_lo_url"] == pytest.approx(0.2) and f["eval_gap_hi_url"] == pytest.approx(0.4)
    assert f["eval_gap_lo_synthetic"] == pytest.approx(-0.1) and f["eval_gap_argmax_synthetic"] == 4.0
    assert "the AOL data file is missing in this build" in f["eval_aol_eps4_text"]
    assert f["eval_gap_aol_text"] == "AOL is left out: the AOL data file is missing in this build."
    assert not any(k.startswith("eval_aol_eps4_nhh") for k in f)


def test_figure5_with_aol():
    aol_rows = summary_eps().query("dataset == 'URL'").assign(dataset="AOL")
    summary = pd.concat([summary_eps(), aol_rows], ignore_index=True)
    f = prose.figure5(summary, epsilons=[1.0, 4.0], k=16, aol=WITH_AOL)
    assert f["eval_aol_eps4_text"] == "On AOL at ε = 4, PEM finds 14.4, MCM 8.0 and SPM 6.4 of the top 16."
    assert f["eval_gap_aol_text"] == ("On AOL the lead is +0.20 at ε = 1 and +0.40 at ε = 4, largest at ε = 4 "
                                      "(+0.40).")
    f = prose.figure5(summary.query("epsilon == 1.0"), epsilons=[1.0], k=16, aol=WITH_AOL)
    assert "no ε = 4" in f["eval_aol_eps4_text"] and math.isnan(f["eval_aol_eps4_nhh_pem"])


def test_gluable_drops_nan_only():
    assert prose.gluable({"a": 1.0, "b": float("nan"), "c": "x", "d": 0}) == {"a": 1.0, "c": "x", "d": 0}


def test_aol_k1_text_says_why_it_is_absent():
    summary = pd.DataFrame(columns=["dataset", "protocol", "k", "f1_mean"])
    text = prose.aol_k1_text(None, summary, ks=[1, 2], epsilon=2.0, query_limit=2**20, aol=NO_AOL)
    assert text == "AOL's small-$k$ points are not discussed here: the AOL data file is missing in this build."
    ds = Dataset.from_counts(from_ints([1, 2], 48), [10, 5], 48)
    text = prose.aol_k1_text(ds, summary, ks=[2, 4], epsilon=2.0, query_limit=2**20, aol=WITH_AOL)
    assert text.startswith("The $k$ grid of this build has no $k = 1$")


def test_figure6_near_tie_and_counts():
    ds = Dataset.from_counts(from_ints(np.arange(1, 41), 16), np.arange(2_000, 0, -50), 16)
    rows = [{"dataset": "Synthetic", "protocol": meth, "k": k, "f1_mean": f, "f1_std": 0.0}
            for k, f in ((1, 0.5), (4, 0.9), (30, 0.96)) for meth in compute.METHODS]
    f = prose.figure6(pd.DataFrame(rows), {"Synthetic": ds}, ks=[1, 4, 30], epsilon=2.0, query_limit=2**20,
                      aol=NO_AOL, panels={"Synthetic": "Synthetic"})
    assert f["eval_k_max"] == 30 and f["eval_syn_pem_k95"] == 30 and f["eval_syn_pem_f1_min_4_30"] == 0.9
    assert math.isnan(f["eval_syn_pem_f1_k2"]) and f["eval_synthetic_spm_nhh_kmax"] == pytest.approx(0.96 * 30)
    assert f["eval_syn_c1"] == 2_000 and f["eval_syn_c2"] == 1_950
    gap = compute.top_two_gap(ds, ldp.PEM(2.0, 1, 16, query_limit=2**20))
    assert f["eval_syn_top2_z"] == gap["z"] and f["eval_syn_top2_phi"] == gap["phi"]
    assert f["eval_sizes_text"].data == "Synthetic: *n* = 41,000 users of *m* = 16 bits"
    assert f["eval_aol_nhh_kmax_text"] == "AOL is left out: the AOL data file is missing in this build"
    assert "not discussed here" in f["eval_aol_k1_text"].data


def test_f1_ncr_order_agreement():
    s = summary_eps()
    spm = (s["dataset"] == "URL") & (s["epsilon"] == 1.0) & (s["protocol"] == "SPM")
    s.loc[spm, "ncr_mean"] = 0.6  # above PEM's and MCM's, while its F1 is below theirs
    runs = pd.DataFrame({"f1": [0.0, 0.5, 1.0], "ncr": [0.1, 0.5, 0.9]})
    f = prose.f1_ncr({"epsilon": s}, runs)
    assert f["eval_n_points"] == 12 and f["eval_n_runs"] == 3 and f["eval_corr_runs"] == pytest.approx(1.0)
    # 4 settings x 3 pairs, each differing in both metrics; F1 and NCR disagree on URL's SPM against PEM and MCM
    assert f["eval_order_pairs"] == 12 and f["eval_order_agree"] == pytest.approx(10 / 12)


def anomaly_rows() -> pd.DataFrame:
    q = {("URL", "PEM", 4): {"kept_part1": 4, "noise_free_f1": 0.75, "f1_mean": 0.75, "f1_std": 0.0,
                             **{f"rank_part1_top{j}": j + (j == 3) * 5 for j in range(1, 5)}},
         ("URL", "PEM", 8): {"kept_part1": 8, "noise_free_f1": 1.0, **{f"rank_part1_top{j}": j for j in range(1, 9)}},
         ("URL", "SPM", 1): {"parts": 4, "parts_missed_top1": 3, "noise_free_f1": 0.0, "f1_mean": 0.0, "f1_std": 0.0},
         ("URL", "MCM", 1): {"parts": 2, "parts_missed_top1": 1, "noise_free_f1": 0.0},
         ("Synthetic", "PEM", 1): {"top2_gap_sd": 0.5, "top2_order_prob": 0.69, "noise_free_f1": 1.0,
                                   "f1_mean": 0.6, "f1_std": 0.5},
         ("Synthetic", "SPM", 1): {"parts": 4, "parts_missed_top1": 0, "noise_free_f1": 1.0},
         ("Synthetic", "MCM", 1): {"parts": 2, "parts_missed_top1": 0, "noise_free_f1": 1.0}}
    return pd.DataFrame([(ds, p, k, name, float(v)) for (ds, p, k), qs in q.items() for name, v in qs.items()],
                        columns=["dataset", "protocol", "k", "quantity", "value"])


def test_anomaly_sentences_read_the_table():
    f = prose.anomalies(anomaly_rows(), aol=NO_AOL)
    url = f["eval_anom_url_text"].data
    assert "Round 1 keeps |C₁| = 4 prefixes" in url and "rank [1, 2, 8, 4]" in url
    assert "find F1 = 0.750; the grid measures F1 = 0.750 (SD 0.000)" in url
    assert "on the exact counts F1 = 1.000; the k grid of this build has no k = 8" in url  # no observed F1 there
    assert f["eval_anom_aol_text"].data == ("AOL's k = 1 points are not measured: the AOL data file is missing in "
                                            "this build.")
    parts = f["eval_anom_parts_text"].data
    assert "SPM on URL: the top value's pattern is not the kept one in 3 of 4 parts" in parts
    assert "MCM on Synthetic: the top value's pattern is not the kept one in 0 of 2 parts" in parts
    tie = f["eval_anom_tie_text"].data
    assert "0.50 standard deviations" in tie and "probability 0.69" in tie


def test_figure9_ratios_and_ranges():
    pem = {e: ldp.PEM(e, 16, 64, query_limit=2**20) for e in (2.0, 4.0)}
    rows = []
    for e, (vp, vm, vs) in {2.0: (3.0, 2.0, 5.0), 4.0: (1.0, 1.0, 1.5)}.items():
        for meth, var in zip(("PEM", "MCM", "SPM"), (vp, vm, vs)):
            rows.append({"protocol": meth, "epsilon": e, "var_mean": var, "var_sem": var / 10, "var_count": 5,
                         "var_pred": var / 2, "obs/pred": 2.0 if e == 2.0 else 1.5, "obs/full": 1.2})
    f = prose.figure9(pd.DataFrame(rows), {("PEM", e): p for e, p in pem.items()}, n=10**6, epsilons=[2.0, 4.0],
                      repetitions=5)
    assert f["eval_var_spm_over_mcm_eps2"] == 2.5 and f["eval_var_pem_over_mcm_eps2"] == 1.5
    assert f["eval_varpred_spm_over_mcm_eps4"] == 1.5 and math.isnan(f["eval_var_spm_over_mcm_eps3"])
    assert f["eval_var_obs_pred_min_pem"] == 1.5 and f["eval_var_obs_pred_max_pem"] == 2.0
    assert f["eval_var_rel_sem"] == pytest.approx(0.1) and f["eval_var_pem_obs_pred_epsmax"] == 1.5
    configs = [p.config(10**6) for p in pem.values()]
    assert f["eval_pem_groups_text"] == ", ".join(str(g) for g in sorted({c.g for c in configs}))


def test_engine_check_values():
    check = pd.DataFrame({"protocol-engine seconds": [10.0, 20.0, 30.0],
                          "counts-engine seconds (mean)": [1.0, 1.0, 2.0],
                          "f1 protocol": [0.5, 0.6, 0.7], "f1 z": [0.5, -2.5, 0.0], "f1 percentile": [60.0, 1.0, 50.0],
                          "ncr protocol": [0.5, 0.6, 0.7], "ncr z": [1.0, np.nan, 0.0],
                          "ncr percentile": [80.0, 50, 50]},
                         index=pd.Index(["PEM", "MCM", "SPM"], name="method"))
    f = prose.engine_check(check, runs=50, n=1000)
    assert f["eval_check_mcm_f1_z"] == -2.5 and f["eval_check_pem_ncr_pct"] == 80.0
    assert f["eval_check_spm_f1_protocol"] == 0.7 and f["eval_check_max_abs_z"] == 2.5
    assert f["eval_check_seconds_total"] == 60.0 and f["eval_check_speedup"] == 15.0
    assert f["eval_check_p_any_z2"] == pytest.approx(1 - (1 - 2 * stats.norm.sf(2.0)) ** 6)  # about 0.24
    assert f["eval_check_runs"] == 50 and f["eval_check_n"] == 1000


def test_runtime_counts_a_shared_point_once():
    a = pd.DataFrame({"run_spec": ["x", "y"], "wall_time": [1.0, 2.0]})
    b = pd.DataFrame({"run_spec": ["y", "z"], "wall_time": [2.0, 4.0]})
    assert prose.runtime([a, b], 9.0) == {"eval_runtime_s": 9.0, "eval_compute_s": 7.0, "eval_n_grid_runs": 3}


def test_variance_title():
    ds = Dataset.from_counts(from_ints([1, 2], 64), [600_000, 400_000], 64)
    assert prose.variance_title(ds, 16) == "Synthetic, m = 64, n = 1,000,000, k = 16"
