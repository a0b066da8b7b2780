"""Chapter 09's notebook plumbing (ldp.book.chapters.c09_malicious_users.compute): the values its text quotes.

Each section's findings are checked on a hand-made frame whose answer is known; the fixed-share check and the
detector's runs on small real runs (seeded: the same table for any number of workers).
"""
import numpy as np
import pandas as pd
import pytest

import ldp
import ldp.attacks
from ldp import datasets
from ldp.attacks import Attack
from ldp.book.chapters.c09_malicious_users import compute as C


def test_protocols_release_k_values():
    made = {label: make(2.0, 32) for label, make in {**C.protocols(4), **C.oracle_variants(4)}.items()}
    assert list(made) == ["PEM", "SPM", "MCM", "TreeHist (8 bits)", "SFP", "PEM (HR)", "PEM (CMS)"]
    assert all(p.k == 4 and p.m == 32 for p in made.values())
    assert isinstance(made["TreeHist (8 bits)"], ldp.TreeHist) and isinstance(made["PEM (CMS)"], ldp.PEM)


def test_data_sets_and_caption_without_aol():
    data = C.data_sets(n=2000, scale=0.05, m=32, seed=3, no_aol="is missing")
    assert list(data) == ["Synthetic"] and data["Synthetic"].n == 2000
    assert C.data_findings(data, no_aol="is missing") == {
        "rows_caption": "the synthetic set (n = 2,000, m = 32); AOL is left out: the AOL data file is missing in this "
                        "build", "n_synthetic": 2000}
    stand_in = {"Synthetic": data["Synthetic"], "AOL": datasets.exponential(n=1500, scale=0.1, m=48, rng=1)}
    assert C.data_findings(stand_in, no_aol="")["rows_caption"] == ("row a the synthetic set (n = 2,000, m = 32), "
                                                                    "row b AOL (n = 1,500, m = 48)")


def test_gain_findings_read_eps_fixed_and_the_distance_to_the_closed_forms():
    rows = [{"oracle": o, "r": r, "epsilon": e, "gain": 10 * i + r + e, "gain_se": 0.5,
             "gain_closed": np.nan if o == "HR" and r > 1 else 10 * i + r + e + 0.5 * (o == "OLH")}
            for i, o in enumerate(("GRR", "OUE", "OLH", "HR", "CMS")) for r in (1, 16) for e in (1.0, 2.0)]
    out = C.gain_findings(pd.DataFrame(rows), eps_fixed=2.0, targets_many=16, trials=64, reports=100)
    assert (out["gain_grr"], out["gain_olh"], out["gain_cms_many"], out["gain_olh_many_closed"]) == (3, 23, 58, 38.5)
    assert out["gain_points"] == 18 and out["gain_max_z"] == 1.0  # OLH: 0.5 off, SE 0.5
    assert (out["targets_many"], out["trials"], out["gain_reports"], out["eps_fixed"]) == (16, 64, 100, 2.0)


def _threshold_inputs():
    base = {"PEM": 0.01, "SPM": 0.007, "MCM": 0.008, "TreeHist (8 bits)": 0.02, "SFP": 0.03}
    frame = pd.DataFrame([{"dataset": "Synthetic", "kind": kind, "protocol": p, "epsilon": e,
                           "mean": b * (3.0 if kind == "input" else 1.0) * (2.0 / e),
                           "predicted": b * (2.0 if kind == "input" else 1.2) if p == "PEM" else np.nan}
                          for p, b in base.items() for kind in ("MGA", "input") for e in (1.0, 2.0)])
    frame.loc[(frame["protocol"] == "SPM") & (frame["epsilon"] == 1.0), "mean"] = 0.05  # SPM above PEM there
    grid = pd.DataFrame({"dataset": "Synthetic", "protocol": ["PEM", "SFP", "SFP", "MCM"],
                         "epsilon": [1.0, 1.0, 1.0, 2.0], "kind": ["MGA", "input", "input", "input"],
                         "fraction": [0.01, np.nan, np.nan, 0.02], "runs": [5, 6, 7, 8]})
    return frame, grid


def test_threshold_findings():
    frame, grid = _threshold_inputs()
    syn = datasets.exponential(n=5000, scale=0.05, m=32, rng=2)
    out = C.threshold_findings(frame, grid, syn, eps_fixed=2.0, k=4, repetitions=2, max_fraction=0.5)
    assert out["thr_pem_mga"] == 0.01 and out["thr_pem_input"] == pytest.approx(0.03)
    assert out["thr_pem_mga_pred"] == pytest.approx(0.012) and out["thr_sfp_mga"] == 0.03
    assert out["thr_min_mga"] == 0.007 and out["thr_max_mga"] == 0.06  # SFP at ε = 1
    # input / MGA is 3 at every point but SPM at ε = 1, where both are 0.05
    assert (out["ratio_points"], out["ratio_below_one"]) == (10, 0)
    assert (out["ratio_min"], out["ratio_median"], out["ratio_max"]) == pytest.approx((1.0, 3.0, 3.0))
    assert out["unreached_text"] == "SFP on Synthetic at ε = 1" and out["input_unreached"] == 2
    assert (out["mga_unreached"], out["searches"], out["runs_total"]) == (0, 4, 26)
    # PEM: MGA 1/1.2 - 1 at ε = 2 and 2/1.2 - 1 at ε = 1; input 3/2 - 1 and 6/2 - 1
    assert (out["pem_pred_points"], out["pem_pred_within25"]) == (4, 1) and out["pem_pred_worst"] == pytest.approx(2)
    assert (out["spm_below_pem"], out["spm_pem_points"]) == (1, 2)
    assert out["c16"] == int(syn.top_counts(4)[-1]) and out["repetitions"] == 2 and out["max_fraction"] == 0.5
    reached = C.threshold_findings(frame, grid.dropna(), syn, eps_fixed=2.0, k=4, repetitions=2, max_fraction=0.5)
    assert reached["unreached_text"] == "none" and reached["input_unreached"] == 0


def test_fixed_share_check_plants_with_maximal_gain():
    data = datasets.exponential(n=20_000, scale=0.05, m=32, rng=5)
    table = C.fixed_share_check(ldp.PEM(2.0, 4, 32), data, fraction=0.2, runs=2, trials=8, seed=11)
    assert table.to_dict("list") == {"kind": ["MGA", "input"], "fraction": [0.2, 0.2], "runs": [2, 2],
                                     "planted": table["planted"].tolist()}
    assert table.loc[0, "planted"] == 2  # a fifth of the users, crafted reports: planted in both runs
    again = C.fixed_share_check(ldp.PEM(2.0, 4, 32), data, fraction=0.2, runs=2, trials=8, seed=11)
    pd.testing.assert_frame_equal(table, again)
    out = C.fixed_share_findings(pd.DataFrame({"kind": ["MGA", "input"], "fraction": 0.2, "runs": 4,
                                               "planted": [4, 1]}), data, k=4)
    assert out == {"done_mga": 4, "done_input": 1, "done_runs": 4, "fraction_check": 0.2, "done_fake": 4000,
                   "done_vs": "more" if 4000 >= data.top_counts(4)[-1] else "fewer"}
    assert C.fixed_share_findings(pd.DataFrame({"kind": ["MGA", "input"], "fraction": 1e-5, "runs": 4,
                                                "planted": [0, 0]}), data, k=4)["done_vs"] == "fewer"


def test_targets_findings():
    frame = pd.DataFrame([{"dataset": "Synthetic", "kind": kind, "protocol": p, "need": r,
                           "mean": r / 100 * (2 if kind == "input" else 1) * (0.5 if p == "PEM (CMS)" else 1)}
                          for p in ("PEM", "PEM (CMS)") for kind in ("MGA", "input") for r in (1, 4, 8, 16)])
    grid = pd.DataFrame({"kind": ["input", "input", "input", "MGA"], "need": [16, 16, 8, 16],
                         "fraction": [np.nan, 0.3, np.nan, np.nan]})
    out = C.targets_findings(frame, grid, needs=[1, 4, 8, 16])
    assert out == {"many_pem_all": 0.16, "many_pem_half": 0.08, "many_need_half": 8, "many_need_all": 16,
                   "many_pem_input_one": 0.02, "many_cms_all": 0.08, "many_input_unreached": 1,
                   "many_input_searches": 2}


def test_placement_findings():
    share = {"fresh, plan's groups": 0.01, "fresh, chosen groups": 0.006, "look-alike, plan's groups": 0.008,
             "look-alike, chosen groups": 0.003}
    flags = {"look-alike, chosen groups": {1.0: 0.5, 2.0: 1.0, 4.0: 1.0}}
    rows = [{"panel": "a", "strategy": s, "epsilon": e, "value": f * e} for s, f in share.items() for e in (1., 2., 4.)]
    rows += [{"panel": "b", "strategy": s, "epsilon": e, "value": flags.get(s, {}).get(e, 0.25 * (s[0] == "f"))}
             for s in share for e in (1.0, 2.0, 4.0)]
    out = C.placement_findings(pd.DataFrame(rows), eps_fixed=2.0, lookalike_bits=52)
    assert out["place_fresh_plan"] == 0.02 and out["place_look_chosen"] == 0.006 and out["lookalike_bits"] == 52
    assert out["place_flag_look_chosen"] == pytest.approx(2.5 / 3) and out["place_flag_look_chosen_fix"] == 1.0
    assert out["place_flag_look_chosen_low"] == 0.5
    assert out["place_flag_fresh_plan"] == 0.25 and out["place_flag_look_plan"] == 0.0
    high = C.placement_findings(pd.DataFrame(rows), eps_fixed=1.0, lookalike_bits=52)
    assert high["place_flag_look_chosen_low"] == 0.0  # no ε below eps_fixed


TRIALS = [("PEM, no fake users", Attack("MGA", 1), 0.0), ("PEM, MGA, 4 targets", Attack("MGA", 4, trials=8), 0.1)]
RATES = [("PEM", Attack("MGA", 1), 0.05), ("PEM (HR)", Attack("MGA", 4, trials=8), 0.1),
         ("PEM (CMS)", Attack("MGA", 4, trials=8), 0.1)]


def test_rate_label():
    assert [C.rate_label(name, a) for name, a, _ in RATES] == ["PEM, MGA, 1 target", "PEM (HR), MGA, 4 targets",
                                                                "PEM (CMS), MGA, 4 targets"]


def test_detector_findings():
    runs = pd.DataFrame({"run": ["PEM, no fake users", "PEM, MGA, 4 targets", "PEM, MGA, 1 target",
                                 "PEM (HR), MGA, 4 targets", "PEM (CMS), MGA, 4 targets"],
                         "fake": [0, 1000, 500, 1000, 1000], "honest": [10_000, 9000, 9500, 9000, 9000],
                         "alpha": 1e-3, "fpr": [0.0, 1e-4, 2e-4, 0.0, 1e-4], "tpr": [np.nan, 0.4, 0.01, 0.6, 1.0],
                         "planted": [0, 3, 1, 2, 4], "planted_clean": [0, 1, np.nan, np.nan, np.nan],
                         "f1": [0.875, 0.5, np.nan, np.nan, np.nan], "f1_clean": [0.8125, 0.6, np.nan, np.nan, np.nan]})
    data = datasets.exponential(n=20_000, scale=0.05, m=32, rng=5)
    out = C.detector_findings(runs, TRIALS, RATES, data, k=4, alpha=1e-3, threshold=5, fraction=0.1)
    se = np.sqrt(np.maximum(runs["fpr"], 1 / runs["honest"]) * (1 - runs["fpr"]) / runs["honest"])
    assert out["det_fpr_se"] == pytest.approx(se.max()) and out["det_fpr_max"] == 2e-4
    assert out["det_fpr_z"] == pytest.approx(((1e-3 - runs["fpr"]) / se).min())
    assert (out["detector_n"], out["detector_sample"], out["detector_fraction"]) == (20_000, 20_000, 0.1)
    assert (out["det_tpr_one"], out["det_tpr_many"], out["det_tpr_hr"], out["det_tpr_cms"]) == (0.01, 0.4, 0.6, 1.0)
    assert (out["det_planted_many"], out["det_planted_many_clean"], out["det_threshold"]) == (3, 1, 5)
    assert out["det_one_removed"] == 5.0 and out["det_one_fake"] == 500 and out["det_honest_fpr"] == 0.0
    top = data.top_counts(5)
    assert out["det_gap"] == top[-2] - top[-1]
    assert out["det_f1_text"] == "moved F1 from 0.875 to 0.812"
    runs.loc[0, "f1_clean"] = 0.875
    assert C.detector_findings(runs, TRIALS, RATES, data, k=4, alpha=1e-3, threshold=5, fraction=0.1,
                               honest_sample=100)["det_f1_text"] == "left F1 at 0.875"


@pytest.mark.slow
def test_detector_runs_are_the_same_for_any_number_of_workers():
    data = datasets.exponential(n=20_000, scale=0.05, m=32, rng=5)
    protocols = {**C.protocols(4), **C.oracle_variants(4)}
    one = C.detector_runs(protocols, data, TRIALS, RATES, epsilon=2.0, alpha=1e-3, seed=7, honest_sample=5000)
    two = C.detector_runs(protocols, data, TRIALS, RATES, epsilon=2.0, alpha=1e-3, seed=7, honest_sample=5000,
                          n_jobs=2)
    pd.testing.assert_frame_equal(one[0], two[0])
    table = one[0]
    assert table["run"].tolist() == [t[0] for t in TRIALS] + [C.rate_label(n, a) for n, a, _ in RATES]
    assert table["engine"].tolist() == ["protocol"] * 2 + ["counts (release)"] * 3
    assert table.loc[0, "fake"] == 0 and table.loc[1, "fake"] == 2000 and (table["fpr"] <= 1e-2).all()
    assert table.loc[2:, "f1"].isna().all() and set(one[1]) == {t[0] for t in TRIALS}
    assert {"honest_counts", "fake_counts", "bound", "threshold"} <= set(one[1]["PEM, MGA, 4 targets"])


def test_check_cost():
    honest = pd.DataFrame({"dataset": "Synthetic", "protocol": ["PEM", "PEM", "PEM", "SPM"],
                           "epsilon": [1.0, 1.0, 2.0, 2.0], "rep": [0, 1, 0, 0], "f1": [0.5, 0.7, 0.9, 0.8],
                           "f1_checked": [0.5, 0.5, 0.95, 0.8], "flagged": [0, 2, 1, 0]})
    wide = C.check_cost_table(honest)
    assert list(wide.columns) == ["dataset", "protocol", "ε = 1", "ε = 2"]
    assert wide.set_index("protocol")["ε = 1"]["PEM"] == pytest.approx(0.1)
    out = C.check_cost_findings(honest, eps_fixed=2.0)
    assert out["check_cost_fix_max"] == 0.0 and out["check_cost_max"] == pytest.approx(0.1)
    assert out["check_cost_worst"] == "PEM on Synthetic at ε = 1"
    assert (out["check_false_runs"], out["check_runs"]) == (2, 4)


def test_the_committed_benchmark_tables_are_checked_before_use(tmp_path):
    with pytest.raises(FileNotFoundError, match="committed output of benchmarks/bench_adaptive.py"):
        C.bench_adaptive(tmp_path)
    for table in C.BENCH_TABLES:
        for part in C.BENCH_PARTS:
            pd.DataFrame({"protocol": ["PEM-OLH"]}).to_csv(tmp_path / f"adaptive_{table}_{part}.csv", index=False)
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['oracle'"):
        C.bench_adaptive(tmp_path)
    with pytest.raises(FileNotFoundError, match="benchmarks/bench_audit.py"):
        C.bench_audit(tmp_path / "audit.csv")


def test_the_committed_tables_read_back():
    """The repository's committed results: every table and column the chapter reads, with their provenance."""
    bench = C.bench_adaptive()
    for table in C.BENCH_TABLES:
        grid = bench[table]["grid"]
        assert grid["commit"].notna().all() and (grid["seconds"] > 0).all()
        assert set(grid["protocol"]) == set(ldp.attacks.audited_protocols())  # every protocol and oracle
        assert grid.iloc[0][["protocol", "attacker", "rep"]].tolist() == ["PEM-OLH", "MGA", 0]
    assert set(bench["one-target"]["grid"]["n"]) == {10**6} and set(bench["one-target"]["grid"]["targets"]) == {1}
    audit = C.bench_audit()
    assert set(audit["protocol"]) == set(ldp.attacks.audited_protocols())
    assert (audit["eps_lower"] <= audit["epsilon"]).all()


@pytest.mark.slow
def test_a_search_run_again_gives_the_committed_shares():
    """A table made as the benchmark makes it (its seeds, its data set at a small n) and its first search run again."""
    pem = ldp.PEM(2.0, 16, 64)
    data = datasets.exponential(n=20_000, scale=C.BENCH_SCALE, m=64, rng=C.BENCH_DATA_SEED)
    grid = ldp.attacks.adaptive_grid({"PEM-OLH": pem}, data, need=1, guard=0.01, targets=1, reps=2,
                                     root_seed=C.BENCH_ROOT_SEED)  # three attackers, the first is MGA
    again = C.rerun_search(grid)
    first = grid[(grid["protocol"] == "PEM-OLH") & (grid["attacker"] == "MGA") & (grid["rep"] == 0)]
    assert len(again) == 4 and np.isfinite(first["fraction"]).any()
    np.testing.assert_array_equal(again["fraction"].to_numpy(), first["fraction"].to_numpy())
    assert again["guard"].tolist() == [0.0, 0.0, 0.01, 0.01]


def test_stop_price():
    price = pd.DataFrame({"protocol": "P", "guard": [0.0, 0.01, 0.01, 0.02], "rep": [0, 0, 1, 0], "f1": 0.9,
                          "f1_defended": [0.9, 0.8, 0.6, 0.0]})
    out = C.stop_price(price, pd.Series({"P": 0.005, "Q": 0.005}))
    assert out.loc[0, ["guard", "loss"]].tolist() == pytest.approx([0.01, 0.2])
    assert np.isnan(out.loc[1, "guard"])  # no price table for Q
    assert np.isnan(C.stop_price(price, pd.Series({"P": 0.03})).loc[0, "guard"])  # nothing above 3 % on the grid
