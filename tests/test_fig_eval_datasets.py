"""Chapter 06's data-set sizes (section 6.1) and their claims (ldp.book.chapters.c06_evaluation.eval_datasets).

Also the chapter's other saved table, ``06_evaluation/anomalies``, in the quick build.
"""
import json

import pandas as pd
import pytest

from ldp.book.chapters.c06_evaluation import eval_datasets as F
from ldp.book.claims.store import ResultStore

from builds import require
from figtools import decide, store_with

SIZES = pd.DataFrame({"dataset": ["URL", "AOL", "Synthetic"], "n": [1_204_000, 520_000, 1_000_000],
                      "n_distinct": [27_000, 121_000, 60_000], "f_16": [0.01, 0.004, 0.0231],
                      "n_frequent": [40, 55, 60]})


def test_claims_read_the_table(tmp_path):
    store = store_with(tmp_path, tables={(F.CHAPTER, F.NAME): SIZES})
    ids = [c.id for c in F.CLAIMS if c.id != "s61-url-size"]
    assert {i: decide(i, store)["verdict"] for i in ids} == dict.fromkeys(ids, "reproduced")
    assert decide("s61-url-size", store)["verdict"] == "not testable here"  # the stand-in is built to that size
    off = SIZES.assign(n_distinct=[27_000, 200_000, 60_000], f_16=[0.01, 0.004, 0.03])  # the unrevised 0.2 million
    store = store_with(tmp_path / "off", tables={(F.CHAPTER, F.NAME): off})
    assert decide("s61-aol-unique", store)["verdict"] == "not reproduced"
    assert decide("s623-theta-f16", store)["verdict"] == "not reproduced"


def test_without_aol_its_claims_are_not_testable(tmp_path):
    store = store_with(tmp_path, tables={(F.CHAPTER, F.NAME): SIZES[SIZES["dataset"] != "AOL"]})
    row = decide("s61-aol-users", store)
    assert row["verdict"] == "not testable here" and "AOL" in row["explanation"]


@pytest.mark.parametrize(("counts", "verdict", "under_100"), [((40, 55, 60), "reproduced", "reproduced"),
                                                               ((82, 97, 78), "not reproduced", "reproduced"),
                                                               ((50, 97, 78), "not reproduced", "reproduced"),
                                                               ((150, 97, 120), "not reproduced", "not reproduced")])
def test_a_few_dozen_values_at_or_above_a_tenth_of_a_percent(tmp_path, counts, verdict, under_100):
    """At most five dozen values at or above 0.1 % in most (3 of 3) data sets; fewer than 100, the other reading."""
    store = store_with(tmp_path, tables={(F.CHAPTER, F.NAME): SIZES.assign(n_frequent=list(counts))})
    row = decide("s222-few-dozen", store)
    assert row["verdict"] == verdict and [s["verdict"] for s in json.loads(row["sensitivity"])] == [under_100]
    if verdict != "reproduced":  # our reading is the cause only when the other reading's 100 leaves fewer sets above
        above = sum(c > 60 for c in counts), sum(c > 99 for c in counts)
        reading = above[1] <= above[0] / 2
        assert (row["cause_class"] == "reading") == reading
        if reading:
            assert json.loads(row["cause_numbers"]) == {"misfit": above[0], "misfit_other": above[1]}
    old = store_with(tmp_path / "old", tables={(F.CHAPTER, F.NAME): SIZES.drop(columns="n_frequent")})
    assert decide("s222-few-dozen", old)["verdict"] == "not testable here"  # a build before the column


def test_sizes_count_the_frequent_values():
    """Values of frequency at least 0.001 (section 2.2.2's 0.1 %), also without AOL's placeholder (the top value)."""
    from ldp import datasets
    from ldp.book.chapters.c06_evaluation import compute

    ds = datasets.exponential(100_000, scale=0.05, m=32, rng=3)
    frequent = int((ds.ranked_counts >= compute.FREQUENT * ds.n).sum())
    assert frequent == len(ds.above(0.001)) and 50 < frequent < 110  # f_j >= 0.001 up to j of about 78
    row = compute.sizes_without_top(ds, "Synthetic")
    assert row["n_frequent"] == int((ds.ranked_counts[1:] >= 0.001 * (ds.n - ds.ranked_counts[0])).sum())


@pytest.mark.parametrize("name, columns", [(F.NAME, ["dataset", "n", "n_distinct", "f_16", "n_frequent"]),
                                           ("anomalies", ["dataset", "protocol", "k", "quantity", "value"])])
def test_saved_by_the_quick_build(name, columns):
    store = ResultStore.for_build("quick")
    require(store.figures / "fig-eval-vary-k.csv")
    assert store.has(F.CHAPTER, name), f"chapter 06 ran but did not save the table {name}"
    table = store.load(F.CHAPTER, name)
    assert list(table.columns) == columns and len(table) > 0
    if name == "anomalies":
        urls = table[(table["dataset"] == "URL") & (table["protocol"] == "PEM") & (table["k"] == 4)]
        assert "noise_free_f1" in set(urls["quantity"])
    meta = json.loads(store.table_path(F.CHAPTER, name).with_suffix(".json").read_text())
    assert meta["columns"] == columns
