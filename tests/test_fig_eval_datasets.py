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
                      "n_distinct": [27_000, 121_000, 60_000], "f_16": [0.01, 0.004, 0.0231]})


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


@pytest.mark.parametrize("name, columns", [(F.NAME, ["dataset", "n", "n_distinct", "f_16"]),
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
