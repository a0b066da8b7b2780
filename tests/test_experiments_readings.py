"""ldp.experiments.readings: a result store seen under another reading, and the F1/NCR pairs of chapter 06."""
import numpy as np
import pandas as pd
import pytest

from ldp.book.chapters.c06_evaluation.compute import ordered_pairs, sizes_without_top
from ldp.book.claims.readings import Reading, under
from ldp.book.claims.store import MissingResult, ResultStore
from ldp.core import Dataset


@pytest.fixture
def store(tmp_path):
    s = ResultStore(tmp_path / "results", figures=tmp_path / "figures")
    (tmp_path / "figures").mkdir()
    pd.DataFrame({"dataset": ["A"] * 6, "protocol": ["PEM", "SPM", "MCM"] * 2, "k": [1, 1, 1, 2, 2, 2],
                  "mean": [0.9, 0.5, 0.4, 0.8, 0.3, 0.2]}).to_csv(tmp_path / "figures" / "fig.csv", index=False)
    return s


def test_the_other_readings_rows_replace_their_series_at_their_levels(store):
    store.save("ch", "fig--other", pd.DataFrame({"dataset": ["A"], "protocol": ["SPM"], "k": [2], "mean": [0.95]}))
    view = Reading(store, "ch", "other").figure("fig")
    assert sorted(zip(view["protocol"], view["k"], view["mean"])) == [("MCM", 2, 0.2), ("PEM", 2, 0.8),
                                                                      ("SPM", 2, 0.95)]
    assert store.figure("fig")["mean"].tolist() == [0.9, 0.5, 0.4, 0.8, 0.3, 0.2]  # the store itself is unchanged


def test_without_saved_rows_the_reading_is_missing_and_levels_alone_filter_the_store(store):
    # a rerun that left out the reading's runs: not testable under it, never the store's own rows instead
    with pytest.raises(MissingResult, match="fig--absent"):
        Reading(store, "ch", "absent").figure("fig")
    assert Reading(store, "ch").figure("fig").equals(store.figure("fig"))  # no reading, no levels: the store
    assert under(lambda s: s.figure("fig")["k"].unique().tolist(), "ch", k=[2])(store) == [2]
    assert Reading(store, "ch").mode == store.mode  # everything else is the store's


def test_sizes_without_the_top_value():
    ds = Dataset.from_counts(np.array([5, 6, 7, 8]), np.array([50, 30, 15, 5]), m=8, rng=0)
    row = sizes_without_top(ds, "toy", k=2)
    # without the top value: 30, 15 and 5 of 50 users, all three at or above 0.1 % (n_frequent)
    assert row == {"dataset": "toy", "n": 50, "n_distinct": 3, "f_2": pytest.approx(15 / 50), "n_frequent": 3}


def test_ordered_pairs_keeps_the_pairs_separated_beyond_noise():
    points = pd.DataFrame({"dataset": "A", "epsilon": 1.0, "protocol": ["P", "P", "Q", "Q", "R", "R"],
                           "metric": ["f1", "ncr"] * 3, "mean": [0.9, 0.8, 0.5, 0.6, 0.89, 0.7],
                           "se": [0.01, 0.01, 0.01, 0.01, 0.01, 0.01]})
    pairs = ordered_pairs(points, ["dataset", "epsilon"], 3.0, label="ε")
    assert pairs["point"].tolist() == ["A, ε = 1: P over Q", "A, ε = 1: R over Q"]  # P and R: F1 within noise
    assert pairs[["a", "b"]].to_numpy().tolist() == [[0.8, 0.6], [0.7, 0.6]]
