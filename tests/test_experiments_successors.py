"""Chapter 08's tuning of TreeHist and SFP (ldp.book.chapters.c08_after_pem.compute): candidates, the choice,
feasibility."""
import pandas as pd

from ldp.book.chapters.c08_after_pem import compute as successors


def test_candidates_sweep_one_parameter_with_the_budget_split_and_partitioned():
    c = successors.candidates(2**20, 0.1)
    assert list(c) == [s for t in successors.TUNED.values() for s in t]
    th, th_part = c["TreeHist (tuned)"], c["TreeHist (tuned, partitioned users)"]
    assert [kw["bits_per_level"] for _, kw, _ in th] == [2, 4, 8, 10]
    assert all("final_fraction" not in kw for _, kw, _ in th)
    assert all(kw["final_fraction"] == 0.1 and kw["query_limit"] == 2**20 for _, kw, _ in th_part)
    sfp = c["SFP (tuned)"]
    assert [kw.get("hash_bits", 8) for _, kw, _ in sfp] == [4, 6, 8]
    assert sfp[-1][:2] == ("SFP", {"query_limit": 2**20})  # Apple's 8 bits: the published series' own spec


def test_choose_takes_the_best_mean_f1_ties_to_the_first_listed():
    series = {"X (tuned)": [("TreeHist", {"bits_per_level": b}, f"X (tuned): b = {b}") for b in (2, 4, 8)]}
    f1 = {("A", 2): 0.5, ("A", 4): 0.7, ("A", 8): 0.7, ("B", 2): 0.1, ("B", 4): 0.2, ("B", 8): 0.6}
    runs = pd.DataFrame([{"dataset": ds, "protocol": f"X (tuned): b = {b}", "f1": v + d}
                         for (ds, b), v in f1.items() for d in (-0.05, 0.05)])
    sweep = successors.choose(runs, series)
    assert list(sweep.columns) == ["dataset", "series", "setting", "F1 (mean)", "runs", "chosen"]
    assert sweep.loc[sweep["chosen"], "setting"].tolist() == ["b = 4", "b = 8"] and (sweep["runs"] == 2).all()
    assert successors.tuned_protocols(sweep, series, "A") == [("TreeHist", {"bits_per_level": 4}, "X (tuned)")]


def test_feasible_means_buildable_at_every_point():
    spec = ("TreeHist", {"query_limit": 2**20, "bits_per_level": 8}, "x")
    assert successors.feasible(spec, m=64, epsilons=[1.0, 4.0], ks=[1, 16])
    assert not successors.feasible(("TreeHist", {"query_limit": 8, "bits_per_level": 8}, "x"), m=64,
                                   epsilons=[1.0], ks=[16])
